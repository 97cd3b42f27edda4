// bgbot's web page: every figure comes from the server's JSON API (/docs); nothing here evaluates positions.
// All text from the server or from files is put in the page with textContent, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);

function say(text, info) {
  const m = $("message");
  if (!text) { m.hidden = true; m.textContent = ""; return; }
  m.textContent = text;
  m.className = info ? "info" : "";
  m.hidden = false;
}

let pending = 0; // requests in flight, as document.body's data-pending (tests wait for 0)

function setPending(delta) {
  pending += delta;
  document.body.dataset.pending = String(pending);
}

async function api(path, options) {
  setPending(1);
  try {
    return await request(path, options);
  } finally {
    setPending(-1);
  }
}

async function request(path, options) {
  let resp;
  try {
    resp = await fetch(path, options);
  } catch (e) {
    throw new Error("the server cannot be reached");
  }
  const type = resp.headers.get("content-type") || "";
  const body = type.includes("json") ? await resp.json() : await resp.text();
  if (!resp.ok) {
    const detail = body && body.detail ? body.detail : `the server refused the request (HTTP ${resp.status})`;
    throw new Error(typeof detail === "string" ? detail : JSON.stringify(detail));
  }
  return body;
}

const post = (path, data) => api(path, { method: "POST", headers: { "content-type": "application/json" },
  body: JSON.stringify(data) });
const q = (params) => new URLSearchParams(Object.entries(params).filter(([, v]) => v !== null && v !== undefined && v !== "")).toString();

function el(tag, text, attrs) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
}

function table(headers, rows, onSelect) {
  const t = el("table");
  const tr = el("tr");
  headers.forEach((h) => tr.appendChild(el("th", h)));
  t.appendChild(el("thead")).appendChild(tr);
  const tb = t.appendChild(el("tbody"));
  rows.forEach((row, i) => {
    const r = el("tr");
    row.cells.forEach((c, j) => r.appendChild(el("td", c, j === 1 && row.textCol ? { class: "text" } : {})));
    for (const [k, v] of Object.entries(row.attrs || {})) r.setAttribute(k, v);
    if (onSelect) {
      r.classList.add("selectable");
      r.addEventListener("click", () => {
        tb.querySelectorAll("tr.selected").forEach((x) => x.classList.remove("selected"));
        r.classList.add("selected");
        onSelect(i);
      });
    }
    tb.appendChild(r);
  });
  return t;
}

const f3 = (v) => (v >= 0 ? "+" : "") + Number(v).toFixed(3);
const pct = (v) => (100 * v).toFixed(1) + "%";

// -- views --------------------------------------------------------------------------------------------------------

function showView(name) {
  document.querySelectorAll(".view").forEach((v) => { v.hidden = v.id !== `view-${name}`; });
  document.querySelectorAll(".tab").forEach((t) => t.classList.toggle("active", t.dataset.view === name));
  if (name === "models") loadModels();
  if (name === "rollout") $("ro-position").textContent = current ? `Position ${current.gnubg_id}` : "";
}

// -- position and hint --------------------------------------------------------------------------------------------

let current = null; // the facts of /v1/show for the Position view
let shownPlay = null; // the facts of a selected play's result (opponent on roll), drawn from the mover's side
let editing = null; // points while setting up

function drawPosition() {
  if (!current) return;
  const facts = Object.assign({}, current);
  if (shownPlay) {
    Object.assign(facts, { points: flipPoints(shownPlay.points), pips: shownPlay.pips.slice().reverse(),
      off: shownPlay.off.slice().reverse() });
  }
  if (editing) facts.points = editing;
  drawBoard($("board"), facts, { flip: $("flip-input").checked, onClick: editing ? editClick : null });
}

function showIds(facts) {
  const dl = $("ids");
  dl.textContent = "";
  for (const [name, value, key] of [["Position ID", facts.position_id, "position-id"], ["GNUbg ID", facts.gnubg_id, "gnubg-id"], ["XGID", facts.xgid, "xgid"]]) {
    dl.appendChild(el("dt", name));
    dl.appendChild(el("dd", value, { id: `id-${key}` }));
    const b = el("button", "Copy", { type: "button", "data-copy": key });
    b.addEventListener("click", async () => {
      try { await navigator.clipboard.writeText(value); say(`${name} copied`, true); }
      catch (e) { say(`${name}: ${value} (select it to copy)`, true); }
    });
    dl.appendChild(b);
  }
}

async function loadPosition(text, dice) {
  $("hint-out").textContent = "";
  $("cube-out").textContent = "";
  const facts = await api("/v1/show?" + q({ position: text, dice }));
  setCurrent(facts);
}

function setCurrent(facts) {
  current = facts;
  shownPlay = null;
  showIds(facts);
  drawPosition();
  say("");
}

async function hint() {
  if (!current) return;
  const ply = $("hint-ply").value;
  const out = $("hint-out");
  out.textContent = "";
  if (!current.dice) { await cubeHint(); return; }
  const ans = await api("/v1/move?" + q({ position: current.gnubg_id, ply }));
  // each play's result, from the mover's side, for the board when a row is selected
  const afters = await Promise.all(ans.plays.map((p) => api("/v1/show?" + q({ position: p.position_id }))));
  afters.forEach((a, i) => { ans.plays[i].after = a; });
  const best = ans.plays[0];
  const match = "mwc" in best;
  const rows = ans.plays.map((p) => ({
    cells: [p.rank, p.play, match ? pct(p.mwc) : f3(p.equity), match ? f3(p.emg - best.emg) : f3(p.equity - best.equity),
      pct(p.probabilities.win), pct(p.probabilities.win_gammon), pct(p.probabilities.win_backgammon),
      pct(p.probabilities.lose_gammon), pct(p.probabilities.lose_backgammon), `${p.ply}-ply ${p.evaluator}`],
    textCol: true, attrs: { "data-play": p.play, "data-rank": p.rank },
  }));
  out.appendChild(table(["#", "Play", match ? "MWC" : "Equity", "Diff", "Win", "W g", "W bg", "L g", "L bg", "Evaluator"], rows,
    (i) => { shownPlay = ans.plays[i].after; drawPosition(); }));
}

async function cubeHint() {
  if (!current) return;
  const ply = $("hint-ply").value;
  const out = $("cube-out");
  out.textContent = "";
  const ans = await api("/v1/cube?" + q({ position: current.before_roll_id, ply }));
  const unit = ans.unit === "mwc" ? "MWC" : "equity";
  const rows = ans.options.map((o) => ({ cells: [o.name, ans.unit === "mwc" ? pct(o.value) : f3(o.value), f3(o.diff)], attrs: { "data-option": o.option } }));
  const t = table(["Option", unit, "Diff"], rows);
  const p = ans.probabilities;
  out.appendChild(el("p", `Proper action: ${ans.action}`, { id: "cube-action", "data-action": ans.action }));
  out.appendChild(t);
  out.appendChild(el("p", `Take point ${pct(ans.take_point)} · win ${pct(p.win)} · gammons ${pct(p.win_gammon)} / ${pct(p.lose_gammon)} · ${ans.ply}-ply ${ans.evaluator}`));
}

// -- set-up by clicking -----------------------------------------------------------------------------------------

function editClick(idx) {
  const side = Number($("edit-side").value);
  const pts = editing;
  if (idx === 0) return;
  if (idx === 25) { if (side > 0) pts[25] += 1; else pts[0] -= 1; }
  else if (pts[idx] * side < 0) pts[idx] -= Math.sign(pts[idx]);
  else pts[idx] += side;
  drawSetup();
}

function drawSetup() {
  const pts = editing;
  const pip = (s) => {
    let total = 0;
    for (let i = 0; i < 26; i++) {
      const v = pts[i] * s;
      if (v > 0) total += v * (s > 0 ? i : 25 - i);
    }
    return total;
  };
  const on = (s) => pts.reduce((a, v) => a + Math.max(0, v * s), 0);
  const facts = Object.assign({}, current, { points: pts, pips: [pip(1), pip(-1)], off: [15 - on(1), 15 - on(-1)], dice: null });
  drawBoard($("board"), facts, { flip: $("flip-input").checked, onClick: editClick });
}

async function applySetup() {
  const body = {
    points: editing, dice: $("edit-dice").value || null, cube_value: Number($("edit-cube").value),
    cube_owner: $("edit-owner").value, match_length: Number($("edit-length").value || 0),
    score: [Number($("edit-score0").value || 0), Number($("edit-score1").value || 0)],
  };
  const facts = await post("/v1/board", body);
  editing = null;
  $("edit-input").checked = false;
  $("edit-tools").hidden = true;
  $("position-input").value = facts.gnubg_id;
  $("dice-input").value = "";
  setCurrent(facts);
}

// -- play against the bot ------------------------------------------------------------------------------------------

let game = null; // the game's state from the server
let made = null; // the steps of the play being made: {steps, points, complete, play, sources}
let selected = null;

function gameUrl(id) {
  const u = new URL(location.href);
  if (id) u.searchParams.set("game", id); else u.searchParams.delete("game");
  history.replaceState(null, "", u.toString());
}

async function newGame() {
  const length = Number($("play-length").value), ply = Number($("play-ply").value);
  const body = { match_length: length, ply };
  if ($("play-from-position").checked) {
    if (!current) throw new Error("show a position in the Position view first");
    body.position = current.position_id;
    body.bgbot_first = $("play-bgbot-first").checked;
  }
  const state = await post("/v1/games", body);
  made = null; selected = null;
  $("game-log").textContent = "";
  setGame(state);
}

async function loadGame(id) {
  try {
    setGame(await api(`/v1/games/${encodeURIComponent(id)}`));
    showView("play");
  } catch (e) {
    gameUrl(null);
    say(e.message);
  }
}

function setGame(state) {
  game = state;
  gameUrl(state.game_id);
  made = null; selected = null;
  const save = $("save-mat");
  save.href = `/v1/games/${state.game_id}/mat`;
  save.hidden = state.games === 0;
  renderGame();
}

function renderGame() {
  const s = game;
  if (!s) return;
  const p = s.prompt;
  const kind = s.match_length ? `${s.match_length}-point match` : "money play";
  let status = `${kind} · you ${s.score[0]}, bgbot ${s.score[1]}`;
  if (s.crawford) status += " · Crawford game";
  const ask = { roll: "Your turn: roll or double", play: "Your play", take: "bgbot doubles: take or pass?",
    another: "Game over: another game?", accept: s.question || "bgbot resigns: accept?", over: "The session is over", wait: "..." }[p];
  $("game-status").textContent = `${status} · ${ask}`;
  $("game-status").setAttribute("data-prompt", p);
  $("game-status").setAttribute("data-score", s.score.join("-"));
  $("act-roll").hidden = p !== "roll";
  $("act-double").hidden = !(p === "roll" && s.may_double);
  $("act-take").hidden = p !== "take";
  $("act-pass").hidden = p !== "take";
  $("resign-box").hidden = p !== "roll";
  $("act-another").hidden = p !== "another";
  $("act-accept").hidden = p !== "accept";
  $("act-decline").hidden = p !== "accept";
  $("act-stop").hidden = p !== "another";
  $("play-form").hidden = p !== "play";
  $("act-undo").hidden = p !== "play";
  $("act-confirm").hidden = p !== "play";
  $("act-undo").disabled = !(made && made.steps.length);
  $("act-confirm").disabled = !(made && made.complete);
  $("pending-play").textContent = made && made.complete ? `play ${made.play}` : "";
  $("save-mat").hidden = s.games === 0;
  const log = $("game-log");
  log.textContent = "";
  (s.log || []).forEach((line) => log.appendChild(el("li", line)));
  log.scrollTop = log.scrollHeight;
  // the tutor's flagged decisions of this game, as the server judged them
  const notes = $("tutor-log");
  notes.textContent = "";
  (s.tutor || []).forEach((v) => notes.appendChild(el("li", `tutor: ${v.text}`,
    { "data-decision": v.decision, "data-played": v.played, "data-best": v.best, "data-error": v.error, "data-unit": v.unit })));
  if (s.error) say(s.error);
  if (!s.points) return;
  const facts = { points: made ? made.points : s.points, pips: s.pips, off: s.off, cube: s.cube,
    match: { length: s.match_length, score: s.score }, dice: s.dice };
  const playing = p === "play" && !(made && made.complete);
  drawBoard($("game-board"), facts, { flip: $("flip-input").checked, onClick: p === "play" ? boardClick : null,
    onDrag: playing ? dragMove : null, selected, sources: p === "play" ? (made ? made.sources : null) : [] });
}

// The tutor (when ticked): the server judges each play, double or roll, take or pass against the bot's own choice
// before playing it, and keeps the ones that lose more than the threshold (money equity, or EMG in a match) in the
// game's "tutor" list, which renderGame shows.
async function send(line) {
  const tutor = $("tutor-input").checked ? Number($("tutor-threshold").value || 0) : null;
  $("game-status").dataset.prompt = "wait";
  const state = await post(`/v1/games/${game.game_id}`, { line, tutor });
  const errors = (state.messages || []).filter((m) => /^\s/.test(m));
  game = state;
  made = null; selected = null;
  renderGame();
  if (errors.length) say(errors.map((m) => m.trim()).join(" "));
  else { say(""); $("play-text").value = ""; }
}

async function boardClick(idx) {
  if (!game || game.prompt !== "play") return;
  if (made && made.complete) return;
  if (selected === null) {
    if (idx === 0) return;
    const pts = made ? made.points : game.points;
    if (pts[idx] <= 0) { say(`no checker of yours on ${idx === 25 ? "the bar" : "point " + idx}`); return; }
    selected = idx;
    say("");
    renderGame();
    return;
  }
  if (idx === selected) { selected = null; renderGame(); return; }
  const from = selected;
  selected = null;
  await step(from, idx);
}

// A checker dragged from one point to another (or off): the same step as two clicks.
async function dragMove(from, to) {
  if (!game || game.prompt !== "play" || (made && made.complete)) return;
  selected = null;
  await step(from, to);
}

async function step(from, to) {
  try {
    made = await post("/v1/steps", { position: game.position_id, dice: game.dice.join(""),
      steps: made ? made.steps : [], move: [from, to] });
    say("");
  } catch (e) {
    say(e.message);
  }
  renderGame();
}

async function undo() {
  if (!made) return;
  const steps = made.steps.slice(0, -1);
  made = steps.length ? await post("/v1/steps", { position: game.position_id, dice: game.dice.join(""), steps }) : null;
  selected = null;
  renderGame();
}

// -- rollouts ------------------------------------------------------------------------------------------------------

let source = null;

function startRollout() {
  if (!current) { say("show a position first"); return; }
  if (source) source.close();
  const params = {
    position: current.gnubg_id, trials: $("ro-trials").value, ply: $("ro-ply").value, seed: $("ro-seed").value,
    truncate: $("ro-truncate").value, cube: $("ro-cube").checked, variance_reduction: $("ro-vr").checked,
    candidates: current.dice ? $("ro-candidates").value : null,
  };
  $("ro-out").textContent = "";
  $("ro-status").textContent = "starting";
  $("ro-status").setAttribute("data-state", "running");
  $("ro-progress").value = 0;
  $("ro-start").disabled = true;
  $("ro-cancel").disabled = false;
  source = new EventSource("/v1/rollout?" + q(params));
  const done = (state, text) => {
    source.close();
    source = null;
    $("ro-start").disabled = false;
    $("ro-cancel").disabled = true;
    $("ro-status").textContent = text;
    $("ro-status").setAttribute("data-state", state);
  };
  source.addEventListener("progress", (ev) => {
    const m = JSON.parse(ev.data);
    $("ro-progress").max = m.total;
    $("ro-progress").value = m.done;
    $("ro-progress").setAttribute("data-done", m.done);
    let text = `${m.done} of ${m.total} trials`;
    if (m.values) text += " · " + m.values.map((v, i) => `${f3(v)}${m.se ? " ± " + m.se[i].toFixed(3) : ""}`).join(", ");
    $("ro-status").textContent = text;
  });
  source.addEventListener("result", (ev) => { done("done", "finished"); showRollout(JSON.parse(ev.data)); });
  source.addEventListener("failed", (ev) => { const m = JSON.parse(ev.data).detail; done("failed", m); say(m); });
  let opened = false;
  source.onopen = () => { opened = true; };
  source.onerror = () => {
    if (!source) return;
    if (opened || source.readyState !== EventSource.CLOSED) { done("failed", "the connection to the server was lost"); return; }
    const mine = source; // refused before it started (400, 422): an error answer, which an EventSource cannot read
    mine.close();
    rolloutRefusal(mine.url).then((m) => { if (source === mine) { done("failed", m); say(m); } });
  };
}

// The words of a rollout refused before it started: the same request again, read with fetch (a refusal is the
// same answer each time); a stream, should it start after all, is closed at once.
async function rolloutRefusal(url) {
  const stop = new AbortController();
  setPending(1);
  try {
    const resp = await fetch(url, { signal: stop.signal });
    if (resp.ok) { stop.abort(); return "the connection to the server was lost"; }
    const body = await resp.json().catch(() => null);
    return body && typeof body.detail === "string" ? body.detail : `the server refused the rollout (HTTP ${resp.status})`;
  } catch (e) {
    return "the server cannot be reached";
  } finally {
    setPending(-1);
  }
}

function cancelRollout() {
  if (!source) return;
  source.close(); // closing the stream cancels the rollout on the server
  source = null;
  $("ro-start").disabled = false;
  $("ro-cancel").disabled = true;
  $("ro-status").textContent = "cancelled";
  $("ro-status").setAttribute("data-state", "cancelled");
}

function showRollout(r) {
  const out = $("ro-out");
  const s = r.settings;
  out.appendChild(el("p", `${s.trials} trials, ${s.plies}-ply, seed ${s.seed}${s.cube ? ", cubeful" : ""}`
    + (r.se_excludes_truncation_bias ? `, truncated after ${s.truncate} plies (± se: the trials' noise only, not the`
      + " bias of the model's valuation where they stop)" : "")));
  if (r.plays) {
    out.appendChild(table(["#", "Play", "Equity", "± se", "Diff", "Win", "W g", "L g", ""], r.plays.map((p) => ({
      cells: [p.rank, p.play, f3(p.cubeful_equity ?? p.equity), (p.cubeful_equity_se ?? p.equity_se).toFixed(3),
        f3(p.difference), pct(p.probabilities.win), pct(p.probabilities.win_gammon), pct(p.probabilities.lose_gammon),
        p.significant ? "significant" : p.significance_note ? "too few trials to judge" : ""], textCol: true,
      attrs: { "data-play": p.play } }))));
  } else if (r.cube) {
    const c = r.cube;
    out.appendChild(el("p", `Proper action: ${c.action}`, { id: "ro-action" }));
    out.appendChild(table(["Option", "Equity", "± se"], [
      { cells: ["No double", f3(c.no_double.cubeful_equity), c.no_double.cubeful_equity_se.toFixed(3)] },
      { cells: ["Double, take", f3(c.double_take.cubeful_equity), c.double_take.cubeful_equity_se.toFixed(3)] },
      { cells: ["Double, pass", f3(c.double_pass), ""] }]));
  } else {
    const p = r.position;
    out.appendChild(table(["", "Equity", "± se", "Win", "W g", "W bg", "L g", "L bg"], [{ cells: ["Position",
      f3(p.equity), p.equity_se.toFixed(3), pct(p.probabilities.win), pct(p.probabilities.win_gammon),
      pct(p.probabilities.win_backgammon), pct(p.probabilities.lose_gammon), pct(p.probabilities.lose_backgammon)] }]));
  }
}

// -- match analysis -----------------------------------------------------------------------------------------------

async function analyseFile() {
  const file = $("mat-file").files[0];
  if (!file) { say("choose a .mat file first"); return; }
  $("an-summary").textContent = "";
  $("an-decisions").textContent = "";
  $("an-board").setAttribute("hidden", "");
  say("analysing ...", true);
  const text = await file.text();
  const r = await api("/v1/analyse?" + q({ ply: $("an-ply").value }), { method: "POST",
    headers: { "content-type": "text/plain" }, body: text });
  say("");
  const unit = r.unit === "emg" ? "EMG" : "equity";
  $("an-summary").appendChild(el("p", `${r.match_length ? r.match_length + "-point match" : "money session"}, ${r.games} game(s), errors in normalised ${unit}`));
  const rows = [];
  for (const group of ["checker", "cube", "overall"]) {
    for (const [label, get] of [["decisions", (g) => g.decisions], ["error total", (g) => g.error_total.toFixed(3)],
      ["error rate (x1000)", (g) => g.error_rate.toFixed(1)], ["very bad", (g) => g.marks["very bad"]], ["bad", (g) => g.marks.bad]]) {
      rows.push({ cells: [`${group} ${label}`, ...r.players.map((p) => get(p[group]))] });
    }
    rows.push({ cells: [`${group} rating`, ...r.players.map((p) => p[group].rating || "")] });
  }
  for (const [label, get] of [["luck total", (l) => l.total.toFixed(3)], ["luck rate (x1000)", (l) => l.rate.toFixed(1)],
    ["luck rating", (l) => l.rating]]) {
    rows.push({ cells: [label, ...r.players.map((p) => (p.luck ? get(p.luck) : ""))] });
  }
  $("an-summary").appendChild(table(["", ...r.players.map((p) => p.name)], rows));
  const shown = r.decisions.filter((d) => d.counted || d.mark);
  const t = table(["Game", "Player", "Decision", "Played", "Best", "Error"], shown.map((d) => ({
    cells: [`${d.game}.${d.action}`, d.player, d.dice ? `${d.decision} ${d.dice.join("")}` : d.decision, d.played, d.best,
      d.error ? "-" + d.error.toFixed(3) + (d.mark ? ` (${d.mark})` : "") : ""],
    attrs: { class: d.mark ? "mark-" + d.mark.replace(" ", "") : "", "data-gnubg-id": d.gnubg_id } })), async (i) => {
    try {
      const facts = await api("/v1/show?" + q({ position: shown[i].gnubg_id }));
      $("an-board").removeAttribute("hidden");
      drawBoard($("an-board"), facts, { flip: $("flip-input").checked });
    } catch (e) { say(e.message); }
  });
  $("an-decisions").appendChild(t);
}

// -- models and training runs -------------------------------------------------------------------------------------

let modelsLoaded = false;

async function loadModels() {
  if (modelsLoaded) return;
  modelsLoaded = true;
  const r = await api("/v1/models");
  const out = $("models-out");
  out.textContent = "";
  if (!r.models.length) out.appendChild(el("p", "No models directory (bgbot serve --models DIR)."));
  else out.appendChild(table(["Model", "Kind", "Size", "Card", "Headline figures"], r.models.map((m) => ({
    cells: [m.name, m.kind, `${Math.round(m.size_bytes / 1024)} KB`, m.title || "", (m.figures || []).join(" · ")] }))));
  if (r.gates && r.gates.length) {
    out.appendChild(el("h3", "Gates (duplicate games; ppg of the candidate, 95% interval)"));
    const rows = [];
    for (const g of r.gates) {
      for (const x of g.results) {
        rows.push({ cells: [g.file, g.candidate, x.opponent, `${x.ppg >= 0 ? "+" : ""}${x.ppg.toFixed(3)}`,
          `[${x.ci_low.toFixed(3)}, ${x.ci_high.toFixed(3)}]`, String(x.games), g.accepted ? "yes" : "no"],
          attrs: { "data-gate": g.file } });
      }
    }
    out.appendChild(table(["Record", "Candidate", "Against", "ppg", "95% CI", "Games", "Accepted"], rows));
  }
  const sel = $("run-select");
  sel.textContent = "";
  r.runs.forEach((name) => sel.appendChild(el("option", name, { value: name })));
  if (r.runs.length) plotRun(r.runs[0]);
}

async function plotRun(name) {
  const r = await api(`/v1/runs/${encodeURIComponent(name)}`);
  const svg = $("run-plot");
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const recs = r.records;
  if (!recs.length) return;
  const x0 = 50, x1 = 540, y0 = 270, y1 = 20;
  const xs = recs.map((d) => d.games_trained), ys = recs.flatMap((d) => [d.ci_low ?? d.ppg, d.ci_high ?? d.ppg]);
  const xmax = Math.max(...xs), ymin = Math.min(0, ...ys), ymax = Math.max(0, ...ys);
  const X = (v) => x0 + ((x1 - x0) * v) / (xmax || 1), Y = (v) => y0 - ((y0 - y1) * (v - ymin)) / ((ymax - ymin) || 1);
  svgEl("rect", { x: 0, y: 0, width: 560, height: 300, fill: "#fff" }, svg);
  svgEl("line", { x1: x0, x2: x1, y1: Y(0), y2: Y(0), stroke: "#999" }, svg);
  svgEl("polygon", { points: recs.map((d) => `${X(d.games_trained)},${Y(d.ci_high ?? d.ppg)}`).concat(
    recs.slice().reverse().map((d) => `${X(d.games_trained)},${Y(d.ci_low ?? d.ppg)}`)).join(" "), fill: "#cfe0c8" }, svg);
  svgEl("polyline", { points: recs.map((d) => `${X(d.games_trained)},${Y(d.ppg)}`).join(" "), fill: "none", stroke: "#33472f",
    "stroke-width": 2, "data-points": recs.length }, svg);
  svgText(x0, 290, "0", {}, svg);
  svgText(x1, 290, `${xmax.toLocaleString()} games`, { "text-anchor": "end" }, svg);
  svgText(x0 - 4, Y(ymax) + 4, f3(ymax), { "text-anchor": "end", "font-size": 11 }, svg);
  svgText(x0 - 4, Y(ymin) + 4, f3(ymin), { "text-anchor": "end", "font-size": 11 }, svg);
  svgText(300, 14, `${name}: ppg against ${recs[recs.length - 1].opponent || "the benchmark"} (95% CI)`, {}, svg);
}

// -- wiring -----------------------------------------------------------------------------------------------------------

function guard(fn) {
  return async (ev) => {
    if (ev && ev.preventDefault) ev.preventDefault();
    try { await fn(ev); } catch (e) { say(e.message); }
  };
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll(".tab").forEach((t) => t.addEventListener("click", guard(() => showView(t.dataset.view))));
  $("position-form").addEventListener("submit", guard(() => loadPosition($("position-input").value.trim(), $("dice-input").value.trim())));
  $("flip-input").addEventListener("change", () => { drawPosition(); renderGame(); });
  $("edit-input").addEventListener("change", () => {
    $("edit-tools").hidden = !$("edit-input").checked;
    editing = $("edit-input").checked && current ? current.points.slice() : null;
    if (editing) drawSetup(); else drawPosition();
  });
  $("edit-clear").addEventListener("click", () => { editing = new Array(26).fill(0); drawSetup(); });
  $("edit-start").addEventListener("click", () => {
    editing = new Array(26).fill(0);
    Object.entries({ 24: 2, 13: 5, 8: 3, 6: 5, 1: -2, 12: -5, 17: -3, 19: -5 }).forEach(([k, v]) => { editing[k] = v; });
    drawSetup();
  });
  $("edit-apply").addEventListener("click", guard(applySetup));
  $("hint-button").addEventListener("click", guard(hint));
  $("cube-button").addEventListener("click", guard(cubeHint));
  $("new-game").addEventListener("click", guard(newGame));
  $("act-roll").addEventListener("click", guard(() => send("roll")));
  $("act-double").addEventListener("click", guard(() => send("double")));
  $("act-take").addEventListener("click", guard(() => send("take")));
  $("act-pass").addEventListener("click", guard(() => send("pass")));
  $("act-resign").addEventListener("click", guard(() => send("resign " + $("resign-level").value)));
  $("act-another").addEventListener("click", guard(() => send("y")));
  $("act-accept").addEventListener("click", guard(() => send("y")));
  $("act-decline").addEventListener("click", guard(() => send("n")));
  $("act-stop").addEventListener("click", guard(() => send("n")));
  $("act-undo").addEventListener("click", guard(undo));
  $("act-confirm").addEventListener("click", guard(() => send(made.play)));
  $("play-form").addEventListener("submit", guard(() => send($("play-text").value)));
  $("ro-start").addEventListener("click", guard(startRollout));
  $("ro-cancel").addEventListener("click", guard(cancelRollout));
  $("analyse-form").addEventListener("submit", guard(analyseFile));
  $("run-select").addEventListener("change", guard(() => plotRun($("run-select").value)));
  // the tutor's settings outlive a reload
  $("tutor-input").checked = localStorage.getItem("bgbot.tutor") === "on";
  $("tutor-threshold").value = localStorage.getItem("bgbot.tutor.threshold") || "0.06";
  $("tutor-input").addEventListener("change", () => localStorage.setItem("bgbot.tutor", $("tutor-input").checked ? "on" : "off"));
  $("tutor-threshold").addEventListener("change", () => localStorage.setItem("bgbot.tutor.threshold", $("tutor-threshold").value));
  const gameId = new URL(location.href).searchParams.get("game");
  showView(gameId ? "play" : "position");
  guard(() => loadPosition($("position-input").value, ""))();
  if (gameId) loadGame(gameId);
});
