/* dicetower scoreboard, game master's page only: calibrating the running tower
   (/api/admin/calibration). Start, then each step asks for something (empty the tray, throw the
   dice) and waits for "Next"; the step's picture shows what the tower sees. Tapping four
   points on the picture gives the tray's corners by hand (before the first throw). The state is
   polled while a calibration runs: it changes a few times a step, never faster than a person. */
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const panel = $("calibration");
  const controls = $("controls");
  if (!panel || !controls) return;
  const config = JSON.parse($("page-config").textContent);
  const T = config.labels;
  const ACTIVE_EVERY = 500; // ms between polls while a calibration runs
  const IDLE_EVERY = 5000;
  let current = null; // the last state
  let shownVersion = null; // the preview version on screen
  let points = []; // corners tapped, in image pixels, not yet sent
  let timer = null;

  function fill(template, values) {
    return String(template || "").replace(/\{(\w+)\}/g, (all, key) =>
      key in values ? String(values[key]) : all);
  }

  function request(path, body) {
    $("calib-error").textContent = "";
    const url = "/api/admin/calibration" + path + "?lang=" + encodeURIComponent(config.lang || "");
    const send = body === undefined
      ? fetch(url, { credentials: "same-origin", cache: "no-store" })
      // The session's CSRF token may have changed at login: asked afresh for every change.
      : fetch("/api/session", { credentials: "same-origin", cache: "no-store" })
        .then((r) => r.json())
        .then((session) => fetch(url, {
          method: "POST", credentials: "same-origin",
          headers: { "Content-Type": "application/json", "X-CSRF-Token": session.csrf || "" },
          body: JSON.stringify(body),
        }));
    return send.then((r) => r.json().then((data) => {
      if (!r.ok) throw new Error(data.error || r.statusText);
      return data;
    })).then((data) => {
      show(data.calibration);
      return data;
    }).catch((err) => {
      $("calib-error").textContent = err.message;
    });
  }

  function resultText(result) {
    if (!result) return "";
    const percent = new Intl.NumberFormat(config.lang, { style: "percent" });
    if (result.outcome === "saved") {
      const lines = [fill(T.calib_saved, { path: result.path, sure: percent.format(result.sure) })];
      if (result.backup) lines.push(fill(T.calib_backup, { path: result.backup }));
      return lines.join("\n");
    }
    if (result.outcome === "refused") {
      return fill(T.calib_refused, {
        read: result.with.read, expected: result.with.expected, without: result.without.read,
        advice: (result.advice || []).join("; ") || T.calib_refused_default,
        previews: result.previews,
      });
    }
    if (result.outcome === "failed") return fill(T.calib_failed, { detail: result.detail });
    return T.calib_cancelled;
  }

  function show(state) {
    current = state;
    const active = !!(state && state.active);
    $("calib-form").hidden = active;
    $("calib-run").hidden = !active;
    const result = $("calib-result");
    result.textContent = resultText(state && state.result);
    result.dataset.outcome = (state && state.result && state.result.outcome) || "";
    if (active) panel.open = true;
    if (!state) return schedule();
    const title = T["calib_step_" + state.step] || "";
    $("calib-step").textContent = fill(T.calib_step, { step: state.step, steps: state.steps, title });
    $("calib-progress").value = state.progress;
    const message = state.message || {};
    const text = $("calib-message");
    text.textContent = fill(T["calib_msg_" + message.code], message.values || {});
    text.dataset.code = message.code || "";
    $("btn-calib-next").disabled = !state.waiting;
    const preview = state.preview;
    const image = $("calib-preview");
    image.hidden = !preview;
    if (preview && preview.version !== shownVersion) {
      shownVersion = preview.version;
      image.src = preview.url;
    }
    image.classList.toggle("pickable", !!state.corners_open);
    $("calib-corners-hint").hidden = !state.corners_open;
    $("btn-calib-corners-clear").hidden = !state.corners_open;
    if (!state.corners_open) points = [];
    drawMarks();
    schedule();
  }

  // The corners on screen: those tapped so far, else those the tower has.
  function drawMarks() {
    const marks = $("calib-marks");
    const image = $("calib-preview");
    const shown = points.length ? points : ((current && current.corners) || []);
    marks.innerHTML = "";
    const width = image.naturalWidth;
    if (!width || image.hidden) return;
    const scale = image.clientWidth / width;
    shown.forEach(([x, y], i) => {
      const dot = document.createElement("span");
      dot.className = "calib-mark";
      dot.textContent = String(i + 1);
      dot.style.left = `${x * scale}px`; // CSSOM, allowed by the page's style-src 'self'
      dot.style.top = `${y * scale}px`;
      marks.appendChild(dot);
    });
    $("calib-corners").textContent = fill(T.calib_corners, { count: shown.length });
  }

  function pick(event) {
    if (!current || !current.corners_open) return;
    const image = $("calib-preview");
    const box = image.getBoundingClientRect();
    const scale = image.naturalWidth / box.width;
    const x = Math.round((event.clientX - box.left) * scale);
    const y = Math.round((event.clientY - box.top) * scale);
    points.push([Math.min(Math.max(x, 0), image.naturalWidth), Math.min(Math.max(y, 0), image.naturalHeight)]);
    drawMarks();
    if (points.length === 4) {
      const corners = points;
      request("/corners", { corners }).then(() => { points = []; drawMarks(); });
    }
  }

  function poll() {
    if (controls.hidden) return schedule();
    request("");
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(poll, current && current.active ? ACTIVE_EVERY : IDLE_EVERY);
  }

  $("calib-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const name = $("calib-name").value.trim();
    request("/start", { expect: parseInt($("calib-expect").value, 10), ...(name ? { name } : {}) });
  });
  $("btn-calib-next").addEventListener("click", () => request("/next", {}));
  $("btn-calib-cancel").addEventListener("click", () => request("/cancel", {}));
  $("btn-calib-corners-clear").addEventListener("click", () => { points = []; drawMarks(); });
  $("calib-preview").addEventListener("click", pick);
  $("calib-preview").addEventListener("load", drawMarks);
  window.addEventListener("resize", drawMarks);
  new MutationObserver(poll).observe(controls, { attributes: true, attributeFilter: ["hidden"] });
  poll();
})();
