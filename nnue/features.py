"""The NNUE input features: which of the 63720 binary inputs are on in a state, seen from ``you``.

A feature is a tuple ``(G, B, x, y, P)`` (SPEC §4):

- ``G``, the ruleset: 0 standard, 1 constrictor, 2 royale, 3 wrapped, 4 solo, 5 squad.
  Any other ruleset (``wrapped_constrictor`` included) has no features.
- ``B``, the board: 7x7, 11x11 or 19x19. Any other size has no features.
- ``x, y``, the square.
- ``P``, the piece on it, one of 20:

  ====  ===========================================================
  0     your head
  1-4   your body piece moving left, right, down, up
  5     your body piece under a piece
  6     a squadmate's head
  7-10  a squadmate's body piece moving left, right, down, up
  11    a squadmate's body piece under a piece
  12    an opponent's head
  13-16 an opponent's body piece moving left, right, down, up
  17    an opponent's body piece under a piece
  18    food
  19    hazard
  ====  ===========================================================

A body piece ``body[i]`` (``i >= 1``) moves next turn onto ``body[i-1]``: its direction is the
step from ``body[i]`` to ``body[i-1]``; in ``wrapped`` a step across an edge (``x`` from 0 to
``S-1``, say) is the one-square move that wraps (here: left). A piece on the same square as
``body[i-1]`` is *under a piece*: the stacked segments of turn 0 and the tail of a snake that
just ate. Squadmates are other snakes with the same non-empty ``squad`` as ``you``
(:meth:`Snake.is_squadmate`); every other living snake is an opponent.

The features form a set: a tuple present twice (three stacked segments at turn 0, a square
listed twice in ``hazards``) is one input. Only living snakes count; food, hazards and
segments off the board are ignored. A ``you`` that is not among the living snakes (already
eliminated, or absent from the board) has no features either: the network was trained only on
positions of living snakes, so there is nothing meaningful to ask it.

Index layout: blocks by board size, then ruleset, then row, column and piece::

    offset(7x7) = 0, offset(11x11) = 5880, offset(19x19) = 20400
    index(G, B, x, y, P) = offset(B) + ((G*S + y)*S + x)*20 + P,   S = side of B

This module owns that layout: the rulesets with features (:data:`RULESETS`, in the order
of ``G``), the board sides (:data:`BOARD_SIDES`) and the 18 blocks (:data:`BLOCKS`, numbered
in index order; :func:`block_of`, :func:`block_name`). Training data stores these block
numbers and data generation schedules its games over these names.

Entry points: :func:`active_features` (sorted int32 array) and :func:`feature_parts` (per
snake, food and hazards); :func:`feature_change` diffs two such encodings into a
:class:`FeatureChange`, what :meth:`nnue.accumulator.Accumulator.apply` takes.

Speed matters (this runs every turn of every game, for every snake of every position in data
generation, and at every node of a search), so everything that depends only on the board size
and ruleset is precomputed once into a :class:`_Layout`: per owner (you, squadmate,
opponent) a dict from on-board point to head index, and a dict from the pair
``(body[i-1], body[i])`` of neighbouring points to the index of ``body[i]``'s piece; food and
hazards have a dict each. A whole body is then encoded by ``map(dict.get, zip(...))``
without a Python-level loop per segment; off-board or malformed input falls back to a
careful per-segment loop.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import islice
from typing import Sequence

import numpy as np

from snake.board import GameState, Point, Ruleset, Snake

#: Rulesets with a feature block, in the order of ``G``.
RULESETS: tuple[str, ...] = ("standard", "constrictor", "royale", "wrapped", "solo", "squad")
#: Board sides with a feature block, in the order of ``B``.
BOARD_SIDES: tuple[int, ...] = (7, 11, 19)
N_PIECES = 20

#: The feature blocks, one per (ruleset, board side), numbered in the order of the index
#: layout: by board side, then ruleset. A block's number is its position here; the training
#: shards store it (:mod:`training.shards`).
BLOCKS: tuple[tuple[str, int], ...] = tuple((r, s) for s in BOARD_SIDES for r in RULESETS)
N_BLOCKS = len(BLOCKS)
_BLOCK_INDEX: dict[tuple[str, int], int] = {b: k for k, b in enumerate(BLOCKS)}

# Piece numbers (P) of the heads and of food and hazards; a body piece is its owner's head
# piece plus a direction offset (below).
YOU_HEAD = 0
SQUAD_HEAD = 6
OPPONENT_HEAD = 12
FOOD = 18
HAZARD = 19
#: Offset of a squadmate's / opponent's pieces from your own.
SQUADMATE, OPPONENT = 6, 12
# Body piece offsets relative to the head piece of the same owner.
_LEFT, _RIGHT, _DOWN, _UP, _UNDER = 1, 2, 3, 4, 5


def _block_offsets() -> tuple[tuple[int, ...], int]:
    offsets, total = [], 0
    for _, side in BLOCKS:
        offsets.append(total)
        total += side * side * N_PIECES
    return tuple(offsets), total


#: First index of each block (by block number), and the number of features.
BLOCK_OFFSET, N_FEATURES = _block_offsets()
#: First index of each board size's blocks (SPEC's ``offset(B)``).
BOARD_OFFSET: dict[int, int] = {side: BLOCK_OFFSET[_BLOCK_INDEX[(RULESETS[0], side)]]
                                for side in BOARD_SIDES}
assert N_FEATURES == 63720 and BOARD_OFFSET == {7: 0, 11: 5880, 19: 20400}


def block_of(ruleset: str, side: int) -> int | None:
    """The number of the block of a ruleset name and board side, or ``None`` when the
    network has no block for them."""
    return _BLOCK_INDEX.get((ruleset, side))


def block_name(block: int) -> str:
    """``"standard 11x11"`` for a block number."""
    ruleset, side = BLOCKS[int(block)]
    return f"{ruleset} {side}x{side}"


class _Layout:
    """Everything about one (ruleset, board side) block that does not depend on the state.

    The fast path looks each body piece up whole: ``pair[owner][(body[i-1], body[i])]``
    is the feature index of piece ``body[i]`` (its square, owner and direction), so a body
    is encoded by ``map(dict.get, zip(body, body[1:]))`` at C speed. Pairs not in the
    table (a segment off the board, two segments that are not neighbours: neither occurs
    in a legal state of a living snake) give ``None`` and send the state to the careful
    per-segment loop, :func:`_active_list_slow`."""

    __slots__ = ("side", "wraps", "square", "direction", "head", "pair", "food", "hazard")

    def __init__(self, block: int) -> None:
        ruleset, side = BLOCKS[block]
        self.side = side
        self.wraps = wraps = Ruleset(ruleset).wraps
        base = BLOCK_OFFSET[block]
        #: on-board point -> index of piece 0 on that square
        self.square: dict[Point, int] = {
            (x, y): base + (y * side + x) * N_PIECES for y in range(side) for x in range(side)
        }
        #: step body[i-1] - body[i] -> body piece offset (relative to the owner's head piece)
        self.direction: dict[Point, int] = {
            (0, 0): _UNDER, (-1, 0): _LEFT, (1, 0): _RIGHT, (0, -1): _DOWN, (0, 1): _UP,
        }
        if wraps:
            # A step that crosses an edge: from x = 0 to x = S-1 is a move left, and so on.
            self.direction.update({
                (side - 1, 0): _LEFT, (1 - side, 0): _RIGHT,
                (0, side - 1): _DOWN, (0, 1 - side): _UP,
            })
        owners = (YOU_HEAD, SQUAD_HEAD, OPPONENT_HEAD)
        #: per owner: on-board point -> index of that owner's head there
        self.head = {o: {p: c + o for p, c in self.square.items()} for o in owners}
        #: per owner: (body[i-1], body[i]) -> index of the piece body[i]
        self.pair: dict[int, dict[tuple[Point, Point], int]] = {o: {} for o in owners}
        for (x, y), c in self.square.items():
            for (dx, dy), d in self.direction.items():
                px, py = x + dx, y + dy
                if wraps:
                    px, py = px % side, py % side
                elif (dx, dy) != (0, 0) and abs(dx) + abs(dy) != 1:
                    continue
                for o in owners:
                    self.pair[o][((px, py), (x, y))] = c + o + d
        self.food = {p: c + FOOD for p, c in self.square.items()}
        self.hazard = {p: c + HAZARD for p, c in self.square.items()}

    def odd_direction(self, dx: int, dy: int) -> int:
        """Direction of a step between non-adjacent segments (not a legal body; only a
        malformed request has one): the larger component wins, wrapped to the shorter way
        round in wrapped rulesets. Never raises, so odd input still gets features."""
        if self.wraps:
            s = self.side
            dx = (dx + s // 2) % s - s // 2
            dy = (dy + s // 2) % s - s // 2
        if dx == 0 and dy == 0:
            return _UNDER
        if abs(dx) >= abs(dy):
            return _LEFT if dx < 0 else _RIGHT
        return _DOWN if dy < 0 else _UP


@lru_cache(maxsize=None)
def _layout(block: int) -> _Layout:
    return _Layout(block)


def layout_for(state: GameState) -> _Layout | None:
    """The block of ``state``'s ruleset and board, or ``None`` when it has none."""
    board = state.board
    if board.width != board.height:
        return None
    block = _BLOCK_INDEX.get((state.game.ruleset.name, board.width))
    return None if block is None else _layout(block)


def _owners(snakes: list[Snake], you: Snake):
    """(owner piece offset, snake) for every living snake, or ``None`` if ``you`` is not
    one of them."""
    you_id, you_squad = you.id, you.squad
    out = []
    found = False
    for s in snakes:
        if s.eliminated_cause:
            continue
        if s.id == you_id:
            out.append((YOU_HEAD, s))
            found = True
        elif you_squad and s.squad == you_squad:
            out.append((SQUAD_HEAD, s))
        else:
            out.append((OPPONENT_HEAD, s))
    return out if found else None


def _layout_and_owners(state: GameState, you: Snake):
    """(block layout, owners) of a position the network covers, or ``None``: no block for
    its ruleset or board, or ``you`` not among the living."""
    lay = layout_for(state)
    if lay is None:
        return None
    owners = _owners(state.board.snakes, you)
    return None if owners is None else (lay, owners)


def _active_list(state: GameState, you: Snake) -> list[int] | None:
    """The active feature indices as a Python list (unsorted, may repeat), or ``None``.

    This is the cheap core of :func:`active_features`, for callers (data generation) that
    sort and pack many positions at once."""
    found = _layout_and_owners(state, you)
    if found is None:
        return None
    lay, owners = found
    out: list[int] = []
    add, extend = out.append, out.extend
    head, pair = lay.head, lay.pair
    for owner, s in owners:
        body = s.body
        add(head[owner].get(body[0]))
        extend(map(pair[owner].get, zip(body, islice(body, 1, None))))
    extend(map(lay.food.get, state.board.food))
    extend(map(lay.hazard.get, state.board.hazards))
    if None in out:
        # An off-board item or an odd body somewhere: food and hazards off the board are
        # simply dropped, bodies need the careful loop.
        return _active_list_slow(state, lay, owners)
    return out


def feature_parts(state: GameState, you: Snake) -> dict[object, list[int]] | None:
    """The active features split by what produces them, for incremental updates
    (:func:`feature_change`, :meth:`nnue.accumulator.Accumulator.update_to`), or ``None``
    as for :func:`active_features`.

    Keys: ``("snake", id)`` for each living snake (its head, then ``body[1]``,
    ``body[2]``, ... in order, so that after a move the list is the old one shifted by one),
    ``"food"`` and ``"hazards"``. The union of the lists is the feature set (lists may
    repeat an index). Odd input (anything off the board, a broken body) gives one part,
    ``"all"``, computed the careful way."""
    found = _layout_and_owners(state, you)
    if found is None:
        return None
    lay, owners = found
    parts: dict[object, list[int]] = {}
    head, pair = lay.head, lay.pair
    odd = False
    for owner, s in owners:
        body = s.body
        part = [head[owner].get(body[0])]
        part.extend(map(pair[owner].get, zip(body, islice(body, 1, None))))
        odd = odd or None in part
        parts[("snake", s.id)] = part
    food = list(map(lay.food.get, state.board.food))
    hazards = list(map(lay.hazard.get, state.board.hazards))
    if odd or None in food or None in hazards:
        return {"all": _active_list_slow(state, lay, owners)}
    parts["food"] = food
    parts["hazards"] = hazards
    return parts


class FeatureChange:
    """What changed in a feature encoding from one state to the next: the feature
    occurrences that appeared (``added``) and vanished (``removed``), as Stockfish's
    ``DirtyPiece`` describes a move. Occurrences, not features: the encoding is a multiset
    (a tuple present twice, like three stacked segments, occurs twice), and a feature is on
    while it occurs at least once, so removing one of two occurrences changes nothing.

    ``parts``, when known, is the encoding the change leads to (what :func:`feature_parts`
    gave for the new state); the accumulator keeps it to diff the next state against.
    ``verified`` is true only for changes made by :func:`feature_change` from two
    encodings, whose indices are valid by construction; the accumulator checks the
    indices of any other change."""

    __slots__ = ("added", "removed", "parts", "verified")

    def __init__(self, added: Sequence[int] = (), removed: Sequence[int] = (),
                 parts: dict[object, list[int]] | None = None) -> None:
        self.added = added
        self.removed = removed
        self.parts = parts
        self.verified = False

    def __len__(self) -> int:
        """Occurrences added and removed (an upper bound on the rows an update touches)."""
        return len(self.added) + len(self.removed)

    def __repr__(self) -> str:
        return f"FeatureChange(added={list(self.added)}, removed={list(self.removed)})"


def feature_change(old: dict[object, list[int]], new: dict[object, list[int]]) -> FeatureChange:
    """The change from the encoding ``old`` to ``new`` (both from :func:`feature_parts`),
    part by part: an unchanged part (hazards, usually food) is one C-level list
    comparison; a snake that moved is recognised as its old list shifted by one, so only
    its new head and neck and its old head and tail pieces count; anything else is the
    whole old part removed and the whole new part added. Parts only in ``old`` (a snake
    that died) are removed, parts only in ``new`` added."""
    added: list[int] = []
    removed: list[int] = []
    matched = 0
    for key, part in new.items():
        before = old.get(key)
        if before is None:
            added += part
            continue
        matched += 1
        if before == part:
            continue
        if key.__class__ is tuple and len(part) >= 2:
            k = len(part) - 1
            if k <= len(before) and part[2:] == before[1:k]:
                # The snake moved: new head and neck pieces; old head and tail gone.
                added += part[:2]
                removed.append(before[0])
                removed += before[k:]
                continue
        added += part
        removed += before
    if matched < len(old):   # a snake died (or the odd-input part went away)
        for key, before in old.items():
            if key not in new:
                removed += before
    change = FeatureChange(added, removed, new)
    change.verified = True
    return change


def _active_list_slow(state: GameState, lay: _Layout, owners) -> list[int]:
    """The same list, one segment at a time: skips off-board segments and gives
    non-adjacent segments a direction (:meth:`_Layout.odd_direction`)."""
    square, direction = lay.square, lay.direction
    out: list[int] = []
    add = out.append
    for owner, s in owners:
        body = s.body
        prev = body[0]
        c = square.get(prev)
        if c is not None:
            add(c + owner)
        for i in range(1, len(body)):
            p = body[i]
            c = square.get(p)
            if c is not None:
                step = (prev[0] - p[0], prev[1] - p[1])
                d = direction.get(step)
                if d is None:
                    d = lay.odd_direction(*step)
                add(c + owner + d)
            prev = p
    for p in state.board.food:
        c = square.get(p)
        if c is not None:
            add(c + FOOD)
    for p in state.board.hazards:
        c = square.get(p)
        if c is not None:
            add(c + HAZARD)
    return out


def active_features(state: GameState, you: Snake) -> np.ndarray | None:
    """Sorted, unique ``int32`` indices of the features that are on in ``state`` seen from
    ``you`` (matched by id among the board's living snakes), or ``None`` when the ruleset
    or board size has no block or ``you`` is not a living snake on the board (then the
    caller plays without the network)."""
    found = _active_list(state, you)
    if found is None:
        return None
    return np.array(sorted(set(found)), dtype=np.int32)
