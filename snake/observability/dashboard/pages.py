"""The dashboard's pages, as HTML strings (no Flask here: the service's routes call these).

``/games``: what the snake has been doing — results, win rate and game length by day, the
latency and depth distributions of recent answers, what answered them, and the recent
games (when, ruleset, opponents, turns, result, latency p50/max, depth), newest first:
finished games unless the filter asks for the others (unfinished, such as one-position
probes, abandoned, in play), which a line under the list counts and links to.

``/games/<id>``: one game — how our snake died, when it did (the cause by the rules, by
whom, whether it was trapped, from when it was cut off from the others), the replay (the
arena's viewer, :mod:`snake.records.render`) and,
for the turn on the board, why the snake moved as it did (what answered, the filter, the
search's depth, score, line and root scores, the times), a chart of score, depth and time
by turn, and every turn in a table (a click shows that turn).

Snakes are named by their names wherever the pages show one (the lists, the header, the
searched opponents and the expected line of "why this move"), with the start of the id only
where two share a name (:func:`snake.records.names.snake_names`, through
:attr:`GameRow.names`).

Everything that came from a request (snake names, shouts, ids) is escaped here or set as
text by the page's script; nothing is inserted as markup.
"""

from __future__ import annotations

import html
import json
import statistics
import time
from dataclasses import replace
from typing import Any, Sequence
from urllib.parse import quote

from snake.observability.dashboard.charts import histogram, series, shares
from snake.observability.gamelog.reader import GameFilter, GameRow, Summary, TurnRow
from snake.observability.gamelog.records import RESULTS
from snake.records.render import render_html
from snake.records.replay import Replay

STYLE = ("""<style>
 .dash{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;color:#222}
 body.dashboard{margin:16px;background:#f4f5f7}
 .dash h1{font-size:18px;margin:0 0 4px} .dash h2{font-size:15px;margin:18px 0 6px}
 .dash .muted{color:#666;font-size:12px}
 .dash .cards{display:flex;gap:10px;flex-wrap:wrap;margin:10px 0}
 .dash .card{background:#fff;border-radius:6px;padding:8px 12px;"""
         """box-shadow:0 1px 2px rgba(0,0,0,.12);min-width:110px}
 .dash .card b{display:block;font-size:18px}
 .dash .charts{display:flex;gap:12px;flex-wrap:wrap}
 .dash .chart{background:#fff;border-radius:6px;box-shadow:0 1px 2px rgba(0,0,0,.12)}
 .dash table{border-collapse:collapse;background:#fff;font-size:13px;"""
         """box-shadow:0 1px 2px rgba(0,0,0,.12)}
 .dash th,.dash td{padding:4px 8px;border-bottom:1px solid #eee;text-align:left;white-space:nowrap}
 .dash td.num,.dash th.num{text-align:right;font-variant-numeric:tabular-nums}
 .dash tr.turn{cursor:pointer} .dash tr.turn:hover,.dash tr.shown{background:#fdeef5}
 .dash .win{color:#1e8449;font-weight:600} .dash .loss{color:#c0392b;font-weight:600}
 .dash .draw,.dash .ended{color:#7d6608;font-weight:600} .dash .abandoned,.dash .playing{color:#888}
 .dash nav a{margin-right:12px}
 .dash #why{background:#fff;border-radius:6px;padding:8px 12px;"""
         """box-shadow:0 1px 2px rgba(0,0,0,.12);max-width:760px;font-size:13px}
 .dash #why dt{font-weight:600;float:left;clear:left;width:130px} """
         """.dash #why dd{margin:0 0 3px 140px}
 .dash .scroll{max-height:420px;overflow:auto;display:inline-block}
</style>""")

LATENCY_EDGES = (0, 25, 50, 100, 150, 200, 250, 300, 350, 400, 450, 500, 1000)
DEPTH_EDGES = tuple(range(0, 22, 2))


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _when(epoch: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(epoch)) if epoch else ""


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:.0f}"


def game_link(game: GameRow) -> str:
    return f"/games/{quote(game.game_id, safe='')}?you={quote(game.you_id, safe='')}"


def games_page(summary: Summary, games: Sequence[GameRow], *, page: int, pages: int,
               about: dict[str, str], which: GameFilter = GameFilter(),
               rulesets: Sequence[str] = (), hidden: int = 0) -> str:
    """The overview (see the module docstring). ``about``: lines shown under the title
    (version, strategy, network, game log file); ``which``: the list's filter; ``hidden``:
    the games not finished that the default filter leaves out (said under the list, with
    links to them)."""
    results = summary.results
    finished = sum(results.get(k, 0) for k in ("win", "loss", "draw"))
    wins = results.get("win", 0)
    cards = [("games", summary.games),
             ("win rate", f"{wins / finished:.1%}" if finished else "–"),
             ("won / lost / drawn",
              f"{wins} / {results.get('loss', 0)} / {results.get('draw', 0)}"),
             ("unfinished", results.get("unfinished", 0)),
             ("abandoned", results.get("abandoned", 0)),
             ("playing", results.get("playing", 0))]
    if summary.latency_ms:
        ordered = sorted(summary.latency_ms)
        cards.append(("answer p50 / p99",
                      f"{ordered[len(ordered) // 2]:.0f} / "
                      f"{ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]:.0f} ms"))
    if summary.depths:
        cards.append(("median depth", f"{statistics.median(summary.depths):g}"))
    out = [STYLE, '<div class="dash">', "<h1>Nuppeppou: games</h1>"]
    out.append('<div class="muted">' + " · ".join(f"{_e(k)} {_e(v)}" for k, v in about.items())
               + "</div>")
    out.append('<div class="cards">' + "".join(
        f'<div class="card"><span class="muted">{_e(k)}</span><b>{_e(v)}</b></div>'
        for k, v in cards) + "</div>")
    charts = []
    if summary.by_day:
        labels = [d[0][5:] for d in summary.by_day]
        rates = [d[2] / d[1] if d[1] else None for d in summary.by_day]
        lengths = [d[3] for d in summary.by_day]
        charts.append(series(labels, [r * 100 if r is not None else None for r in rates], lengths,
                             "by day", "win rate", "mean game length (turns)", left_max=100,
                             left_unit=" %"))
    if summary.latency_ms:
        charts.append(histogram(summary.latency_ms, LATENCY_EDGES, "answer time of recent moves",
                                " ms"))
    if summary.depths:
        charts.append(histogram(summary.depths, DEPTH_EDGES, "search depth of recent moves"))
    if summary.answered_by:
        charts.append(shares(summary.answered_by, "what answered recent moves"))
    if charts:
        out.append('<div class="charts">' + "".join(charts) + "</div>")
    out.append("<h2>Recent games</h2>")
    out.append(_filter_form(which, rulesets))
    if not games:
        filtered = which.ruleset or which.opponent or which.result not in ("", "finished")
        out.append('<p class="muted">' + ("No games match the filter." if filtered else
                                          "No finished games yet." if hidden else
                                          "No games recorded yet.") + "</p>")
    else:
        out.append('<table id="games"><tr><th>started (UTC)</th><th>ruleset</th><th>map</th>'
                   '<th>size</th><th>opponents</th><th class="num">turns</th><th>result</th>'
                   '<th class="num">p50 ms</th><th class="num">max ms</th>'
                   '<th class="num">depth</th><th>as</th></tr>')
        for g in games:
            result = g.result or "playing"
            out.append(
                f'<tr><td><a href="{_e(game_link(g))}">{_e(_when(g.started_at))}</a></td>'
                f"<td>{_e(g.ruleset)}</td><td>{_e(g.map)}</td><td>{g.width}x{g.height}</td>"
                f"<td>{_e(', '.join(g.opponents))}</td><td class=\"num\">{g.length}</td>"
                f'<td class="{_e(result)}">{_e(result)}</td>'
                f'<td class="num">{_ms(g.latency_p50)}</td>'
                f'<td class="num">{_ms(g.latency_max)}</td>'
                f'<td class="num">{"" if g.depth_median is None else f"{g.depth_median:g}"}</td>'
                f"<td>{_e(g.you)}"
                f"{' (arena)' if g.origin == 'arena' else ''}</td></tr>")
        out.append("</table>")
        nav = []
        keep = _query(which)
        if page > 1:
            nav.append(f'<a href="/games?page={page - 1}{keep}">newer</a>')
        if page < pages:
            nav.append(f'<a href="/games?page={page + 1}{keep}">older</a>')
        out.append(f'<nav class="muted">page {page} of {pages} {"".join(nav)}</nav>')
    if hidden:
        rest = _query(replace(which, result="not-finished"))
        every = _query(replace(which, result="all"))
        out.append(f'<p class="muted" id="hidden">{hidden} game{"s" if hidden != 1 else ""} '
                   "not finished (unfinished, such as one-position probes, abandoned, or in "
                   f'play) not listed: <a href="/games?page=1{rest}">show them</a>, or '
                   f'<a href="/games?page=1{every}">every game</a></p>')
    out.append("</div>")
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>Nuppeppou: games</title></head><body class=\"dashboard\">"
            + "".join(out) + "</body></html>")


def _query(which: GameFilter) -> str:
    """The filter's fields as the rest of a ``/games?page=N`` address (escaped for HTML)."""
    return "".join(f"&amp;{k}={quote(v, safe='')}" for k, v in
                   (("ruleset", which.ruleset), ("result", which.result),
                    ("opponent", which.opponent)) if v)


#: The result filter's choices, (value, label): groups first (GameFilter), then each result.
RESULT_OPTIONS = (("", "finished"),
                  ("not-finished", "not finished (unfinished, abandoned, playing)"),
                  ("all", "all")) + tuple((r, r) for r in RESULTS + ("playing",))


def _filter_form(which: GameFilter, rulesets: Sequence[str]) -> str:
    """A GET form: ruleset, result (finished games by default, see GameFilter), opponent
    (the server binds them)."""
    def options(pairs, chosen):
        return "".join(f'<option value="{_e(v)}"{" selected" if v == chosen else ""}>'
                       f'{_e(label)}</option>' for v, label in pairs)
    result = "" if which.result == "finished" else which.result
    return ('<form id="filter" method="get" action="/games" class="muted">'
            'ruleset <select name="ruleset">'
            f'{options([("", "any")] + [(r, r) for r in rulesets], which.ruleset)}</select> '
            f'result <select name="result">{options(RESULT_OPTIONS, result)}</select> '
            f'opponent <input name="opponent" value="{_e(which.opponent)}" size="16"> '
            '<button type="submit">show</button></form>')


def _turn_data(turn: TurnRow, names: dict[str, str]) -> dict[str, Any]:
    """What "why this move" shows of ``turn``, its snakes named by ``names``
    (:func:`named_reasons`)."""
    return {"turn": turn.turn, "move": turn.move, "by": turn.answered_by, "method": turn.method,
            "depth": turn.depth, "score": turn.score, "nodes": turn.nodes,
            "think_ms": turn.think_ms, "answer_ms": turn.answer_ms,
            "engine_latency_ms": turn.engine_latency_ms, "shout": turn.shout,
            "reasons": named_reasons(turn.reasons, names)}


def named_reasons(reasons: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """``reasons`` (as the log keeps them: :func:`snake.observability.gamelog.records.reasons`)
    with the snakes its search gives by id (the opponents searched, those played cheaply,
    each move of the expected line) given by the name ``names`` shows for that id (a name,
    or a name and the start of the id where two share it: :attr:`GameRow.names`); an id
    the game does not name stays an id. The log's reasons are not changed."""
    search = reasons.get("search")
    if not isinstance(search, dict):
        return reasons

    def name(snake_id: str) -> str:
        return names.get(snake_id, snake_id)
    named = {**search,
             "opponents": [name(s) for s in search.get("opponents") or ()],
             "cheap": [name(s) for s in search.get("cheap") or ()],
             "pv": [{name(s): move for s, move in ply.items()} for ply in search.get("pv") or ()]}
    return {**reasons, "search": named}


def game_page(game: GameRow, turns: Sequence[TurnRow], replay: Replay | None,
              ending: Sequence[str] = (), note: str = "") -> str:
    """One game (see the module docstring); ``ending``: how our snake's death came about,
    in lines of text (:func:`snake.records.ending.how_it_ended`); ``note``: why the board is
    not drawn (a record too large, or unreadable)."""
    result = game.result or "playing"
    header = [STYLE, '<div class="dash"><nav><a href="/games">&larr; all games</a>'
              f'<a href="{_e(game_link(game))}&amp;format=jsonl">record (JSONL)</a></nav>',
              f'<h1>{_e(game.ruleset)} {game.width}x{game.height}, map {_e(game.map)}: '
              f'<span class="{_e(result)}">{_e(result)}</span></h1>',
              '<div class="muted">' + " · ".join(_e(x) for x in (
                  f"game {game.game_id}", f"as {game.you}",
                  f"against {', '.join(game.opponents) or 'no one'}",
                  f"started {_when(game.started_at)} UTC", f"{game.length} turns",
                  f"timeout {game.timeout} ms", game.source and f"source {game.source}",
                  game.origin == "arena" and "imported from an arena record") if x) + "</div>",
              f'<p class="muted" id="no-board">{_e(note)}</p>' if note else "",
              "</div>"]
    charts = []
    if turns:
        labels = [str(t.turn) for t in turns]
        if any(t.depth is not None for t in turns):
            charts.append(series(labels, [t.score for t in turns],
                                 [t.depth for t in turns], "search by turn", "score",
                                 "depth", left_max=1.0, left_min=-1.0))
        charts.append(series(labels, [t.answer_ms for t in turns],
                             [t.engine_latency_ms for t in turns], "time by turn",
                             "answer ms (ours)", "latency ms (engine's)",
                             left_max=float(max(game.timeout, 1))))
    names = game.names
    why = json.dumps({str(t.turn): _turn_data(t, names) for t in turns},
                     separators=(",", ":")).replace("<", "\\u003c")
    rows = "".join(
        f'<tr class="turn" data-turn="{t.turn}"><td class="num">{t.turn}</td><td>{_e(t.move)}</td>'
        f"<td>{_e(t.answered_by)}</td><td class=\"num\">{'' if t.depth is None else t.depth}</td>"
        f"<td class=\"num\">{'' if t.score is None else f'{t.score:.3f}'}</td>"
        f"<td class=\"num\">{'' if t.nodes is None else t.nodes}</td>"
        f'<td class="num">{_ms(t.think_ms)}</td><td class="num">{_ms(t.answer_ms)}</td>'
        f'<td class="num">{_ms(t.engine_latency_ms)}</td></tr>' for t in turns)
    after = ['<div class="dash">']
    if ending:
        after.append('<h2>How it ended</h2><ul id="ending">'
                     + "".join(f"<li>{_e(line)}</li>" for line in ending)
                     + '<li class="muted">what its search saw on the moves before: '
                       "<code>python -m snake.arena.postmortem RECORD --moves 16</code> on this "
                       "game's record</li></ul>")
    after.append('<h2>Why this move</h2><div id="why"><span class="muted">'
                 'no answer of ours recorded for this turn</span></div>')
    if charts:
        after.append('<h2>By turn</h2><div class="charts">' + "".join(charts) + "</div>")
    after.append('<h2>Every turn</h2><div class="scroll"><table id="turns">'
                 '<tr><th class="num">turn</th><th>move</th><th>answered by</th>'
                 '<th class="num">depth</th><th class="num">score</th><th class="num">nodes</th>'
                 '<th class="num">think ms</th><th class="num">answer ms</th>'
                 f'<th class="num">engine ms</th></tr>{rows}</table></div></div>')
    after.append(f'<script id="why-data" type="application/json">{why}</script>')
    after.append(WHY_SCRIPT)
    if replay is None:
        return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>game</title>"
                "</head><body class=\"dashboard\">" + "".join(header) + "".join(after)
                + "</body></html>")
    page = render_html(replay, f"Nuppeppou: {game.ruleset} game {game.game_id}",
                       before="".join(header), after="".join(after))
    return page


WHY_SCRIPT = (r"""<script>
"use strict";
(function () {
  const WHY = JSON.parse(document.getElementById("why-data").textContent);
  const box = document.getElementById("why");
  function row(dl, name, value) {
    if (value === null || value === undefined || value === "") return;
    const dt = document.createElement("dt"); dt.textContent = name;
    const dd = document.createElement("dd"); dd.textContent = value;
    dl.append(dt, dd);
  }
  const fixed = (x, n) => (typeof x === "number" ? x.toFixed(n) : x);
  function show(turn) {
    const w = WHY[String(turn)];
    box.textContent = "";
    document.querySelectorAll("tr.turn").forEach(tr =>
      tr.classList.toggle("shown", tr.dataset.turn === String(turn)));
    if (!w) {
      const span = document.createElement("span"); span.className = "muted";
      span.textContent = `turn ${turn}: no answer of ours recorded (the game's last turn, """
              r"""or a turn we did not play)`;
      box.append(span); return;
    }
    const dl = document.createElement("dl");
    const r = w.reasons || {};
    row(dl, "turn", w.turn);
    row(dl, "move", w.move + (w.shout ? ` — “${w.shout}”` : ""));
    row(dl, "answered by", `${w.by} (${w.method})`);
    if (r.filter) {
      const removed = Object.entries(r.filter.removed || {}).map(([m, why]) => `${m}: ${why}`);
      row(dl, "filter removed", removed.join("; ") || "nothing");
      if ((r.filter.risky || []).length) row(dl, "risky", r.filter.risky.join(", "));
    }
    if (r.note) row(dl, "note", r.note);
    if (r.scores) row(dl, "one-step scores", """
              r"""Object.entries(r.scores).map(([m, v]) => `${m} ${fixed(v, 3)}`).join(", "));
    const s = r.search;
    if (s) {
      row(dl, "search", `${s.algorithm} (${s.engine}), ${s.evaluator}: depth ${s.depth}, """
              r"""${s.nodes} nodes, stopped by ${s.stopped || "?"}`);
      row(dl, "score", fixed(s.score, 4));
      row(dl, "root scores", """
              r"""Object.entries(s.scores || {}).map(([m, v]) => `${m} ${fixed(v, 3)}`).join(", "));
      row(dl, "searched", `${(s.opponents || []).join(", ") || "no opponent"}"""
              r"""${s.replies === "best" ? " (best replies)" : ""}; """
              r"""cheap: ${(s.cheap || []).join(", ") || "none"}`);
      // a name may hold spaces: commas between a ply's snakes, semicolons between plies
      row(dl, "expected line", (s.pv || []).map((t, k) => `${k + 1}. ` + """
              r"""Object.entries(t).map(([name, m]) => `${name} ${m}`).join(", ")).join("; "));
      row(dl, "iterations", (s.iterations || []).map(it => """
              r"""`d${it[0]} ${it[1]} @${it[4]} ms`).join(", "));
      if (s.note) row(dl, "search note", s.note);
    }
    row(dl, "times", `think ${fixed(w.think_ms, 1) ?? "–"} ms, answer ${fixed(w.answer_ms, 1)} ms` +
        (w.engine_latency_ms !== null ? """
              r"""`, engine saw ${w.engine_latency_ms} ms for the previous answer` : ""));
    box.append(dl);
  }
  document.addEventListener("turnshown", e => show(e.detail.turn));
  document.getElementById("turns").addEventListener("click", e => {
    const tr = e.target.closest("tr.turn");
    if (!tr || !window.replay) return;
    const i = window.replay.frames.findIndex(f => String(f.turn) === tr.dataset.turn);
    if (i >= 0) window.replay.go(i);
  });
  if (!window.replay) {
    const first = Object.keys(WHY)[0];
    if (first !== undefined) show(first);
  }
})();
</script>""")
