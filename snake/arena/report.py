"""Totals of an arena run and the tables printed at its end."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from snake.arena.match import GameResult, Timing
from snake.arena.players import PlayerSpec
from snake.arena.scoring import DRAW, LOSS, WIN
from snake.arena.stats import Score, percentile
from snake.records.replay import GAMES_LOG


def game_entry(result: GameResult, players: Sequence[PlayerSpec]) -> dict:
    """One game's entry in ``results.json`` and line of :data:`GAMES_LOG` (appended as the
    game ends, so that a run killed before its ``results.json`` still says what it played):
    its seats, results, record, and each player's late and invalid answers in it (so that a
    match played on a busy machine can leave out exactly the games they may have decided)."""
    return {"index": result.index + 1, "game_id": result.game_id, "turns": result.turns,
            "seats": [players[s].label for s in result.seats],
            "results": {players[p].label: o for p, o in result.results.items()},
            "winner": result.winner_name, "is_draw": result.is_draw, "replay": result.replay_path,
            "timeouts": {players[p].label: t.timeouts
                         for p, t in result.timing.items() if t.timeouts},
            "invalid": {players[p].label: t.invalid for p, t in result.timing.items() if t.invalid}}


def read_game_entries(folder: Path) -> dict[str, dict]:
    """The game entries an arena run left in ``folder``, by game id: its :data:`GAMES_LOG`,
    else its ``results.json`` (runs from before the log); empty when it has neither. A line
    cut short by a killed run is passed over."""
    entries: list[dict] = []
    log, results = folder / GAMES_LOG, folder / "results.json"
    if log.is_file():
        for line in log.read_text().splitlines():
            try:
                entries.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    elif results.is_file():
        try:
            entries = json.loads(results.read_text()).get("games_played", [])
        except (json.JSONDecodeError, AttributeError):
            entries = []
    return {str(e["game_id"]): e for e in entries if isinstance(e, dict) and "game_id" in e}


@dataclass(slots=True)
class Totals:
    players: Sequence[PlayerSpec]
    counts: dict[int, dict[str, int]] = field(default_factory=dict)
    timing: dict[int, Timing] = field(default_factory=dict)
    turns: list[int] = field(default_factory=list)
    stopped: int = 0
    decided: int = 0

    def add(self, result: GameResult) -> None:
        for player, outcome in result.results.items():
            self.counts.setdefault(player, {WIN: 0, DRAW: 0, LOSS: 0})[outcome] += 1
        for player, timing in result.timing.items():
            self.timing.setdefault(player, Timing()).merge(timing)
        self.turns.append(result.turns)
        self.stopped += result.stopped
        self.decided += result.decided

    def score(self, player: int) -> Score:
        c = self.counts.get(player, {WIN: 0, DRAW: 0, LOSS: 0})
        return Score(c[WIN], c[DRAW], c[LOSS])

    def short(self, player: int = 0) -> str:
        s = self.score(player)
        return f"{self.players[player].label} +{s.wins}={s.draws}-{s.losses}"

    def to_json(self) -> dict[str, Any]:
        out = {"games": len(self.turns), "stopped": self.stopped, "decided": self.decided,
               "mean_turns": sum(self.turns) / len(self.turns) if self.turns else None,
               "players": []}
        for i, p in enumerate(self.players):
            s, t = self.score(i), self.timing.get(i, Timing())
            lo, hi = s.interval
            elo_lo, elo_hi = s.elo_interval
            out["players"].append({
                "label": p.label, "target": p.target, "games": s.games, "wins": s.wins,
                "draws": s.draws, "losses": s.losses,
                "score": _num(s.fraction), "score_ci95": [lo, hi],
                "elo": _num(s.elo), "elo_ci95": [_num(elo_lo), _num(elo_hi)],
                "moves": len(t.latencies), "p50_ms": _num(percentile(t.latencies, 50)),
                "p99_ms": _num(percentile(t.latencies, 99)), "timeouts": t.timeouts,
                "invalid": t.invalid,
            })
        return out


def _num(x: float) -> float | str | None:
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, float) and math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [str(c).ljust(w) if i < left else str(c).rjust(w)
                 for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
    return lines


def format_report(totals: Totals, title: str) -> str:
    """The end-of-run report; its last line is
    ``arena: W wins, D draws, L losses for <first player>``."""
    lines = [title]
    turns = totals.turns
    if turns:
        lines.append(f"games: {len(turns)}, {sum(turns) / len(turns):.1f} turns on average "
                     f"(min {min(turns)}, max {max(turns)})"
                     + (f", {totals.stopped} stopped at the turn limit" if totals.stopped else "")
                     + (f", {totals.decided} stopped once decided" if totals.decided else ""))
    lines.append("")
    rows = []
    for i, p in enumerate(totals.players):
        s = totals.score(i)
        if s.games:
            lo, hi = s.interval
            score, ci = f"{100 * s.fraction:.1f}%", f"[{100 * lo:.1f}%, {100 * hi:.1f}%]"
        else:
            score = ci = "-"
        rows.append([p.label, s.games, s.wins, s.draws, s.losses, score, ci,
                     s.elo_text(), s.elo_interval_text()])
    lines += _table(["player", "games", "wins", "draws", "losses", "score", "95% CI",
                     "Elo", "Elo 95% CI"], rows)
    lines.append("")
    rows = []
    for i, p in enumerate(totals.players):
        t = totals.timing.get(i, Timing())
        p50, p99 = percentile(t.latencies, 50), percentile(t.latencies, 99)
        rows.append([p.label, "http" if p.is_http else "built-in", len(t.latencies),
                     "-" if math.isnan(p50) else f"{p50:.1f}",
                     "-" if math.isnan(p99) else f"{p99:.1f}", t.timeouts, t.invalid])
    lines += _table(["answers", "kind", "moves", "p50 ms", "p99 ms", "timeouts", "invalid"], rows)
    first = totals.score(0)
    lines.append("")
    lines.append(f"arena: {first.wins} wins, {first.draws} draws, {first.losses} losses "
                 f"for {totals.players[0].label}")
    return "\n".join(lines)
