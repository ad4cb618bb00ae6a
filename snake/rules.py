"""The rules engine: one turn of Battlesnake, exactly as the official engine plays it.

This is the only place where snakes move, eat and die; the server's look-ahead, the arena,
data generation and search all call it. It follows github.com/BattlesnakeOfficial/rules
(commit 87e094e), and the last official release with squad mode for ``squad``, and is
checked against that engine's recorded turns by :mod:`snake.conformance`.

A turn, in the engine's stage order (:data:`STAGES` lists them per ruleset):

1. **Game over** is checked first: if the game is already over nothing happens.
   Standard: at most one snake alive. Solo: no snake alive. Squad: every living snake
   in one squad (or none alive).
2. **Movement.** Every living snake gets a new head one step in its move and drops its
   last segment. A move that is not ``up``/``down``/``left``/``right`` (or is missing)
   repeats the snake's last move as read from its neck, ``up`` if there is none. In
   ``wrapped`` and ``wrapped_constrictor`` a head that leaves the board comes back on
   the opposite edge.
3. **Starvation.** Every living snake loses 1 health.
4. **Hazard damage.** A head on a hazard square without food loses
   ``hazardDamagePerTurn`` once per copy of that square in the hazards (stacked hazards),
   health clamped to 0..100 after each copy; a snake at 0 is eliminated (``hazard``).
   The hazards are those of the state before the turn.
5. **Feeding.** Every living snake whose head is on food gets health 100 and a duplicated
   tail segment; several snakes may eat the same piece; eaten food disappears.
6. **Elimination**, decided on the moved bodies. First, one by one: out of health
   (``out-of-health``), then out of bounds (``wall-collision``). Snakes eliminated so far
   this turn are gone: their bodies no longer count. Then, for each remaining snake, the
   first of: its head on its own body (``snake-self-collision``), on another living
   snake's body, head excluded (``snake-collision``, by the longest such snake), on the
   head of another living snake at least as long (``head-collision``, by the longest
   such snake). These are applied together, so two snakes can eliminate each other.
   A tail square is therefore safe unless its snake just ate (its last two segments
   coincide). Ties in length go to the snake listed first.
7. **Mode stages.**

   - Squad (with ``allowBodyCollisions``): a snake eliminated by ``snake-collision`` with
     a squadmate is brought back. Then, for each living snake in board order and each
     snake of its squad (eliminated ones included): ``sharedHealth`` raises its health to
     the other's, ``sharedLength`` grows it (tail duplicated) to the other's length, and
     ``sharedElimination`` eliminates it (``squad-eliminated``) if the other is eliminated.
     Squads are equal ``squad`` strings, as in the engine (snakes without one form a
     squad of their own together).
   - Constrictor, wrapped constrictor: all food is removed, then every snake, eliminated
     ones included, gets health 100 and grows by one unless its last two segments
     coincide already.
   - Royale: on turns where ``turn + 1`` is a multiple of ``shrinkEveryNTurns`` one side
     of the safe zone moves in (the side is the engine's random draw); the hazards become
     the squares outside the zone. This turn's damage used the old hazards.

Everything above is :func:`apply_rules` (the vectors' ``after_rules``). :func:`play_turn`
adds the map stage (food spawning, map hazards: :mod:`snake.maps`) and ``turn`` + 1.

Eliminated snakes stay in ``board.snakes`` with their body as it was when they died,
``eliminated_cause``, ``eliminated_by`` (own id for a self collision, the other snake's
for a body or head collision, empty otherwise) and ``eliminated_on_turn`` (``turn`` + 1).
"""

from __future__ import annotations

import random
from typing import Mapping

from .board import GameState, Board, Snake, Point
from .maps import get_map, is_royale_shrink_turn, royale_shrink

# Elimination causes, as the engine spells them.
WALL_COLLISION = "wall-collision"
SELF_COLLISION = "snake-self-collision"
BODY_COLLISION = "snake-collision"
HEAD_COLLISION = "head-collision"
OUT_OF_HEALTH = "out-of-health"
HAZARD = "hazard"
SQUAD_ELIMINATED = "squad-eliminated"

MAX_HEALTH = 100

#: The engine's stages per ruleset, in the order they run (squad: its last release's stages
#: in today's order, as in the conformance vectors). Informational: :func:`apply_rules` runs them.
STAGES: dict[str, tuple[str, ...]] = {
    "standard": ("game_over.standard", "movement.standard", "starvation.standard",
                 "hazard_damage.standard", "feed_snakes.standard", "elimination.standard"),
    "solo": ("game_over.solo_snake", "movement.standard", "starvation.standard",
             "hazard_damage.standard", "feed_snakes.standard", "elimination.standard"),
    "wrapped": ("game_over.standard", "movement.wrap_boundaries", "starvation.standard",
                "hazard_damage.standard", "feed_snakes.standard", "elimination.standard"),
    "royale": ("game_over.standard", "movement.standard", "starvation.standard",
               "hazard_damage.standard", "feed_snakes.standard", "elimination.standard",
               "spawn_hazards.shrink_map"),
    "constrictor": ("game_over.standard", "movement.standard", "starvation.standard",
                    "hazard_damage.standard", "feed_snakes.standard", "elimination.standard",
                    "spawn_food.no_food", "modify_snakes.always_grow"),
    "wrapped_constrictor": ("game_over.standard", "movement.wrap_boundaries",
                            "starvation.standard", "hazard_damage.standard",
                            "feed_snakes.standard", "elimination.standard",
                            "spawn_food.no_food", "modify_snakes.always_grow"),
    "squad": ("game_over.by_squad", "movement.standard", "starvation.standard",
              "hazard_damage.standard", "feed_snakes.standard", "elimination.standard",
              "elimination.resurrect_squad_collisions", "modify_snakes.share_attributes"),
}

_DELTAS: dict[str, Point] = {"up": (0, 1), "down": (0, -1), "left": (-1, 0), "right": (1, 0)}
_WRAPPED = frozenset(("wrapped", "wrapped_constrictor"))
_CONSTRICTOR = frozenset(("constrictor", "wrapped_constrictor"))


def default_move(snake: Snake) -> str:
    """The move the engine applies for a snake that gave none (or an invalid one): its
    last move, read from head and neck (also across a wrapped edge), ``up`` if unknown."""
    body = snake.body
    if len(body) >= 2:
        (hx, hy), (nx, ny) = body[0], body[1]
        if hx == nx + 1:
            return "right"
        if hx == nx - 1:
            return "left"
        if hy == ny + 1:
            return "up"
        if hy == ny - 1:
            return "down"
        if hx == 0 and nx > 0:
            return "right"
        if nx == 0 and hx > 0:
            return "left"
        if hy == 0 and ny > 0:
            return "up"
        if ny == 0 and hy > 0:
            return "down"
    return "up"


def is_game_over(state: GameState) -> bool:
    """The engine's game-over test: at most one snake alive (solo: none alive; squad:
    all living snakes in one squad, or none alive)."""
    name = state.game.ruleset.name
    if name == "squad":
        return len({s.squad for s in state.board.snakes if not s.eliminated_cause}) <= 1
    living = 0
    for s in state.board.snakes:
        if not s.eliminated_cause:
            living += 1
    return living == 0 if name == "solo" else living <= 1


def outcome(state: GameState, snake_id: str) -> str:
    """``"win"``, ``"draw"`` or ``"loss"`` for ``snake_id`` in a finished game (SPEC §5).

    Win: the snake is the last one alive (squad: its squad is the one left). Draw: nobody
    is left and the snake was eliminated on the final turn together with every other
    snake still alive before it. Loss otherwise, and always in solo (a solo game is
    scored by its length instead). Raises ``ValueError`` if the game is not over or the
    snake is unknown."""
    board = state.board
    snake = board.snake(snake_id)
    if snake is None:
        raise ValueError(f"no snake {snake_id!r} in this game")
    if not is_game_over(state):
        raise ValueError("the game is not over")
    ruleset = state.game.ruleset.name
    if ruleset == "solo":
        return "loss"
    living = [s for s in board.snakes if not s.eliminated_cause]
    if living:
        if snake.alive:
            return "win"
        if ruleset == "squad" and snake.squad == living[0].squad:
            return "win"
        return "loss"
    final_turn = max(s.eliminated_on_turn for s in board.snakes)
    return "draw" if snake.eliminated_on_turn == final_turn else "loss"


def apply_rules(state: GameState, moves: Mapping[str, str], *,
                royale_side: int | None = None) -> GameState:
    """The rule stages of one turn (see the module docstring): a new state, ``state``
    untouched, ``turn`` not incremented, no random food. ``moves`` maps snake ids to
    moves. ``royale_side`` (0 left, 1 right, 2 bottom, 3 top) is the side the royale
    ruleset shrinks on a shrink turn; without it the zone does not shrink."""
    if is_game_over(state):
        return state.copy()
    return _apply_rules(state, moves, royale_side)


def _apply_rules(state: GameState, moves: Mapping[str, str], royale_side: int | None) -> GameState:
    """:func:`apply_rules` for a game that is not over."""
    game = state.game
    ruleset = game.ruleset
    name = ruleset.name
    board = state.board
    old_snakes = board.snakes
    width, height = board.width, board.height
    next_turn = state.turn + 1
    wraps = name in _WRAPPED
    deltas = _DELTAS

    # Movement and starvation: new Snake objects (the copy of the state happens here).
    snakes: list[Snake] = []
    living: list[Snake] = []
    for s in old_snakes:
        if s.eliminated_cause:
            snakes.append(s.copy())
            continue
        body = s.body
        delta = deltas.get(moves.get(s.id))  # type: ignore[arg-type]
        if delta is None:
            delta = deltas[default_move(s)]
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
        moved = Snake(s.id, [(x, y), *body[:-1]], s.health - 1, s.name, s.squad, s.latency,
                      s.shout, s.customizations)
        snakes.append(moved)
        living.append(moved)

    food = board.food
    hazards = board.hazards

    # Hazard damage, from the hazards of the state before the turn.
    if hazards:
        damage = ruleset.settings.hazard_damage_per_turn
        for s in living:
            head = s.body[0]
            copies = hazards.count(head)
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
                        s.eliminated_on_turn = next_turn
                s.health = health
        living = [s for s in living if not s.eliminated_cause]

    # Feeding: every living head on food eats it; eaten food disappears.
    if food:
        heads = {s.body[0] for s in living}
        if heads.isdisjoint(food):
            food = list(food)
        else:
            remaining = []
            for f in food:
                if f in heads:
                    for s in living:
                        if s.body[0] == f:
                            s.body.append(s.body[-1])
                            s.health = MAX_HEALTH
                else:
                    remaining.append(f)
            food = remaining
    else:
        food = []

    # Elimination, first pass: health and bounds.
    survivors = []
    for s in living:
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

    # Second pass: collisions against the survivors of the first, applied together.
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

    hazards = list(hazards)
    if name == "squad":
        _squad_stages(snakes, ruleset.settings, next_turn)
    elif name in _CONSTRICTOR:
        food = []
        for s in snakes:
            body = s.body
            s.health = MAX_HEALTH
            if len(body) < 2 or body[-1] != body[-2]:
                body.append(body[-1])
    elif name == "royale":
        if state.turn + 1 < ruleset.settings.shrink_every_n_turns:
            hazards = []
        elif royale_side is not None and is_royale_shrink_turn(
                state.turn, ruleset.settings.shrink_every_n_turns):
            hazards = royale_shrink(width, height, hazards, royale_side)

    return GameState(game, state.turn, Board(width, height, food, hazards, snakes))


def _negative_length(snake: Snake) -> int:
    return -len(snake.body)


def _squad_stages(snakes: list[Snake], settings, next_turn: int) -> None:
    """Squad resurrection and shared attributes (the last squad release's stages)."""
    if settings.allow_body_collisions:
        squad_of = {s.id: s.squad for s in snakes}
        for s in snakes:
            if (s.eliminated_cause == BODY_COLLISION and s.eliminated_by != s.id
                    and squad_of.get(s.eliminated_by) == s.squad):
                s.eliminated_cause = ""
                s.eliminated_by = ""
                s.eliminated_on_turn = 0
    shared_health, shared_length = settings.shared_health, settings.shared_length
    shared_elimination = settings.shared_elimination
    if not (shared_health or shared_length or shared_elimination):
        return
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
                s.eliminated_on_turn = next_turn


def play_turn(state: GameState, moves: Mapping[str, str], rng: random.Random) -> GameState:
    """A whole turn as the engine plays it: :func:`apply_rules` (royale's side drawn from
    ``rng`` on a shrink turn), the map stage of ``state.game.map`` (food spawning, map
    hazards), then ``turn`` + 1. Returns a new state; ``state`` is untouched.

    A living snake missing from ``moves`` (or with an invalid move) repeats its last
    move, ``up`` on the first turn — what the engine does for a snake that did not
    answer in time. On a game that is already over the rule stages do nothing, but the
    map stage and ``turn`` + 1 still run, as in the engine's game loop."""
    ruleset = state.game.ruleset
    if is_game_over(state):
        after = state.copy()
    else:
        side = None
        if ruleset.name == "royale" and is_royale_shrink_turn(
                state.turn, ruleset.settings.shrink_every_n_turns):
            side = rng.randrange(4)
        after = _apply_rules(state, moves, side)
    get_map(state.game.map).update(after, rng)
    after.turn += 1
    return after
