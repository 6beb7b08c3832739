/* dicetower scoreboard: what the tower itself says (its notice, its status, the tokens it is
   paying) and the tokens players hand each other; on the game master's page, the count of a
   dispense cut off mid-way and the resume after a jam. Loaded before scoreboard.js, which
   calls `DicetowerTower.create(ctx)` and then `render(state)` on every change. */
"use strict";

window.DicetowerTower = (function () {
  const STATUSES = ["ready", "reading", "reroll", "error"];

  function fill(template, values) {
    return String(template || "").replace(/\{(\w+)\}/g, (all, key) =>
      key in values ? String(values[key]) : all);
  }

  // Who hands whom how many tokens because of the last input, from the engine's view alone.
  // In the décharge the winner gives the loser `last_round.tokens` (the engine's
  // tokens_between effect). That round was settled by the last input exactly when nothing
  // was thrown since: the next round has no hand and no throw yet (or the game just ended).
  function handover(game) {
    const last = game && game.last_round;
    if (!last || last.phase !== "decharge" || !last.tokens) return null;
    if (last.winner === null || last.winner === undefined) return null;
    const over = game.phase === "over";
    if (last.round !== game.round_number - (over ? 0 : 1)) return null;
    if (!over && ((game.round || []).length || game.throw_number)) return null;
    return { from: last.winner, to: last.loser, count: last.tokens };
  }

  function create(ctx) {
    const { $, T, esc, lang } = ctx;
    let doubtsDrawn = null; // the doubts the forms were drawn for: typing survives updates

    function tokenWord(count) {
      return count === 1 ? T.token : T.tokens;
    }

    function renderNotice(tower) {
      const notice = tower && tower.notice;
      const el = $("tower-notice");
      el.hidden = !notice;
      if (!notice) return;
      const level = ["info", "warn", "error"].includes(notice.level) ? notice.level : "warn";
      el.className = "notice notice-" + level;
      el.dataset.code = notice.code || "";
      el.textContent = notice[lang] || notice.en || notice.fr || notice.code || "";
    }

    function renderStatus(tower) {
      const el = $("tower-status");
      el.hidden = !tower;
      if (!tower) return;
      const status = STATUSES.includes(tower.status) ? tower.status : "other";
      const down = tower.camera === "down";
      el.dataset.status = down ? "error" : status;
      const said = T["status_" + tower.status] || tower.status || "";
      el.textContent = `${T.tower} : ${said}` + (down ? ` · ${T.camera_down}` : "");
    }

    function tokenDots(delivered, requested) {
      const shown = Math.min(requested, 21);
      let html = "";
      for (let i = 0; i < shown; i++) html += i < delivered ? "<i></i>" : "<i class=\"due\"></i>";
      return `<span class="tokens" aria-hidden="true">${html}</span>`;
    }

    function renderTokens(state) {
      const tower = state.tower;
      const dispenses = (tower && tower.dispenses) || [];
      const game = state.game;
      const give = game && game.game !== "4d" ? handover(game) : null;
      $("tokens-card").hidden = !dispenses.length && !give;
      $("handover").hidden = !give;
      if (give) {
        $("handover").textContent = fill(T.gives, {
          from: ctx.name(give.from), to: ctx.name(give.to), count: give.count,
          tokens: tokenWord(give.count),
        });
      }
      $("dispenses").innerHTML = dispenses.map((d) => {
        const text = fill(T.dispense_of, {
          player: d.player, delivered: d.delivered, requested: d.requested,
          tokens: tokenWord(d.requested),
        });
        const cls = d.state === "doubt" ? "bad" : d.state === "started" ? "go" : "";
        return `<li class="dispense" data-state="${esc(d.state)}"><span>${esc(text)}</span>` +
          ctx.chip(esc(T["dispense_" + d.state] || d.state), cls) +
          tokenDots(d.delivered, d.requested) + `</li>`;
      }).join("");
    }

    function renderAdmin(state) {
      const tower = state.tower;
      const doubts = ((tower && tower.dispenses) || []).filter((d) => d.state === "doubt");
      const jammed = !!state.paused && !!tower && !!tower.notice && tower.notice.code === "jam";
      $("tower-admin").hidden = !doubts.length && !jammed;
      $("btn-resume-jam").hidden = !jammed;
      const key = JSON.stringify(doubts.map((d) => [d.id, d.requested, d.delivered, d.player]));
      if (key === doubtsDrawn) return;
      doubtsDrawn = key;
      $("doubts").innerHTML = doubts.map((d) => {
        const due = fill(T.dispense_due, {
          player: d.player, requested: d.requested, delivered: d.delivered,
          tokens: tokenWord(d.requested),
        });
        return `<form class="doubt" data-dispense="${esc(d.id)}" autocomplete="off">` +
          `<p>${esc(due)}</p><label>${esc(T.dispense_confirm)} ` +
          `<input type="number" name="delivered" inputmode="numeric" required min="0" ` +
          `max="${esc(d.requested)}" value="${esc(d.delivered)}"></label>` +
          `<button type="submit" class="primary">${esc(T.confirm)}</button>` +
          `<p class="error" role="alert"></p></form>`;
      }).join("");
    }

    function render(state) {
      renderNotice(state.tower);
      renderStatus(state.tower);
      renderTokens(state);
      if (ctx.adminPage) renderAdmin(state);
    }

    function setupAdmin() {
      $("doubts").addEventListener("submit", (e) => {
        const form = e.target.closest("form.doubt");
        if (!form) return;
        e.preventDefault();
        const input = form.elements.delivered;
        const delivered = parseInt(input.value, 10);
        if (!input.checkValidity() || Number.isNaN(delivered)) {
          input.reportValidity();
          return;
        }
        const button = form.querySelector("button");
        const error = form.querySelector(".error");
        button.disabled = true;
        error.textContent = "";
        // Said again beside the form: the panel's own error line may be off screen.
        ctx.post(`dispenses/${form.dataset.dispense}/confirm`, { delivered })
          .catch((err) => {
            button.disabled = false;
            error.textContent = err.message;
          });
      });
      $("btn-resume-jam").addEventListener("click", () =>
        ctx.post("pause", { paused: false }).catch(() => {}));
    }

    return { render, setupAdmin };
  }

  return { create, handover, fill };
})();
