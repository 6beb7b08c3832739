/* dicetower scoreboard, game master's page only: calibrating the running tower
   (/api/admin/calibration). Start, then each step asks for something (empty the tray, throw the
   dice) and waits for "Next"; the step's picture shows what the tower sees. Tapping four
   points on the picture gives the tray's corners by hand (before the first throw). With the
   dice's values asked, each throw read is shown with its dice numbered: tapping a die (on the
   picture or its button) offers its values, tapping the picture where no die is numbered adds a
   die the reading missed there (numbered after the others; "Not a die" takes it away again),
   and "These values are right" sends them all, the added dice with their centres. The
   state is polled while a calibration runs: it changes a few times a step, never faster than a
   person. */
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
  let answers = null; // the values given to the dice asked, in their order (0: not sure, null: no die)
  let answersAsk = null; // the question they answer (the state's ask)
  let added = []; // the dice the reading missed, added: {center (image pixels), side, value}
  let chosen = null; // the die whose value is being chosen (its position), or null

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
      const faces = result.faces; // learnt from the dice's values given, and judged
      if (faces) {
        lines.push(fill(faces.kept ? T.calib_faces_kept : T.calib_faces_dropped, {
          dice: faces.dice, with: faces.with.correct, without: faces.without.correct,
          total: faces.with.dice }));
        if (faces.set_aside.length) lines.push(fill(T.calib_faces_slips, { slips: faces.set_aside.join("; ") }));
      }
      const side = result.die_side; // the die side chosen by the count, judged by the values
      if (side) {
        lines.push(fill(side.kept ? T.calib_side_kept : T.calib_side_dropped, {
          side: Math.round(side.side), with: side.with.correct, without: side.without.correct,
          wrong: side.with.wrong + side.with.extra,
          wrong_without: side.without.wrong + side.without.extra, total: side.with.dice }));
      }
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

  function asking(state) {
    return !!(state && state.waiting === "values" && Array.isArray(state.dice));
  }

  function shownValue(v) { return v === null ? "✕" : v === 0 ? "?" : String(v); }
  function spokenValue(v) { return v === null ? T.calib_value_none : v === 0 ? T.calib_value_skip : String(v); }

  // The dice asked about then those added, numbered on: each with its centre and side (image
  // pixels), the value read (0: unsure; null: added) and the value given so far.
  function entries() {
    const dice = (current && current.dice) || [];
    return [
      ...dice.map((d, i) => ({ index: d.index, center: d.center, side: d.side,
        read: d.value === null ? 0 : d.value, value: answers[i] })),
      ...added.map((a, k) => ({ index: dice.length + k + 1, center: a.center, side: a.side,
        read: null, value: a.value })),
    ];
  }

  // Still of a value unknown: read unsure and left so, or added and not yet given one.
  function unsure(d) { return d.value === 0 && (d.read === 0 || d.read === null); }

  function setValue(i, v) {
    const shown = current.dice.length;
    if (i < shown) answers[i] = v;
    else if (v === null) { added.splice(i - shown, 1); buildButtons(); } // not a die after all
    else added[i - shown].value = v;
  }

  // A new question: one button per die, each with the value read (an unsure die: not sure).
  function askDice(state) {
    answersAsk = state.ask;
    answers = state.dice.map((d) => (d.value === null ? 0 : d.value));
    added = [];
    chosen = null;
    buildButtons();
  }

  function buildButtons() {
    const list = $("calib-die-list");
    list.innerHTML = "";
    entries().forEach((d, i) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "calib-die";
      button.dataset.index = String(d.index);
      button.addEventListener("click", () => choose(chosen === i ? null : i));
      list.appendChild(button);
    });
  }

  function showDice() {
    const dice = entries();
    $("calib-die-list").querySelectorAll("button").forEach((button, i) => {
      const d = dice[i];
      if (!d) return;
      const v = d.value;
      button.textContent = fill(T.calib_die, { index: d.index, value: shownValue(v) });
      button.setAttribute("aria-label", fill(T.calib_die, { index: d.index, value: spokenValue(v) }));
      button.setAttribute("aria-expanded", String(chosen === i));
      button.classList.toggle("unsure", unsure(d));
      button.classList.toggle("changed", v !== d.read);
      button.classList.toggle("added", d.read === null);
    });
    const choice = $("calib-choice");
    choice.hidden = chosen === null || !dice[chosen];
    if (choice.hidden) return;
    const d = dice[chosen];
    $("calib-choice-title").textContent = fill(T.calib_choose, { index: d.index });
    choice.querySelectorAll(".calib-value").forEach((button) => {
      const v = button.dataset.value === "none" ? null : parseInt(button.dataset.value, 10);
      button.setAttribute("aria-pressed", String(v === d.value));
    });
    zoom(d);
  }

  // The chosen die, enlarged: a phone shows the whole tray too small to count pips.
  function zoom(d) {
    const canvas = $("calib-zoom");
    const image = $("calib-preview");
    const context = canvas.getContext("2d");
    context.clearRect(0, 0, canvas.width, canvas.height);
    if (!image.naturalWidth) return;
    const half = Math.max(d.side, 12) * 1.1;
    context.drawImage(image, d.center[0] - half, d.center[1] - half, 2 * half, 2 * half,
      0, 0, canvas.width, canvas.height);
  }

  function choose(i) {
    chosen = i;
    showDice();
    drawMarks();
    if (i !== null) $("calib-choice").querySelector(".calib-value").focus();
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
    const values = asking(state);
    $("btn-calib-next").textContent = values ? T.calib_values_right : T.calib_next;
    if (values && state.ask !== answersAsk) askDice(state);
    if (!values) { answers = null; answersAsk = null; added = []; chosen = null; }
    $("calib-dice").hidden = !values;
    $("calib-corners").hidden = values;
    $("calib-dice").dataset.ask = values ? String(state.ask) : "";
    if (values) showDice();
    const preview = state.preview;
    const image = $("calib-preview");
    image.hidden = !preview;
    if (preview && preview.version !== shownVersion) {
      shownVersion = preview.version;
      image.src = preview.url;
    }
    image.classList.toggle("pickable", !!state.corners_open || values);
    $("calib-corners-hint").hidden = !state.corners_open;
    $("btn-calib-corners-clear").hidden = !state.corners_open;
    if (!state.corners_open) points = [];
    drawMarks();
    schedule();
  }

  // The corners on screen: those tapped so far, else those the tower has; while the dice's
  // values are asked, each die's value given so far above it instead.
  function drawMarks() {
    const marks = $("calib-marks");
    const image = $("calib-preview");
    const shown = points.length ? points : ((current && current.corners) || []);
    marks.innerHTML = "";
    const width = image.naturalWidth;
    if (!width || image.hidden) return;
    const scale = image.clientWidth / width;
    if (asking(current) && answers) {
      entries().forEach((d, i) => {
        const mark = document.createElement("span");
        mark.className = "calib-die-mark";
        mark.setAttribute("aria-hidden", "true"); // the buttons below say it
        mark.classList.toggle("unsure", unsure(d));
        mark.classList.toggle("changed", d.value !== d.read);
        mark.classList.toggle("chosen", chosen === i);
        mark.textContent = shownValue(d.value);
        mark.style.left = `${d.center[0] * scale}px`;
        mark.style.top = `${(d.center[1] - 0.6 * d.side) * scale}px`;
        marks.appendChild(mark);
        if (d.read !== null) return;
        // An added die has no number on the picture: the page draws it, on its centre.
        const number = document.createElement("span");
        number.className = "calib-mark calib-added";
        number.setAttribute("aria-hidden", "true");
        number.textContent = String(d.index);
        number.style.left = `${d.center[0] * scale}px`;
        number.style.top = `${d.center[1] * scale}px`;
        marks.appendChild(number);
      });
      return;
    }
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
    const image = $("calib-preview");
    const box = image.getBoundingClientRect();
    const scale = image.naturalWidth / box.width;
    const x = Math.round((event.clientX - box.left) * scale);
    const y = Math.round((event.clientY - box.top) * scale);
    if (asking(current) && answers) { // the die tapped: the nearest, if the tap is on or by it
      const dice = entries();
      let best = null;
      let nearest = Infinity;
      dice.forEach((d, i) => {
        const far = Math.hypot(d.center[0] - x, d.center[1] - y) / Math.max(d.side, 12);
        if (far < nearest) { nearest = far; best = i; }
      });
      if (best !== null && nearest <= 1.2) return choose(best);
      // By no die: one the reading missed, added there, its value to choose (until then:
      // not sure), as large as the dice read.
      const sides = current.dice.map((d) => d.side).sort((a, b) => a - b);
      const side = sides.length ? sides[sides.length >> 1] : image.naturalWidth / 16;
      added.push({ center: [Math.min(Math.max(x, 0), image.naturalWidth - 1),
        Math.min(Math.max(y, 0), image.naturalHeight - 1)], side, value: 0 });
      buildButtons();
      return choose(dice.length);
    }
    if (!current || !current.corners_open) return;
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
    request("/start", { expect: parseInt($("calib-expect").value, 10), values: $("calib-values").checked,
      ...(name ? { name } : {}) });
  });
  $("btn-calib-next").addEventListener("click", () => {
    // Until the answer comes back: a second tap would answer the next question unseen.
    $("btn-calib-next").disabled = true;
    if (asking(current) && answers) {
      request("/values", { values: answers, ask: answersAsk,
        added: added.map((a) => [a.center[0], a.center[1], a.value]) });
    } else request("/next", {});
  });
  $("calib-choice").querySelectorAll(".calib-value").forEach((button) => {
    button.addEventListener("click", () => {
      if (chosen === null || !answers) return;
      const i = chosen;
      setValue(i, button.dataset.value === "none" ? null : parseInt(button.dataset.value, 10));
      choose(null);
      const own = $("calib-die-list").querySelectorAll("button")[i];
      if (own) own.focus();
    });
  });
  $("btn-calib-cancel").addEventListener("click", () => request("/cancel", {}));
  $("btn-calib-corners-clear").addEventListener("click", () => { points = []; drawMarks(); });
  $("calib-preview").addEventListener("click", pick);
  $("calib-preview").addEventListener("load", () => { drawMarks(); if (asking(current) && answers) showDice(); });
  window.addEventListener("resize", drawMarks);
  new MutationObserver(poll).observe(controls, { attributes: true, attributeFilter: ["hidden"] });
  poll();
})();
