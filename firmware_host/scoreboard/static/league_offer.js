/* dicetower scoreboard, game master's page only: the league's offer of a tournament match to
   this tower (GET /api/admin/league), started with one tap (POST /api/admin/league/start).
   Asked once the PIN shows the controls, then every few seconds while they stay shown. */
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const box = $("league-offer");
  const controls = $("controls");
  if (!box || !controls) return;
  const config = JSON.parse($("page-config").textContent);
  const T = config.labels;
  const EVERY = 5 * 1000;
  const text = $("league-offer-text");
  const start = $("league-offer-start");

  function show(data) {
    const offer = data && data.offer;
    box.hidden = !offer;
    if (!offer) return;
    text.textContent = String(T.league_offer || "").replace("{players}", offer.players.join(" – "));
  }

  function ask() {
    if (controls.hidden) return;
    fetch("/api/admin/league", { credentials: "same-origin", cache: "no-store" })
      .then((r) => (r.ok ? r.json() : null))
      .then((data) => { if (data && data.league) show(data); else box.hidden = true; })
      .catch(() => {});
  }

  start.addEventListener("click", () => {
    start.disabled = true;
    fetch("/api/session", { credentials: "same-origin", cache: "no-store" })
      .then((r) => r.json())
      .then((session) => fetch("/api/admin/league/start?lang=" + encodeURIComponent(config.lang || ""), {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": session.csrf || "" },
        body: "{}",
      }))
      .then((r) => r.json().then((data) => {
        if (!r.ok) $("admin-error").textContent = data.error || r.statusText;
        else box.hidden = true;
      }))
      .catch(() => {})
      .finally(() => { start.disabled = false; });
  });

  new MutationObserver(ask).observe(controls, { attributes: true, attributeFilter: ["hidden"] });
  setInterval(ask, EVERY);
  ask();
})();
