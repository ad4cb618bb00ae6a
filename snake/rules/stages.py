"""The turn step: one function per stage of the official engine, run in its order.

This is the only place where snakes move, eat and die; the server's look-ahead, the arena,
data generation and the search all call it. It follows github.com/BattlesnakeOfficial/rules
(commit 87e094e), and the last official release with squad mode for ``squad``, and is
checked against that engine's recorded turns by :mod:`snake.conformance`. A compiled twin
must keep these stages and names.

A turn (:data:`STAGES` gives each ruleset's pipeline; the engine's stage names are the keys):

``game_over.*`` (:data:`GAME_OVER`)
    Checked first: if the game is already over nothing happens. Standard: at most one
    snake alive. Solo: no snake alive. Squad: every living snake in one squad (or none).
``movement.standard`` / ``movement.wrap_boundaries``
    Every living snake gets a new head one step in its move and drops its last segment.
    A move that is not ``up``/``down``/``left``/``right`` (or is missing) repeats the
    snake's last move as read from its neck (:func:`default_move`), ``up`` if there is
    none. With ``wrap_boundaries`` a head that leaves the board comes back on the
    opposite edge.
``starvation.standard``
    Every living snake loses 1 health.
``hazard_damage.standard``
    A head on a hazard square without food loses ``hazardDamagePerTurn`` once per copy of
    that square in the hazards (stacked hazards), health clamped to 0..100 after each copy;
    a snake at 0 is eliminated (``hazard``). The hazards are those of the state before
    the turn.
``feed_snakes.standard``
    Every living snake whose head is on food gets health 100 and a duplicated tail
    segment; several snakes may eat the same piece; eaten food disappears.
``elimination.standard``
    Decided on the moved bodies. First, one by one: out of health (``out-of-health``),
    then out of bounds (``wall-collision``). Snakes eliminated so far this turn are gone:
    their bodies no longer count. Then, for each remaining snake, the first of: its head
    on its own body (``snake-self-collision``), on another living snake's body, head
    excluded (``snake-collision``, by the longest such snake), on the head of another
    living snake at least as long (``head-collision``, by the longest such snake). These
    are applied together, so two snakes can eliminate each other. A tail square is
    therefore safe unless its snake just ate (its last two segments coincide). Ties in
    length go to the snake listed first.
``elimination.resurrect_squad_collisions`` (squad, with ``allowBodyCollisions``)
    A snake eliminated by ``snake-collision`` with a squadmate is brought back.
``modify_snakes.share_attributes`` (squad)
    For each living snake in board order and each snake of its squad (eliminated ones
    included): ``sharedHealth`` raises its health to the other's, ``sharedLength`` grows
    it (tail duplicated) to the other's length, and ``sharedElimination`` eliminates it
    (``squad-eliminated``) if the other is eliminated. Squads are equal ``squad`` strings,
    as in the engine (snakes without one form a squad of their own together).
``spawn_food.no_food`` then ``modify_snakes.always_grow`` (constrictor rulesets)
    All food is removed; every snake, eliminated ones included, gets health 100 and grows
    by one unless its last two segments coincide already.
``spawn_hazards.shrink_map`` (royale)
    On turns where ``turn + 1`` is a multiple of ``shrinkEveryNTurns`` one side of the safe
    zone moves in (the side is the engine's random draw); the hazards become the squares
    outside the zone. This turn's damage used the old hazards.

Everything above is :func:`apply_rules` (the vectors' ``after_rules``). :func:`play_turn`
adds the map stage (food spawning, map hazards: :mod:`snake.rules.maps`) and ``turn`` + 1.
Rulesets this engine does not know are played as ``standard``.

Eliminated snakes stay in ``board.snakes`` with their body as it was when they died,
``eliminated_cause``, ``eliminated_by`` (own id for a self collision, the other snake's
for a body or head collision, empty otherwise) and ``eliminated_on_turn`` (``turn`` + 1).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Callable, Mapping

from snake.board import Board, GameState, Point, Ruleset, Snake
from snake.rules.geometry import DELTAS, last_move
from snake.rules.maps import get_map, is_royale_shrink_turn, royale_shrink

# Elimination causes, as the engine spells them.
WALL_COLLISION = "wall-collision"
SELF_COLLISION = "snake-self-collision"
BODY_COLLISION = "snake-collision"
HEAD_COLLISION = "head-collision"
OUT_OF_HEALTH = "out-of-health"
HAZARD = "hazard"
SQUAD_ELIMINATED = "squad-eliminated"

MAX_HEALTH = 100


def default_move(snake: Snake) -> str:
    """The move the engine applies for a snake that gave none (or an invalid one): its
    last move, read from head and neck (also across a wrapped edge), ``up`` if unknown."""
    body = snake.body
    return last_move(body[0], body[1] if len(body) > 1 else None)


# ---------------------------------------------------------------------------------------
# Game over


def game_over_standard(state: GameState) -> bool:
    """``game_over.standard``: at most one snake alive."""
    living = 0
    for s in state.board.snakes:
        if not s.eliminated_cause:
            living += 1
    return living <= 1


def game_over_solo_snake(state: GameState) -> bool:
    """``game_over.solo_snake``: no snake alive."""
    return all(s.eliminated_cause for s in state.board.snakes)


def game_over_by_squad(state: GameState) -> bool:
    """``game_over.by_squad``: every living snake in one squad (or none alive)."""
    return len({s.squad for s in state.board.snakes if not s.eliminated_cause}) <= 1


# ---------------------------------------------------------------------------------------
# The stages of a turn


class Turn:
    """One turn being played: the state before it, the moves, and the new board that the
    stages edit (``living``: its snakes not eliminated so far this turn, in board order)."""

    __slots__ = ("before", "ruleset", "moves", "royale_side", "board", "living", "next_turn")

    def __init__(self, before: GameState, moves: Mapping[str, str],
                 royale_side: int | None) -> None:
        self.before = before
        self.ruleset: Ruleset = before.game.ruleset
        self.moves = moves
        self.royale_side = royale_side
        board = before.board
        self.board = Board(board.width, board.height, board.food, board.hazards, [])
        self.living: list[Snake] = []
        self.next_turn = before.turn + 1


def _move_snakes(turn: Turn, wraps: bool) -> None:
    board = turn.board
    width, height = board.width, board.height
    moves = turn.moves
    for s in turn.before.board.snakes:
        if s.eliminated_cause:
            board.snakes.append(s.copy())
            continue
        body = s.body
        delta = DELTAS.get(moves.get(s.id))  # type: ignore[arg-type]
        if delta is None:
            delta = DELTAS[default_move(s)]
        x, y = body[0]
        x += delta[0]
        y += delta[1]
        if wraps:
            if x < 0:
                x = width - 1
            elif x >= width:
                x = 0
            if y < 0:
                y = height - 1
            elif y >= height:
                y = 0
        # What the rules need (and the name, for people); wire-only fields stay behind.
        moved = Snake(s.id, [(x, y), *body[:-1]], s.health, s.name, s.squad)
        board.snakes.append(moved)
        turn.living.append(moved)


def movement_standard(turn: Turn) -> None:
    """``movement.standard``: every living snake one step on (module docstring)."""
    _move_snakes(turn, wraps=False)


def movement_wrap_boundaries(turn: Turn) -> None:
    """``movement.wrap_boundaries``: the same, heads wrapping across the edges."""
    _move_snakes(turn, wraps=True)


def starvation_standard(turn: Turn) -> None:
    """``starvation.standard``: every living snake loses 1 health."""
    for s in turn.living:
        s.health -= 1


def hazard_damage_standard(turn: Turn) -> None:
    """``hazard_damage.standard``: damage per stacked hazard copy under a head without food."""
    hazards = turn.board.hazards
    if not hazards:
        return
    food = turn.board.food
    damage = turn.ruleset.settings.hazard_damage_per_turn
    copies_at = Counter(hazards)      # one pass, not one per head: boards may list thousands
    eliminated = False
    for s in turn.living:
        head = s.body[0]
        copies = copies_at[head]
        if copies and head not in food:
            health = s.health
            for _ in range(copies):
                health -= damage
                if health < 0:
                    health = 0
                elif health > MAX_HEALTH:
                    health = MAX_HEALTH
                if health <= 0:
                    s.eliminated_cause = HAZARD
                    s.eliminated_on_turn = turn.next_turn
            s.health = health
            if health <= 0:
                eliminated = True
    if eliminated:
        turn.living = [s for s in turn.living if not s.eliminated_cause]


def feed_snakes_standard(turn: Turn) -> None:
    """``feed_snakes.standard``: heads on food eat it (health 100, tail duplicated)."""
    board = turn.board
    food = board.food
    if not food:
        board.food = []
        return
    living = turn.living
    heads = {s.body[0] for s in living}
    if heads.isdisjoint(food):
        board.food = list(food)
        return
    remaining = []
    for f in food:
        if f in heads:
            for s in living:
                if s.body[0] == f:
                    s.body.append(s.body[-1])
                    s.health = MAX_HEALTH
        else:
            remaining.append(f)
    board.food = remaining


def _negative_length(snake: Snake) -> int:
    return -len(snake.body)


def elimination_standard(turn: Turn) -> None:
    """``elimination.standard``: health and bounds one by one, then collisions together."""
    board = turn.board
    width, height = board.width, board.height
    next_turn = turn.next_turn
    survivors = []
    for s in turn.living:
        if s.health <= 0:
            s.eliminated_cause = OUT_OF_HEALTH
            s.eliminated_on_turn = next_turn
            continue
        x, y = s.body[0]
        if x < 0 or y < 0 or x >= width or y >= height:
            s.eliminated_cause = WALL_COLLISION
            s.eliminated_on_turn = next_turn
            continue
        survivors.append(s)

    collisions: list[tuple[Snake, str, str]] = []
    by_length: list[Snake] | None = None
    # Most turns have no collision: find the heads that touch anything at all first
    # (a body segment, or another head), and only for those rank the snakes by length.
    segments: set[Point] = set()
    heads_seen: set[Point] = set()
    shared_heads: set[Point] = set()
    for s in survivors:
        body = s.body
        segments.update(body[1:])
        head = body[0]
        if head in heads_seen:
            shared_heads.add(head)
        heads_seen.add(head)
    for s in survivors:
        body = s.body
        head = body[0]
        if head not in segments and head not in shared_heads:
            continue
        if body.count(head) > 1:
            collisions.append((s, SELF_COLLISION, s.id))
            continue
        if by_length is None:
            # Longest first, ties in board order, so a collision is credited to the
            # longest snake as the engine does.
            by_length = sorted(survivors, key=_negative_length)
        hit = None
        for o in by_length:
            if o is not s:
                ob = o.body
                if head in ob and (ob[0] != head or ob.count(head) > 1):
                    hit = o
                    break
        if hit is not None:
            collisions.append((s, BODY_COLLISION, hit.id))
            continue
        length = len(body)
        for o in by_length:
            if o is not s and o.body[0] == head and length <= len(o.body):
                collisions.append((s, HEAD_COLLISION, o.id))
                break
    for s, cause, by in collisions:
        s.eliminated_cause = cause
        s.eliminated_by = by
        s.eliminated_on_turn = next_turn
    turn.living = [s for s in survivors if not s.eliminated_cause] if collisions else survivors


def resurrect_squad_collisions(turn: Turn) -> None:
    """``elimination.resurrect_squad_collisions``: squadmates' body collisions undone
    (with ``allowBodyCollisions``)."""
    if not turn.ruleset.settings.allow_body_collisions:
        return
    snakes = turn.board.snakes
    squad_of = {s.id: s.squad for s in snakes}
    for s in snakes:
        if (s.eliminated_cause == BODY_COLLISION and s.eliminated_by != s.id
                and squad_of.get(s.eliminated_by) == s.squad):
            s.eliminated_cause = ""
            s.eliminated_by = ""
            s.eliminated_on_turn = 0
    turn.living = [s for s in snakes if not s.eliminated_cause]


def share_squad_attributes(turn: Turn) -> None:
    """``modify_snakes.share_attributes``: shared health, length and elimination."""
    settings = turn.ruleset.settings
    shared_health, shared_length = settings.shared_health, settings.shared_length
    shared_elimination = settings.shared_elimination
    if not (shared_health or shared_length or shared_elimination):
        return
    snakes = turn.board.snakes
    for s in snakes:
        if s.eliminated_cause:
            continue
        for o in snakes:
            if o.squad != s.squad:
                continue
            if shared_health and s.health < o.health:
                s.health = o.health
            if shared_length:
                while len(s.body) < len(o.body):
                    s.body.append(s.body[-1])
            if shared_elimination and not s.eliminated_cause and o.eliminated_cause:
                s.eliminated_cause = SQUAD_ELIMINATED
                s.eliminated_by = ""
                s.eliminated_on_turn = turn.next_turn
    turn.living = [s for s in snakes if not s.eliminated_cause]


def spawn_food_no_food(turn: Turn) -> None:
    """``spawn_food.no_food``: all food removed."""
    turn.board.food = []


def always_grow(turn: Turn) -> None:
    """``modify_snakes.always_grow``: every snake, eliminated ones included, at health
    100 and one segment longer unless its last two segments coincide already."""
    for s in turn.board.snakes:
        body = s.body
        s.health = MAX_HEALTH
        if len(body) < 2 or body[-1] != body[-2]:
            body.append(body[-1])


def shrink_map(turn: Turn) -> None:
    """``spawn_hazards.shrink_map``: no hazards before the first shrink; on a shrink turn
    (and with a side drawn) the zone moves in on that side."""
    board = turn.board
    settings = turn.ruleset.settings
    before = turn.before.turn
    if before + 1 < settings.shrink_every_n_turns:
        board.hazards = []
    elif (turn.royale_side is not None
          and is_royale_shrink_turn(before, settings.shrink_every_n_turns)):
        board.hazards = royale_shrink(board.width, board.height, board.hazards, turn.royale_side)


Stage = Callable[[Turn], None]

_STANDARD: tuple[tuple[str, Stage], ...] = (
    ("movement.standard", movement_standard),
    ("starvation.standard", starvation_standard),
    ("hazard_damage.standard", hazard_damage_standard),
    ("feed_snakes.standard", feed_snakes_standard),
    ("elimination.standard", elimination_standard),
)
_WRAPPED = (("movement.wrap_boundaries", movement_wrap_boundaries),) + _STANDARD[1:]
_CONSTRICT = (("spawn_food.no_food", spawn_food_no_food),
              ("modify_snakes.always_grow", always_grow))

#: The game-over test of each ruleset, by the engine's stage name.
GAME_OVER: dict[str, tuple[str, Callable[[GameState], bool]]] = {
    "standard": ("game_over.standard", game_over_standard),
    "solo": ("game_over.solo_snake", game_over_solo_snake),
    "squad": ("game_over.by_squad", game_over_by_squad),
}

#: Each ruleset's stages after the game-over test, in the order :func:`apply_rules` runs
#: them (squad: its last release's stages in today's order, as in the conformance vectors).
STAGES: dict[str, tuple[tuple[str, Stage], ...]] = {
    "standard": _STANDARD,
    "solo": _STANDARD,
    "wrapped": _WRAPPED,
    "royale": _STANDARD + (("spawn_hazards.shrink_map", shrink_map),),
    "constrictor": _STANDARD + _CONSTRICT,
    "wrapped_constrictor": _WRAPPED + _CONSTRICT,
    "squad": _STANDARD + (("elimination.resurrect_squad_collisions", resurrect_squad_collisions),
                          ("modify_snakes.share_attributes", share_squad_attributes)),
}


def plays_solo(state: GameState) -> bool:
    """Whether the game is played as solo: the solo ruleset, or a game of one snake in any
    other (the official CLI plays one snake with the solo game-over test whatever the
    ruleset, ``WithSolo``: until that snake is out). ``board.snakes`` keeps the snakes
    eliminated in play, so a duel down to one snake is still a duel; a request lists the
    living only, and the engine asks no move of a game that is over."""
    return state.game.ruleset.name == "solo" or len(state.board.snakes) == 1


def is_game_over(state: GameState) -> bool:
    """The ruleset's game-over test (:data:`GAME_OVER`; others: ``standard``; solo's when
    :func:`plays_solo`)."""
    name = "solo" if plays_solo(state) else state.game.ruleset.name
    return GAME_OVER.get(name, GAME_OVER["standard"])[1](state)


def apply_rules(state: GameState, moves: Mapping[str, str], *,
                royale_side: int | None = None) -> GameState:
    """The rule stages of one turn (module docstring): a new state, ``state`` untouched,
    ``turn`` not incremented, no random food. ``moves`` maps snake ids to moves.
    ``royale_side`` (0 left, 1 right, 2 bottom, 3 top) is the side the royale ruleset
    shrinks on a shrink turn; without it the zone does not shrink."""
    if is_game_over(state):
        return state.copy()
    turn = Turn(state, moves, royale_side)
    for _, stage in STAGES.get(state.game.ruleset.name, _STANDARD):
        stage(turn)
    board = turn.board
    if board.hazards is state.board.hazards:
        board.hazards = list(board.hazards)
    return GameState(state.game, state.turn, board)


def play_turn(state: GameState, moves: Mapping[str, str], rng: random.Random) -> GameState:
    """A whole turn as the engine plays it: :func:`apply_rules` (royale's side drawn from
    ``rng`` on a shrink turn), the map stage of ``state.game.map`` (food spawning, map
    hazards), then ``turn`` + 1. Returns a new state; ``state`` is untouched.

    A living snake missing from ``moves`` (or with an invalid move) repeats its last
    move, ``up`` on the first turn — what the engine does for a snake that did not
    answer in time. On a game that is already over the rule stages do nothing, but the
    map stage and ``turn`` + 1 still run, as in the engine's game loop."""
    ruleset = state.game.ruleset
    side = None
    if not is_game_over(state) and ruleset.name == "royale" and is_royale_shrink_turn(
            state.turn, ruleset.settings.shrink_every_n_turns):
        side = rng.randrange(4)
    after = apply_rules(state, moves, royale_side=side)
    get_map(state.game.map).update(after, rng)
    after.turn += 1
    return after
