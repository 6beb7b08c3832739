/* dicetower scoreboard, game master's page only: a warning when the dice look biased, from the
   tower's journal (GET /api/admin/fairness). Asked once the PIN shows the controls, then every
   minute: the tower reads its journal again only as it grows, and bias builds over weeks. */
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const warning = $("fairness-warning");
  const controls = $("controls");
  if (!warning || !controls) return;
  const config = JSON.parse($("page-config").textContent);
  const T = config.labels;
  const EVERY = 60 * 1000;

  function fill(template, values) {
    return String(template || "").replace(/\{(\w+)\}/g, (all, key) =>
      key in values ? String(values[key]) : all);
  }

  function show(report) {
    const tests = report && report.verdict === "biased" ? [report.overall, ...report.dice] : [];
    const biased = tests.find((t) => t.verdict === "biased");
    warning.hidden = !biased;
    if (!biased) return;
    const percent = new Intl.NumberFormat(config.lang, { style: "percent", maximumFractionDigits: 1 });
    const number = new Intl.NumberFormat(config.lang, { maximumSignificantDigits: 2 });
    const p = biased.p_value < 0.0001 ? `p < ${number.format(0.0001)}`
      : `p = ${number.format(biased.p_value)}`;
    const face = biased === report.overall ? biased.face : `${biased.face} (${biased.label})`;
    warning.textContent = fill(T.fairness_biased, {
      face, share: percent.format(biased.face_share), dice: biased.dice, p,
    });
  }

  function ask() {
    if (controls.hidden) return;
    fetch("/api/admin/fairness", { credentials: "same-origin", cache: "no-store" })
      .then((r) => (r.ok ? r.json() : null))
      .then((data) => { if (data) show(data.fairness); })
      .catch(() => {});
  }

  new MutationObserver(ask).observe(controls, { attributes: true, attributeFilter: ["hidden"] });
  setInterval(ask, EVERY);
  ask();
})();
