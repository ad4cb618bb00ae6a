"""How the compiled code is compiled: the options every compiled function takes
(:data:`JIT`), and where numba keeps what it compiled.

**Why a cache folder of our own.** numba checks a cached function against its own source
file only (numba 0.68): a function that calls one defined in another file, or reads
another file's constants, is loaded from the cache unchanged after that other file has
changed. So an edit of ``control.py`` left the search (``search.py``) evaluating with the
old code, silently, until its own file changed too; a checkout updated in place would
serve the old search the same way. Here the cache lives in a folder named by a digest of
every project file compiled code is built from (:data:`SOURCES`): a change in any of them
compiles everything afresh, in a new folder.

The folder is ``nuppeppou-<digest>`` under ``NUMBA_CACHE_DIR`` when that is set, else
under the first writable of ``snake/core/__pycache__``, the user's cache folder
(``$XDG_CACHE_HOME`` or ``~/.cache``, then ``nuppeppou``) and the temporary folder's
``nuppeppou``. It is also put in the
environment, so that processes started from this one (the arena's, gunicorn's workers)
use it without recomputing. Folders of other digests not written to for
:data:`KEEP_DAYS` days are removed when a new one is made.

Import this module before any ``@njit`` is applied (each compiled module imports
:data:`JIT` from it): numba picks the cache folder when a function is decorated.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path

import numba

#: The options of every compiled function: cached on disk, and the GIL released while it
#: runs (two searches on two cores in one process).
JIT = dict(cache=True, nogil=True)

#: The project files compiled code is built from, relative to the project's root: those
#: that define compiled functions and every project module they import, transitively
#: (``tests/test_jit.py`` derives the list from the imports and checks it).
SOURCES = (
    "nnue/__init__.py", "nnue/feature_transformer.py", "nnue/features.py", "nnue/layers.py",
    "snake/__init__.py", "snake/board.py", "snake/maps.py",
    "snake/core/__init__.py", "snake/core/clock.py", "snake/core/control.py",
    "snake/core/jit.py", "snake/core/occupancy.py", "snake/core/search.py",
    "snake/core/state.py", "snake/core/step.py",
    "snake/rules/__init__.py", "snake/rules/geometry.py", "snake/rules/occupancy.py",
    "snake/rules/results.py", "snake/rules/stages.py",
)

#: Days after which another digest's folder, not written to since, is removed.
KEEP_DAYS = 2

_ROOT = Path(__file__).resolve().parents[2]
_PREFIX = "nuppeppou-"


def source_digest(root: Path = _ROOT) -> str:
    """A digest of the contents of :data:`SOURCES` under ``root`` (and numba's version)."""
    digest = hashlib.sha256(numba.__version__.encode())
    for name in SOURCES:
        digest.update(name.encode() + b"\0" + (root / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _bases() -> list[Path]:
    """Where the digests' folders may go, in order of preference (module docstring)."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        path = Path(given)
        # set by the process that started this one: its parent is the base
        return [path.parent if path.name.startswith(_PREFIX) else path]
    bases = [Path(__file__).resolve().parent / "__pycache__"]
    try:
        bases.append(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                     / "nuppeppou")
    except RuntimeError:        # no home folder to be found
        pass
    return bases + [Path(tempfile.gettempdir()) / "nuppeppou"]


def prune(base: Path, keep: str, days: float = KEEP_DAYS) -> list[Path]:
    """Remove the digests' folders in ``base`` other than ``keep`` not written to for
    ``days`` days; returns those removed."""
    removed = []
    cutoff = time.time() - days * 86400
    for folder in base.glob(_PREFIX + "*"):
        try:
            if folder.name != keep and folder.is_dir() and folder.stat().st_mtime < cutoff:
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
        except OSError:
            pass        # another process removed it first
    return removed


def cache_folder() -> Path:
    """This checkout's cache folder (module docstring), made if needed. Raises
    ``OSError`` when no place for it is writable."""
    name = _PREFIX + source_digest()
    error: OSError | None = None
    for base in _bases():
        folder = base / name
        try:
            if not folder.is_dir():
                folder.mkdir(parents=True, exist_ok=True)
                prune(base, keep=name)
            if os.access(folder, os.W_OK):
                return folder
        except OSError as exc:
            error = exc
    raise error or OSError(f"no writable folder for numba's cache (tried {_bases()})")


def _use(folder: Path) -> None:
    # the environment too: numba reloads its settings from it when a NUMBA_ variable
    # changes, and processes started from this one inherit it
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    numba.config.CACHE_DIR = str(folder)


_use(cache_folder())
