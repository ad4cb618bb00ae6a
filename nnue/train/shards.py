"""The shard format of training positions, and loading a split into memory.

A shard is one ``.npz`` file (``np.savez``, read with ``allow_pickle=False``) holding the
positions of whole games, CSR style:

=============  =======  =========  =====================================================
name           dtype    shape      meaning
=============  =======  =========  =====================================================
``indices``    int32    [K]        active feature indices of every position, concatenated
``offsets``    int64    [N + 1]    position ``i`` owns ``indices[offsets[i]:offsets[i+1]]``
``moves``      uint8    [N]        the move played: 0 up, 1 down, 2 left, 3 right
``targets``    float32  [N]        WDL target (SPEC section 5)
``blocks``     uint8    [N]        ``ruleset * 3 + size``: ruleset 0..5 as in the feature
                                   layout, size 0 (7x7), 1 (11x11), 2 (19x19)
``games``      int64    [N]        global game number (unique over the whole data set)
``turns``      int32    [N]        the turn of the position
=============  =======  =========  =====================================================

A position is one living snake's view of one turn, so a turn with four snakes gives four
positions. All positions of a game are in the same shard, and a shard belongs to one split
(``train``, ``val`` or ``test``): the split is by game. A data directory holds the shards
``<split>-<chunk>.npz`` and ``meta.json`` (seed, command line, counts; see
:mod:`nnue.train.datagen`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SPLITS = ("train", "val", "test")
RULESET_NAMES = ("standard", "constrictor", "royale", "wrapped", "solo", "squad")
SIZES = (7, 11, 19)
N_BLOCKS = len(RULESET_NAMES) * len(SIZES)
_FIELDS = ("indices", "offsets", "moves", "targets", "blocks", "games", "turns")


class ShardError(ValueError):
    """A shard or data directory that cannot be read; the message names the file."""


def block_of(ruleset: str, side: int) -> int:
    """The block number ``ruleset * 3 + size`` of a ruleset name and board side."""
    return RULESET_NAMES.index(ruleset) * len(SIZES) + SIZES.index(side)


def block_name(block: int) -> str:
    """``"standard 11x11"`` for a block number."""
    g, b = divmod(int(block), len(SIZES))
    return f"{RULESET_NAMES[g]} {SIZES[b]}x{SIZES[b]}"


@dataclass
class Positions:
    """Positions in memory, CSR style (the fields of a shard)."""

    indices: np.ndarray
    offsets: np.ndarray
    moves: np.ndarray
    targets: np.ndarray
    blocks: np.ndarray
    games: np.ndarray
    turns: np.ndarray

    def __len__(self) -> int:
        return len(self.moves)

    @classmethod
    def empty(cls) -> Positions:
        return cls(np.zeros(0, np.int32), np.zeros(1, np.int64), np.zeros(0, np.uint8),
                   np.zeros(0, np.float32), np.zeros(0, np.uint8), np.zeros(0, np.int64),
                   np.zeros(0, np.int32))

    def features(self, i: int) -> np.ndarray:
        return self.indices[self.offsets[i]:self.offsets[i + 1]]

    def select(self, rows: np.ndarray) -> Positions:
        """The positions ``rows`` (in that order), as a new CSR set."""
        rows = np.asarray(rows, dtype=np.int64)
        starts = self.offsets[rows]
        lengths = self.offsets[rows + 1] - starts
        offsets = np.zeros(len(rows) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        # Gather every row's slice at once: position k of the output is
        # starts[row] + (k - offsets[row]).
        gather = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1], dtype=np.int64)
        return Positions(self.indices[gather], offsets, self.moves[rows], self.targets[rows],
                         self.blocks[rows], self.games[rows], self.turns[rows])

    @classmethod
    def concatenate(cls, parts: list[Positions]) -> Positions:
        parts = [p for p in parts if len(p)]
        if not parts:
            return cls.empty()
        offsets = [np.zeros(1, np.int64)]
        base = 0
        for p in parts:
            offsets.append(p.offsets[1:] + base)
            base += int(p.offsets[-1])
        return cls(np.concatenate([p.indices for p in parts]), np.concatenate(offsets),
                   np.concatenate([p.moves for p in parts]),
                   np.concatenate([p.targets for p in parts]),
                   np.concatenate([p.blocks for p in parts]),
                   np.concatenate([p.games for p in parts]),
                   np.concatenate([p.turns for p in parts]))


class PositionBuilder:
    """Collects positions one at a time and packs them into :class:`Positions`."""

    def __init__(self) -> None:
        self._indices: list[np.ndarray] = []
        self._lengths: list[int] = []
        self.moves: list[int] = []
        self.targets: list[float] = []
        self.blocks: list[int] = []
        self.games: list[int] = []
        self.turns: list[int] = []

    def __len__(self) -> int:
        return len(self.moves)

    def add(self, features: np.ndarray, move: int, target: float, block: int, game: int,
            turn: int) -> None:
        self._indices.append(np.asarray(features, dtype=np.int32))
        self._lengths.append(len(features))
        self.moves.append(move)
        self.targets.append(target)
        self.blocks.append(block)
        self.games.append(game)
        self.turns.append(turn)

    def build(self) -> Positions:
        if not self.moves:
            return Positions.empty()
        offsets = np.zeros(len(self._lengths) + 1, np.int64)
        np.cumsum(self._lengths, out=offsets[1:])
        return Positions(np.concatenate(self._indices).astype(np.int32, copy=False), offsets,
                         np.asarray(self.moves, np.uint8), np.asarray(self.targets, np.float32),
                         np.asarray(self.blocks, np.uint8), np.asarray(self.games, np.int64),
                         np.asarray(self.turns, np.int32))


def save_shard(path: str | Path, positions: Positions) -> None:
    """Write a shard atomically (beside the target, then renamed)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        np.savez(fh, **{name: getattr(positions, name) for name in _FIELDS})
    tmp.replace(path)


def load_shard(path: str | Path) -> Positions:
    """Read and check a shard; raises :class:`ShardError` naming the file and the problem."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            missing = [n for n in _FIELDS if n not in npz.files]
            if missing:
                raise ShardError(f"{path}: missing arrays {missing}")
            p = Positions(**{n: npz[n] for n in _FIELDS})
    except ShardError:
        raise
    except (OSError, ValueError, EOFError, KeyError) as exc:
        raise ShardError(f"{path}: unreadable shard ({type(exc).__name__}: {exc})") from None
    n = len(p.moves)
    if p.offsets.shape != (n + 1,) or p.offsets[0] != 0 or p.offsets[-1] != len(p.indices):
        raise ShardError(f"{path}: offsets do not match indices ({n} positions)")
    if np.any(np.diff(p.offsets) < 0):
        raise ShardError(f"{path}: offsets decrease")
    for name in ("targets", "blocks", "games", "turns"):
        if len(getattr(p, name)) != n:
            raise ShardError(f"{path}: {name} has {len(getattr(p, name))} entries, not {n}")
    if n and (p.moves.max() > 3 or p.blocks.max() >= N_BLOCKS):
        raise ShardError(f"{path}: move or block out of range")
    if len(p.indices) and (p.indices.min() < 0 or p.indices.max() >= 63720):
        raise ShardError(f"{path}: feature index out of range")
    if n and (np.isnan(p.targets).any() or p.targets.min() < 0 or p.targets.max() > 1):
        raise ShardError(f"{path}: target outside [0, 1]")
    return Positions(p.indices.astype(np.int32, copy=False), p.offsets.astype(np.int64, copy=False),
                     p.moves.astype(np.uint8, copy=False), p.targets.astype(np.float32, copy=False),
                     p.blocks.astype(np.uint8, copy=False), p.games.astype(np.int64, copy=False),
                     p.turns.astype(np.int32, copy=False))


def shard_paths(data_dir: str | Path, split: str) -> list[Path]:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; one of {SPLITS}")
    return sorted(Path(data_dir).glob(f"{split}-*.npz"))


def load_split(data_dir: str | Path, split: str) -> Positions:
    """Every position of one split of a data directory, in shard order."""
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise ShardError(f"{data_dir}: no such data directory (run python -m nnue.train.datagen)")
    paths = shard_paths(data_dir, split)
    if not paths:
        raise ShardError(f"{data_dir}: no {split} shards")
    return Positions.concatenate([load_shard(p) for p in paths])


def load_meta(data_dir: str | Path) -> dict:
    path = Path(data_dir) / "meta.json"
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text())
    except ValueError as exc:
        raise ShardError(f"{path}: not JSON ({exc})") from None
