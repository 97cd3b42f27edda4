// The board as SVG, drawn from the side on roll (X, at the bottom) as `bgbot show` draws it: X's points 13..24
// along the top from left to right, 12..1 along the bottom, X's home board at the bottom right (or the bottom left
// with `flip`). Every point, bar and tray carries data attributes (data-point, data-count) that tests read.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const PW = 36, BARW = 32, LEFT = 10, TOP = 10, BOTTOM = 390, R = 16;

function svgEl(tag, attrs, parent) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  if (parent) parent.appendChild(el);
  return el;
}

function svgText(x, y, text, attrs, parent) {
  const el = svgEl("text", Object.assign({ x, y, "text-anchor": "middle", "font-size": 13 }, attrs || {}), parent);
  el.textContent = text;
  return el;
}

// The column (0..11, left to right) and half (top or bottom) of point p (1..24) of the side on roll.
function pointPlace(p, flip) {
  let col, top;
  if (p >= 13) { top = true; col = p - 13; } else { top = false; col = 12 - p; }
  if (flip) col = 11 - col;
  return { col, top };
}

function colX(col) { return LEFT + col * PW + (col >= 6 ? BARW : 0); }

function stack(g, cx, count, fromTop, colour, max) {
  const n = Math.abs(count);
  const shown = Math.min(n, max || 5);
  for (let i = 0; i < shown; i++) {
    const cy = fromTop ? TOP + R + i * 2 * R : BOTTOM - R - i * 2 * R;
    svgEl("circle", { cx, cy, r: R - 1, class: "checker", fill: colour === "x" ? "#f2efe6" : "#8e2b20",
      stroke: colour === "x" ? "#333" : "#3a0d08", "stroke-width": 1.5 }, g);
  }
  if (n > shown) {
    const cy = fromTop ? TOP + R + (shown - 1) * 2 * R : BOTTOM - R - (shown - 1) * 2 * R;
    svgText(cx, cy + 5, String(n), { fill: colour === "x" ? "#000" : "#fff", "font-weight": 700 }, g);
  }
}

// facts: {points: 26 signed counts, pips: [x, o], off: [x, o], cube: {value, owner}, match: {length, score},
// dice}; opts: {flip, onClick(index: 1..24 point, 25 bar, 0 off), onDrag(from, to): X's checker dragged from a
// point (or the bar) to a point (or off), selected, sources: [indices]}.
function drawBoard(svg, facts, opts) {
  opts = opts || {};
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  svg._board = { facts, opts };
  svg.classList.toggle("draggable", Boolean(opts.onDrag));
  if (opts.onDrag && !svg._dragging) enableDrag(svg);
  const pts = facts.points;
  const m = facts.match || { length: 0, score: [0, 0] };
  const attrs = {
    "data-pips-x": facts.pips[0], "data-pips-o": facts.pips[1], "data-off-x": facts.off[0], "data-off-o": facts.off[1],
    "data-cube-value": facts.cube.value, "data-cube-owner": facts.cube.owner, "data-match-length": m.length,
    "data-score-x": m.score[0], "data-score-o": m.score[1], "data-dice": facts.dice ? facts.dice.join("") : "",
    "data-flip": opts.flip ? 1 : 0,
  };
  for (const [k, v] of Object.entries(attrs)) svg.setAttribute(k, String(v));
  svgEl("rect", { x: 0, y: 0, width: 560, height: 400, fill: "#5b3a1e" }, svg);
  svgEl("rect", { x: LEFT, y: TOP, width: 6 * PW, height: BOTTOM - TOP, fill: "#d9c9a3" }, svg);
  svgEl("rect", { x: LEFT + 6 * PW + BARW, y: TOP, width: 6 * PW, height: BOTTOM - TOP, fill: "#d9c9a3" }, svg);
  const click = (idx) => (opts.onClick ? () => opts.onClick(idx) : null);
  const sources = new Set(opts.sources || []);
  for (let p = 1; p <= 24; p++) {
    const { col, top } = pointPlace(p, opts.flip);
    const x = colX(col), cx = x + PW / 2;
    const g = svgEl("g", { "data-point": p, "data-count": pts[p], class: "point" }, svg);
    const tip = top ? TOP + 150 : BOTTOM - 150;
    const base = top ? TOP : BOTTOM;
    const dark = (p % 2) === 0;
    let stroke = "none";
    if (opts.selected === p) stroke = "#1b6fd1";
    else if (sources.has(p)) stroke = "#2c9b3a";
    svgEl("polygon", { points: `${x},${base} ${x + PW},${base} ${cx},${tip}`, fill: dark ? "#6e8f62" : "#b55d3c",
      stroke, "stroke-width": 3 }, g);
    svgText(cx, top ? TOP + 165 : BOTTOM - 156, String(p), { "font-size": 10, fill: "#3b2a12" }, g);
    if (pts[p] > 0) stack(g, cx, pts[p], top, "x");
    else if (pts[p] < 0) stack(g, cx, pts[p], top, "o");
    const h = click(p);
    if (h) { g.addEventListener("click", h); g.style.cursor = "pointer"; }
  }
  // the bar: O's checkers (index 0) in the top half, X's (index 25) in the bottom half
  const barX = LEFT + 6 * PW, bcx = barX + BARW / 2;
  svgEl("rect", { x: barX, y: TOP, width: BARW, height: BOTTOM - TOP, fill: "#4a2f17" }, svg);
  const ob = svgEl("g", { "data-point": 0, "data-count": pts[0], class: "bar" }, svg);
  svgEl("rect", { x: barX, y: TOP, width: BARW, height: 180, fill: "transparent" }, ob);
  stack(ob, bcx, pts[0], true, "o", 3);
  const xb = svgEl("g", { "data-point": 25, "data-count": pts[25], class: "bar" }, svg);
  svgEl("rect", { x: barX, y: 210, width: BARW, height: 180, fill: "transparent",
    stroke: opts.selected === 25 ? "#1b6fd1" : (sources.has(25) ? "#2c9b3a" : "none"), "stroke-width": 3 }, xb);
  stack(xb, bcx, pts[25], false, "x", 3);
  const hb = click(25);
  if (hb) { xb.addEventListener("click", hb); xb.style.cursor = "pointer"; }
  // the trays: O's checkers off at the top, X's at the bottom; the cube beside them
  const trayX = 484;
  const to = svgEl("g", { "data-off": "o", "data-count": facts.off[1], class: "tray" }, svg);
  svgEl("rect", { x: trayX, y: TOP, width: 66, height: 150, fill: "#7a5530" }, to);
  svgText(trayX + 33, TOP + 24, `off ${facts.off[1]}`, { fill: "#fff" }, to);
  const tx = svgEl("g", { "data-off": "x", "data-count": facts.off[0], class: "tray" }, svg);
  svgEl("rect", { x: trayX, y: BOTTOM - 150, width: 66, height: 150, fill: "#7a5530" }, tx);
  svgText(trayX + 33, BOTTOM - 12, `off ${facts.off[0]}`, { fill: "#fff" }, tx);
  const ho = click(0);
  if (ho) { tx.addEventListener("click", ho); tx.style.cursor = "pointer"; }
  const cubeY = facts.cube.owner === "me" ? 300 : (facts.cube.owner === "opponent" ? 70 : 185);
  // the cube only shows: a click or a drop on it is one on the tray beneath
  const cg = svgEl("g", { class: "cube", "data-value": facts.cube.value, "data-owner": facts.cube.owner,
    "pointer-events": "none" }, svg);
  svgEl("rect", { x: trayX + 15, y: cubeY, width: 36, height: 36, rx: 5, fill: "#fff", stroke: "#000" }, cg);
  svgText(trayX + 33, cubeY + 24, String(facts.cube.owner === "centre" && facts.cube.value === 1 ? 64 : facts.cube.value),
    { "font-size": 17, "font-weight": 700 }, cg);
  // the middle band: pips, score, dice
  const midL = LEFT + 3 * PW;
  svgText(midL, 192, `O  ${facts.pips[1]} pips${m.length ? `  · ${m.score[1]}/${m.length}` : ""}`,
    { class: "pips-o", fill: "#3b2a12" }, svg);
  svgText(midL, 216, `X  ${facts.pips[0]} pips${m.length ? `  · ${m.score[0]}/${m.length}` : ""}`,
    { class: "pips-x", fill: "#3b2a12" }, svg);
  if (facts.dice) {
    const dx = LEFT + 6 * PW + BARW + 3 * PW;
    facts.dice.forEach((d, i) => {
      const g = svgEl("g", { class: "die", "data-die": d }, svg);
      const x0 = dx - 40 + i * 44;
      svgEl("rect", { x: x0, y: 183, width: 34, height: 34, rx: 6, fill: "#fff", stroke: "#222" }, g);
      svgText(x0 + 17, 206, String(d), { "font-size": 18, "font-weight": 700 }, g);
    });
  }
}

// The index under a point of the board's own coordinates (viewBox units): 1..24 a point of X's (the side on roll),
// 25 the bar, 0 the trays (off), null elsewhere.
function indexAt(x, y, flip) {
  const barX = LEFT + 6 * PW;
  if (x >= 480) return 0;
  if (x >= barX && x < barX + BARW) return 25;
  let col;
  if (x >= LEFT && x < barX) col = Math.floor((x - LEFT) / PW);
  else if (x >= barX + BARW && x < barX + BARW + 6 * PW) col = 6 + Math.floor((x - barX - BARW) / PW);
  else return null;
  if (flip) col = 11 - col;
  return y < (TOP + BOTTOM) / 2 ? 13 + col : 12 - col;
}

// Dragging checkers with a mouse, a pen or a finger (pointer events): a press on one of X's checkers that moves
// further than a few pixels lifts it, the checker follows the pointer, and releasing it calls opts.onDrag(from, to)
// of the board as last drawn. A press that does not move stays a click. Set up once per svg.
function enableDrag(svg) {
  svg._dragging = true;
  let drag = null; // {from, id, x, y, lifted, ghost}
  let swallow = false; // the click that ends a drag is not a click on a point
  const local = (ev) => {
    const pt = svg.createSVGPoint();
    pt.x = ev.clientX; pt.y = ev.clientY;
    return pt.matrixTransform(svg.getScreenCTM().inverse());
  };
  const stop = () => {
    if (drag && drag.ghost) {
      drag.ghost.remove();
      svg.querySelectorAll("circle.checker[opacity]").forEach((c) => c.removeAttribute("opacity"));
    }
    if (drag && drag.lifted && svg.hasPointerCapture(drag.id)) svg.releasePointerCapture(drag.id);
    drag = null;
  };
  svg.addEventListener("pointerdown", (ev) => {
    const b = svg._board;
    if (!b || !b.opts.onDrag || (ev.pointerType === "mouse" && ev.button !== 0)) return;
    const p = local(ev);
    const from = indexAt(p.x, p.y, b.opts.flip);
    stop();
    if (!from || b.facts.points[from] <= 0) return;
    drag = { from, id: ev.pointerId, x: ev.clientX, y: ev.clientY, lifted: false, ghost: null };
  });
  svg.addEventListener("pointermove", (ev) => {
    if (!drag || ev.pointerId !== drag.id) return;
    if (!drag.lifted) {
      if (Math.hypot(ev.clientX - drag.x, ev.clientY - drag.y) < 6) return;
      drag.lifted = true;
      svg.setPointerCapture(drag.id);
      const stackOf = svg.querySelector(`[data-point='${drag.from}']`);
      const top = stackOf ? stackOf.querySelectorAll("circle.checker") : [];
      if (top.length) top[top.length - 1].setAttribute("opacity", 0.35); // the lifted checker's place
      drag.ghost = svgEl("circle", { r: R - 1, class: "drag-checker", fill: "#f2efe6", stroke: "#1b6fd1",
        "stroke-width": 2.5, opacity: 0.9, "data-from": drag.from }, svg);
    }
    ev.preventDefault();
    const p = local(ev);
    drag.ghost.setAttribute("cx", p.x);
    drag.ghost.setAttribute("cy", p.y);
  });
  svg.addEventListener("pointerup", (ev) => {
    if (!drag || ev.pointerId !== drag.id) return;
    const { from, lifted } = drag;
    stop();
    if (!lifted) return; // a click
    swallow = true;
    setTimeout(() => { swallow = false; }, 0);
    const b = svg._board;
    const p = local(ev);
    const to = indexAt(p.x, p.y, b.opts.flip);
    if (to !== null && to !== from && b.opts.onDrag) b.opts.onDrag(from, to);
  });
  svg.addEventListener("pointercancel", stop);
  svg.addEventListener("click", (ev) => { if (swallow) { ev.stopPropagation(); swallow = false; } }, true);
}

// The same position seen by the other side: reversed and negated (bgbot.rules.board.flip).
function flipPoints(points) {
  return points.slice().reverse().map((v) => (v === 0 ? 0 : -v));
}

window.drawBoard = drawBoard;
window.flipPoints = flipPoints;
