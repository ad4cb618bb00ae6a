"""Why a snake died, as its search saw it: ``python -m snake.arena.postmortem DIR_OR_FILE ...``.

The tally says how a snake died (the cause by the rules, and whether it was trapped: no
move of its own lived through the others' moves); with four snakes most deaths are traps,
so what lost the game was played some moves earlier. For each game record in which the
record's ``you`` (the arena's first player) lost by dying, this replays the death through
the rules (:func:`snake.records.ending.how_it_died`: the cause, the snake that eliminated it)
and searches again the positions of its last ``--moves`` moves with a search strategy
(default ``search``, today's default: a record played by another search is best looked at
again with that one, ``--strategy search-joint`` say, and a duel played before the
default's value head, 2026-11-27, with ``--strategy "search[value_head=none]"``), stopped
at ``--nodes`` nodes a move (10,000, as the arena screens play) and given the longest
timeout a request may have, so that the view depends on the nodes only. Each row: the
turn, the search's score, its depth and why it stopped, the opponents it searched and how,
those it played cheaply (:mod:`snake.search.plan`), and whether the snake that killed it
was among the searched ones. Snakes are named by their names, with the start of the id
only where two share a name (:func:`snake.records.names.snake_names`).

A *proven* loss is proven under the search's model of the others: the searched opponents
all play against you, the cheap ones keep going straight. A *forced* position is one in
which the search had a single move to play (it does not search those); it is no choice, so
it neither shows nor hides what the search saw. The summary says, per death:

- its last choice: how many moves before its death the snake last had two moves or more,
  and whether the search proved the loss there;
- how early the loss was seen: from how many moves before its death every position with a
  choice was a proven loss;
- whether the killer was played cheaply at its last choice not yet proven lost, or at any
  such choice looked at: deaths a search of that snake might have seen coming;
- from when it was cut off for good from every other snake (:func:`cut_off`), with the
  room it and the others had then: in a duel, the partition that decided the game;
- whether food that appeared after its last open choice sealed the loss
  (:func:`sealed_by_food`): the search cannot foresee food, so such a loss was not there to
  be seen;
- for a snake whose health ran out, whether board control's partition gave it a food
  within reach after its last meal (:func:`snake.records.ending.food_it_had`): food it let
  go, or food it was beaten to; and the search's score of the last position with one: a
  snake that starved in a position already lost (far behind, or proven lost) lost the
  game earlier than its hunger.

Draws (the snake fell with the last others) are listed but not counted as deaths.

    python -m snake.arena.postmortem runs/screen --strategy search-joint
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from snake.arena.tally import record_files
from snake.board import parse_request, state_to_request
from snake.decision import SearchResult
from snake.records.ending import (
    CutOff,
    Death,
    Hunger,
    cut_off,
    cut_off_text,
    food_it_had,
    how_it_died,
    how_text,
    hunger_text,
    recorded_moves,
    seen_lost_from,
)
from snake.records.replay import Replay, ReplayError, read_replay
from snake.rules import OUT_OF_HEALTH, apply_rules
from snake.search.plan import PROVEN
from snake.search.strategy import VARIANTS, make_search_strategy, split_options

#: The longest ``game.timeout`` a request may carry (ms): the re-searches stop on nodes.
LONGEST_TIMEOUT = 60_000
#: Search variants that value positions with the network: not offered (no network here).
_NETWORK_EVALUATORS = ("nnue", "auto")


@dataclass(slots=True)
class PositionView:
    """The search's view of one position before the death."""

    turn: int
    moves_before: int            # 1: the position of its last move
    search: SearchResult | None  # None: the strategy answered without a search
    method: str                  # how the strategy answered
    no_safe_move: bool           # the move filter found every move certain death

    @property
    def forced(self) -> bool:
        """No choice: no safe move, or a single move the search did not search."""
        return self.no_safe_move or (self.search is not None
                                     and self.search.stopped == "single move")

    @property
    def proven_lost(self) -> bool:
        """Lost under the search's model: proven so, or no safe move at all."""
        return self.no_safe_move or (self.search is not None and self.search.score <= -PROVEN)


@dataclass(slots=True)
class Sealing:
    """Food that appeared between its last open choice and the first position after it
    proven lost, without which that position is not proven lost (:func:`sealed_by_food`)."""

    choice_turn: int                     # its last choice not proven lost
    proven_turn: int                     # the first position after it proven lost
    food: list[tuple[int, int, int]]     # (the first turn it is on the board, x, y)


@dataclass(slots=True)
class Postmortem:
    """A death and the search's view of the moves before it."""

    file_name: str
    death: Death
    draw: bool                   # it fell with the last others: a draw, not a loss
    turn: int                    # the turn of its last move
    views: list[PositionView]    # nearest the death first
    names: dict[str, str]        # snake id: the name shown (Replay.names)
    sealed: Sealing | None = None
    cut_off: CutOff | None = None
    hunger: Hunger | None = None
    food_view: PositionView | None = None  # the search's view of its last position with a
    #                                        food of its own within reach (it starved)

    def last_choice(self) -> PositionView | None:
        """The position nearest its death in which it had a choice."""
        return next((v for v in self.views if not v.forced), None)

    def moves_seen_lost(self) -> int:
        """From how many moves before its death every position with a choice was proven
        lost (0: its last choice was not)."""
        index = seen_lost_from((v.forced, v.proven_lost) for v in self.views)
        return 0 if index is None else self.views[index].moves_before

    def open_choices(self) -> list[PositionView]:
        """The positions with a choice not yet proven lost, nearest the death first."""
        return [v for v in self.views if not v.forced and not v.proven_lost]

    def killer_cheap(self, last_only: bool) -> bool:
        """Whether the killer was played cheaply at its last open choice (``last_only``) or
        at any open choice looked at."""
        killer = self.death.killer
        choices = self.open_choices()[:1] if last_only else self.open_choices()
        return bool(killer) and any(v.search is not None and killer in v.search.cheap
                                    for v in choices)


def score_text(view: PositionView) -> str:
    search = view.search
    if view.no_safe_move:
        return "no safe move"
    if search is None:
        return "no search"
    if search.score <= -PROVEN:
        return "proven loss"
    if search.score >= PROVEN:
        return "proven win"
    return f"{search.score:+.3f}"


def view_of(body: dict, strategy, moves_before: int,
            snakes_at_start: int | None = None) -> PositionView:
    """The strategy's view of the position in request ``body`` of a game begun with
    ``snakes_at_start`` snakes, searched on nodes alone."""
    body = copy.deepcopy(body)
    body["game"]["timeout"] = LONGEST_TIMEOUT
    request = parse_request(body)
    request.snakes_at_start = snakes_at_start
    decision = strategy.choose(request, None)
    no_safe_move = decision.filter is not None and not decision.filter.allowed
    return PositionView(request.state.turn, moves_before, decision.search,
                        decision.method or "", no_safe_move)


def look_back(path: Path, strategy, moves: int) -> Postmortem | None:
    """The death in the record at ``path`` and the search's view of its last ``moves``
    positions; ``None`` if the record's ``you`` did not die."""
    replay = read_replay(path)
    death = how_it_died(replay)
    if death is None:
        return None
    names = replay.names()
    draw = replay.outcome(replay.turns[0]["you"]["id"]) == "draw"   # fell with the last others
    began = len(replay.turns[0]["board"]["snakes"])
    views = [view_of(replay.turns[death.line - back], strategy, back + 1, began)
             for back in range(min(moves, death.line + 1))]
    hunger = food_it_had(replay, death)
    food_view = None
    if hunger is not None and hunger.in_time:
        # among the positions just looked at, or one further back
        food_view = next((v for v in views if v.moves_before == hunger.moves_before), None) \
            or view_of(replay.turns[death.line + 1 - hunger.moves_before], strategy,
                       hunger.moves_before, began)
    return Postmortem(path.name, death, draw, replay.turns[death.line]["turn"], views, names,
                      sealed_by_food(replay, death, views, strategy), cut_off(replay, death),
                      hunger, food_view)


def sealed_by_food(replay: Replay, death: Death, views: list[PositionView],
                   strategy) -> Sealing | None:
    """Whether food that appeared after its last open choice sealed the loss.

    The search cannot foresee food (the rules' turn step spawns none), so a loss it first
    proves after new food appeared may be that food's doing: an opponent that eats it grows,
    and the square its tail was to leave stays blocked. To tell, the record's moves from its
    last choice not proven lost (among ``views``) are played again through the rules with no
    food appearing (hazards as recorded), up to the first later position proven lost, which
    is searched again. If it is then not proven lost, the food sealed the loss. ``None``: no
    such pair of positions, no food appeared between them, or the loss stands without it."""
    choice = next((v for v in views if not v.forced and not v.proven_lost), None)
    if choice is None:
        return None
    later = [v for v in views if v.moves_before < choice.moves_before and v.proven_lost]
    if not later:
        return None
    proven = max(later, key=lambda v: v.moves_before)
    turns = replay.turns
    first = death.line - (choice.moves_before - 1)
    last = death.line - (proven.moves_before - 1)
    appeared = []
    for i in range(first + 1, last + 1):
        there = {(f["x"], f["y"]) for f in turns[i - 1]["board"]["food"]}
        appeared += [(turns[i]["turn"], f["x"], f["y"]) for f in turns[i]["board"]["food"]
                     if (f["x"], f["y"]) not in there]
    if not appeared:
        return None
    you_id = turns[0]["you"]["id"]
    state = parse_request(turns[first]).state
    for i in range(first, last):
        moves = recorded_moves(turns[i], turns[i + 1], you_id)
        if moves is None:
            return None
        state = apply_rules(state, moves)
        state.board.hazards = [(h["x"], h["y"]) for h in turns[i + 1]["board"]["hazards"]]
        state.turn = turns[i + 1]["turn"]
        if state.board.snake(you_id).eliminated_cause:
            return None
    unfed = view_of(state_to_request(state, you_id), strategy, proven.moves_before,
                    len(turns[0]["board"]["snakes"]))
    if unfed.proven_lost:
        return None
    return Sealing(choice.turn, proven.turn, appeared)


def report(post: Postmortem) -> list[str]:
    death, names = post.death, post.names
    lines = [f"{post.file_name}: died on its move from turn {post.turn} "
             f"({how_text(death, names, post.draw)}); snakes: " + ", ".join(names.values())]
    lines.append(f"  {'turn':>5}  {'before':>6}  {'score':>12}  {'depth':>5}  {'stopped':<11}  "
                 "searched (replies)  cheap  killer")
    for view in post.views:
        search = view.search
        if search is None:
            lines.append(f"  {view.turn:>5}  {view.moves_before:>6}  {score_text(view):>12}  "
                         f"{'':>5}  ({view.method})")
            continue
        searched = ", ".join(names.get(s, s) for s in search.opponents) or "none"
        cheap = ", ".join(names.get(s, s) for s in search.cheap) or "none"
        role = "-"
        if death.killer:
            role = ("searched" if death.killer in search.opponents else
                    "cheap" if death.killer in search.cheap else "-")
        lines.append(f"  {view.turn:>5}  {view.moves_before:>6}  {score_text(view):>12}  "
                     f"{search.depth:>5}  {search.stopped:<11}  {searched} ({search.replies})  "
                     f"{cheap}  {role}")
    if post.cut_off is not None:
        lines.append("  " + cut_off_text(post.cut_off))
    if post.hunger is not None:
        lines.append("  " + hunger_text(post.hunger))
    if post.food_view is not None:
        lines.append(f"  the search's score there (turn {post.food_view.turn}): "
                     f"{score_text(post.food_view)}")
    if post.sealed is not None:
        sealed = post.sealed
        food = ", ".join(f"({x}, {y}) on turn {turn}" for turn, x, y in sealed.food)
        lines.append(f"  sealed by food that appeared: {food}; without it the position of turn "
                     f"{sealed.proven_turn} is not proven lost (its last open choice: turn "
                     f"{sealed.choice_turn})")
    return lines


def summary(posts: list[Postmortem], moves: int) -> list[str]:
    """What the deaths (draws left out) have in common."""
    deaths = [p for p in posts if not p.draw]
    draws = len(posts) - len(deaths)
    lines = [f"{len(deaths)} deaths ({sum(p.death.trapped for p in deaths)} trapped)"
             + (f", {draws} draws not counted" if draws else "")]
    if not deaths:
        return lines
    last = [(p, p.last_choice()) for p in deaths]
    with_choice = [(p, v) for p, v in last if v is not None]
    if with_choice:
        before = [v.moves_before for _, v in with_choice]
        lines.append(f"  its last choice: median {statistics.median(before):g} moves before its "
                     f"death; proven lost there in {sum(v.proven_lost for _, v in with_choice)} "
                     f"of {len(with_choice)}"
                     + (f" ({len(deaths) - len(with_choice)} had no choice in the {moves} moves "
                        "looked at)" if len(with_choice) < len(deaths) else ""))
    seen = [p.moves_seen_lost() for p in deaths]
    lines.append(f"  seen as lost (proven, every choice from then on) from this many moves "
                 f"before: median {statistics.median(seen):g}, mean {statistics.mean(seen):.1f}; "
                 f"not at its last choice in {sum(1 for s in seen if s == 0)}")
    killed = [p for p in deaths if p.death.killer]
    last = sum(p.killer_cheap(last_only=True) for p in killed)
    some = sum(p.killer_cheap(last_only=False) for p in killed)
    lines.append(f"  killed by another snake: {len(killed)}; that snake played cheaply at its "
                 f"last choice not yet proven lost in {last}, at some such choice in {some}")
    cut = [p.cut_off for p in deaths if p.cut_off is not None]
    if cut:
        lines.append(f"  cut off from the others for good before its death: {len(cut)} of "
                     f"{len(deaths)}, median {statistics.median(c.moves_before for c in cut):g} "
                     f"moves before; with less room than another snake in "
                     f"{sum(c.room < c.others_room for c in cut)}")
    else:
        lines.append("  cut off from the others for good before its death: 0")
    lines.append(f"  sealed by food that appeared after its last open choice (the search cannot "
                 f"foresee it): {sum(p.sealed is not None for p in deaths)} of {len(deaths)}")
    ran_out = [p.hunger for p in deaths if p.hunger is not None]
    let_go = [h for h in ran_out if h.in_time]
    starved = sum(h.cause == OUT_OF_HEALTH for h in ran_out)
    lines.append(f"  health ran out: {len(ran_out)} ({starved} starved); a food of its own "
                 f"within reach after its last meal in {len(let_go)}"
                 + (f" (the last a median {statistics.median(h.moves_before for h in let_go):g} "
                    "moves before its death)" if let_go else ""))
    views = [p.food_view for p in deaths if p.food_view is not None]
    if views:
        open_scores = [v.search.score for v in views
                       if not v.proven_lost and v.search is not None]
        lines.append(f"    the search's score of that position: proven lost in "
                     f"{sum(v.proven_lost for v in views)} of {len(views)}"
                     + (f", the others' median {statistics.median(open_scores):+.3f}"
                        if open_scores else ""))
    return lines


def make_strategy(name: str, nodes: int | None):
    """The search strategy ``name`` (options in brackets), stopped at ``nodes`` (or the
    ``max_nodes`` in its brackets, or 10,000). ``ValueError`` for anything else."""
    base, options = split_options(name)
    if base not in VARIANTS:
        raise ValueError(f"{base!r} is not a search strategy ({', '.join(VARIANTS)})")
    if VARIANTS[base].get("evaluator") in _NETWORK_EVALUATORS:
        raise ValueError(f"{base!r} values positions with the network; the post-mortem "
                         "searches with board control only")
    if nodes is not None:
        options["max_nodes"] = nodes
    options.setdefault("max_nodes", 10_000)
    return make_search_strategy(base, overrides=options), options["max_nodes"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m snake.arena.postmortem",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", metavar="DIR_OR_FILE", help="game records")
    parser.add_argument("--strategy", default="search",
                        help="the search that looks again (a search strategy, options in "
                             "brackets: search-joint[max_opponents=3]); default search")
    parser.add_argument("--nodes", type=int, default=None,
                        help="nodes a move (default: the strategy's max_nodes, else 10000)")
    parser.add_argument("--moves", type=int, default=8,
                        help="positions looked at before each death (8)")
    args = parser.parse_args(argv)
    if (args.nodes is not None and args.nodes < 1) or args.moves < 1:
        parser.error("--nodes and --moves must be at least 1")
    try:
        strategy, nodes = make_strategy(args.strategy, args.nodes)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    files = record_files(args.paths)
    if not files:
        print("no game records found", file=sys.stderr)
        return 1
    posts = []
    for path in files:
        try:
            post = look_back(path, strategy, args.moves)
        except (ReplayError, OSError, KeyError, IndexError, ValueError) as exc:
            print(f"skipped {path}: {exc}", file=sys.stderr)
            continue
        if post is not None:
            print("\n".join(report(post)))
            posts.append(post)
    print(f"looked at {args.moves} moves back with {args.strategy} at {nodes} nodes a move:")
    print("\n".join(summary(posts, args.moves)))
    return 0


if __name__ == "__main__":
    from snake.cli import run_main
    run_main(main)
