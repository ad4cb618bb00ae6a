"""The network: 63720 -> 512 -> 512 -> 4, and its weight file.

Forward pass (SPEC §4)::

    a   = b1 + sum of W1[f] over the active features f      (the accumulator, [H1])
    h1  = relu(a)
    h2  = relu(h1 @ W2 + b2)                                 ([H2])
    out = sigmoid(h2 @ W3 + b3)                              ([4]: up, down, left, right)

``W1`` is stored row per feature (``[F, H1]``), so a feature's contribution is one contiguous
row. (A torch ``nn.Linear`` weight is ``[out, in]``: transpose it when exporting.)

**Quantisation.** A network is either *float* (as trained) or *quantised* (what the weight
file holds and the server runs):

- ``W1`` is int8 with one scale per hidden unit (output column), ``W1 ≈ W1q * scale``, and
  ``b1`` is int32 in the same units, ``b1q = round(b1 / scale)``. The accumulator then sums
  int8 rows into int32 exactly, so an incremental update gives bit for bit the refresh
  result whatever the order of additions, and is multiplied by ``scale`` (float32) only
  before the hidden layers. Per-column scales are what makes exact integer accumulation
  possible (a per-feature-row scale would mix units inside the sum). The accumulator stays
  int32 rather than Stockfish's int16: a 19x19 board with eight long snakes has several
  hundred active features, and 127 times that overflows int16.
- ``W2`` is int8 with one scale per *row* (per first-layer unit), ``W2 ≈ W2q * w2_scale[:, None]``:
  the compiled forward pass (:func:`nnue.layers.forward_one`) adds one row of ``W2`` per
  first-layer unit that is on after the ReLU, so a row scale is one multiplication per
  active unit, and int8 rows are a quarter of the float32 bytes the pass reads (256 KB
  instead of 1 MB for 512x512: it fits the L2 cache). Activations and sums stay float32
  (ReLU is not clipped, so there is no fixed range to quantise them to); numpy's batch path
  multiplies by the same weights dequantised, so both paths agree to float32 rounding.
- ``W3`` (2 KB) and the biases after the first layer stay float32.

docs/nnue.md gives the measured accuracy cost of each.

**Weight file** (``.npz``, written with ``np.savez_compressed``, read with
``allow_pickle=False``). Arrays (format version 2):

=============  =======  ==========  ==========================================
name           dtype    shape       meaning
=============  =======  ==========  ==========================================
``header``     unicode  ()          JSON, below
``w1``         int8     [F, H1]     quantised first layer, row per feature
``w1_scale``   float32  [H1]        W1 ≈ w1 * w1_scale (per hidden unit)
``b1``         int32    [H1]        b1 ≈ b1 * w1_scale
``w2``         int8     [H1, H2]    W2 ≈ w2 * w2_scale[:, None]
``w2_scale``   float32  [H1]        per row of w2
``b2``         float32  [H2]
``w3``         float32  [H2, 4]
``b3``         float32  [4]
=============  =======  ==========  ==========================================

Version 1 files (``w2`` float32, no ``w2_scale``) are still read: ``W2`` is quantised when
they are loaded, so they play exactly as the same network saved as version 2.

The header is a JSON object: ``format`` ("nuppeppou-nnue"), ``version`` (2),
``architecture`` (``features``, ``hidden``, ``outputs``, ``activation``, ``output_activation``,
``output_order``), ``quantisation`` (what is quantised and how), ``arrays`` (name -> dtype and
shape), ``sha256`` (hex digest over the arrays in the order above: for each, its name, dtype,
shape and raw little-endian bytes), and ``manifest`` (free JSON from training: data, games,
positions, epochs, validation loss, date). :meth:`Network.load` checks all of it and raises
:class:`NetworkFileError` naming what is wrong.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import threading
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from nnue import feature_transformer, layers
from nnue.features import N_FEATURES
from snake.rules import MOVES

FORMAT = "nuppeppou-nnue"
VERSION = 2
#: versions :meth:`Network.load` reads (1: float ``w2``, quantised when loaded)
READABLE_VERSIONS = (1, 2)
#: One output per move, in the order of :data:`snake.rules.MOVES` (up, down, left, right).
N_OUTPUTS = len(MOVES)
HIDDEN = (512, 512)

#: The shipped network, committed in the repository.
DEFAULT_WEIGHTS = Path(__file__).resolve().parent.parent / "weights" / "nnue.npz"

_ARRAYS = ("w1", "w1_scale", "b1", "w2", "w2_scale", "b2", "w3", "b3")
#: the arrays of a version 1 file
_ARRAYS_V1 = ("w1", "w1_scale", "b1", "w2", "b2", "w3", "b3")
_INT8_MAX = 127
#: int8 rows whose sum always fits in int16 (258 * 127 = 32766)
INT16_ROWS = 258


class NetworkFileError(ValueError):
    """A weight file that cannot be used: missing, not an npz, wrong format or version,
    wrong architecture or shape, or a checksum that does not match."""


def _checksum(arrays: dict[str, np.ndarray], names: tuple[str, ...] = _ARRAYS) -> str:
    h = hashlib.sha256()
    for name in names:
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}:{a.dtype.str}:{a.shape};".encode())
        h.update(a.data)
    return h.hexdigest()


def quantise_w1(w1: np.ndarray, b1: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """int8 ``W1`` with one float32 scale per hidden unit, and int32 ``b1`` in the same units.

    The scale maps a column's largest magnitude to 127 (round to nearest). An all-zero
    column keeps its bias exactly: its scale is ``|b1| / 2**20`` (1 when the bias is 0
    too), not 1, which would round a bias under 0.5 to nothing."""
    w1 = np.asarray(w1, dtype=np.float32)
    peak = np.abs(w1).max(axis=0)
    bias = np.abs(np.asarray(b1, dtype=np.float32))
    lone = np.where(bias > 0, bias / 2.0 ** 20, 1.0)
    scale = np.where(peak > 0, peak / _INT8_MAX, lone).astype(np.float32)
    q = np.empty(w1.shape, dtype=np.int8)
    # In row chunks: the full-size float temporaries would be several hundred MB.
    for start in range(0, w1.shape[0], 4096):
        block = np.rint(w1[start:start + 4096] / scale)
        q[start:start + 4096] = np.clip(block, -_INT8_MAX, _INT8_MAX)
    limit = np.iinfo(np.int32).max // 2
    bq = np.clip(np.rint(np.asarray(b1, dtype=np.float64) / scale), -limit, limit).astype(np.int32)
    return q, scale, bq


def quantise_w2(w2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 ``W2`` with one float32 scale per row (first-layer unit): a row's largest
    magnitude maps to 127 (round to nearest); an all-zero row gets scale 1."""
    w2 = np.asarray(w2, dtype=np.float32)
    step = (np.abs(w2).max(axis=1) / _INT8_MAX).astype(np.float32)
    scale = np.where(step > 0, step, np.float32(1.0)).astype(np.float32)   # a zero row: 1
    q = np.clip(np.rint(w2 / scale[:, None]), -_INT8_MAX, _INT8_MAX).astype(np.int8)
    return q, scale


class Network:
    """The network's weights, float or quantised (see the module docstring).

    ``w1`` is ``[F, H1]`` (int8 when :attr:`quantised`, else float32); ``b1`` is ``[H1]`` (int32
    when quantised, else float32); ``w1_scale`` is ``[H1]`` float32 (ones for a float net);
    ``w2`` is ``[H1, H2]`` (int8 when quantised, else float32) and ``w2_scale`` ``[H1]``
    float32 (ones for a float net); :attr:`w2_float` is ``W2`` in float32 either way.
    """

    def __init__(self, w1: np.ndarray, b1: np.ndarray, w1_scale: np.ndarray, w2: np.ndarray,
                 w2_scale: np.ndarray, b2: np.ndarray, w3: np.ndarray, b3: np.ndarray,
                 manifest: dict[str, Any] | None = None) -> None:
        self.quantised = w1.dtype == np.int8
        self.w1 = w1
        self.b1 = b1
        self.w1_scale = w1_scale
        self.w2 = w2
        self.w2_scale = w2_scale
        #: W2 in float32, ``w2 * w2_scale[:, None]`` (the batch path's BLAS product uses it)
        self.w2_float = np.ascontiguousarray(w2.astype(np.float32) * w2_scale[:, None])
        self.b2 = b2
        self.w3 = w3
        self.b3 = b3
        self.manifest: dict[str, Any] = dict(manifest or {})
        self._scratch = threading.local()
        #: number of input features (rows of W1)
        self.n_features = int(w1.shape[0])
        #: dtype the accumulator sums in: exact int32 for a quantised net
        self.acc_dtype = np.dtype(np.int32) if self.quantised else np.dtype(np.float32)
        #: dtype that up to 258 gathered rows are summed in before joining the accumulator
        self.sum_dtype = np.dtype(np.int16) if self.quantised else np.dtype(np.float32)
        _check_shapes(self.arrays(), quantised=self.quantised, error=ValueError)

    # --- construction ------------------------------------------------------------------

    @classmethod
    def from_float(cls, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray,
                   w3: np.ndarray, b3: np.ndarray, manifest: dict[str, Any] | None = None,
                   *, quantise: bool = False) -> Network:
        """A network from float weights (``w1`` ``[F, H1]``, ``w2`` ``[H1, H2]``, ``w3``
        ``[H2, 4]``). Kept in float unless ``quantise``; :meth:`save` quantises anyway."""
        f32 = lambda a: np.ascontiguousarray(np.asarray(a, dtype=np.float32))  # noqa: E731
        w1, b1 = f32(w1), f32(b1)
        if w1.ndim != 2 or b1.shape != (w1.shape[1],):
            raise ValueError(f"w1 must be [F, H1] and b1 [H1]; got {w1.shape} and {b1.shape}")
        if quantise:
            q, scale, bq = quantise_w1(w1, b1)
            q2, scale2 = quantise_w2(w2)
            return cls(q, bq, scale, q2, scale2, f32(b2), f32(w3), f32(b3), manifest)
        ones = np.ones(w1.shape[1], np.float32)
        return cls(w1, b1, ones, f32(w2), ones.copy(), f32(b2), f32(w3), f32(b3), manifest)

    @classmethod
    def random(cls, seed: int, hidden: tuple[int, int] = HIDDEN, *,
               quantise: bool = False) -> Network:
        """A seeded random network for tests and benchmarks (Kaiming-like scales, small
        biases), float unless ``quantise``."""
        h1, h2 = hidden
        rng = np.random.default_rng(seed)
        # ~60 features are active in a typical position: scale so a1 is of order 1.
        w1 = rng.standard_normal((N_FEATURES, h1), dtype=np.float32) * np.float32(0.15)
        b1 = rng.standard_normal(h1, dtype=np.float32) * np.float32(0.1)
        w2 = rng.standard_normal((h1, h2), dtype=np.float32) * np.float32(np.sqrt(2.0 / h1))
        b2 = rng.standard_normal(h2, dtype=np.float32) * np.float32(0.1)
        w3 = rng.standard_normal((h2, N_OUTPUTS), dtype=np.float32) * np.float32(np.sqrt(1.0 / h2))
        b3 = rng.standard_normal(N_OUTPUTS, dtype=np.float32) * np.float32(0.1)
        return cls.from_float(w1, b1, w2, b2, w3, b3, {"source": f"Network.random({seed})"},
                              quantise=quantise)

    def quantise(self) -> Network:
        """The quantised twin of a float network (itself if already quantised)."""
        if self.quantised:
            return self
        q, scale, bq = quantise_w1(self.w1, self.b1)
        q2, scale2 = quantise_w2(self.w2_float)
        return Network(q, bq, scale, q2, scale2, self.b2, self.w3, self.b3, self.manifest)

    # --- shape -------------------------------------------------------------------------


    @property
    def hidden(self) -> tuple[int, int]:
        return (self.w1.shape[1], self.w2.shape[1])

    def arrays(self) -> dict[str, np.ndarray]:
        return {"w1": self.w1, "w1_scale": self.w1_scale, "b1": self.b1, "w2": self.w2,
                "w2_scale": self.w2_scale, "b2": self.b2, "w3": self.w3, "b3": self.b3}

    # --- evaluation --------------------------------------------------------------------

    def accumulate(self, active: np.ndarray) -> np.ndarray:
        """``b1 + sum W1[active]`` in :attr:`acc_dtype` (exact int32 when quantised)."""
        rows = self.w1.take(active, 0)
        if len(active) <= INT16_ROWS:
            return self.b1 + np.add.reduce(rows, 0, self.sum_dtype)
        return self.b1 + self.sum_rows(rows)

    def sum_rows(self, rows: np.ndarray) -> np.ndarray:
        """The column sums of gathered ``W1`` rows, exactly for int8 rows. Up to 258 int8
        rows are summed in int16 (258 * 127 < 2**15, so it cannot overflow), which numpy
        does about a third faster than widening to int32; longer stacks go in chunks."""
        if not self.quantised or len(rows) <= INT16_ROWS:
            return np.add.reduce(rows, 0, self.sum_dtype)
        total = np.zeros(rows.shape[1], np.int32)
        for start in range(0, len(rows), INT16_ROWS):
            total += np.add.reduce(rows[start:start + INT16_ROWS], 0, np.int16)
        return total

    def pre_activation(self, acc: np.ndarray) -> np.ndarray:
        """The first layer's float pre-activation from an accumulator value."""
        if self.quantised:
            return acc * self.w1_scale
        return acc

    def forward(self, pre_activation: np.ndarray) -> np.ndarray:
        """The hidden layers and output from first-layer pre-activations ``[..., H1]``
        (float); returns ``[..., 4]`` scores in [0, 1], ordered up, down, left, right.
        A batch (``[N, H1]``) runs as two BLAS matrix products."""
        h1 = np.maximum(pre_activation, 0, dtype=np.float32)
        h2 = h1 @ self.w2_float
        h2 += self.b2
        np.maximum(h2, 0, out=h2)
        z = h2 @ self.w3
        z += self.b3
        # Logistic sigmoid, written to avoid overflow warnings for large |z|.
        return (0.5 * (1.0 + np.tanh(0.5 * z))).astype(np.float32)

    def evaluate(self, active: np.ndarray) -> np.ndarray:
        """Scores of one feature set by a full refresh and forward pass (the reference)."""
        return self.forward(self.pre_activation(self.accumulate(active)))

    def score(self, acc: np.ndarray) -> np.ndarray:
        """The four scores of one accumulator value, by the compiled kernel
        (:func:`nnue.layers.forward_one`): what ``forward(pre_activation(acc))`` gives, to
        float32 rounding, several times faster for one position."""
        scratch = self._scratch.__dict__
        hidden = scratch.get("hidden")
        if hidden is None:
            hidden = scratch["hidden"] = np.empty(self.w2.shape[1], np.float32)
        out = np.empty(N_OUTPUTS, np.float32)
        layers.forward_one(acc, self.w1_scale, self.w2, self.w2_scale, self.b2, self.w3, self.b3,
                           hidden, out)
        return out

    # --- the weight file ---------------------------------------------------------------

    def save(self, path: str | Path, manifest: dict[str, Any] | None = None) -> None:
        """Write the weight file (quantising ``W1`` if this is a float net). ``manifest``
        (JSON-serialisable) replaces :attr:`manifest` when given."""
        net = self.quantise()
        if manifest is None:
            manifest = self.manifest
        arrays = net.arrays()
        header = {
            "format": FORMAT,
            "version": VERSION,
            "architecture": {
                "features": N_FEATURES,
                "hidden": list(net.hidden),
                "outputs": N_OUTPUTS,
                "activation": "relu",
                "output_activation": "sigmoid",
                "output_order": list(MOVES),
            },
            "quantisation": {
                "w1": "int8, symmetric, one float32 scale per hidden unit (w1_scale); "
                      "W1 = w1 * w1_scale",
                "b1": "int32 in the units of w1_scale; b1 = b1 * w1_scale",
                "accumulator": "int32",
                "w2": "int8, symmetric, one float32 scale per row (w2_scale); "
                      "W2 = w2 * w2_scale[:, None]",
                "hidden_layers": "float32 activations and sums",
            },
            "arrays": {k: {"dtype": v.dtype.str, "shape": list(v.shape)}
                       for k, v in arrays.items()},
            "sha256": _checksum(arrays),
            "manifest": manifest,
        }
        try:
            text = json.dumps(header, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"manifest is not plain JSON: {exc}") from None
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write beside the target then rename, so a crash never leaves half a file there.
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as fh:
            np.savez_compressed(fh, header=np.array(text), **arrays)
        tmp.replace(path)

    @classmethod
    def from_bytes(cls, data: bytes) -> Network:
        """A weight file's bytes (sent to a machine where its path does not exist: a Ray
        task), read as :meth:`load` reads the file."""
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "weights.npz"
            path.write_bytes(data)
            return cls.load(path)

    @classmethod
    def load(cls, path: str | Path) -> Network:
        """Read a weight file written by :meth:`save`; raises :class:`NetworkFileError`
        (naming the file and the problem) for anything else."""
        path = Path(path)
        where = str(path)
        if not path.is_file():
            raise NetworkFileError(f"{where}: no such weight file")
        try:
            with np.load(path, allow_pickle=False) as npz:
                names = set(npz.files)
                if "header" not in names:
                    raise NetworkFileError(f"{where}: not a {FORMAT} file (no header array)")
                header_text = str(npz["header"][()])
                # The arrays a file holds depend on its version, which the header says.
                try:
                    header = json.loads(header_text)
                except ValueError as exc:
                    raise NetworkFileError(f"{where}: header is not JSON ({exc})") from None
                version = header.get("version") if isinstance(header, dict) else None
                wanted = _ARRAYS_V1 if version == 1 else _ARRAYS
                missing = [n for n in wanted if n not in names]
                if missing:
                    raise NetworkFileError(f"{where}: missing arrays {missing}")
                arrays = {n: npz[n] for n in wanted}
        except NetworkFileError:
            raise
        except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as exc:
            raise NetworkFileError(f"{where}: unreadable weight file ({type(exc).__name__}: "
                                   f"{exc}); truncated or not an npz?") from None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise NetworkFileError(f"{where}: not a {FORMAT} file")
        if header.get("version") not in READABLE_VERSIONS:
            raise NetworkFileError(f"{where}: format version {header.get('version')!r}, "
                                   f"this code reads versions {list(READABLE_VERSIONS)}")
        arch = header.get("architecture") or {}
        if arch.get("features") != N_FEATURES or arch.get("outputs") != N_OUTPUTS:
            raise NetworkFileError(f"{where}: architecture {arch.get('features')} -> ... -> "
                                   f"{arch.get('outputs')} does not match {N_FEATURES} -> ... -> "
                                   f"{N_OUTPUTS}")
        if list(arch.get("output_order") or []) != list(MOVES):
            raise NetworkFileError(f"{where}: output order {arch.get('output_order')} is not "
                                   f"{list(MOVES)}")
        hidden = arch.get("hidden")
        digest = _checksum(arrays, tuple(arrays))
        if header["version"] == 1:
            # Version 1 kept W2 in float32: quantised here as save() would.
            _check_shapes(arrays | {"w2_scale": np.ones(arrays["w2"].shape[:1], np.float32)},
                          quantised=True, w2_dtype=np.float32, error=NetworkFileError,
                          where=where, hidden=hidden)
            arrays["w2"], arrays["w2_scale"] = quantise_w2(arrays["w2"])
        else:
            _check_shapes(arrays, quantised=True, error=NetworkFileError, where=where,
                          hidden=hidden)
        if digest != header.get("sha256"):
            raise NetworkFileError(f"{where}: checksum mismatch (file says "
                                   f"{header.get('sha256')}, arrays hash to {digest}): corrupt")
        manifest = header.get("manifest") or {}
        net = cls(**{n: np.ascontiguousarray(arrays[n]) for n in _ARRAYS}, manifest=manifest)
        layers.warm_up()  # now, not on the first move of the first game
        feature_transformer.warm_up()
        return net


def _check_shapes(arrays: dict[str, np.ndarray], *, quantised: bool, error: type[Exception],
                  where: str = "network", hidden: Any = None, w2_dtype: Any = None) -> None:
    w1 = arrays["w1"]
    if w1.ndim != 2:
        raise error(f"{where}: w1 must be 2-D [F, H1], got shape {w1.shape}")
    h1 = w1.shape[1]
    w2 = arrays["w2"]
    h2 = w2.shape[1] if w2.ndim == 2 else -1
    expected = {
        "w1": ((N_FEATURES, h1), np.int8 if quantised else np.float32),
        "w1_scale": ((h1,), np.float32),
        "b1": ((h1,), np.int32 if quantised else np.float32),
        "w2": ((h1, h2), w2_dtype or (np.int8 if quantised else np.float32)),
        "w2_scale": ((h1,), np.float32),
        "b2": ((h2,), np.float32),
        "w3": ((h2, N_OUTPUTS), np.float32),
        "b3": ((N_OUTPUTS,), np.float32),
    }
    for name, (shape, dtype) in expected.items():
        a = arrays[name]
        if a.shape != shape:
            raise error(f"{where}: {name} has shape {a.shape}, expected {shape}")
        if a.dtype != dtype:
            raise error(f"{where}: {name} has dtype {a.dtype}, expected {np.dtype(dtype)}")
    if hidden is not None and list(hidden) != [h1, h2]:
        raise error(f"{where}: header says hidden sizes {hidden}, arrays have {[h1, h2]}")
    if min(h1, h2) < 1:
        raise error(f"{where}: empty hidden layer")
    for name in (n for n, a in arrays.items() if a.dtype.kind == "f"):
        if not np.isfinite(arrays[name]).all():
            raise error(f"{where}: {name} holds NaN or infinity")
    for name in (n for n, a in arrays.items() if a.dtype == np.int8):
        # the int16 sums of up to INT16_ROWS rows assume |w| <= 127, as save() writes them
        if arrays[name].min() < -_INT8_MAX:
            raise error(f"{where}: {name} holds -128 (int8 weights are within ±127)")


def load_default() -> Network | None:
    """The shipped network (:data:`DEFAULT_WEIGHTS`), or ``None`` when the file is absent.
    A file that is present but bad raises :class:`NetworkFileError`."""
    if not DEFAULT_WEIGHTS.exists():
        return None
    return Network.load(DEFAULT_WEIGHTS)
