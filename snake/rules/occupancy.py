"""Occupancy: which squares a body still blocks as the snakes move, and which moves are
not certain death.

Every turn every living snake moves one square: its head becomes its neck and its last
segment leaves its square. So segment ``k`` of a body of length ``L`` (head ``k = 0``) has
left its square after ``L - k`` turns of movement if the snake eats nothing
(:func:`turns_until_vacated`); in the constrictor rulesets every snake grows every turn and
no segment ever leaves. After this turn's movement a body therefore still blocks
``body[0] .. body[-2]`` (:func:`segments_after_move`), and its tail square is free if and
only if its last two segments differ (the snake did not just eat: a stacked tail is also
``body[-2]``) and the ruleset is not a constrictor one. In ``squad`` with
``allowBodyCollisions`` squadmates' bodies are no obstacle to each other
(:func:`passes_through`).

A snake certain to be eliminated before the collisions are looked for blocks nothing: the
rules eliminate by health and by leaving the board first, and only then test collisions
against the bodies still in. So a snake that dies of health on every move (:func:`dies_of_health`:
its health after the turn, less 1 and the hazard damage once per copy of a square without
food, reaches 0 where there is no food) or leaves the board (:func:`removed_before_collisions`)
is no obstacle and no head-to-head threat: at health 1 with no food in reach, say.

From these the move filter (:mod:`snake.moves`), flood fill, board control and the search's
move generation all ask the same questions; none of them re-derives a rule. The rules
engine itself (:mod:`.stages`) decides what really happens.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Mapping, Sequence

from snake.rules.geometry import MOVES, next_square

if TYPE_CHECKING:
    from snake.board import GameState, Point, Ruleset, Snake

#: :func:`turns_until_vacated` of a segment that never leaves (constrictor rulesets).
NEVER = 1 << 30

# Why a move is certain death, whatever the other snakes do (the move filter's words).
NECK = "back onto own neck"
WALL = "off the board"
BODY = "into a body"


def turns_until_vacated(ruleset: Ruleset, length: int) -> Sequence[int]:
    """For each segment of a body of ``length`` segments (head first), the turns of
    movement after which it has left its square if the snake eats nothing: ``length - k``
    for segment ``k``, or :data:`NEVER` in the constrictor rulesets."""
    return (NEVER,) * length if ruleset.constrictor else range(length, 0, -1)


def segments_after_move(ruleset: Ruleset, body: list[Point]) -> list[Point]:
    """The squares of ``body`` still occupied once it has moved this turn: the segments
    whose :func:`turns_until_vacated` exceeds 1, which is every segment but the tail (the
    whole body in constrictor rulesets; a stacked tail stays, as it is also ``body[-2]``)."""
    return body if ruleset.constrictor else body[:-1]


def passes_through(ruleset: Ruleset, snake: Snake, other: Snake) -> bool:
    """``other``'s body is no obstacle to ``snake``: squadmates in squad mode with
    ``allowBodyCollisions``."""
    return ruleset.squad and ruleset.settings.allow_body_collisions and snake.is_squadmate(other)


class HazardCopies(Counter):
    """The hazards counted by square (stacked copies each deal the damage), and the most
    copies on any one square (:attr:`most`), counted once for a position."""

    def __init__(self, hazards: Sequence[Point] = ()) -> None:
        super().__init__(hazards)
        self.most = max(self.values(), default=0)


def dies_of_health(state: GameState, snake: Snake, square: Point,
                   copies: Mapping[Point, int] | None = None) -> bool:
    """Whether ``snake`` moving onto ``square`` is eliminated by health this turn: its
    health less 1, and less the hazard damage once per copy of ``square`` in the hazards
    when it holds no food, reaches 0, and there is no food there (SPEC §2). Never in the
    constrictor rulesets, where every snake is fed every turn. ``copies``: the hazards
    counted by square, when the caller has them (:class:`HazardCopies`)."""
    board = state.board
    if state.game.ruleset.constrictor or square in board.food:
        return False
    damage = state.game.ruleset.settings.hazard_damage_per_turn
    n = copies[square] if copies is not None else board.hazards.count(square)
    return snake.health - 1 - damage * n <= 0


def removed_before_collisions(state: GameState, snake: Snake,
                              copies: HazardCopies | None = None) -> bool:
    """Whether ``snake`` is eliminated this turn whatever it plays, before the rules look
    for collisions: every one of its moves leaves the board or dies of health
    (:func:`dies_of_health`). Its body then blocks nothing this turn."""
    board = state.board
    if snake.health > 1 and not board.hazards:
        return False                     # (the common case, at a glance)
    if copies is None:
        copies = HazardCopies(board.hazards)
    damage = state.game.ruleset.settings.hazard_damage_per_turn
    if snake.health > 1 + max(0, damage) * copies.most:
        return False                     # no square can cost it all its health
    for move in MOVES:
        square = next_square(state, snake.head, move)
        if board.in_bounds(square) and not dies_of_health(state, snake, square, copies):
            return False
    return True


def obstacles_after_move(state: GameState, snake: Snake | None = None) -> set[Point]:
    """The squares a living snake's body occupies after this turn's movement: obstacles
    for ``snake`` (its passable squadmates' bodies left out), or for anyone when ``None``.
    A snake :func:`removed_before_collisions` occupies nothing."""
    ruleset = state.game.ruleset
    occupied: set[Point] = set()
    copies = HazardCopies(state.board.hazards) if state.board.hazards else None
    for other in state.board.snakes:
        if other.eliminated_cause or (snake is not None and passes_through(ruleset, snake, other)):
            continue
        if ((snake is None or other.id != snake.id)
                and removed_before_collisions(state, other, copies)):
            continue                     # (its own body stays its own obstacle: same verdicts)
        occupied.update(segments_after_move(ruleset, other.body))
    return occupied


def fatal_reason(state: GameState, snake: Snake, move: str, obstacles: set[Point]) -> str:
    """Why ``move`` kills ``snake`` whatever the others do (:data:`NECK`, :data:`WALL` or
    :data:`BODY`), or ``""`` when it does not. ``obstacles``: :func:`obstacles_after_move`
    for ``snake``."""
    head = snake.head
    square = next_square(state, head, move)
    body = snake.body
    if len(body) > 1 and square == body[1] and body[1] != head:
        return NECK
    if not state.board.in_bounds(square):
        return WALL
    if square in obstacles:
        return BODY
    return ""


def candidate_moves(state: GameState, snake: Snake,
                    obstacles: set[Point] | None = None) -> tuple[str, ...]:
    """The moves of ``snake`` that are not certain death (:func:`fatal_reason`), in
    :data:`~.geometry.MOVES` order. A snake with none keeps its first move that is not
    back onto its neck (``up`` if even that is missing), so that a search still plays it
    and the rules eliminate it as they would.

    ``obstacles`` may be :func:`obstacles_after_move` for anyone, computed once for a
    position; it is recomputed here when squadmates' bodies are passable for ``snake``."""
    ruleset = state.game.ruleset
    if (obstacles is None
            or (snake.squad and ruleset.squad and ruleset.settings.allow_body_collisions)
            or snake.head not in obstacles):
        # (a snake removed before collisions is missing from the obstacles for anyone, but
        # its body is still its own: all its moves are death anyway, by the same verdicts.
        # Its head, which stays put in every other case, tells at a glance.)
        obstacles = obstacles_after_move(state, snake)
    out = []
    fallback = None
    for move in MOVES:
        reason = fatal_reason(state, snake, move, obstacles)
        if reason == NECK:
            continue
        if fallback is None:
            fallback = move
        if not reason:
            out.append(move)
    return tuple(out) if out else (fallback or "up",)


