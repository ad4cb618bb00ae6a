"""The turn step, compiled: the twin of :mod:`snake.rules.stages`.

Same stages, same names, same order (:data:`snake.rules.STAGES`); each is a numba function
that edits a state vector in place (:mod:`.state`). The reference's docstrings state the
rules; comments here say only how the compact form does the same. Held equal to the
reference by tests/test_core_step.py (a differential test over whole games of every
ruleset and size), the perft file, and ``python -m snake.conformance --engine compiled``.

:func:`apply_rules` is the reference's ``apply_rules``: the game-over test, then the
ruleset's stages; ``royale_side`` is -1 for "no shrink". It also reports what changed,
when given a buffer, as Stockfish's ``DirtyPiece``: rows ``(sign, snake, cell, piece)``,
``sign`` +1 for a piece that appeared and -1 for one that vanished, ``snake`` the owner (-1
for food and hazards), ``piece`` one of :data:`HEAD`, the body pieces :data:`LEFT` ..
:data:`UNDER` (where the segment moves next: toward the one before it; ``UNDER`` when both
are on one square), :data:`FOOD`, :data:`HAZARD` (the piece numbers of SPEC §4 for "your"
pieces). Summed over a turn the rows are exactly the difference of the two positions'
piece multisets (living snakes only), which is what an NNUE accumulator needs.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from snake.core.jit import JIT, JIT_NRT
from snake.core.state import (
    ALIVE,
    BODY,
    CONSTRICTOR,
    G_ALLOW_BODY,
    G_BODY,
    G_BY,
    G_CAPACITY,
    G_CAUSE,
    G_CELLS,
    G_DAMAGE,
    G_FOOD,
    G_FOOD_AT,
    G_HAZARD_AT,
    G_HAZARDS,
    G_HEALTH,
    G_HEIGHT,
    G_HP,
    G_LENGTH,
    G_MASK,
    G_N,
    G_OCC,
    G_ON_TURN,
    G_PIPELINE,
    G_PW,
    G_SHARED_ELIMINATION,
    G_SHARED_HEALTH,
    G_SHARED_LENGTH,
    G_SHRINK_EVERY,
    G_SIZE,
    G_SQUAD,
    G_WIDTH,
    G_WRAPS,
    G_X,
    G_Y,
    ROYALE,
    S_N_FOOD,
    S_N_HAZARDS,
    S_TURN,
    SELF,
    SOLO,
    SQUAD,
    SQUAD_OUT,
    STARVED,
    WALL,
    WRAPPED,
    WRAPPED_CONSTRICTOR,
)
from snake.core.state import HAZARD as HAZARD_CAUSE
from snake.core.state import HEAD as HEAD_CAUSE

MAX_HEALTH = 100

# Pieces in the change report (SPEC §4's numbers for "your" pieces).
HEAD, LEFT, RIGHT, DOWN, UP, UNDER, FOOD, HAZARD = 0, 1, 2, 3, 4, 5, 18, 19

#: Results of :func:`apply_rules` other than a row count.
OVERFLOW = -1   # a body outgrew its ring buffer (encode with a larger ``horizon``)


# ---------------------------------------------------------------------------------------
# Small pieces


@njit(**JIT)
def segment(g, s, i, k):
    """The cell of segment ``k`` (head 0) of snake ``i``."""
    return s[g[G_BODY] + i * g[G_CAPACITY] + ((s[g[G_HP] + i] - k) & g[G_MASK])]


@njit(**JIT)
def cell_x(g, cell):
    """The board x of a padded cell (-1 or ``width`` on the ring around the board)."""
    return g[g[G_X] + cell]


@njit(**JIT)
def cell_y(g, cell):
    """The board y of a padded cell (-1 or ``height`` on the ring around the board)."""
    return g[g[G_Y] + cell]


@njit(**JIT)
def is_alive(g, s, i):
    return s[g[G_CAUSE] + i] == ALIVE


@njit(**JIT)
def piece_between(g, toward, cell):
    """The body piece on ``cell`` whose segment moves next onto ``toward``."""
    dx = cell_x(g, toward) - cell_x(g, cell)
    dy = cell_y(g, toward) - cell_y(g, cell)
    if g[G_WRAPS]:
        if dx > 1:
            dx = -1
        elif dx < -1:
            dx = 1
        if dy > 1:
            dy = -1
        elif dy < -1:
            dy = 1
    if dx == -1:
        return LEFT
    if dx == 1:
        return RIGHT
    if dy == -1:
        return DOWN
    if dy == 1:
        return UP
    return UNDER


@njit(**JIT)
def default_move(g, s, i):
    """The reference's ``default_move``: the last move, from head and neck (board
    coordinates, also across a wrapped edge), 0 (up) when unknown."""
    if s[g[G_LENGTH] + i] < 2:
        return 0
    head = segment(g, s, i, 0)
    neck = segment(g, s, i, 1)
    hx, hy = cell_x(g, head), cell_y(g, head)
    nx, ny = cell_x(g, neck), cell_y(g, neck)
    if hx == nx + 1:
        return 3
    if hx == nx - 1:
        return 2
    if hy == ny + 1:
        return 0
    if hy == ny - 1:
        return 1
    if hx == 0 and nx > 0:
        return 3
    if nx == 0 and hx > 0:
        return 2
    if hy == 0 and ny > 0:
        return 0
    if ny == 0 and hy > 0:
        return 1
    return 0


@njit(inline="always", **JIT)
def _copy(source, target, start, stop):
    """``target[start:stop] = source[start:stop]``, as a loop over views from 0: a loop over
    indices from ``start`` is not vectorised (each index is checked for being negative), and
    a slice assignment goes through a temporary when the arrays may overlap."""
    a, b = source[start:stop], target[start:stop]
    for k in range(a.shape[0]):
        b[k] = a[k]


@njit(**JIT)
def copy_position(g, source, target):
    """Copy the position ``source`` into ``target`` (a state vector of the same game) as far
    as anything reads it: the header and the snakes' numbers, each body's segments (the live
    part of its ring), the food and hazard lists as long as they are, and the squares'
    contents. The rest (a ring's other cells, a list's unused end) is left as it was:
    nothing reads it before writing it. A search copies a position at every node, and a
    whole state is mostly rings and list room."""
    body = g[G_BODY]
    _copy(source, target, 0, body)            # the header and the snakes' numbers
    capacity, mask = g[G_CAPACITY], g[G_MASK]
    for i in range(g[G_N]):
        base = body + i * capacity
        hp = source[g[G_HP] + i] & mask
        tail = (hp - source[g[G_LENGTH] + i] + 1) & mask
        if tail <= hp:
            _copy(source, target, base + tail, base + hp + 1)
        else:                                   # the live part wraps around the ring's end
            _copy(source, target, base, base + hp + 1)
            _copy(source, target, base + tail, base + capacity)
    food, hazards = g[G_FOOD], g[G_HAZARDS]
    _copy(source, target, food, food + source[S_N_FOOD])
    _copy(source, target, hazards, hazards + source[S_N_HAZARDS])
    _copy(source, target, g[G_OCC], g[G_SIZE])     # the squares' contents


@njit(**JIT)
def grow(g, s, i):
    """Duplicate the tail segment of snake ``i`` (counted in ``occ`` if it is alive).
    Returns False when the ring buffer is full."""
    length = s[g[G_LENGTH] + i]
    if length >= g[G_CAPACITY]:
        return False
    base = g[G_BODY] + i * g[G_CAPACITY]
    hp = s[g[G_HP] + i]
    mask = g[G_MASK]
    tail = s[base + ((hp - length + 1) & mask)]
    s[base + ((hp - length) & mask)] = tail
    s[g[G_LENGTH] + i] = length + 1
    if s[g[G_CAUSE] + i] == ALIVE:
        s[g[G_OCC] + tail] += 1
    return True


@njit(**JIT)
def eliminate(g, s, i, cause, by, on_turn):
    """Mark snake ``i`` eliminated; its body leaves ``occ`` (it no longer counts)."""
    if s[g[G_CAUSE] + i] == ALIVE:
        for k in range(s[g[G_LENGTH] + i]):
            s[g[G_OCC] + segment(g, s, i, k)] -= 1
    s[g[G_CAUSE] + i] = cause
    s[g[G_BY] + i] = by
    s[g[G_ON_TURN] + i] = on_turn


@njit(**JIT)
def rebuild_occ(g, s):
    """``occ`` from the living bodies (after stages that bring snakes back)."""
    occ = g[G_OCC]
    s[occ:occ + g[G_CELLS]] = 0
    for i in range(g[G_N]):
        if s[g[G_CAUSE] + i] == ALIVE:
            for k in range(s[g[G_LENGTH] + i]):
                s[occ + segment(g, s, i, k)] += 1


# ---------------------------------------------------------------------------------------
# Game over


@njit(**JIT)
def living_count(g, s):
    count = 0
    for i in range(g[G_N]):
        if s[g[G_CAUSE] + i] == ALIVE:
            count += 1
    return count


@njit(**JIT)
def game_over_standard(g, s):
    return living_count(g, s) <= 1


@njit(**JIT)
def game_over_solo_snake(g, s):
    return living_count(g, s) == 0


@njit(**JIT)
def game_over_by_squad(g, s):
    squad = -1
    for i in range(g[G_N]):
        if s[g[G_CAUSE] + i] == ALIVE:
            if squad == -1:
                squad = s[g[G_SQUAD] + i]
            elif s[g[G_SQUAD] + i] != squad:
                return False
    return True


@njit(**JIT)
def plays_solo(g):
    """The twin of :func:`snake.rules.stages.plays_solo`: the solo ruleset, or a game of
    one snake in any other."""
    return g[G_PIPELINE] == SOLO or g[G_N] == 1


@njit(**JIT)
def is_game_over(g, s):
    pipeline = g[G_PIPELINE]
    if plays_solo(g):
        return game_over_solo_snake(g, s)
    if pipeline == SQUAD:
        return game_over_by_squad(g, s)
    return game_over_standard(g, s)


# ---------------------------------------------------------------------------------------
# The stages


@njit(**JIT)
def next_cell(g, cell, move, wraps):
    """The cell one ``move`` away: across the edges when ``wraps``, otherwise possibly a
    border cell (off the board)."""
    pw = g[G_PW]
    if not wraps:       # a padded neighbour: no coordinates needed
        if move == 0:
            return cell + pw
        if move == 1:
            return cell - pw
        if move == 2:
            return cell - 1
        return cell + 1
    x, y = cell_x(g, cell), cell_y(g, cell)
    if move == 0:
        y += 1
    elif move == 1:
        y -= 1
    elif move == 2:
        x -= 1
    else:
        x += 1
    x %= g[G_WIDTH]
    y %= g[G_HEIGHT]
    return (y + 1) * pw + x + 1


@njit(**JIT)
def _move_snakes(g, s, moves, wraps):
    mask = g[G_MASK]
    for i in range(g[G_N]):
        if s[g[G_CAUSE] + i] != ALIVE:
            continue
        move = moves[i]
        if move < 0 or move > 3:
            move = default_move(g, s, i)
        new_head = next_cell(g, segment(g, s, i, 0), move, wraps)
        length = s[g[G_LENGTH] + i]
        tail = segment(g, s, i, length - 1)
        hp = s[g[G_HP] + i] + 1
        s[g[G_HP] + i] = hp
        s[g[G_BODY] + i * g[G_CAPACITY] + (hp & mask)] = new_head
        s[g[G_OCC] + new_head] += 1
        s[g[G_OCC] + tail] -= 1


@njit(**JIT)
def movement_standard(g, s, moves):
    """``movement.standard``."""
    _move_snakes(g, s, moves, False)


@njit(**JIT)
def movement_wrap_boundaries(g, s, moves):
    """``movement.wrap_boundaries``."""
    _move_snakes(g, s, moves, True)


@njit(**JIT)
def starvation_standard(g, s):
    """``starvation.standard``."""
    for i in range(g[G_N]):
        if s[g[G_CAUSE] + i] == ALIVE:
            s[g[G_HEALTH] + i] -= 1


@njit(**JIT)
def hazard_damage_standard(g, s):
    """``hazard_damage.standard`` (the hazards and food of the state before the turn)."""
    if s[S_N_HAZARDS] == 0:
        return
    damage = g[G_DAMAGE]
    next_turn = s[S_TURN] + 1
    for i in range(g[G_N]):
        if s[g[G_CAUSE] + i] != ALIVE:
            continue
        head = segment(g, s, i, 0)
        copies = s[g[G_HAZARD_AT] + head]
        if copies and s[g[G_FOOD_AT] + head] == 0:
            health = s[g[G_HEALTH] + i]
            dead = False
            for _ in range(copies):
                health -= damage
                if health < 0:
                    health = 0
                elif health > MAX_HEALTH:
                    health = MAX_HEALTH
                if health <= 0:
                    dead = True
            s[g[G_HEALTH] + i] = health
            if dead:
                eliminate(g, s, i, HAZARD_CAUSE, -1, next_turn)


@njit(**JIT)
def feed_snakes_standard(g, s, changes, n_changes):
    """``feed_snakes.standard``. Returns the change count (eaten food reported), or
    :data:`OVERFLOW`."""
    n_food = s[S_N_FOOD]
    food = g[G_FOOD]
    kept = 0
    for k in range(n_food):
        cell = s[food + k]
        eaten = False
        for i in range(g[G_N]):
            if s[g[G_CAUSE] + i] == ALIVE and segment(g, s, i, 0) == cell:
                eaten = True
                if not grow(g, s, i):
                    return OVERFLOW
                s[g[G_HEALTH] + i] = MAX_HEALTH
        if eaten:
            s[g[G_FOOD_AT] + cell] -= 1
            n_changes = report(changes, n_changes, -1, -1, cell, FOOD)
        else:
            s[food + kept] = cell
            kept += 1
    s[S_N_FOOD] = kept
    return n_changes


@njit(**JIT)
def _contains(g, s, i, cell, start):
    """How many of snake ``i``'s segments from ``start`` on lie on ``cell``."""
    count = 0
    for k in range(start, s[g[G_LENGTH] + i]):
        if segment(g, s, i, k) == cell:
            count += 1
    return count


@njit(**JIT_NRT)
def elimination_standard(g, s):
    """``elimination.standard``: health and bounds one by one, then collisions together."""
    n = g[G_N]
    width, height = g[G_WIDTH], g[G_HEIGHT]
    next_turn = s[S_TURN] + 1
    for i in range(n):
        if s[g[G_CAUSE] + i] != ALIVE:
            continue
        if s[g[G_HEALTH] + i] <= 0:
            eliminate(g, s, i, STARVED, -1, next_turn)
            continue
        head = segment(g, s, i, 0)
        x, y = cell_x(g, head), cell_y(g, head)
        if x < 0 or y < 0 or x >= width or y >= height:
            eliminate(g, s, i, WALL, -1, next_turn)
    # Collisions among the survivors; a head alone on its cell touches nothing, and most
    # turns no head touches anything.
    contact = False
    for i in range(n):
        if s[g[G_CAUSE] + i] == ALIVE and s[g[G_OCC] + segment(g, s, i, 0)] > 1:
            contact = True
            break
    if not contact:
        return
    cause = np.zeros(n, dtype=np.int32)
    by = np.full(n, -1, dtype=np.int32)
    order = np.empty(0, dtype=np.int64)
    ranked = False
    any_hit = False
    for i in range(n):
        if s[g[G_CAUSE] + i] != ALIVE:
            continue
        head = segment(g, s, i, 0)
        if s[g[G_OCC] + head] <= 1:
            continue
        if _contains(g, s, i, head, 1) > 0:
            cause[i], by[i] = SELF, i
            any_hit = True
            continue
        if not ranked:
            order = _by_length(g, s)
            ranked = True
        for o in order:
            if o != i and _contains(g, s, o, head, 0) > 0 and (
                    segment(g, s, o, 0) != head or _contains(g, s, o, head, 0) > 1):
                cause[i], by[i] = BODY, o
                break
        if cause[i] != ALIVE:
            any_hit = True
            continue
        length = s[g[G_LENGTH] + i]
        for o in order:
            if o != i and segment(g, s, o, 0) == head and length <= s[g[G_LENGTH] + o]:
                cause[i], by[i] = HEAD_CAUSE, o
                any_hit = True
                break
    if any_hit:
        for i in range(n):
            if cause[i] != ALIVE:
                eliminate(g, s, i, cause[i], by[i], next_turn)


@njit(**JIT_NRT)
def _by_length(g, s):
    """Living snakes, longest first, ties in board order."""
    n = g[G_N]
    order = np.empty(n, dtype=np.int64)
    count = 0
    for i in range(n):
        if s[g[G_CAUSE] + i] != ALIVE:
            continue
        length = s[g[G_LENGTH] + i]
        k = count
        while k > 0 and s[g[G_LENGTH] + order[k - 1]] < length:
            order[k] = order[k - 1]
            k -= 1
        order[k] = i
        count += 1
    return order[:count]


@njit(**JIT)
def resurrect_squad_collisions(g, s):
    """``elimination.resurrect_squad_collisions``."""
    if not g[G_ALLOW_BODY]:
        return
    revived = False
    for i in range(g[G_N]):
        by = s[g[G_BY] + i]
        if (s[g[G_CAUSE] + i] == BODY and by != i and by >= 0
                and s[g[G_SQUAD] + by] == s[g[G_SQUAD] + i]):
            s[g[G_CAUSE] + i] = ALIVE
            s[g[G_BY] + i] = -1
            s[g[G_ON_TURN] + i] = 0
            revived = True
    if revived:
        rebuild_occ(g, s)


@njit(**JIT)
def share_squad_attributes(g, s):
    """``modify_snakes.share_attributes``. Returns False on :data:`OVERFLOW`."""
    shared_health, shared_length = g[G_SHARED_HEALTH], g[G_SHARED_LENGTH]
    shared_elimination = g[G_SHARED_ELIMINATION]
    if not (shared_health or shared_length or shared_elimination):
        return True
    n = g[G_N]
    next_turn = s[S_TURN] + 1
    for i in range(n):
        if s[g[G_CAUSE] + i] != ALIVE:
            continue
        for o in range(n):
            if s[g[G_SQUAD] + o] != s[g[G_SQUAD] + i]:
                continue
            if shared_health and s[g[G_HEALTH] + i] < s[g[G_HEALTH] + o]:
                s[g[G_HEALTH] + i] = s[g[G_HEALTH] + o]
            if shared_length:
                while s[g[G_LENGTH] + i] < s[g[G_LENGTH] + o]:
                    if not grow(g, s, i):
                        return False
            if (shared_elimination and s[g[G_CAUSE] + i] == ALIVE
                    and s[g[G_CAUSE] + o] != ALIVE):
                eliminate(g, s, i, SQUAD_OUT, -1, next_turn)
    return True


@njit(**JIT)
def spawn_food_no_food(g, s, changes, n_changes):
    """``spawn_food.no_food``. Returns the change count."""
    food = g[G_FOOD]
    for k in range(s[S_N_FOOD]):
        cell = s[food + k]
        s[g[G_FOOD_AT] + cell] -= 1
        n_changes = report(changes, n_changes, -1, -1, cell, FOOD)
    s[S_N_FOOD] = 0
    return n_changes


@njit(**JIT)
def always_grow(g, s):
    """``modify_snakes.always_grow``. Returns False on :data:`OVERFLOW`."""
    for i in range(g[G_N]):
        s[g[G_HEALTH] + i] = MAX_HEALTH
        length = s[g[G_LENGTH] + i]
        if length < 2 or segment(g, s, i, length - 1) != segment(g, s, i, length - 2):
            if not grow(g, s, i):
                return False
    return True


@njit(**JIT)
def is_royale_shrink_turn(turn, every):
    return every >= 1 and turn + 1 >= every and (turn + 1) % every == 0


@njit(**JIT)
def shrink_map(g, s, side, changes, n_changes):
    """``spawn_hazards.shrink_map``. Returns the change count."""
    before = s[S_TURN]
    every = g[G_SHRINK_EVERY]
    if before + 1 < every:
        return _set_hazards(g, s, -1, 0, 0, 0, 0, changes, n_changes)
    if side < 0 or not is_royale_shrink_turn(before, every):
        return n_changes
    width, height, pw = g[G_WIDTH], g[G_HEIGHT], g[G_PW]
    min_x, max_x, min_y, max_y = width, -1, height, -1
    for x in range(width):
        for y in range(height):
            if s[g[G_HAZARD_AT] + (y + 1) * pw + x + 1] == 0:
                min_x, max_x = min(min_x, x), max(max_x, x)
                min_y, max_y = min(min_y, y), max(max_y, y)
    if max_x < 0:        # no safe square left: every square is a hazard
        return _set_hazards(g, s, 1, width, -1, height, -1, changes, n_changes)
    if side == 0:
        min_x += 1
    elif side == 1:
        max_x -= 1
    elif side == 2:
        min_y += 1
    else:
        max_y -= 1
    return _set_hazards(g, s, 1, min_x, max_x, min_y, max_y, changes, n_changes)


@njit(**JIT)
def _set_hazards(g, s, fill, min_x, max_x, min_y, max_y, changes, n_changes):
    """Replace the hazards by the squares outside ``[min_x, max_x] x [min_y, max_y]``
    in x-then-y order (``fill`` 1), or by none (``fill`` -1)."""
    hazards = g[G_HAZARDS]
    for k in range(s[S_N_HAZARDS]):
        cell = s[hazards + k]
        s[g[G_HAZARD_AT] + cell] -= 1
        n_changes = report(changes, n_changes, -1, -1, cell, HAZARD)
    count = 0
    if fill > 0:
        pw = g[G_PW]
        for x in range(g[G_WIDTH]):
            for y in range(g[G_HEIGHT]):
                if x < min_x or x > max_x or y < min_y or y > max_y:
                    cell = (y + 1) * pw + x + 1
                    s[hazards + count] = cell
                    s[g[G_HAZARD_AT] + cell] += 1
                    count += 1
                    n_changes = report(changes, n_changes, 1, -1, cell, HAZARD)
    s[S_N_HAZARDS] = count
    return n_changes


# ---------------------------------------------------------------------------------------
# The change report


@njit(**JIT)
def report(changes, n_changes, sign, snake, cell, piece):
    """Append a row to ``changes`` (nothing when it has no rows: not asked for)."""
    if changes.shape[0] == 0:
        return n_changes
    changes[n_changes, 0] = sign
    changes[n_changes, 1] = snake
    changes[n_changes, 2] = cell
    changes[n_changes, 3] = piece
    return n_changes + 1


@njit(**JIT)
def report_snakes(g, s, before_alive, before_head, before_tail, before_tail_piece,
                  before_length, before_hp, changes, n_changes):
    """The snakes' piece changes, from what each living snake was before the turn."""
    if changes.shape[0] == 0:
        return n_changes
    n = g[G_N]
    base_mask = g[G_MASK]
    for i in range(n):
        if not before_alive[i]:
            continue
        length0 = before_length[i]
        if s[g[G_CAUSE] + i] != ALIVE:
            # Gone: every piece it had before the turn. Segments 0 .. length0 - 2 are
            # still in the ring where they were; the tail may have been overwritten.
            base = g[G_BODY] + i * g[G_CAPACITY]
            previous = s[base + (before_hp[i] & base_mask)]
            n_changes = report(changes, n_changes, -1, i, previous, HEAD)
            for k in range(1, length0):
                if k == length0 - 1:
                    n_changes = report(changes, n_changes, -1, i, before_tail[i],
                                       before_tail_piece[i])
                else:
                    cell = s[base + ((before_hp[i] - k) & base_mask)]
                    n_changes = report(changes, n_changes, -1, i, cell,
                                       piece_between(g, previous, cell))
                    previous = cell
            continue
        head = segment(g, s, i, 0)
        old_head = before_head[i]
        n_changes = report(changes, n_changes, -1, i, old_head, HEAD)
        n_changes = report(changes, n_changes, 1, i, head, HEAD)
        if length0 >= 2:
            n_changes = report(changes, n_changes, -1, i, before_tail[i], before_tail_piece[i])
            n_changes = report(changes, n_changes, 1, i, old_head, piece_between(g, head, old_head))
        # Growth: duplicated tail segments, each a piece under a piece.
        grown = s[g[G_LENGTH] + i] - length0
        if grown > 0:
            tail = segment(g, s, i, s[g[G_LENGTH] + i] - 1)
            for _ in range(grown):
                n_changes = report(changes, n_changes, 1, i, tail, UNDER)
    return n_changes


# ---------------------------------------------------------------------------------------
# One turn


@njit(**JIT_NRT)
def apply_rules(g, s, moves, royale_side, changes):
    """The rule stages of one turn on ``s`` (in place; ``turn`` not incremented, no random
    food), as the reference's ``apply_rules``. ``moves``: a move number per snake (-1: none).
    ``changes``: a ``(rows, 4)`` int32 buffer for the change report, or a ``(0, 4)`` one
    for none. Returns the number of rows reported, or :data:`OVERFLOW`."""
    if is_game_over(g, s):
        return 0
    if changes.shape[0] == 0:       # no report: nothing to remember, nothing allocated
        return _stages(g, s, moves, royale_side, changes)
    n = g[G_N]
    before_alive = np.zeros(n, dtype=np.bool_)
    before_head = np.zeros(n, dtype=np.int32)
    before_tail = np.zeros(n, dtype=np.int32)
    before_tail_piece = np.zeros(n, dtype=np.int32)
    before_length = np.zeros(n, dtype=np.int32)
    before_hp = np.zeros(n, dtype=np.int32)
    for i in range(n):
        if s[g[G_CAUSE] + i] == ALIVE:
            length = s[g[G_LENGTH] + i]
            before_alive[i] = True
            before_head[i] = segment(g, s, i, 0)
            before_tail[i] = segment(g, s, i, length - 1)
            if length >= 2:
                before_tail_piece[i] = piece_between(g, segment(g, s, i, length - 2),
                                                     before_tail[i])
            before_length[i] = length
            before_hp[i] = s[g[G_HP] + i]
    n_changes = _stages(g, s, moves, royale_side, changes)
    if n_changes == OVERFLOW:
        return OVERFLOW
    return report_snakes(g, s, before_alive, before_head, before_tail, before_tail_piece,
                         before_length, before_hp, changes, n_changes)


@njit(**JIT)
def _stages(g, s, moves, royale_side, changes):
    """The ruleset's stages (:func:`apply_rules`, the game not over); returns the rows of
    food and hazards reported, or :data:`OVERFLOW`."""
    pipeline = g[G_PIPELINE]
    n_changes = 0
    if pipeline == WRAPPED or pipeline == WRAPPED_CONSTRICTOR:
        movement_wrap_boundaries(g, s, moves)
    else:
        movement_standard(g, s, moves)
    starvation_standard(g, s)
    hazard_damage_standard(g, s)
    n_changes = feed_snakes_standard(g, s, changes, n_changes)
    if n_changes < 0:
        return OVERFLOW
    elimination_standard(g, s)
    if pipeline == SQUAD:
        resurrect_squad_collisions(g, s)
        if not share_squad_attributes(g, s):
            return OVERFLOW
    elif pipeline == CONSTRICTOR or pipeline == WRAPPED_CONSTRICTOR:
        n_changes = spawn_food_no_food(g, s, changes, n_changes)
        if not always_grow(g, s):
            return OVERFLOW
    elif pipeline == ROYALE:
        n_changes = shrink_map(g, s, royale_side, changes, n_changes)
    return n_changes
