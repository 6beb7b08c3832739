// dicetower league board: renders the tables, the standings and the bracket from each
// snapshot pushed by /events (Server-Sent Events). No framework, no outside asset.
"use strict";
(function () {
  const t = JSON.parse(document.getElementById("labels").textContent);
  const conn = document.getElementById("conn");
  const tables = document.getElementById("tables");
  const standings = document.getElementById("standings");
  const tournament = document.getElementById("tournament");
  const base = document.querySelector("h1 a").getAttribute("href");

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === false || value === null || value === undefined) continue;
      if (key === "text") node.textContent = value; else node.setAttribute(key, value);
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }

  function renderTable(table) {
    const game = table.game;
    const card = el("article", {class: "table", "data-status": table.status,
                                "data-tower": table.tower});
    card.append(el("header", {}, el("h3", {text: table.tower}),
      el("span", {class: "status", "data-status": table.status,
                  text: t["status_" + table.status] || table.status})));
    if (!game) {
      card.append(el("p", {class: "result", text: t.no_game}));
    } else {
      const seats = el("ul", {class: "seats"});
      for (const player of game.players) {
        seats.append(el("li", {"data-to-move": player.name === game.to_move ? "" : null,
                               "data-out": player.out ? "" : null},
          el("span", {text: player.name}),
          el("span", {text: game.kind === "421" ? player.tokens + " " + t.tokens
                                                 : String(player.score)})));
      }
      card.append(seats);
      if (game.dice && game.dice.length) {
        const dice = el("div", {class: "dice"});
        for (const face of game.dice) dice.append(el("span", {class: "die", text: String(face)}));
        card.append(dice);
      }
      if (game.ended) {
        const who = game.loser ? t.loser + " : " + game.loser
          : game.winner ? t.winner + " : " + game.winner : "";
        card.append(el("p", {class: "result", text: t.game_over + (who ? " — " + who : "")}));
      } else if (game.to_move) {
        card.append(el("p", {class: "result", text: t.to_move + " : " + game.to_move}));
      }
    }
    if (table.gaps) card.append(el("p", {class: "warn", text: t.gaps + " : " + table.gaps}));
    return card;
  }

  function renderStandings(rows) {
    if (!standings || standings.dataset.live !== "yes") return;
    const body = el("tbody");
    rows.forEach((row, index) => {
      body.append(el("tr", {},
        el("td", {text: String(index + 1)}),
        el("td", {}, el("a", {href: base + "player/" + encodeURIComponent(row.name),
                              text: row.name})),
        el("td", {text: String(row.played)}), el("td", {text: String(row.won)}),
        el("td", {text: String(row.lost)}), el("td", {text: String(row.points)})));
    });
    standings.tBodies[0].replaceWith(body);
  }

  function renderTournament(view) {
    if (!tournament) return;
    document.getElementById("tournament-card").hidden = !view;
    if (!view) return;
    const rounds = el("div", {class: "bracket"});
    view.rounds.forEach((round, index) => {
      const list = el("ol", {"aria-label": t.round.replace("{number}", index + 1)});
      for (const match of round) {
        const names = match.players.map((name) => el("div", {
          class: name && name === match.winner ? "winner" : null,
          text: name || (match.bye ? t.bye : t.waiting)}));
        const item = el("li", {class: "match", "data-match": match.id}, ...names);
        if (match.tower && !match.winner) {
          item.append(el("div", {class: "next", text: t.proposed.replace("{tower}", match.tower)}));
        }
        list.append(item);
      }
      rounds.append(list);
    });
    tournament.replaceChildren(rounds);
    if (view.champion) tournament.append(el("p", {class: "big", text: t.champion + " : " + view.champion}));
  }

  function render(snapshot) {
    if (snapshot.tables.length) tables.replaceChildren(...snapshot.tables.map(renderTable));
    renderStandings(snapshot.standings);
    renderTournament(snapshot.tournament);
    document.body.dataset.version = snapshot.version;
  }

  render(JSON.parse(document.getElementById("initial").textContent));
  const source = new EventSource(base + "events");
  source.addEventListener("open", () => { conn.dataset.state = "live"; conn.textContent = t.live; });
  source.addEventListener("error", () => { conn.dataset.state = "offline"; conn.textContent = t.offline_conn; });
  source.addEventListener("state", (event) => render(JSON.parse(event.data)));
})();
