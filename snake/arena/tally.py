"""Totals of game records already written: ``python -m snake.arena.tally DIR_OR_FILE ...``.

An arena run writes every game as it ends (``--output-dir``), so a long match stopped early,
or played in pieces over several sessions (different ``--seed`` each), can still be scored:

    python -m snake.arena.tally runs/duel-a runs/duel-b --player search

Game records are large and die with the machine that wrote them; a **ledger** keeps what
the tally needs of each game in one short JSON line (``GameSummary``), so evidence played
over many sessions and machines adds up in a file small enough to commit
(``docs/evidence/``). ``--ledger FILE`` adds the summaries of the given records to FILE
(a game already in it, by game id, is not added twice; ``--tag`` labels the new lines,
say with the commit that played them), and a ledger is itself an input (``--tags A,B``
counts only its lines of those tags: versions that play alike, pooled):

    python -m snake.arena.tally runs/piece-7 --ledger docs/evidence/duel.jsonl --tag main@abc123
    python -m snake.arena.tally docs/evidence/duel.jsonl

For the named player (default: the snake named in turn 0's ``you``, the arena's first
player; a player is a name, the snakes of that name its seats, so that the tally speaks of
players by name and of no snake by its id, and two snakes sharing a name are one player's,
not told apart as :func:`snake.records.names.snake_names` tells them on a game's views) it
counts, by :func:`snake.rules.results.recorded_outcome` (the file's result line
and who was alive on each turn), wins (it is the winner), draws (``isDraw`` with it alive on
the last recorded turn, or falling on it with the last others) and losses, then prints the
score with its 95% Wilson interval and Elo, as the arena does. In games of more than two
snakes a win is a first place, and the mean place (:func:`snake.rules.results.place`; 1 is
first) is printed with its 95% interval: it uses every game's order, not only who won, so it
tells players apart in fewer games. Also: game length, the player's length at turns 50, 100,
200 and 300 and on its last turn with another snake alive, beside the mean of the others'
(and apart in wins and in losses), how many of its deaths came with health 1 on its last
turn (starvation) and how many with :data:`HUNGRY_DEATH` or less (whatever the cause: a
snake cornered on its way to food at health 6 died of hunger as much as one that starved),
how it died (its last turn replayed through :mod:`snake.rules` with the move its frozen body
shows and the moves the others made: the elimination cause, and whether it was *trapped*, no
move of its own living through those moves), the late and invalid answers of each side where
the run recorded them per game (the arena's ``games.jsonl`` or ``results.json`` beside the
records), with more than two snakes its *last duel* (the games that came down to it and one
other: how many, how they ended, apart by whether it began the duel longer, and the length
each side gained in it, in wins and in losses: who out-ate whom), and per ruleset, board
size, number of snakes and opponents when they are mixed.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from snake.arena.report import read_game_entries
from snake.arena.stats import Score, t95
from snake.records.ending import how_it_died
from snake.records.replay import Replay, ReplayError, open_text, read_replay

#: Turns at which lengths are compared.
LENGTH_TURNS = (50, 100, 200, 300)
#: The turns whose lengths tell a game given twice from another game with its id
#: (:meth:`GameSummary.content`): those the first ledger lines recorded, so that a record
#: tallied again still matches the line made from it before later turns were recorded.
_CONTENT_TURNS = (50, 100)


#: Outcomes a summary may hold.
OUTCOMES = ("win", "draw", "loss")
#: A death on a turn begun with this health or less is reported as a hungry one.
HUNGRY_DEATH = 10
#: How a kind says the number of snakes.
_SNAKES = re.compile(r", (\d+) snakes")


@dataclass(slots=True)
class GameSummary:
    """What one record says about the player (one line of a ledger)."""

    kind: str                      # "standard 11x11, 2 snakes, against search-py"
    outcome: str                   # "win", "draw" or "loss"
    turns: int
    starved: bool                  # died with health 1 on its last turn
    #: turn: (own, others' mean)
    length_at: dict[int, tuple[int, float]] = field(default_factory=dict)
    game_id: str = ""
    tag: str = ""                  # what played it (a ledger's label, e.g. a commit)
    seats: int = 1                 # the player's snakes in the game
    death: str = ""                # the elimination cause by the rules ("" alive or unknown)
    trapped: bool = False          # no move of its own would have lived through that turn
    place: float | None = None     # its place among the snakes (rules.results.place); None: unknown
    #: (own length, others' mean) on its last turn with another snake alive; None: unknown
    length_at_end: tuple[int, float] | None = None
    #: late and invalid answers in the game by player (the arena's log of the run, from
    #: :func:`snake.arena.report.read_game_entries`); None: not recorded
    late: dict[str, int] | None = None
    invalid: dict[str, int] | None = None
    #: with more than two snakes: the last duel (:func:`last_duel`) as (its first turn, own
    #: length, the other's), None when the player was not one of the last two
    last_duel: tuple[int, int, int] | None = None
    duel_known: bool = False          # whether ``last_duel`` was looked for (older lines: no)
    #: its health on its last turn alive, when it died (None: it did not die, or not known)
    health_at_death: int | None = None
    health_known: bool = False        # whether ``health_at_death`` was looked for (older lines: no)

    @property
    def snakes(self) -> int:
        """The number of snakes in the game (from :attr:`kind`)."""
        return int(_SNAKES.search(self.kind).group(1))

    def content(self) -> tuple:
        """What the game's record says, without where it came from: two summaries with
        one key (:func:`game_key`) and one content are the same game given twice. Only
        what the record shows counts, not what the tally derives by the rules (how it
        died, whether it was trapped): a record tallied again after a change to the rules
        code is still the same game."""
        # (NaN, no other snake alive, as None: NaN equals nothing, itself included)
        return (self.outcome, self.turns, self.starved, self.seats,
                tuple(sorted((t, (own, None if other != other else other))
                             for t, (own, other) in self.length_at.items()
                             if t in _CONTENT_TURNS)))

    def fill_from(self, other: "GameSummary") -> bool:
        """Take from ``other``, the same game summarised again, what this summary lacks (a
        line written before the tally knew places, later turns' lengths or the last
        turn's): whether anything was taken."""
        filled = False
        if self.place is None and other.place is not None:
            self.place = other.place
            filled = True
        later = {t: v for t, v in other.length_at.items() if t not in self.length_at}
        if later:
            self.length_at.update(later)
            filled = True
        if self.length_at_end is None and other.length_at_end is not None:
            self.length_at_end = other.length_at_end
            filled = True
        if self.late is None and other.late is not None:
            self.late, self.invalid = dict(other.late), dict(other.invalid or {})
            filled = True
        if not self.duel_known and other.duel_known:
            self.last_duel, self.duel_known = other.last_duel, True
            filled = True
        if other.health_known and (not self.health_known or (
                self.health_at_death is None and other.health_at_death is not None)):
            # (the second: a draw it died in, which lines before 2026-11-26 left out)
            self.health_at_death, self.health_known = other.health_at_death, True
            filled = True
        return filled

    def missed_by(self, player: str) -> tuple[int, int]:
        """(the player's late and invalid answers in this game, the other players');
        zeros when not recorded."""
        counts = Counter(self.late or {}) + Counter(self.invalid or {})
        own = counts.pop(player, 0)
        return own, sum(counts.values())

    def to_row(self, player: str) -> dict:
        """The ledger line of this summary (JSON-serialisable; NaN becomes null)."""
        row = {"game": self.game_id, "player": player, "kind": self.kind, "seats": self.seats,
               "outcome": self.outcome, "turns": self.turns, "starved": self.starved,
               "death": self.death, "trapped": self.trapped}
        if self.place is not None:      # (lines from before places were known have none)
            row["place"] = self.place
        row["length_at"] = {str(t): [own, None if other != other else other]
                            for t, (own, other) in sorted(self.length_at.items())}
        if self.length_at_end is not None:
            row["length_at_end"] = list(self.length_at_end)
        if self.late is not None:
            row["late"], row["invalid"] = dict(self.late), dict(self.invalid or {})
        if self.duel_known:
            row["last_duel"] = list(self.last_duel) if self.last_duel is not None else None
        if self.health_known:
            row["health_at_death"] = self.health_at_death
        row["tag"] = self.tag
        return row

    @classmethod
    def from_row(cls, row: dict) -> tuple[str, "GameSummary"]:
        """The player and summary of a ledger line; a malformed line raises ``ValueError``."""
        try:
            if row["outcome"] not in OUTCOMES:
                raise ValueError(f"outcome {row['outcome']!r} is not one of {OUTCOMES}")
            if not _SNAKES.search(str(row["kind"])):
                raise ValueError(f"kind {row['kind']!r} does not say how many snakes played")
            length_at = {int(t): (int(own), float("nan") if other is None else float(other))
                         for t, (own, other) in row.get("length_at", {}).items()}
            end = row.get("length_at_end")
            if end is not None:
                own_end, other_end = end        # (a ValueError when it is not a pair)
                end = (int(own_end), float(other_end))
            late, invalid = row.get("late"), row.get("invalid")
            if late is not None:
                late = {str(k): int(v) for k, v in late.items()}
                invalid = {str(k): int(v) for k, v in (invalid or {}).items()}
            duel = row.get("last_duel")
            if duel is not None:
                turn, own, other = duel         # (a ValueError when it is not a triple)
                duel = (int(turn), int(own), int(other))
            health = row.get("health_at_death")
            if health is not None and (type(health) is not int or not 0 <= health <= 100):
                raise ValueError(f"health_at_death {health!r} is not a health (0 to 100)")
            return str(row["player"]), cls(str(row["kind"]), row["outcome"], int(row["turns"]),
                                           bool(row["starved"]), length_at,
                                           str(row["game"]), str(row.get("tag", "")),
                                           int(row.get("seats", 1)), str(row.get("death", "")),
                                           bool(row.get("trapped", False)),
                                           (None if row.get("place") is None
                                            else float(row["place"])),
                                           end, late, invalid, duel, "last_duel" in row,
                                           health, "health_at_death" in row)
        except (KeyError, TypeError, AttributeError, OverflowError) as exc:
            raise ValueError(f"not a ledger line ({exc!r})") from None


def summarise(path: Path, player: str | None,
              entries: dict[str, dict] | None = None) -> tuple[str, GameSummary]:
    """The player's name and its summary of the game in ``path``; ``entries``, the game
    entries of the run that wrote it by game id (:func:`snake.arena.report.read_game_entries`),
    give its late and invalid answers."""
    replay = read_replay(path)
    first = replay.turns[0]
    name = player or first["you"]["name"]
    board = first["board"]
    others = Counter(s["name"] for s in board["snakes"] if s["name"] != name)
    kind = (f"{replay.game['ruleset']['name']} {board['width']}x{board['height']}, "
            f"{len(board['snakes'])} snakes, against "
            + " ".join(f"{n}" if c == 1 else f"{c}x {n}" for n, c in sorted(others.items())))
    last_alive: dict | None = None
    length_at: dict[int, tuple[int, float]] = {}
    length_at_end: tuple[int, float] | None = None
    for turn in replay.turns:
        snakes = turn["board"]["snakes"]
        mine = [s for s in snakes if s["name"] == name]
        if mine:
            last_alive = mine[0]
        others = [s["length"] for s in snakes if s["name"] != name]
        if mine and others:
            length_at_end = (mine[0]["length"], statistics.mean(others))
        if turn["turn"] in LENGTH_TURNS and mine:
            length_at[turn["turn"]] = (mine[0]["length"],
                                       statistics.mean(others) if others else float("nan"))
    if not any(s["name"] == name for s in board["snakes"]):
        raise ReplayError(f"{path}: no snake named {name!r}")
    alive_at_end = any(s["name"] == name for s in replay.turns[-1]["board"]["snakes"])
    mine = [s["id"] for s in board["snakes"] if s["name"] == name]
    outcome = replay.outcome(frozenset(mine))
    # a death is a loss, or a draw it fell in with the last others
    died = not alive_at_end and outcome in ("loss", "draw") and last_alive is not None
    starved = died and last_alive["health"] == 1
    seats = len(mine)
    death = how_it_died(replay) if first["you"]["name"] == name else None
    entry = (entries or {}).get(replay.game.get("id", ""))
    late = invalid = None
    if entry is not None and "timeouts" in entry:   # (older runs did not record them)
        late, invalid = dict(entry["timeouts"]), dict(entry.get("invalid", {}))
    duel_known = seats == 1 and len(board["snakes"]) > 2
    return name, GameSummary(kind, outcome, replay.turns[-1]["turn"], starved, length_at,
                             replay.game.get("id", ""), seats=seats,
                             death=death.cause if death else "",
                             trapped=death.trapped if death else False,
                             place=replay.place(mine[0]) if len(mine) == 1 else None,
                             length_at_end=length_at_end, late=late, invalid=invalid,
                             last_duel=last_duel(replay, mine[0]) if duel_known else None,
                             duel_known=duel_known,
                             health_at_death=int(last_alive["health"]) if died else None,
                             health_known=True)


def last_duel(replay: Replay, snake_id: str) -> tuple[int, int, int] | None:
    """A game of more than two snakes that came down to two with ``snake_id`` one of them:
    (the first turn with two alive, its length then, the other's); None otherwise (it fell
    earlier, or the last snakes fell together before two were left)."""
    for turn in replay.turns:
        snakes = turn["board"]["snakes"]
        if len(snakes) == 2:
            mine = [s for s in snakes if s["id"] == snake_id]
            if not mine:
                return None
            other = next(s for s in snakes if s["id"] != snake_id)
            return turn["turn"], mine[0]["length"], other["length"]
    return None


def record_files(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for p in map(Path, paths):
        files.extend(sorted([*p.glob("game-*.jsonl"), *p.glob("*.jsonl.gz")]) if p.is_dir()
                     else [p])
    return files


def is_ledger(path: Path) -> bool:
    """Whether ``path`` is a ledger (its first line is a summary, not a game object)."""
    try:
        with open_text(path) as f:
            first = f.readline()
        line = json.loads(first) if first.strip() else None
        return isinstance(line, dict) and "outcome" in line
    except (OSError, ValueError):
        return False


def read_ledger(path: Path) -> list[tuple[str, GameSummary]]:
    """Every (player, summary) of a ledger, in file order; a bad line raises ``ValueError``
    naming the line."""
    rows = []
    with open_text(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(GameSummary.from_row(json.loads(line)))
            except ValueError as exc:
                raise ValueError(f"{path}:{number}: {exc}") from None
    return rows


def game_key(player: str, summary: GameSummary) -> tuple[str, str, str]:
    """What makes a game the same game: its id (the arena's come from the run's seed and
    the game's number), the player and the kind (which names the opponents), so that two
    matches played with one seed are two games."""
    return (summary.game_id, player, summary.kind)


def add_to_ledger(path: Path, summaries: list[tuple[str, GameSummary]],
                  tag: str) -> tuple[int, int]:
    """Append the summaries whose game is not in the ledger yet (:func:`game_key`); returns
    how many were added and how many lines were filled in. The file is created if needed.
    A game already in the ledger whose line lacks what its record gives (its place, lengths
    at later turns or on its last turn: :meth:`GameSummary.fill_from`) gets it (the ledger
    is rewritten then, its other lines unchanged)."""
    known = Games()
    rows = read_ledger(path) if path.exists() else []
    for row in rows:
        known.admit(*row)
    before = [summary.to_row(player) for player, summary in rows]
    new: list[tuple[str, GameSummary]] = []
    for player, summary in summaries:
        if known.admit(player, summary):
            if tag:
                summary.tag = tag
            new.append((player, summary))
    if known.filled:
        texts = [line for line in path.read_text().splitlines() if line.strip()]
        temporary = path.with_name(path.name + ".new")
        with open(temporary, "w") as f:
            for text, (player, summary), row in zip(texts, rows, before):
                if summary.to_row(player) != row:
                    text = json.dumps(summary.to_row(player), separators=(",", ":"))
                f.write(text + "\n")
        temporary.replace(path)
    with open(path, "a") as f:
        for player, summary in new:
            f.write(json.dumps(summary.to_row(player), separators=(",", ":")) + "\n")
    return len(new), known.filled


class Games:
    """The games seen so far, so that a game given twice counts once: a summary whose key
    (:func:`game_key`) and content are those of one seen is a duplicate. One key with other
    content is another game (two runs with one ``--seed``: ids come from the seed); it is
    counted, and said on standard error. A duplicate that knows more of a game than the
    summary seen (a ledger line written before the tally knew places or later turns' lengths,
    given with the game's record) lends it what it lacks (:meth:`GameSummary.fill_from`),
    whichever came first."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str, str], dict[tuple, GameSummary]] = {}
        self.duplicates = 0
        self.filled = 0           # summaries that took what they lacked from a duplicate

    def admit(self, player: str, summary: GameSummary) -> bool:
        """Whether ``summary`` is a game not seen yet (and now seen)."""
        if not summary.game_id:
            return True
        key, content = game_key(player, summary), summary.content()
        seen = self.seen.setdefault(key, {})
        if content in seen:
            self.duplicates += 1
            if seen[content].fill_from(summary):
                self.filled += 1
            return False
        if seen:
            print(f"game {summary.game_id} of {player} appears with another result: counted as "
                  "another game (give each piece of a match its own --seed)", file=sys.stderr)
        seen[content] = summary
        return True


def report(name: str, games: list[GameSummary]) -> list[str]:
    counts = Counter(g.outcome for g in games)
    score = Score(counts["win"], counts["draw"], counts["loss"])
    lo, hi = score.interval
    shapes = {(g.seats, g.snakes) for g in games}
    if shapes == {(1, 2)}:
        rating = f", Elo {score.elo_text()} {score.elo_interval_text()}"
        first = ""
    else:
        # with more snakes a score is a share of first places: even play is the share of
        # the seats the player holds, and a two-player Elo means nothing
        seats, snakes = shapes.pop() if len(shapes) == 1 else (0, 0)
        rating = f", even play {seats / snakes:.1%}" if snakes else ""
        first = " (a win is a first place)"
    lines = [f"{name}: {score.games} games, +{score.wins} ={score.draws} -{score.losses}"
             f"{first}: score {score.fraction:.1%} [{lo:.1%}, {hi:.1%}]{rating}"]
    tags = Counter(g.tag for g in games if g.tag)
    if tags:
        lines.append("  played by: " + ", ".join(f"{t} ({n})" for t, n in sorted(tags.items())))
    if len(tags) > 1:
        # a pooled ledger: each version's own score, so that the pooling can be judged
        lines.append("  each version: " + "; ".join(
            f"{t} {_score_text([g for g in games if g.tag == t])}" for t in sorted(tags)))
    turns = [g.turns for g in games]
    lines.append(f"  game length: median {statistics.median(turns):g} turns, "
                 f"range {min(turns)}-{max(turns)}")
    # A death: a loss, or a draw it fell in (known from its health at death, or from how it
    # died; lines from before the tally looked for either count their losses), the same
    # deaths as "how it died" counts below.
    dead = [g for g in games if g.death or (g.health_at_death is not None if g.health_known
                                            else g.outcome == "loss")]
    starved = sum(g.starved for g in games)
    # With more than two snakes, a starvation in the last duel (the long snakes' endgame)
    # is another matter than one of a snake that fell behind while more were alive.
    starved_seen = [g for g in games if g.starved and g.duel_known]   # duel looked for
    in_duel = (f" ({sum(g.last_duel is not None for g in starved_seen)} of them in its last "
               f"duel" + (f", {starved - len(starved_seen)} not known"
                          if len(starved_seen) < starved else "")
               + ")") if starved_seen else ""
    lines.append(f"  its deaths by starvation (health 1 on its last turn): {starved} of "
                 f"{len(dead)}{in_duel}")
    healths = [g.health_at_death for g in dead
               if g.health_known and g.health_at_death is not None]
    unknown = len(dead) - len(healths)
    if healths:
        # a snake cornered while it ran for food died of hunger as much as one that starved
        weak = sum(h <= HUNGRY_DEATH for h in healths)
        lines.append(f"  its deaths with health {HUNGRY_DEATH} or less on its last turn, "
                     f"whatever the cause: {weak} of {len(healths)}"
                     + (f" ({unknown} deaths of older lines without it)" if unknown else ""))
    causes = Counter(g.death for g in games if g.death)
    if causes:
        trapped = sum(g.trapped for g in games if g.death)
        lines.append("  how it died, by the rules: "
                     + ", ".join(f"{c} {n}" for c, n in causes.most_common())
                     + f"; trapped (no move of its own lived) in {trapped} of "
                       f"{sum(causes.values())}")
    places = [g.place for g in games if g.place is not None and g.snakes > 2]
    if places:
        mean = statistics.mean(places)
        interval = ""
        if len(places) > 1:
            half = t95(len(places) - 1) * statistics.stdev(places) / len(places) ** 0.5
            # (no place lies outside 1 .. snakes: neither does its mean)
            most = max(g.snakes for g in games if g.place is not None and g.snakes > 2)
            interval = f" [{max(1.0, mean - half):.2f}, {min(float(most), mean + half):.2f}]"
        snakes = {g.snakes for g in games if g.place is not None and g.snakes > 2}
        even = f"even play {(snakes.pop() + 1) / 2:.2f}" if len(snakes) == 1 else "mixed sizes"
        counted = "1 game" if len(places) == 1 else f"{len(places)} games"
        lines.append(f"  mean place: {mean:.2f}{interval} (1 is first, {even}; {counted} "
                     "with a place)")
    for turn in LENGTH_TURNS:
        with_it = [(g.outcome, g.length_at[turn]) for g in games if turn in g.length_at]
        if with_it:
            lines.append(f"  length at turn {turn}: {_lengths(with_it)} "
                         f"({len(with_it)} games with it alive)")
    at_end = [(g.outcome, g.length_at_end) for g in games if g.length_at_end is not None]
    if at_end:
        lines.append(f"  length on its last turn with another snake alive: {_lengths(at_end)} "
                     f"({len(at_end)} games)")
    lines.extend(_duel_lines([g for g in games if g.duel_known]))
    known = [g.missed_by(name) for g in games if g.late is not None]
    if known:
        own = [n for n, _ in known if n]
        others = [m for _, m in known if m]
        lines.append(f"  late or invalid answers (recorded for {len(known)} of {len(games)} "
                     f"games): its own {sum(own)} in {len(own)} games, the others' "
                     f"{sum(others)} in {len(others)} games")
    return lines


def _duel_lines(games: list[GameSummary]) -> list[str]:
    """How the games that came down to the player and one other ended: all of them, then
    apart by whether it began the duel longer (a duel between equal searches is decided by
    the position it starts from, and the lead is the part of that the tally can see)."""
    duels = [g for g in games if g.last_duel is not None]
    if not games:
        return []
    line = (f"  its last duel (two snakes left, it one; recorded for {len(games)} games): "
            f"reached in {len(duels)}")
    if duels:
        line += f", {_score_text(duels)}"
        ahead = [g for g in duels if g.last_duel[1] > g.last_duel[2]]
        behind = [g for g in duels if g.last_duel[1] <= g.last_duel[2]]
        parts = [f"longer at its start in {len(ahead)}"
                 + (f", {_score_text(ahead)}" if ahead else ""),
                 f"level or shorter in {len(behind)}"
                 + (f", {_score_text(behind)}" if behind else "")]
        line += "; " + "; ".join(parts)
    lines = [line]
    grew = [g for g in duels if g.length_at_end is not None]
    if grew:
        def growth(chosen: list[GameSummary]) -> str:
            own = statistics.mean(g.length_at_end[0] - g.last_duel[1] for g in chosen)
            other = statistics.mean(g.length_at_end[1] - g.last_duel[2] for g in chosen)
            return f"it +{own:.1f}, the other +{other:.1f} ({len(chosen)} games)"
        parts = [f"in {name} {growth(chosen)}" for name, chosen in
                 (("wins", [g for g in grew if g.outcome == "win"]),
                  ("losses", [g for g in grew if g.outcome == "loss"])) if chosen]
        # (food eaten, in standard games: who out-ate whom in the duels it lost)
        lines.append("  length gained in those duels, from their start to its last turn "
                     "with the other alive: " + "; ".join(parts))
    return lines


def _score_text(games: list[GameSummary]) -> str:
    """``+W =D -L (score [95 % interval])`` in whole percent: a duel's or a version's line."""
    counts = Counter(g.outcome for g in games)
    score = Score(counts["win"], counts["draw"], counts["loss"])
    lo, hi = score.interval
    return (f"+{score.wins} ={score.draws} -{score.losses} ({score.fraction:.0%} "
            f"[{lo:.0%}, {hi:.0%}])")


def _lengths(pairs: list[tuple[str, tuple[int, float]]]) -> str:
    """The mean own length beside the others' mean, then the same in wins and in losses
    when there are both (a lead held in the losses too is one the player did not turn into
    wins)."""
    def means(chosen: list[tuple[int, float]], between: str) -> str:
        own = statistics.mean(p[0] for p in chosen)
        others = [p[1] for p in chosen if p[1] == p[1]]
        return f"{own:.1f}{between}" + (f"{statistics.mean(others):.1f}" if others
                                        else "none alive")
    text = means([p for _, p in pairs], ", the others ")
    won = [p for outcome, p in pairs if outcome == "win"]
    lost = [p for outcome, p in pairs if outcome == "loss"]
    if won and lost:
        text += f"; in wins {means(won, ' against ')}, in losses {means(lost, ' against ')}"
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m snake.arena.tally",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", metavar="DIR_OR_FILE",
                        help="game records (game-*.jsonl), directories of them, or ledgers")
    parser.add_argument("--player", help="the snake's name (default: turn 0's you)")
    parser.add_argument("--ledger", type=Path, metavar="FILE",
                        help="add the summaries of the game records given to this ledger "
                             "(games already in it are not added twice)")
    parser.add_argument("--tag", default="",
                        help="label of the lines --ledger adds (say, the commit that played)")
    parser.add_argument("--tags", default="", metavar="TAG,TAG",
                        help="count only ledger lines with one of these tags (the versions "
                             "that play alike: pool only those)")
    args = parser.parse_args(argv)
    chosen_tags = {t.strip() for t in args.tags.split(",") if t.strip()}
    if chosen_tags and args.ledger is not None:
        print("--tags chooses among ledger lines; it does not go with --ledger",
              file=sys.stderr)
        return 2
    files = record_files(args.paths)
    if not files:
        print("no game records found", file=sys.stderr)
        return 1
    summaries: list[tuple[str, GameSummary]] = []
    recorded: list[tuple[str, GameSummary]] = []     # read from game records, not ledgers
    seen = Games()
    runs: dict[Path, dict[str, dict]] = {}     # the game entries of each records' folder
    for path in files:
        ledger = is_ledger(path)
        if ledger:
            try:
                rows = read_ledger(path)
            except (ValueError, OSError) as exc:
                print(f"not a ledger: {exc}", file=sys.stderr)
                return 1
            rows = [(n, s) for n, s in rows if not args.player or n == args.player]
            if chosen_tags:
                rows = [(n, s) for n, s in rows if s.tag in chosen_tags]
        else:
            try:
                if path.parent not in runs:
                    runs[path.parent] = read_game_entries(path.parent)
                rows = [summarise(path, args.player, runs[path.parent])]
            except (ReplayError, OSError, KeyError, IndexError, ValueError) as exc:
                print(f"skipped {path}: {exc}", file=sys.stderr)
                continue
        for row in rows:
            # the same game given twice (a ledger and its records) counts once
            if not seen.admit(*row):
                continue
            summaries.append(row)
            if not ledger:
                recorded.append(row)
    if seen.duplicates:
        print(f"{seen.duplicates} games given twice counted once", file=sys.stderr)
    if args.ledger is not None:
        try:
            added, filled = add_to_ledger(args.ledger, recorded, args.tag)
        except (ValueError, OSError) as exc:
            print(f"cannot add to the ledger: {exc}", file=sys.stderr)
            return 1
        print(f"{added} games added to {args.ledger}"
              + (f"; {filled} lines filled in from their records" if filled else ""),
              file=sys.stderr)
    by_kind: dict[str, list[GameSummary]] = defaultdict(list)
    names: set[str] = set()
    for name, summary in summaries:
        names.add(name)
        by_kind[summary.kind].append(summary)
    if len(names) > 1:
        print(f"the records name different players {sorted(names)}: give --player",
              file=sys.stderr)
        return 1
    if not by_kind:
        print("no games" + (f" of {args.player}" if args.player else ""), file=sys.stderr)
        return 1
    name = names.pop()
    if len(by_kind) > 1:
        for kind, games in sorted(by_kind.items()):
            print(kind)
            print("\n".join("  " + line for line in report(name, games)))
        print("all these records together:")
    print("\n".join(report(name, [g for games in by_kind.values() for g in games])))
    return 0


if __name__ == "__main__":
    from snake.cli import run_main
    run_main(main)
