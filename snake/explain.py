"""Explain one decision: ``python -m snake.explain REQUEST.json`` (``-`` reads stdin).

Prints the board, what the move filter removed and why, the flood-fill sums or the NNUE
scores, and the move chosen, as the service would answer the request with no history (a
fresh session: full refresh). Options: ``--strategy NAME`` (default ``$NUPPEPPOU_STRATEGY``
or the service's default, ``search``), ``--weights PATH`` (default ``$NUPPEPPOU_WEIGHTS`` or
weights/nnue.npz), ``--no-network`` (flood fill, as a game that got no accumulator),
``--snakes-at-start N`` (how many snakes the game began with: a request alone does not say, and the
default's value head is meant for games begun as duels; without it, taken as the snakes in the
request, as the server takes a game whose first turn it did not see).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from snake.board import GameState, MoveRequest, RequestError, parse_request
from snake.decision import Decision, SearchResult
from snake.diagram import to_ascii
from snake.evaluation.control import HUNGER_MARGIN, board_control, food_health, hunger
from snake.records.names import snake_names
from snake.rules import MOVES, apply_rules, distance, next_square
from snake.settings import Settings, SettingsError
from snake.strategies import get_strategy


def explain(request: MoveRequest, decision: Decision, strategy: str) -> str:
    """The explanation of ``decision`` for ``request`` as text. Snakes are named by their
    names (:func:`snake.records.names.snake_names`: the start of the id only where two share
    a name); the drawing's letters are keyed to the names at the top."""
    state, you = request.state, request.you
    board = state.board
    names = snake_names([(s.id, s.name) for s in board.snakes] + [(you.id, you.name)])
    lines = [
        f"game {state.game.id}  turn {state.turn}  ruleset {state.ruleset.name}  "
        f"{board.width}x{board.height}  map {state.game.map}",
    ]
    # The drawing has one character a cell, so past 26 snakes its letters come round again;
    # the text's labels stay unique (A..Z, then A2..Z2, ...).
    letters = {s.id: chr(ord("A") + i % 26) + (str(i // 26 + 1) if i >= 26 else "")
               for i, s in enumerate(board.living_snakes)}
    for s in board.living_snakes:
        me = "  <- you" if s.id == you.id else ""
        squad = f"  squad {s.squad}" if s.squad else ""
        lines.append(f"  {letters[s.id]}: {names[s.id]}  length {s.length}  "
                     f"health {s.health}{squad}{me}")
    if you.id not in letters:
        lines.append(f"  you ({names[you.id]}) are not on the board")
    lines += ["", to_ascii(state), ""]
    if len(letters) > 26:
        lines[-1:-1] = ["(the drawing letters snakes past the 26th as it does the first: "
                        "A2 is drawn A, and so on)"]

    verdict = decision.filter
    if verdict is not None:
        lines.append("filter:")
        for move in MOVES:
            if move in verdict.removed:
                lines.append(f"  {move:<5}  removed: {verdict.removed[move]}")
            else:
                risky = "  (risky, kept: every move left is risky)" if move in verdict.risky else ""
                lines.append(f"  {move:<5}  allowed{risky}")
    method = decision.method or strategy
    if decision.note:
        lines.append(f"nnue: {decision.note}")
    if decision.scores:
        label = "NNUE scores (win probability)" if method == "nnue" else "flood-fill sums"
        lines.append(f"{label}:")
        for move in MOVES:
            if move in decision.scores:
                lines.append(f"  {move:<5}  {decision.scores[move]:.4f}")
    if decision.search is not None:
        lines += _explain_search(decision.search, names, state)
    lines += _explain_food(request, decision, names)
    if decision.candidates:
        lines.append(f"candidates: {', '.join(decision.candidates)}")
    lines.append(f"move: {decision.move}  (strategy {strategy}, by {method})")
    if decision.shout:
        lines.append(f"shout: {decision.shout}")
    return "\n".join(lines)


def _partial(search: SearchResult) -> str:
    """When the answer came from a deeper iteration the deadline cut short (its first move,
    the previous best, was searched to the end and another beat it, or it held), the score
    and the line are that iteration's, and the depth and root scores the last whole one's."""
    if not search.iterations or search.move is None:
        return ""
    depth, move, value = search.iterations[-1][:3]
    if move == search.move and abs(value - search.score) < 5e-5:
        return ""
    return (f" (from depth {depth + 1}, cut short after its first moves; the depth and the "
            f"root scores are depth {depth}'s, which scored {move} {value:.4f})")


def _explain_search(search: SearchResult, names: dict[str, str],
                    state: GameState | None = None) -> list[str]:
    """The search's summary: what it searched, how deep, and the line it expects (played by
    the rules from ``state``, so that a snake is shown only while it lives), snakes named
    as ``names`` shows each by id."""
    lines = [
        f"search: {search.algorithm} ({search.engine}) with {search.evaluator} evaluation, "
        f"depth {search.depth}, {search.nodes} nodes"
        + (f" in {search.threads} threads (the answer from "
           + ("the main thread" if search.answered_by == 0
              else f"helper {search.answered_by}") + ")"
           if search.threads > 1 else "")
        + f", {search.since_arrival_ms} ms, stopped: {search.stopped}",
        f"  score {search.score:.4f}" + _partial(search),
    ]
    if search.note:
        lines.append(f"  note: {search.note}")
    if search.iterations:
        lines.append("  iterations: " + ", ".join(
            f"depth {depth} {move} at {ms} ms" for depth, move, _, _, ms in search.iterations))
    searched = [names.get(sid, sid) for sid in search.opponents]
    cheap = [names.get(sid, sid) for sid in search.cheap]
    if searched or cheap:
        how = " (best replies: one at a time)" if search.replies == "best" and searched else ""
        lines.append(f"  opponents searched{how}: {', '.join(searched) or 'none'}; "
                     f"played cheaply: {', '.join(cheap) or 'none'}")
    if search.scores:
        # alpha-beta proves the best move's value; a move that cannot beat it is cut off as
        # soon as it is known not to, so its figure is only a bound (an equal one is no tie)
        best = search.move if search.move in search.scores else max(search.scores,
                                                                     key=search.scores.get)
        if search.exact_scores:
            lines.append("  root scores: " + ", ".join(
                f"{m} {v:.4f}" for m, v in search.scores.items()))
        else:
            lines.append("  root scores (the best exact, the others at most): " + ", ".join(
                f"{m} {v:.4f}" if m == best else f"{m} <= {v:.4f}"
                for m, v in search.scores.items()))
    line_state = state
    for ply, moves in enumerate(search.pv, start=1):
        living = ({s.id for s in line_state.board.living_snakes} if line_state is not None
                  else set(moves))
        joint = ", ".join(f"{names.get(sid, sid)} {move}" for sid, move in moves.items()
                          if sid in living)
        lines.append(f"  pv {ply}: {joint}")
        if line_state is not None:
            line_state = apply_rules(line_state, moves)
            if not line_state.board.living_snakes:
                break
    return lines


def _explain_food(request: MoveRequest, decision: Decision, names: dict[str, str]) -> list[str]:
    """Why food was or was not taken: each food with who is nearest (moves, Manhattan,
    the short way round when the board wraps), the food the board-control partition gives
    ``you`` and how far, whether health reaches it, and whether the move goes nearer."""
    state, you = request.state, request.you
    board = state.board
    if not board.food or board.snake(you.id) is None or not you.alive:
        return []
    wraps = state.ruleset.wraps

    def far(a, b) -> int:
        return distance(a, b, board.width, board.height, wraps)

    lines = ["food:"]
    others = [s for s in board.living_snakes if s.id != you.id and not you.is_squadmate(s)]
    mates = [s for s in board.living_snakes if s.id != you.id and you.is_squadmate(s)]
    # (distances as the crow flies, bodies and hazards not counted: board control, below,
    # is what counts them)
    for food in sorted(board.food, key=lambda f: far(you.head, f)):
        mine = far(you.head, food)
        rivals = sorted(((far(s.head, food), -s.length, s) for s in others),
                        key=lambda rival: rival[:2])
        if not rivals or rivals[0][0] > mine:
            mate = min(mates, key=lambda s: far(s.head, food), default=None)
            who = ("nearest to you" if mate is None or far(mate.head, food) >= mine
                   else f"nearest to {names.get(mate.id, mate.id)}, your squadmate")
        else:
            d, _, s = rivals[0]
            stronger = s.length >= you.length
            who = (f"{names.get(s.id, s.id)} is {'as near' if d == mine else 'nearer'} "
                   f"({d}), {'as long or longer' if stronger else 'shorter'}")
        lines.append(f"  {food}: {mine} squares away as the crow flies; {who}")
    nearest_food = min(board.food, key=lambda f: far(you.head, f))
    control = board_control(state).get(you.id)
    nearest = control[1] if control else None
    search = decision.search
    if nearest is None:
        lines.append("  none of it is yours by board control (each is nearer to another "
                     "snake, or contested by one as long, or behind bodies that free too late)")
        if (search is not None and search.evaluator.startswith("voronoi")
                and hunger(search.style) > 0):
            d = far(you.head, nearest_food)
            now = ("now" if you.health - d < HUNGER_MARGIN
                   else f"not yet (health {you.health}, {d} moves from food)")
            lines.append(f"  the value ({search.style} weights) counts, owning no food, the "
                         f"distance to the nearest food once health is within {HUNGER_MARGIN:g} "
                         f"moves of it: {now}")
    else:
        reach = ("within reach of its health, hazards aside" if you.health >= nearest
                 else f"out of reach (health {you.health})")
        line = f"  board control: the nearest food you control is {nearest} moves away, {reach}"
        if search is not None and search.evaluator.startswith("voronoi"):
            below = food_health(search.style)
            counts = ("at any health" if below > 100
                      else f"only below health {below:g} (health {you.health})")
            line += f"; the value ({search.style} weights) counts food distance {counts}"
            if search.evaluator.endswith("+ value head"):
                # (a learned head reads health and food among its measurements at any health)
                line += ", and a learned value head corrects it"
        lines.append(line)
    after = next_square(state, you.head, decision.move)
    least = far(you.head, nearest_food)
    nearest_foods = [f for f in board.food if far(you.head, f) == least]
    nearer = [f for f in nearest_foods if far(after, f) < least]
    if nearer:
        lines.append(f"  the move {decision.move} goes nearer to the nearest food {nearer[0]}")
    else:
        named = " or ".join(str(f) for f in nearest_foods)
        lines.append(f"  the move {decision.move} goes no nearer to the nearest food {named}")
    return lines


def _load(path: str, stdin: TextIO) -> Any:
    text = stdin.read() if path == "-" else open(path, encoding="utf-8").read()
    return json.loads(text)


def main(argv: list[str] | None = None, stdin: TextIO = sys.stdin, out: TextIO = sys.stdout) -> int:
    parser = argparse.ArgumentParser(prog="python -m snake.explain",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("request", help="a /move request body (JSON file), or - for stdin")
    parser.add_argument("--strategy", default=None,
                        help="default: $NUPPEPPOU_STRATEGY, else the service's default")
    parser.add_argument("--weights", default=None, help="network file (.npz)")
    parser.add_argument("--no-network", action="store_true", help="play without the network")
    parser.add_argument("--snakes-at-start", type=int, default=None, metavar="N",
                        help="the snakes the game began with (default: those in the request)")
    args = parser.parse_args(argv)
    try:
        settings = Settings.from_environ()
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    try:
        request = parse_request(_load(args.request, stdin))
        request.snakes_at_start = args.snakes_at_start
    except OSError as exc:
        print(f"error: cannot read {args.request}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except (ValueError, RecursionError) as exc:  # RequestError and JSON errors
        kind = "invalid request" if isinstance(exc, RequestError) else "not valid JSON"
        print(f"error: {kind}: {exc}", file=sys.stderr)
        return 2
    alive = len(request.state.board.living_snakes)
    if args.snakes_at_start is not None and args.snakes_at_start < alive:
        print(f"error: --snakes-at-start {args.snakes_at_start}: the request has {alive} "
              "snakes alive", file=sys.stderr)
        return 2

    network = None
    if not args.no_network:
        from nnue.network import Network, NetworkFileError, load_default

        path = args.weights or settings.weights
        try:
            network = Network.load(path) if path else load_default()
        except (OSError, NetworkFileError) as exc:
            print(f"error: cannot load the network: {exc}", file=sys.stderr)
            return 2
    try:
        strategy = get_strategy(args.strategy or settings.strategy, network=network,
                                settings=settings)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    accumulator = None
    if network is not None:
        from nnue.accumulator import Accumulator

        accumulator = Accumulator(network)
    decision = strategy.choose(request, accumulator)
    if network is None and not args.no_network:
        print("(no network: weights/nnue.npz is absent, so the seed plays flood fill)", file=out)
    print(explain(request, decision, strategy.name), file=out)
    return 0


if __name__ == "__main__":
    from snake.cli import run_main
    run_main(main)
