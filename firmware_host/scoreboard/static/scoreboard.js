/* dicetower scoreboard: renders the state pushed by the tower (Server-Sent Events) and, on the
   game master's page, sends the game master's inputs. No framework: the page must load fast on
   an old phone over a bar's Wi-Fi. */
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const config = JSON.parse($("page-config").textContent);
  const T = config.labels;
  let state = JSON.parse($("initial-state").textContent);
  let csrf = config.csrf;
  let source = null;
  let historyVersion = -1;

  // ------------------------------------------------------------------ drawing helpers

  function esc(value) {
    return String(value ?? "").replace(/[&<>"']/g, (c) => "&#" + c.charCodeAt(0) + ";");
  }

  // Pip positions on a 3x3 grid (x, y in a 0..100 box).
  const PIPS = {
    1: [[50, 50]],
    2: [[27, 27], [73, 73]],
    3: [[27, 27], [50, 50], [73, 73]],
    4: [[27, 27], [73, 27], [27, 73], [73, 73]],
    5: [[27, 27], [73, 27], [50, 50], [27, 73], [73, 73]],
    6: [[27, 25], [73, 25], [27, 50], [73, 50], [27, 75], [73, 75]],
  };

  function die(face, cls) {
    const pips = (PIPS[face] || [])
      .map(([x, y]) => `<circle cx="${x}" cy="${y}" r="9"/>`)
      .join("");
    const label = face ? String(face) : "?";
    return `<svg class="die ${cls || ""}" viewBox="0 0 100 100" role="img" aria-label="${label}">` +
      `<rect x="4" y="4" width="92" height="92" rx="18"/>${pips}</svg>`;
  }

  function name(index) {
    const players = state.game ? state.game.players : [];
    return index === null || index === undefined || !players[index] ? "?" : players[index].name;
  }

  function phaseLabel(phase) {
    return T["phase_" + phase] || phase || "";
  }

  const fill = window.DicetowerTower.fill; // "{player} throws" + {player: "Ana"}

  // The engine's prompt (what happens next) in the page's language: its template comes with
  // the labels (prompt_<code>), its values (names, hands, counts) with the state.
  function promptText(prompt) {
    if (!prompt || !prompt.code) return "";
    return fill(T["prompt_" + prompt.code] || prompt.code, prompt.values || {});
  }

  function chip(text, cls) {
    return `<span class="chip ${cls || ""}">${text}</span>`;
  }

  // The tower's own part of the page (tower.js): notice, status, tokens on the move.
  const tower = window.DicetowerTower.create({
    $, T, esc, chip, name, post, lang: config.lang, adminPage: !!config.admin_page,
  });

  // The odds advice for the player to move (odds.js).
  const odds = window.DicetowerOdds.create({
    $, T, esc, name, lang: config.lang, adminPage: !!config.admin_page, mode: config.odds,
  });

  // ------------------------------------------------------------------ rendering the state

  function render() {
    const game = state.game;
    document.body.classList.toggle("paused", !!state.paused);
    document.body.classList.toggle("four-d", !!game && game.game === "4d");
    $("banner").textContent = game
      ? (state.paused ? "⏸ " + T.paused + " — " : "") + promptText(game.prompt)
      : T.no_game;
    renderStatus(game);
    renderDice(game);
    renderSquare(game);
    renderPlayers(game);
    renderRound(game);
    renderCamera();
    renderStats();
    tower.render(state);
    odds.render(state);
    if ($("history-card").open) loadHistory();
    if (config.admin_page) renderAdmin(game);
  }

  function renderStatus(game) {
    if (!game) {
      $("chips").innerHTML = "";
      return;
    }
    const parts = [chip(esc(phaseLabel(game.phase)), "phase phase-" + esc(game.phase))];
    if (game.throws_label) parts.push(chip(esc(game.throws_label), "throws"));
    if (game.rampo && game.rampo.players) {
      const stake = game.rampo.stake ? " " + T["stake_" + game.rampo.stake] : "";
      parts.push(chip(`${esc(T.rampo_between)} ${esc(game.rampo.players.map(name).join(", "))}${esc(stake)}`, "warn"));
    }
    if (game.game !== "4d") {
      parts.push(chip(`${esc(T.pot)} <b>${esc(game.pot)}</b>`));
      if (game.manche) parts.push(chip(`${esc(T.manche)} ${esc(game.manche)}`));
    } else if (game.target) {
      parts.push(chip(`${esc(T.target)} <b>${esc(game.target)}</b>`));
    }
    if (state.paused) parts.push(chip(esc(T.paused), "warn"));
    if (state.ended && game.phase !== "over") parts.push(chip(esc(T.ended), "warn"));
    $("chips").innerHTML = parts.join("");
  }

  function renderDice(game) {
    const dice = (game && game.dice) || [];
    const kept = new Set((game && game.kept) || []);
    $("dice").innerHTML = dice.length
      ? dice.map((f, i) => die(f, kept.has(i) ? "kept" : "")).join("")
      : `<span class="muted">—</span>`;
    $("dice-card").hidden = !!(game && game.square);
    if (!game || !dice.length) {
      $("throw-count").textContent = "";
      return;
    }
    const thrower = game.dice_player ?? game.to_move;
    const during = game.throw_number && thrower === game.to_move && !state.ended
      ? ` · ${T.throw} ${game.throw_number}` + (game.throws_allowed ? ` / ${game.throws_allowed}` : "")
      : "";
    const who = thrower === null || thrower === undefined ? "" : `— ${name(thrower)}`;
    $("throw-count").textContent = who + during;
  }

  function renderSquare(game) {
    const square = game && game.square;
    $("square-card").hidden = !square;
    if (!square) return;
    const cell = (where, cls) => {
      const d = square[where];
      if (!d) return `<div class="cell ${where}"></div>`;
      const locked = where === "far";
      return `<div class="cell ${where}">${die(d.face, (locked ? "locked " : "") + (cls || ""))}` +
        `<small>${esc(T[where])}${locked ? " · " + esc(T.locked) : ""}</small></div>`;
    };
    let html = cell("far") + cell("left") + cell("right") + cell("near");
    if (game.fifth) html += `<div class="cell fifth">${die(game.fifth)}<small>${esc(T.fifth)}</small></div>`;
    $("square").innerHTML = html;
    const scores = game.scores || game.players.map((p) => p.score);
    $("scores").innerHTML = game.players
      .map((p, i) => `${esc(p.name)} <b>${esc(scores[i] ?? 0)}</b>`)
      .join(" · ") + (game.target ? ` / ${esc(game.target)}` : "");
    const move = game.last_move;
    const showing = game.showing && game.showing.combination
      ? `${T.showing} : ${game.showing.combination} (${game.showing.points})` : "";
    $("last-move").textContent = [
      showing,
      move ? `${T.last_move} : ${name(move.player)} — ${move.combination || "—"} (+${move.points || 0})` +
        (move.rotate ? ` · ${T[move.rotate] || move.rotate}` : "") : "",
    ].filter(Boolean).join(" · ");
  }

  function renderPlayers(game) {
    if (!game) {
      $("players").innerHTML = "";
      return;
    }
    const players = game.players.map((p, i) => ({ ...p, index: i }));
    players.sort((a, b) => (a.seat ?? a.index) - (b.seat ?? b.index));
    $("players").innerHTML = players.map((p) => {
      const cls = [];
      if (p.index === game.to_move && !state.ended) cls.push("to-move");
      if (p.out) cls.push("out");
      if (game.loser === p.index) cls.push("loser");
      if (game.winner === p.index) cls.push("winner");
      const badges = [];
      if (p.index === game.to_move && !state.ended) badges.push(chip(esc(T.to_move), "go"));
      if (p.out) badges.push(chip(esc(T.out) + (p.out_rank ? " #" + esc(p.out_rank) : "")));
      if (game.loser === p.index) badges.push(chip(esc(T.lost), "bad"));
      if (game.winner === p.index) badges.push(chip(esc(T.won), "good"));
      if (game.charge_winner === p.index && !state.ended) badges.push(chip(esc(T.charge_winner), "good"));
      const figures = game.game === "4d"
        ? `<b>${esc(p.score ?? 0)}</b> ${esc(T.score)}`
        : `<b>${esc(p.tokens)}</b> ${esc(T.tokens)}` +
          (p.fiches ? ` · <b>${esc(p.fiches)}</b> ${esc(T.fiches)}` : "") +
          (p.manches_won ? ` · <b>${esc(p.manches_won)}</b> ${esc(T.manches_won)}` : "");
      return `<li class="${cls.join(" ")}"><span class="seat">${esc((p.seat ?? p.index) + 1)}</span>` +
        `<span class="who">${esc(p.name)} ${badges.join("")}</span><span class="figures">${figures}</span>` +
        tokenDots(game.game === "4d" ? 0 : p.tokens) + `</li>`;
    }).join("");
  }

  function tokenDots(count) {
    const shown = Math.min(count || 0, 21);
    return shown ? `<span class="tokens" aria-hidden="true">${"<i></i>".repeat(shown)}</span>` : "";
  }

  function handText(entry) {
    if (!entry) return "—";
    const throws = entry.throws ? ` (${entry.throws})` : "";
    return `${esc(name(entry.player))} <b>${esc(entry.hand)}</b>${throws}`;
  }

  function renderRound(game) {
    const round = (game && game.round) || [];
    $("round-card").hidden = !game || game.game === "4d" ||
      (!round.length && !game.best && !game.worst && !game.last_round);
    $("round").innerHTML = round.map((e) => `<li>${handText(e)}</li>`).join("");
    $("best-worst").innerHTML = game && (game.best || game.worst)
      ? `${esc(T.best)} : ${handText(game.best)} · ${esc(T.worst)} : ${handText(game.worst)}`
      : "";
    const last = game && game.last_round;
    $("last-round").innerHTML = last ? `${esc(T.last_round)} : ${summary(last)}` : "";
  }

  // The previous round in one line: who lost with what (and how many tokens), who won.
  function summary(last) {
    const parts = [];
    if (last.loser !== null && last.loser !== undefined) {
      const word = last.tokens === 1 ? T.token : T.tokens_moved;
      const tokens = last.tokens ? ` (${esc(last.tokens)} ${esc(word)})` : "";
      parts.push(`${esc(name(last.loser))} ${esc(T.loses_with)} <b>${esc(last.loser_hand)}</b>${tokens}`);
    }
    if (last.winner !== null && last.winner !== undefined) {
      parts.push(`${esc(name(last.winner))} ${esc(T.wins_with)} <b>${esc(last.winner_hand)}</b>`);
    }
    if (last.manche_lost !== null && last.manche_lost !== undefined) {
      const who = typeof last.manche_lost === "object" ? last.manche_lost.player : last.manche_lost;
      parts.push(`${esc(name(who))} ${esc(T.manche_lost)}`);
    }
    return parts.join(" · ");
  }

  function renderCamera() {
    const reading = state.reading;
    $("no-camera").hidden = !!reading;
    if (!reading) {
      const camera = state.tower && state.tower.camera;
      $("no-camera").textContent = !camera ? T.no_camera
        : camera === "down" ? T.camera_down : T.camera_waiting;
    }
    const img = $("frame");
    if (reading && reading.has_image) {
      const src = `/api/frame.jpg?v=${reading.version}`;
      if (img.getAttribute("src") !== src) img.src = src;
      img.hidden = false;
    } else {
      img.hidden = true;
    }
    const dice = (reading && reading.dice) || [];
    $("reading").innerHTML = dice.map((d) => {
      const conf = typeof d.confidence === "number" ? ` ${Math.round(d.confidence * 100)} %` : "";
      const alt = (d.alternatives || []).length ? ` → ${esc(d.alternatives.join(", "))}` : "";
      return `<li>${die(d.value, "small" + (d.confidence < 0.8 ? " unsure" : ""))}` +
        `<span>${esc(T.confidence)}${conf}${alt}${d.reason ? " · " + esc(d.reason) : ""}</span></li>`;
    }).join("");
  }

  function renderStats() {
    const stats = state.stats || [];
    // 4D has no 421 nor nénette: its "hands" are the moves that scored.
    const four = !!state.game && state.game.game === "4d";
    const columns = four
      ? [["throws", T.stat_throws], ["hands", T.stat_scored]]
      : [["throws", T.stat_throws], ["hands", T.stat_hands], ["421", T.stat_421], ["nenette", T.stat_nenette]];
    $("stats").innerHTML = stats.length
      ? `<tr><th></th>${columns.map(([, label]) => `<th>${esc(label)}</th>`).join("")}</tr>` +
        stats.map((s) => `<tr><th>${esc(s.name)}</th>` +
          columns.map(([key]) => `<td>${esc(s[key])}</td>`).join("") + `</tr>`).join("")
      : "";
  }

  function effectText(effect) {
    switch (effect.kind) {
      case "tokens_from_pot": return `${name(effect.player)} +${effect.count} (${T.pot})`;
      case "tokens_to_pot": return `${name(effect.player)} −${effect.count} (${T.pot})`;
      case "tokens_between": return `${name(effect.from)} → ${name(effect.to)} ${effect.count}`;
      case "turn": return `${T.to_move} : ${name(effect.player)}`;
      case "round_lost": return `${name(effect.player)} ✗ ${effect.hand}`;
      case "round_won": return `${name(effect.player)} ✓ ${effect.hand}`;
      case "player_out": return `${name(effect.player)} ${T.out}`;
      case "manche_lost": return `${name(effect.player)} ${T.manche_lost}`;
      case "manche": return `${T.manche} ${effect.manche}`;
      case "charge_won": return `${name(effect.player)} ${T.charge_winner}`;
      case "decharge_won": return `${name(effect.player)} ${T.decharge_winner}`;
      case "rampo": return `${T.rampo_between} ${effect.players.map(name).join(", ")}`;
      case "opening_tie": return `${T.opening_tie} ${effect.players.map(name).join(", ")}`;
      case "undone": return `${T.undo} #${effect.seq}`;
      case "game_over": return [
        T.ended,
        effect.loser !== null && effect.loser !== undefined ? `${T.lost} : ${name(effect.loser)}` : "",
        effect.winner !== null && effect.winner !== undefined ? `${T.won} : ${name(effect.winner)}` : "",
      ].filter(Boolean).join(" · ");
      case "flourish": return `★ ${effect.name}`;
      case "phase": return phaseLabel(effect.phase);
      case "scored": return `${name(effect.player)} ${effect.combination} +${effect.points}`;
      default: return effect.kind;
    }
  }

  // before: the top faces before this input (a 4D presentation names one of them).
  function eventText(event, before) {
    if (event.type === "present") {
      const thrower = event.player ?? 0;
      return fill(T.presents, { near: event.near, face: (before || [])[event.near] ?? "?",
        player: name(1 - thrower) });
    }
    const faces = event.faces ? " " + event.faces.join(" ") : "";
    const keep = event.keep && event.keep.length ? ` (${T.keep} ${event.keep.map((i) => i + 1).join(",")})` : "";
    const rotate = event.rotate ? ` · ${T[event.rotate] || event.rotate}` : "";
    return `${T[event.type] || event.type}${faces}${keep}${rotate}`;
  }

  function loadHistory() {
    if (historyVersion === state.version) return;
    historyVersion = state.version;
    fetch("/api/history", { cache: "no-store" })
      .then((r) => r.json())
      .then((data) => {
        let faces = [];
        const lines = data.entries.map((e) => {
          const line = `<li><b>${esc(name(e.event.player ?? e.player))}</b> ` +
            `${esc(eventText(e.event, faces))}` +
            `<br><small>${esc(e.effects.map(effectText).join(" · "))}</small></li>`;
          if (e.event.faces && (e.event.type === "throw" || e.event.type === "turn")) faces = e.event.faces;
          return line;
        });
        $("history").innerHTML = lines.reverse().join("");
      })
      .catch(() => { historyVersion = -1; });
  }

  // ------------------------------------------------------------------ live updates

  function setConnected(live) {
    const el = $("conn");
    el.dataset.state = live ? "live" : "offline";
    el.textContent = live ? T.live : T.offline;
  }

  function accept(next) {
    if (next.version === state.version && next.instance === state.instance) return;
    state = next;
    render();
  }

  function connect() {
    if (source) source.close();
    source = new EventSource("/api/events");
    source.addEventListener("state", (e) => {
      setConnected(true);
      accept(JSON.parse(e.data));
    });
    source.onopen = () => setConnected(true);
    source.onerror = () => {
      setConnected(false);
      // CONNECTING: the browser retries by itself. CLOSED (e.g. the tower said "too many
      // clients"): try again a little later ourselves.
      if (source.readyState === EventSource.CLOSED) setTimeout(connect, 5000);
    };
  }

  // A phone that slept may hold a dead connection: start a fresh one (the server sends the
  // whole current state first) and ask again to keep the screen on.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") {
      connect();
      keepAwake();
    }
  });

  let wakeLock = null;
  function keepAwake() {
    // The Screen Wake Lock API exists only in secure contexts (HTTPS or localhost).
    if (!("wakeLock" in navigator) || document.visibilityState !== "visible" || wakeLock) return;
    navigator.wakeLock.request("screen").then((lock) => {
      wakeLock = lock;
      lock.addEventListener("release", () => { wakeLock = null; });
    }).catch(() => {});
  }

  // ------------------------------------------------------------------ the game master

  let faceChoice = [];
  let correctChoice = [];
  let keepChoice = new Set();
  let presetsLoaded = false;
  let enteredAt = null; // game_version the entry rows were drawn for
  let correctedFor = null; // reading version the correction rows were drawn for

  function post(path, body) {
    $("admin-error").textContent = "";
    // The page's language goes along, so that a refusal comes back in it.
    return fetch("/api/admin/" + path + "?lang=" + encodeURIComponent(config.lang || ""), {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf || "" },
      body: JSON.stringify(body || {}),
    }).then((r) => r.json().then((data) => {
      if (!r.ok) {
        if (data.code === "login") showLogin(true);
        throw new Error(data.error || r.statusText);
      }
      return data;
    })).catch((err) => {
      $("admin-error").textContent = err.message;
      throw err;
    });
  }

  function showLogin(show) {
    $("login-form").hidden = !show;
    $("controls").hidden = show;
    if (!show) loadPresets();
  }

  function handSize(game) {
    if (!game) return 3;
    if (game.game === "4d") return game.knobs && game.knobs.fifth_die ? 5 : 4;
    if (game.phase === "opening" && game.knobs && game.knobs.opener === "lowest-die") return 1;
    return 3;
  }

  // Face buttons for one die: the likely values first (from the camera), then the others.
  function faceButtons(row, chosen, likely, group) {
    const order = [...new Set([...(likely || []), 1, 2, 3, 4, 5, 6])].filter((f) => f >= 1 && f <= 6);
    return `<div class="faces" role="group" aria-label="${esc(T.faces)} ${row + 1}">` +
      order.map((f) => `<button type="button" class="face${f === chosen ? " chosen" : ""}" ` +
        `data-group="${group}" data-row="${row}" data-face="${f}" aria-pressed="${f === chosen}">` +
        `${die(f, "small")}</button>`).join("") + `</div>`;
  }

  function likelyFaces(index) {
    const dice = (state.reading && state.reading.dice) || [];
    const d = dice[index];
    return d ? [d.value, ...(d.alternatives || [])] : [];
  }

  // 4D: the role of each square position for the player to move (positions 0..3, then 4).
  function squareRoles(game) {
    const roles = [];
    const square = game && game.game === "4d" && (game.phase === "play" || game.phase === "present")
      ? game.square : null;
    if (!square) return roles;
    for (const role of ["near", "left", "right", "far"]) {
      if (square[role]) roles[square[role].pos] = role;
    }
    if (game.fifth) roles[4] = "fifth";
    return roles;
  }

  // 4D: the current top faces in position order, so a turn only needs the dice that moved.
  function squareFaces(game) {
    const faces = [];
    const square = game && game.square;
    if (!square) return faces;
    for (const role of ["near", "left", "right", "far"]) {
      if (square[role]) faces[square[role].pos] = square[role].face;
    }
    if (game.fifth) faces[4] = game.fifth;
    return faces;
  }

  function renderFaceRows() {
    const count = Math.max(1, Math.min(5, parseInt($("dice-count").value, 10) || 1));
    faceChoice = faceChoice.slice(0, count);
    const roles = squareRoles(state.game);
    const four = !!state.game && state.game.game === "4d";
    let html = "";
    for (let i = 0; i < count; i++) {
      const role = roles[i];
      if (role) {
        const locked = role === "far" ? " · " + T.locked : "";
        html += `<p class="row-label">${esc(T.position)} ${i} · ${esc(T[role])}${esc(locked)}</p>`;
      } else if (four) {
        // The opening throw: dice in square order, the fifth die last.
        html += `<p class="row-label">${esc(i === 4 ? T.fifth : T.position + " " + i)}</p>`;
      }
      html += faceButtons(i, faceChoice[i], likelyFaces(i), "throw");
    }
    $("face-rows").innerHTML = html;
  }

  function renderAdmin(game) {
    $("btn-pause").textContent = state.paused ? T.resume : T.pause;
    const four = !!game && game.game === "4d";
    // 4D: right after the throw the thrower may present the square; the opponent moves first.
    const presenting = four && game.phase === "present";
    const turning = four && (game.phase === "play" || presenting);
    $("present-row").hidden = !presenting;
    $("btn-turn").hidden = !turning;
    $("rotate-row").hidden = !turning;
    $("dice-count").parentElement.hidden = turning; // a 4D turn always gives every die
    $("btn-throw").hidden = four && !!game.square;
    $("btn-stop").hidden = four;
    // Redraw the entry rows only when the game moved on, so that a half-entered throw
    // survives a camera reading; the correction rows also follow the reading.
    const readingVersion = state.reading ? state.reading.version : 0;
    const gameMoved = state.game_version !== enteredAt;
    if (gameMoved) {
      enteredAt = state.game_version;
      // Keep boxes: the current dice of the player to move, during a turn of 421.
      const canKeep = game && !four && game.throw_number > 0 && (game.dice || []).length > 1;
      keepChoice = new Set();
      $("keep-row").innerHTML = canKeep
        ? game.dice.map((f, i) => `<label class="keep"><input type="checkbox" data-keep="${i}">` +
          `${die(f, "small")}<small>${esc(T.keep)}</small></label>`).join("")
        : "";
      $("dice-count").value = Math.max(1, handSize(game) - keepChoice.size);
      faceChoice = four ? squareFaces(game) : [];
      $("rotate").value = "cw";
      if (presenting) {
        // Which position faces the opponent once the thrower has turned the square.
        const near = game.square.near.pos;
        $("present-near").innerHTML = faceChoice.slice(0, 4).map((f, p) =>
          `<option value="${p}"${p === near ? " selected" : ""}>${esc(T.position)} ${p} (${esc(f)})</option>`).join("");
      }
      renderFaceRows();
    }
    if (!gameMoved && readingVersion === correctedFor) return;
    correctedFor = readingVersion;
    // Correction: the faces of the last throw, with the camera's likely values first.
    const last = state.last_input;
    const correctable = last && (last.type === "throw" || last.type === "turn");
    $("correct-entry").hidden = !correctable;
    $("correct-rotate-row").hidden = !correctable || last.type !== "turn";
    if (correctable) {
      $("correct-rotate").value = last.rotate || "cw";
      correctChoice = last.faces.slice();
      $("correct-rows").innerHTML = last.faces
        .map((f, i) => faceButtons(i, f, likelyFaces(i), "correct")).join("");
    }
  }

  function loadPresets() {
    if (presetsLoaded) return;
    presetsLoaded = true;
    fetch("/api/presets").then((r) => r.json()).then((data) => {
      $("preset").innerHTML = Object.keys(data.presets)
        .map((p) => `<option value="${esc(p)}">${esc(p)}</option>`).join("");
      const knobs = () => {
        const preset = data.presets[$("preset").value] || {};
        $("knobs").innerHTML = Object.keys(preset).map((k) => {
          const allowed = data.knobs[k] || [];
          const current = preset[k];
          const input = allowed.length > 12
            ? `<input type="number" data-knob="${esc(k)}" value="${esc(current)}" min="${esc(allowed[0])}" max="${esc(allowed[allowed.length - 1])}">`
            : `<select data-knob="${esc(k)}">` + allowed.map((v) =>
              `<option value='${esc(JSON.stringify(v))}'${v === current ? " selected" : ""}>${esc(v)}</option>`).join("") + `</select>`;
          return `<label>${esc(k)} ${input}</label>`;
        }).join("");
      };
      $("preset").addEventListener("change", knobs);
      knobs();
    }).catch(() => { presetsLoaded = false; });
  }

  function collectKnobs() {
    const preset = $("preset").value;
    const knobs = {};
    document.querySelectorAll("[data-knob]").forEach((el) => {
      knobs[el.dataset.knob] = el.tagName === "SELECT" ? JSON.parse(el.value) : parseInt(el.value, 10);
    });
    return { preset, knobs };
  }

  function setupAdmin() {
    showLogin(!config.admin);
    tower.setupAdmin();
    $("login-form").addEventListener("submit", (e) => {
      e.preventDefault();
      post("login", { pin: $("pin").value }).then((data) => {
        csrf = data.csrf;
        $("pin").value = "";
        showLogin(false);
        render();
      }).catch(() => {});
    });
    $("btn-logout").addEventListener("click", () => post("logout").then(() => showLogin(true)).catch(() => {}));
    $("dice-count").addEventListener("change", renderFaceRows);
    document.addEventListener("click", (e) => {
      const button = e.target.closest("button.face");
      if (!button) return;
      const row = +button.dataset.row;
      const face = +button.dataset.face;
      const choice = button.dataset.group === "correct" ? correctChoice : faceChoice;
      choice[row] = face;
      button.parentElement.querySelectorAll("button.face").forEach((b) => {
        const on = +b.dataset.face === face;
        b.classList.toggle("chosen", on);
        b.setAttribute("aria-pressed", String(on));
      });
    });
    $("keep-row").addEventListener("change", (e) => {
      const i = +e.target.dataset.keep;
      if (e.target.checked) keepChoice.add(i); else keepChoice.delete(i);
      $("dice-count").value = Math.max(1, handSize(state.game) - keepChoice.size);
      renderFaceRows();
    });
    const faces = () => {
      const count = parseInt($("dice-count").value, 10) || 1;
      const chosen = faceChoice.slice(0, count);
      if (chosen.length < count || chosen.some((f) => !f)) {
        $("admin-error").textContent = T.faces + " ?";
        return null;
      }
      return chosen;
    };
    $("btn-throw").addEventListener("click", () => {
      const f = faces();
      if (f) post("throw", { faces: f, keep: [...keepChoice].sort() }).then(() => { keepChoice.clear(); }).catch(() => {});
    });
    $("btn-turn").addEventListener("click", () => {
      const f = faces();
      if (f) post("turn", { faces: f, rotate: $("rotate").value }).catch(() => {});
    });
    $("btn-present").addEventListener("click", () =>
      post("present", { near: +$("present-near").value }).catch(() => {}));
    $("btn-stop").addEventListener("click", () => post("stop").catch(() => {}));
    $("btn-undo").addEventListener("click", () => post("undo").catch(() => {}));
    $("btn-correct").addEventListener("click", () => {
      const body = { faces: correctChoice };
      if (state.last_input && state.last_input.type === "turn") body.rotate = $("correct-rotate").value;
      post("correct", body).catch(() => {});
    });
    $("btn-pause").addEventListener("click", () => post("pause", { paused: !state.paused }).catch(() => {}));
    $("btn-end").addEventListener("click", () => {
      if (window.confirm(T.confirm_end)) post("end").catch(() => {});
    });
    $("new-game-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const players = $("players-input").value.split(/[\n,]+/).map((s) => s.trim()).filter(Boolean);
      post("game", { ...collectKnobs(), players }).then(() => { $("new-game").open = false; }).catch(() => {});
    });
  }

  // ------------------------------------------------------------------ start

  $("history-card").addEventListener("toggle", () => {
    if ($("history-card").open) loadHistory();
  });
  if (config.admin_page) setupAdmin();
  render();
  connect();
  keepAwake();
  document.addEventListener("click", keepAwake, { once: true });
})();
