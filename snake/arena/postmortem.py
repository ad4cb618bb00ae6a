"""Why a snake died, as its search saw it: ``python -m snake.arena.postmortem DIR_OR_FILE ...``.

The tally says how a snake died (the cause by the rules, and whether it was trapped: no
move of its own lived through the others' moves); with four snakes most deaths are traps,
so what lost the game was played some moves earlier. For each game record in which the
record's ``you`` (the arena's first player) died, this replays the death through the rules
(:func:`snake.arena.tally.how_it_died`: the cause, the snake that eliminated it) and
searches again the positions of its last ``--moves`` moves with a search strategy
(default ``search``; stopped at ``--nodes`` nodes a move, so the view does not depend on
the machine, as the arena screens play; the request's timeout still applies). Each row:
the turn, the search's score (a proven loss or win said so), its depth, the opponents it
searched and how, those it played cheaply (:mod:`snake.search.state`), and whether the
snake that killed it was among the searched ones.

The summary says how many moves before its death the search first saw each death as
proven (from that move on every score was a proven loss), and in how many deaths the
killer was played cheaply on a move when the search did not yet see the loss: deaths a
search of that opponent might have seen coming.

    python -m snake.arena.postmortem runs/screen --strategy "search[replies=best]"
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from ..board import parse_request
from ..rules import MOVES
from ..search.result import SearchResult
from ..search.state import PROVEN
from ..search.strategy import VARIANTS, make_search_strategy, split_options
from .replay import ReplayError, read_replay
from .tally import Death, how_it_died, record_files


@dataclass(slots=True)
class Look:
    """The search's view of one position before the death."""

    turn: int
    moves_before: int            # 1: the position of its last move
    search: SearchResult | None  # None: the strategy answered without a search
    method: str
    doomed: bool                 # the move filter found every move certain death


@dataclass(slots=True)
class Postmortem:
    """A death and the search's view of the moves before it."""

    record: str
    death: Death
    turn: int                    # the turn of its last move
    looks: list[Look]
    names: dict[str, str]        # snake id: "A grower", by board order on its last turn


def lost(look: Look) -> bool:
    """The position is lost for certain: the search proved it, or no move survives."""
    return look.doomed or (look.search is not None and look.search.score <= -PROVEN)


def score_text(look: Look) -> str:
    search = look.search
    if search is None:
        return "no safe move" if look.doomed else "no search"
    if search.score <= -PROVEN:
        return "proven loss"
    if search.score >= PROVEN:
        return "proven win"
    return f"{search.score:+.3f}"


def seen_lost(looks: list[Look]) -> int:
    """For how many moves before the death every score was a proven loss (0: never)."""
    seen = 0
    for look in sorted(looks, key=lambda k: k.moves_before):
        if not lost(look):
            break
        seen = look.moves_before
    return seen


def killer_cheap_before_seen(looks: list[Look], death: Death) -> bool:
    """Whether the killer was played cheaply on a move when the loss was not yet seen."""
    return bool(death.by) and any(
        look.search is not None and not lost(look) and death.by in look.search.cheap
        for look in looks)


def look_back(path: Path, strategy, moves: int) -> Postmortem | None:
    """The death in the record at ``path`` and the search's view of its last ``moves``
    positions; ``None`` if the record's ``you`` did not die."""
    replay = read_replay(path)
    death = how_it_died(replay)
    if death is None:
        return None
    last = replay.turns[death.index]
    names = {s["id"]: f"{chr(ord('A') + k)} {s['name']}"
             for k, s in enumerate(last["board"]["snakes"])}
    looks = []
    for back in range(min(moves, death.index + 1)):
        request = parse_request(replay.turns[death.index - back])
        decision = strategy.choose(request, None)
        doomed = decision.filter is not None and len(decision.filter.removed) == len(MOVES)
        looks.append(Look(request.state.turn, back + 1, decision.search, decision.method or "",
                          doomed))
    return Postmortem(path.name, death, last["turn"], looks, names)


def report(post: Postmortem) -> list[str]:
    death, names = post.death, post.names
    short = {sid: text.split(" ")[0] for sid, text in names.items()}
    killer = names.get(death.by, death.by) if death.by else "none (a wall, its own body, hunger)"
    lines = [f"{post.record}: died on its move from turn {post.turn} "
             f"({death.cause or 'cause unknown'}, by {killer}"
             f"{'; trapped' if death.trapped else ''}), {len(names)} snakes alive: "
             + ", ".join(names.values())]
    lines.append(f"  {'turn':>5}  {'before':>6}  {'score':>12}  {'depth':>5}  searched (replies)"
                 f"  cheap  killer")
    for look in post.looks:
        search = look.search
        if search is None:
            lines.append(f"  {look.turn:>5}  {look.moves_before:>6}  {score_text(look):>12}  "
                         f"{'':>5}  ({look.method})")
            continue
        searched = ", ".join(short.get(s, s) for s in search.opponents) or "none"
        cheap = ", ".join(short.get(s, s) for s in search.cheap) or "none"
        role = ("searched" if death.by in search.opponents else
                "cheap" if death.by in search.cheap else "-") if death.by else "-"
        lines.append(f"  {look.turn:>5}  {look.moves_before:>6}  {score_text(look):>12}  "
                     f"{search.depth:>5}  {searched} ({search.replies})  {cheap}  {role}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m snake.arena.postmortem",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", metavar="DIR_OR_FILE", help="game records")
    parser.add_argument("--strategy", default="search",
                        help="the search that looks again (a search strategy, options in "
                             "brackets: search[replies=best]); default search")
    parser.add_argument("--nodes", type=int, default=10_000,
                        help="nodes a move (10000, as the arena screens)")
    parser.add_argument("--moves", type=int, default=8,
                        help="positions looked at before each death (8)")
    args = parser.parse_args(argv)
    if args.nodes < 1 or args.moves < 1:
        parser.error("--nodes and --moves must be at least 1")
    try:
        base, options = split_options(args.strategy)
        if base not in VARIANTS:
            raise ValueError(f"{base!r} is not a search strategy ({', '.join(VARIANTS)})")
        strategy = make_search_strategy(base, overrides={**options, "max_nodes": args.nodes})
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    files = record_files(args.paths)
    if not files:
        print("no game records found", file=sys.stderr)
        return 1
    deaths = []
    for path in files:
        try:
            found = look_back(path, strategy, args.moves)
        except (ReplayError, OSError, KeyError, IndexError, ValueError) as exc:
            print(f"skipped {path}: {exc}", file=sys.stderr)
            continue
        if found is None:
            continue
        print("\n".join(report(found)))
        deaths.append((found.death, found.looks))
    if not deaths:
        print("no deaths in these records")
        return 0
    seen = [seen_lost(looks) for _, looks in deaths]
    by_snake = [(d, looks) for d, looks in deaths if d.by]
    cheap = sum(killer_cheap_before_seen(looks, d) for d, looks in by_snake)
    never = sum(1 for s in seen if s == 0)
    print(f"{len(deaths)} deaths ({sum(d.trapped for d, _ in deaths)} trapped), looked at "
          f"{args.moves} moves back with {args.strategy} at {args.nodes} nodes a move")
    print(f"  seen as a proven loss from this many moves before: median "
          f"{statistics.median(seen):g}, mean {statistics.mean(seen):.1f}; never in {never}; "
          f"all {args.moves} looked at in {sum(1 for s in seen if s == args.moves)}")
    print(f"  killed by another snake: {len(by_snake)}; its killer played cheaply on a move "
          f"before the loss was seen: {cheap}")
    return 0


if __name__ == "__main__":
    from ..cli import run_main
    run_main(main)
