"""The shard format of training positions, and loading a split into memory.

A shard is one ``.npz`` file (``np.savez``, read with ``allow_pickle=False``) holding the
positions of whole games, CSR style:

===============  =======  =========  =========================================================
name             dtype    shape      meaning
===============  =======  =========  =========================================================
``indices``      int32    [K]        active feature indices of every position, concatenated
``offsets``      int64    [N + 1]    position ``i`` owns ``indices[offsets[i]:offsets[i+1]]``
``moves``        uint8    [N]        the move played: 0 up, 1 down, 2 left, 3 right
``targets``      float32  [N]        WDL target (SPEC section 5)
``blocks``       uint8    [N]        the ruleset x board block of the position (below)
``block_names``  unicode  [18]       the block of each number used in ``blocks``
``games``        int64    [N]        global game number (unique over the whole data set)
``turns``        int32    [N]        the turn of the position
===============  =======  =========  =========================================================

Self-play shards (:mod:`training.selfplay`) add ``results`` and ``scores`` (float32 [N]: the
game's result and the search's score, blended into ``targets``) and ``move_targets``
(float32 [N, 4]: a target for every move, the played one's equal to ``targets``) and, since
2026-11-23, ``move_scores`` (float32 [N, 4]: the search's score of every move before the
blend); the trainer learns all four outputs from a split whose every shard has
``move_targets``.

Block numbers are those of the feature layout (:data:`nnue.features.BLOCKS`: by board
size, then ruleset), and ``block_names`` says so in the file. A shard without
``block_names`` was written before the layout owned the numbering: its ``blocks`` are
``ruleset * 3 + size`` (ruleset first), and :func:`load_shard` renumbers them, so old data
stays readable; in memory :attr:`Positions.blocks` always holds the layout's numbers.

A position is one living snake's view of one turn, so a turn with four snakes gives four
positions. All positions of a game are in the same shard, and a shard belongs to one split
(``train``, ``val`` or ``test``): the split is by game. A data directory holds the shards
``<split>-<chunk>.npz`` and ``meta.json`` (seed, command line, counts; see
:mod:`training.datagen`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nnue.features import BOARD_SIDES, N_BLOCKS, N_FEATURES, RULESETS, block_name

SPLITS = ("train", "val", "test")
_FIELDS = ("indices", "offsets", "moves", "targets", "blocks", "games", "turns")
#: The names of the block numbers in shards: the feature layout's numbering.
BLOCK_NAMES: tuple[str, ...] = tuple(block_name(b) for b in range(N_BLOCKS))
_BLOCK_NUMBER = {name: b for b, name in enumerate(BLOCK_NAMES)}
# The numbering of shards without ``block_names`` (ruleset first, then board side).
_OLD_BLOCK_NAMES = tuple(f"{r} {s}x{s}" for r in RULESETS for s in BOARD_SIDES)


class ShardError(ValueError):
    """A shard or data directory that cannot be read; the message names the file."""


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
    move_targets: np.ndarray | None = None     # [N, 4], self-play only

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
                         self.blocks[rows], self.games[rows], self.turns[rows],
                         None if self.move_targets is None else self.move_targets[rows])

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
                   np.concatenate([p.turns for p in parts]),
                   None if any(p.move_targets is None for p in parts)
                   else np.concatenate([p.move_targets for p in parts]))


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


def save_shard(path: str | Path, positions: Positions, **extra: np.ndarray) -> None:
    """Write a shard atomically (beside the target, then renamed). ``extra`` arrays of one
    value per position (self-play's ``results`` and ``scores``) are stored beside the
    fields; readers that do not know them ignore them."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for name, values in extra.items():
        if name in _FIELDS or len(values) != len(positions):
            raise ValueError(f"extra array {name!r}: a new name with one value per position")
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        np.savez(fh, **{name: getattr(positions, name) for name in _FIELDS},
                 block_names=np.array(BLOCK_NAMES), **extra)
    tmp.replace(path)


def write_chunk(out_dir: str | Path, result: dict,
                shards: dict[str, tuple[Positions, dict[str, np.ndarray]]]) -> None:
    """Write a finished chunk: its shards ``<split>-<chunk>.npz``, then its marker
    ``chunk-<chunk>.json`` holding ``result`` (each atomically; the marker last, so a chunk
    with a marker is whole). A chunk played again (the last chunk of a run grown with more
    games) first loses its old marker, so that no reader (``merge``) takes the old marker
    for the new shards while they are being replaced, and any shard of a split the new
    chunk has none of."""
    out_dir = Path(out_dir)
    chunk = result["chunk"]
    marker = out_dir / f"chunk-{chunk:05d}.json"
    marker.unlink(missing_ok=True)
    for split in SPLITS:
        if split in shards:
            positions, extra = shards[split]
            save_shard(out_dir / f"{split}-{chunk:05d}.npz", positions, **extra)
        else:
            (out_dir / f"{split}-{chunk:05d}.npz").unlink(missing_ok=True)
    tmp = marker.with_name(marker.name + ".tmp")
    tmp.write_text(json.dumps(result))
    tmp.replace(marker)


def load_shard(path: str | Path) -> Positions:
    """Read and check a shard; raises :class:`ShardError` naming the file and the problem."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            missing = [n for n in _FIELDS if n not in npz.files]
            if missing:
                raise ShardError(f"{path}: missing arrays {missing}")
            p = Positions(**{n: npz[n] for n in _FIELDS})
            p.blocks = _renumber_blocks(npz, path)
            if "move_targets" in npz.files:
                p.move_targets = npz["move_targets"]
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
    if n and p.moves.max() > 3:
        raise ShardError(f"{path}: move out of range")
    if len(p.indices) and (p.indices.min() < 0 or p.indices.max() >= N_FEATURES):
        raise ShardError(f"{path}: feature index out of range")
    if n and (np.isnan(p.targets).any() or p.targets.min() < 0 or p.targets.max() > 1):
        raise ShardError(f"{path}: target outside [0, 1]")
    each = p.move_targets
    if each is not None:
        if each.shape != (n, 4):
            raise ShardError(f"{path}: move_targets has shape {each.shape}, not ({n}, 4)")
        if n and (np.isnan(each).any() or each.min() < 0 or each.max() > 1):
            raise ShardError(f"{path}: move target outside [0, 1]")
        each = each.astype(np.float32, copy=False)
    return Positions(p.indices.astype(np.int32, copy=False), p.offsets.astype(np.int64, copy=False),
                     p.moves.astype(np.uint8, copy=False), p.targets.astype(np.float32, copy=False),
                     p.blocks.astype(np.uint8, copy=False), p.games.astype(np.int64, copy=False),
                     p.turns.astype(np.int32, copy=False), each)


def _renumber_blocks(npz, path: Path) -> np.ndarray:
    """The ``blocks`` of an open shard in the layout's numbering (see the module
    docstring)."""
    names = npz["block_names"].tolist() if "block_names" in npz.files else _OLD_BLOCK_NAMES
    try:
        renumber = np.array([_BLOCK_NUMBER[name] for name in names], dtype=np.uint8)
    except KeyError as exc:
        raise ShardError(f"{path}: unknown block {exc}") from None
    blocks = npz["blocks"]
    if len(blocks) and blocks.max() >= len(renumber):
        raise ShardError(f"{path}: block out of range")
    return renumber[blocks]


def shard_targets(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Only the ``targets`` and ``blocks`` (in the layout's numbering) of a shard."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            return npz["targets"], _renumber_blocks(npz, path)
    except ShardError:
        raise
    except (OSError, ValueError, EOFError, KeyError) as exc:
        raise ShardError(f"{path}: unreadable shard ({type(exc).__name__}: {exc})") from None


def shard_paths(data_dir: str | Path, split: str) -> list[Path]:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; one of {SPLITS}")
    return sorted(Path(data_dir).glob(f"{split}-*.npz"))


def load_split(data_dir: str | Path, split: str) -> Positions:
    """Every position of one split of a data directory, in shard order."""
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise ShardError(f"{data_dir}: no such data directory (run python -m training.datagen)")
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
