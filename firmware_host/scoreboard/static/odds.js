/* dicetower scoreboard: the odds advice for the player to move (state.odds, computed by the
   tower once per game version). One compact line; a tap on it opens the table behind it: in
   421 every keep with its chances (the best for each goal marked), in 4D the best moves with
   the opponent's best reply. Loaded before scoreboard.js, which calls
   `DicetowerOdds.create(ctx)` and then `render(state)` on every change. */
"use strict";

window.DicetowerOdds = (function () {
  function fill(template, values) {
    return String(template || "").replace(/\{(\w+)\}/g, (all, key) =>
      key in values ? String(values[key]) : all);
  }

  // "553" -> "5-5-3", [4, 2] -> "4-2": how players say a hand and the dice they keep.
  function dashed(faces) {
    return Array.from(String(Array.isArray(faces) ? faces.join("") : faces || "")).join("-");
  }

  function sameKeep(a, b) {
    return a.slice().sort().join() === b.slice().sort().join();
  }

  function create(ctx) {
    const { $, T, esc, name, lang } = ctx;
    const card = $("odds-card");
    const line = $("odds-line");
    const table = $("odds-table");
    if (!card || !line || !table) return { render() {} };
    // The house may keep the advice to the game master's page (SCOREBOARD_ODDS).
    const allowed = ctx.adminPage || ctx.mode !== "admin-only";
    const percent = new Intl.NumberFormat(lang, { style: "percent", maximumFractionDigits: 0 });
    const decimal = new Intl.NumberFormat(lang, { maximumFractionDigits: 2 });

    function pct(p) {
      if (p === null || p === undefined) return "—";
      if (p > 0 && p < 0.005) return "<" + percent.format(0.01);
      return percent.format(p);
    }

    line.addEventListener("click", () => {
      const open = line.getAttribute("aria-expanded") !== "true";
      line.setAttribute("aria-expanded", String(open));
      table.hidden = !open;
    });

    function keepText(odds, keep, stop) {
      if (stop) return fill(T.odds_stop, { keep: dashed(odds.dice) });
      if (!keep.length) return T.odds_all;
      return fill(T.odds_keep, { keep: dashed(keep) });
    }

    function render421(odds) {
      const advice = odds.advice;
      const row = odds.keeps.find((k) => k.stop === advice.stop && sameKeep(k.keep, advice.keep));
      const beat = odds.to_beat.own ? T.odds_better : T.odds_beat;
      const parts = row ? [fill(beat, { p: pct(row.p_beat), hand: dashed(odds.to_beat.hand) })] : [];
      if (row && odds.avoid) parts.push(fill(T.odds_below, { p: pct(row.p_worst), hand: dashed(odds.avoid.hand) }));
      line.textContent = fill(T.odds_line, { keep: keepText(odds, advice.keep, advice.stop), odds: parts.join(", ") });
      const beatHead = fill(odds.to_beat.own ? T.odds_col_better : T.odds_col_beat, { hand: dashed(odds.to_beat.hand) });
      const columns = [
        ["p_beat", beatHead, pct],
        ["p_tie", T.odds_col_tie, pct],
        ["p_worst", odds.avoid ? fill(T.odds_col_worst, { hand: dashed(odds.avoid.hand) }) : null, pct],
        ["p_421", T.odds_col_421, pct],
        ["expected_tokens", T.odds_col_tokens, (v) => decimal.format(v)],
      ].filter(([, head]) => head);
      const head = `<tr><th>${esc(T.odds_col_keep)}</th>` +
        columns.map(([, label]) => `<th>${esc(label)}</th>`).join("") + `</tr>`;
      const body = odds.keeps.map((k) => {
        const cells = columns.map(([field, , show]) => {
          const best = odds.best[field];
          const mark = best && sameKeep(best, k.keep) ? "★" : "";
          return `<td class="${mark ? "best" : ""}">${esc(show(k[field]))}${mark}</td>`;
        }).join("");
        const advised = k === row ? " advised" : "";
        const label = k.stop ? T.odds_stop_short : k.keep.length ? dashed(k.keep) : T.odds_all_short;
        return `<tr class="odds-row${advised}"><th>${esc(label)}</th>${cells}</tr>`;
      }).join("");
      table.innerHTML = head + body + `<caption>${esc(T.odds_best_mark)}</caption>`;
    }

    function moveText(move) {
      const to = Object.values(move.to || {}).join(", ");
      return (T["move_" + move.move] || move.move) + (to ? ` (→ ${to})` : "");
    }

    function shortMove(move) {
      const to = Object.values(move.to || {}).join(", ");
      return (T["move_short_" + move.move] || move.move) + (to ? ` → ${to}` : "");
    }

    function pointsText(move) {
      if (move.wins) return T.odds_4d_wins;
      const combination = T["combo_" + move.combination] || move.combination;
      return move.combination ? fill(T.odds_4d_points, { combination, points: move.points }) : "0";
    }

    const TURN = { cw: "↻", ccw: "↺" };

    function render4d(odds) {
      const best = odds.best;
      const rotate = T["rotate_word_" + best.rotate] || best.rotate;
      line.textContent = fill(T.odds_4d_best, { move: moveText(best), rotate }) + " — " + pointsText(best);
      const head = `<tr><th>${esc(T.odds_col_move)}</th><th>${esc(T.odds_col_square)}</th>` +
        `<th>${esc(T.odds_col_points)}</th><th>${esc(T.odds_col_reply)}</th></tr>`;
      const body = odds.moves.map((m, i) => `<tr class="odds-row${i === 0 ? " advised" : ""}">` +
        `<th>${esc(shortMove(m))}</th><td title="${esc(T["rotate_word_" + m.rotate] || m.rotate)}">` +
        `${esc(TURN[m.rotate] || m.rotate)}</td>` +
        `<td>${esc(pointsText(m))}</td>` +
        `<td>${m.reply ? esc(m.reply.wins ? T.odds_4d_wins : m.reply.points) : "—"}</td></tr>`).join("");
      table.innerHTML = head + body;
    }

    function render(state) {
      const odds = allowed && !state.ended ? state.odds : null;
      if (!odds) {
        card.hidden = true;
        return;
      }
      if (odds.pending) {
        // Computed within moments: keep the card's place rather than make the page jump.
        line.textContent = T.odds_pending;
        return;
      }
      card.hidden = false;
      $("odds-player").textContent = "— " + name(odds.player);
      if (odds.game === "4d") render4d(odds); else render421(odds);
    }

    return { render };
  }

  return { create };
})();
