"""The move filter: which of the four moves are certain death, and which are risky.

This is step 1 of the seed behaviour (SPEC §2). For the snake ``you`` in ``state`` a move is
**removed** as certain death when it goes

1. back onto ``you``'s own neck;
2. off the board (in ``wrapped`` and ``wrapped_constrictor`` the edges wrap instead, so no
   move leaves the board);
3. into a square that a snake body (``you``'s or another living snake's) still occupies
   after this turn's movement (a snake the rules eliminate before collisions whatever it
   plays, starving or leaving the board on every move, occupies none). Every snake moves one square,
   so its segments ``body[0] .. body[-2]`` stay occupied (its head becomes its neck) and its tail
   square ``body[-1]`` is free if and only if its last two segments differ (it did not just eat)
   and the ruleset is not a constrictor one (there every snake grows every turn). In
   ``squad`` with ``allowBodyCollisions`` the bodies of ``you``'s squadmates are no
   obstacle;
4. to death by health: ``you``'s health after the turn (minus 1, minus the hazard damage
   once per copy of the square in ``board.hazards`` when the square holds no food) reaches
   0 and the square holds no food.

A surviving move is **risky** when its square is next to the head of a living snake that is
not ``you``'s squadmate and is at least as long as ``you`` (and not eliminated before
collisions whatever it plays): a head-to-head there loses or draws. Risky moves are dropped as well,
unless every move left is risky.

When ``you`` is not alive (eliminated, or not on the board) every move is removed. What a
body blocks after this turn's movement and which moves are certain death are asked of
:mod:`snake.rules.occupancy`; this module adds the health rule and the head-to-head risk,
and never advances the game.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from snake.board import GameState, Point, Snake
from snake.rules import (
    BODY,
    MOVES,
    NECK,
    WALL,
    HazardCopies,
    dies_of_health,
    fatal_reason,
    next_square,
    obstacles_after_move,
    removed_before_collisions,
)

__all__ = ["MoveFilter", "filter_moves", "NECK", "WALL", "BODY", "HEALTH", "RISKY", "DEAD"]

# Reasons a move is removed, as shown by ``python -m snake.explain`` (the first three are
# the rules' own: :func:`snake.rules.fatal_reason`).
HEALTH = "out of health"
RISKY = "risky head-to-head"
DEAD = "you are not alive"


@dataclass(frozen=True, slots=True)
class MoveFilter:
    """The filter's verdict for one snake and state.

    ``allowed``: the moves left, in :data:`~snake.rules.MOVES` order (empty when every move
    is certain death). ``removed``: each removed move with its reason. ``risky``: the
    surviving moves that risk a head-to-head (dropped from ``allowed`` unless all are)."""

    allowed: tuple[str, ...]
    removed: dict[str, str] = field(default_factory=dict)
    risky: tuple[str, ...] = ()


def filter_moves(state: GameState, you: Snake) -> MoveFilter:
    """Apply the filter described in the module docstring."""
    if not you.alive or state.board.snake(you.id) is None:
        return MoveFilter((), {m: DEAD for m in MOVES}, ())

    board = state.board
    obstacles = obstacles_after_move(state, you)
    copies = HazardCopies(board.hazards)
    # a snake the rules remove before collisions (it starves whatever it plays) meets no one
    threats = [
        s for s in board.snakes
        if s.alive and s.id != you.id and not you.is_squadmate(s) and s.length >= you.length
        and not removed_before_collisions(state, s, copies)
    ]
    danger: set[Point] = {next_square(state, s.head, m) for s in threats for m in MOVES}

    removed: dict[str, str] = {}
    safe: list[str] = []
    for move in MOVES:
        square = next_square(state, you.head, move)
        reason = fatal_reason(state, you, move, obstacles)
        if reason:
            removed[move] = reason
        elif dies_of_health(state, you, square, copies):
            removed[move] = HEALTH
        else:
            safe.append(move)

    risky = tuple(m for m in safe if next_square(state, you.head, m) in danger)
    if risky and len(risky) < len(safe):
        for move in risky:
            removed[move] = RISKY
        allowed = tuple(m for m in safe if m not in risky)
    else:
        allowed = tuple(safe)
    return MoveFilter(allowed, removed, risky)
