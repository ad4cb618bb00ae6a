"""Render a game record (CLI JSONL) as a self-contained HTML page to watch.

    python -m snake.records.render runs/r1/game-00001.jsonl -o game.html

The page needs nothing else (no network, no files): the game is embedded as JSON, the board
is drawn as inline SVG by a small script, with play/pause, step back/forward, first/last
turn, a turn slider, a speed choice and the keys space (play/pause), ← → (step), Home, End.
A side panel lists every snake by its name (:func:`snake.records.names.snake_names`: with
a short id only where two share a name) with its length, health, last shout, and the turn
it was eliminated (read off the record: the wire lists living snakes only, so a snake is
eliminated on the first turn it is missing). The page address may carry ``?turn=N`` (start
there) and ``&autoplay=1`` (start playing).
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from pathlib import Path
from typing import Any, Sequence

from snake.records.replay import Replay, ReplayError, read_replay

FALLBACK_COLORS = ("#E80978", "#2E86DE", "#F39C12", "#27AE60", "#8E44AD", "#16A085",
                   "#C0392B", "#34495E")
#: A colour as the engine sends it (``#RRGGBB``, which the page's shading reads). Anything else is
#: replaced: the colour is written into the page's styles, where a value such as
#: ``url(...)`` would make the viewer's browser fetch an address of the sender's choosing.
COLOR = re.compile(r"#[0-9A-Fa-f]{6}")


def _color(value: Any, k: int) -> str:
    """The snake's colour if it is one, else the ``k``-th fallback colour."""
    if isinstance(value, str) and COLOR.fullmatch(value):
        return value
    return FALLBACK_COLORS[k % len(FALLBACK_COLORS)]


def frames_of(replay: Replay) -> dict[str, Any]:
    """The compact data the page draws: snakes' looks, one frame per turn, the result."""
    snakes: dict[str, dict[str, Any]] = {}
    names = replay.names()
    frames = []
    for body in replay.turns:
        board = body["board"]
        frame_snakes = []
        for s in board["snakes"]:
            if s["id"] not in snakes:
                custom = s.get("customizations") or {}
                snakes[s["id"]] = {
                    "id": s["id"], "name": names[s["id"]],
                    "color": _color(custom.get("color"), len(snakes)),
                    "squad": s.get("squad", ""),
                }
            frame_snakes.append({
                "id": s["id"], "health": s.get("health", 0),
                "body": [[p["x"], p["y"]] for p in s["body"]],
                "shout": s.get("shout", ""), "latency": s.get("latency", ""),
            })
        frames.append({
            "turn": body["turn"],
            "food": [[p["x"], p["y"]] for p in board.get("food", [])],
            "hazards": [[p["x"], p["y"]] for p in board.get("hazards", [])],
            "snakes": frame_snakes,
        })
    first = replay.turns[0]["board"] if replay.turns else {"width": 11, "height": 11}
    ruleset = replay.game.get("ruleset", {})
    return {
        "game": {"id": replay.game.get("id", ""), "ruleset": ruleset.get("name", ""),
                 "map": replay.game.get("map", ""), "timeout": replay.game.get("timeout"),
                 "width": first["width"], "height": first["height"]},
        "snakes": list(snakes.values()),
        "frames": frames,
        "result": replay.result,
    }


def render_html(replay: Replay, title: str | None = None, *, before: str = "",
                after: str = "") -> str:
    """The whole page for ``replay``. A page that embeds the viewer (the service's
    dashboard) may add markup: ``before`` above the board and ``after`` below it (trusted
    HTML: the caller escapes what it puts there). The viewer announces each turn it shows
    with a ``turnshown`` event on ``document`` (``detail: {index, turn}``) and goes to a
    turn with ``window.replay.go(index)``."""
    data = frames_of(replay)
    g = data["game"]
    title = title or f"Battlesnake {g['ruleset']} {g['width']}x{g['height']} — {g['id']}"
    # no "<" at all inside the script element: nothing in a name can end or bend it
    payload = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")
    parts = {"TITLE": html.escape(title), "BEFORE": before, "AFTER": after, "DATA": payload}
    # one pass, so that nothing inserted is read as a placeholder
    return re.sub(r"__(TITLE|BEFORE|AFTER|DATA)__", lambda m: parts[m.group(1)], PAGE)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m snake.records.render",
                                     description="Render a CLI-format game record as HTML.")
    parser.add_argument("replay", type=Path, help="a game record (.jsonl)")
    parser.add_argument("-o", "--output", type=Path,
                        help="the HTML file to write (default: the record's name with .html)")
    parser.add_argument("--title", help="page title")
    args = parser.parse_args(argv)
    try:
        replay = read_replay(args.replay)
    except (OSError, ReplayError) as exc:
        print(f"render: error: {exc}", file=sys.stderr)
        return 2
    if not replay.turns:
        print(f"render: error: {args.replay}: no turns to show", file=sys.stderr)
        return 2
    out = args.output or args.replay.with_suffix(".html")
    out.write_text(render_html(replay, args.title), encoding="utf-8")
    print(f"render: {len(replay.turns)} turns -> {out}")
    return 0


PAGE = (r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>
 body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;"""
        r"""margin:16px;background:#f4f5f7;color:#222}
 h1{font-size:16px;font-weight:600;margin:0 0 10px}
 #wrap{display:flex;gap:18px;align-items:flex-start;flex-wrap:wrap}
 #board{background:#fff;border-radius:6px;box-shadow:0 1px 3px rgba(0,0,0,.15)}
 #panel{min-width:260px;max-width:340px}
 .snake{display:flex;gap:8px;align-items:center;background:#fff;border-radius:6px;"""
        r"""padding:6px 8px;margin-bottom:6px;box-shadow:0 1px 2px rgba(0,0,0,.1)}
 .snake.dead{opacity:.45}
 .sw{width:14px;height:14px;border-radius:3px;flex:none}
 .nm{font-weight:600;font-size:13px}
 .info{font-size:12px;color:#555}
 .bar{height:5px;background:#e3e3e3;border-radius:3px;margin-top:3px;width:150px}
 .bar>div{height:5px;border-radius:3px}
 #controls{display:flex;gap:6px;align-items:center;margin-top:10px;flex-wrap:wrap}
 button{font-size:14px;padding:4px 10px;border:1px solid #bbb;background:#fff;"""
        r"""border-radius:4px;cursor:pointer}
 #slider{width:300px}
 #turn{font-variant-numeric:tabular-nums;min-width:90px;display:inline-block}
 #result{margin-top:10px;font-weight:600}
</style></head>
<body>
__BEFORE__<h1 id="title"></h1>
<div id="wrap">
 <div>
  <svg id="board" xmlns="http://www.w3.org/2000/svg"></svg>
  <div id="controls">
   <button id="first" title="first turn (Home)">|&#x25C0;</button>
   <button id="prev" title="step back (&#x2190;)">&#x25C0;</button>
   <button id="play" title="play / pause (space)"><b>play</b></button>
   <button id="next" title="step forward (&#x2192;)">&#x25B6;</button>
   <button id="last" title="last turn (End)">&#x25B6;|</button>
   <input id="slider" type="range" min="0" value="0">
   <span id="turn"></span>
   <select id="speed" title="turns per second">
    <option value="2">2/s</option><option value="5">5/s</option>
    <option value="10" selected>10/s</option><option value="25">25/s</option>
   </select>
  </div>
 </div>
 <div id="panel"><div id="snakes"></div><div id="result"></div></div>
</div>
__AFTER__<script id="data" type="application/json">__DATA__</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const W = D.game.width, H = D.game.height;
const C = Math.max(12, Math.min(48, Math.floor(640 / Math.max(W, H))));
const PAD = 10, NS = "http://www.w3.org/2000/svg";
const svg = document.getElementById("board");
svg.setAttribute("width", W * C + 2 * PAD); svg.setAttribute("height", H * C + 2 * PAD);
document.getElementById("title").textContent =
  `${D.game.ruleset} ${W}x${H}, map ${D.game.map}, game ${D.game.id}`;
const look = {}; D.snakes.forEach(s => look[s.id] = s);
// snakes of one player share its colour: give the second, third... a darker or lighter shade
function shade(hex, t) {
  const n = parseInt(hex.slice(1), 16); if (hex.length !== 7 || isNaN(n)) return hex;
  const mix = c => Math.round(t < 0 ? c * (1 + t) : c + (255 - c) * t);
  const r = mix(n >> 16), g = mix((n >> 8) & 255), b = mix(n & 255);
  return "#" + ((1 << 24) + (r << 16) + (g << 8) + b).toString(16).slice(1);
}
const uses = {};
D.snakes.forEach(s => {
  const k = uses[s.color] = (uses[s.color] || 0) + 1;
  if (k > 1) s.color = shade(s.color, [0, -0.35, 0.45, -0.6, 0.7, -0.2, 0.25][k - 1] || 0);
});
// the turn each snake disappears from the record: the turn it was eliminated on
const gone = {};
D.frames.forEach((f, i) => {
  const here = new Set(f.snakes.map(s => s.id));
  if (i > 0) D.frames[i - 1].snakes.forEach(s => { """
        r"""if (!here.has(s.id) && !(s.id in gone)) gone[s.id] = f.turn; });
});
const lastSeen = {};
D.frames.forEach((f, i) => f.snakes.forEach(s => lastSeen[s.id] = i));

function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  (parent || svg).appendChild(e); return e;
}
const px = x => PAD + x * C, py = y => PAD + (H - 1 - y) * C;

function draw(i) {
  const f = D.frames[i];
  svg.textContent = "";
  for (let x = 0; x < W; x++) for (let y = 0; y < H; y++)
    el("rect", {x: px(x) + 1, y: py(y) + 1, width: C - 2, height: C - 2, rx: 2, fill: "#eef0f3"});
  f.hazards.forEach(([x, y]) =>
    el("rect", {x: px(x), y: py(y), width: C, height: C, fill: "#5b2c6f", "fill-opacity": 0.28}));
  f.food.forEach(([x, y]) =>
    el("circle", {cx: px(x) + C / 2, cy: py(y) + C / 2, r: C * 0.22, fill: "#e74c3c"}));
  f.snakes.forEach(s => drawSnake(s, look[s.id].color));
  document.getElementById("turn").textContent = """
        r"""`turn ${f.turn} / ${D.frames[D.frames.length - 1].turn}`;
  slider.value = i;
  panel(i);
  document.dispatchEvent(new CustomEvent("turnshown", {detail: {index: i, turn: f.turn}}));
}

function drawSnake(s, color) {
  const g = el("g", {});
  const b = s.body, m = C * 0.12;
  for (let k = b.length - 1; k >= 0; k--) {
    const [x, y] = b[k];
    if (x < 0 || y < 0 || x >= W || y >= H) continue;
    const inset = k === b.length - 1 && k > 0 ? C * 0.2 : m;
    el("rect", {x: px(x) + inset, y: py(y) + inset, width: C - 2 * inset, height: C - 2 * inset,
                rx: C * 0.18, fill: color}, g);
    if (k > 0) {   // join to the segment ahead when it is a neighbour (not across a wrap)
      const [ax, ay] = b[k - 1];
      if (Math.abs(ax - x) + Math.abs(ay - y) === 1) {
        const x0 = Math.min(px(x), px(ax)), y0 = Math.min(py(y), py(ay));
        const wide = ax !== x;
        el("rect", {x: x0 + (wide ? C / 2 : m), y: y0 + (wide ? m : C / 2),
                    width: wide ? C : C - 2 * m, height: wide ? C - 2 * m : C, fill: color}, g);
      }
    }
  }
  const [hx, hy] = b[0];
  if (hx < 0 || hy < 0 || hx >= W || hy >= H) return;
  let dx = 0, dy = 1;   // facing: from the neck to the head
  for (let k = 1; k < b.length; k++) {
    if (b[k][0] !== hx || b[k][1] !== hy) {
      const ddx = hx - b[k][0], ddy = hy - b[k][1];
      if (Math.abs(ddx) + Math.abs(ddy) === 1) { dx = ddx; dy = ddy; }
      else { dx = -Math.sign(ddx); dy = -Math.sign(ddy); }   // across a wrapped edge
      break;
    }
  }
  const cx = px(hx) + C / 2, cy = py(hy) + C / 2;
  el("rect", {x: px(hx) + m / 2, y: py(hy) + m / 2, width: C - m, height: C - m, rx: C * 0.3,
              fill: color, stroke: "#222", "stroke-width": 1.2}, g);
  const fx = dx * C * 0.16, fy = -dy * C * 0.16, sx = -fy, sy = fx;   // forward, side (screen)
  for (const side of [1, -1]) {
    el("circle", {cx: cx + fx + side * sx, cy: cy + fy + side * sy, r: C * 0.1, fill: "#fff"}, g);
    el("circle", {cx: cx + fx * 1.3 + side * sx, cy: cy + fy * 1.3 + side * sy, """
        r"""r: C * 0.05, fill: "#111"}, g);
  }
}

function panel(i) {
  const f = D.frames[i], box = document.getElementById("snakes");
  const now = {}; f.snakes.forEach(s => now[s.id] = s);
  box.textContent = "";
  D.snakes.forEach(s => {
    const cur = now[s.id];
    const row = document.createElement("div"); row.className = "snake" + (cur ? "" : " dead");
    const sw = document.createElement("div"); sw.className = "sw"; sw.style.background = s.color;
    const txt = document.createElement("div");
    const nm = document.createElement("div"); nm.className = "nm";
    nm.textContent = s.name + (s.squad ? ` (squad ${s.squad})` : "");
    const info = document.createElement("div"); info.className = "info";
    if (cur) {
      info.textContent = `length ${cur.body.length}, health ${cur.health}` +
        (cur.latency && cur.latency !== "0" ? `, ${cur.latency} ms` : "") +
        (cur.shout ? ` — “${cur.shout}”` : "");
    } else {
      info.textContent = s.id in gone ? `eliminated on turn ${gone[s.id]}` : "not in this turn";
    }
    const bar = document.createElement("div"); bar.className = "bar";
    const fill = document.createElement("div");
    fill.style.width = `${cur ? cur.health : 0}%`; fill.style.background = s.color;
    bar.appendChild(fill);
    txt.append(nm, info, bar); row.append(sw, txt); box.appendChild(row);
  });
  const r = D.result, res = document.getElementById("result");
  res.textContent = i === D.frames.length - 1
    ? (r.isDraw ? "Draw" : r.winnerId || r.winnerName ? `Winner: ${
       Object.hasOwn(look, r.winnerId) ? look[r.winnerId].name : r.winnerName}` : "Game over")
    : "";
}

const slider = document.getElementById("slider");
slider.max = D.frames.length - 1;
let cur = 0, timer = null;
function go(i) { cur = Math.max(0, Math.min(D.frames.length - 1, i)); draw(cur); }
function play(on) {
  if (timer) { clearInterval(timer); timer = null; }
  document.getElementById("play").innerHTML = on ? "<b>pause</b>" : "<b>play</b>";
  if (!on) return;
  if (cur >= D.frames.length - 1) go(0);
  timer = setInterval(() => { if (cur >= D.frames.length - 1) play(false); else go(cur + 1); },
                      1000 / Number(document.getElementById("speed").value));
}
document.getElementById("first").onclick = () => { play(false); go(0); };
document.getElementById("prev").onclick = () => { play(false); go(cur - 1); };
document.getElementById("next").onclick = () => { play(false); go(cur + 1); };
document.getElementById("last").onclick = () => { play(false); go(D.frames.length - 1); };
document.getElementById("play").onclick = () => play(!timer);
document.getElementById("speed").onchange = () => { if (timer) play(true); };
slider.oninput = () => { play(false); go(Number(slider.value)); };
document.addEventListener("keydown", e => {
  if (e.target.tagName === "SELECT") return;
  if (e.key === " ") { e.preventDefault(); play(!timer); }
  else if (e.key === "ArrowLeft") { play(false); go(cur - 1); }
  else if (e.key === "ArrowRight") { play(false); go(cur + 1); }
  else if (e.key === "Home") { play(false); go(0); }
  else if (e.key === "End") { play(false); go(D.frames.length - 1); }
});
window.replay = {go: i => { play(false); go(i); }, frames: D.frames};
const params = new URLSearchParams(location.search);
const start = Number(params.get("turn"));
go(Number.isFinite(start) ? start : 0);
if (params.get("autoplay")) play(true);
</script>
</body></html>
""")


if __name__ == "__main__":
    from snake.cli import run_main
    run_main(main)
