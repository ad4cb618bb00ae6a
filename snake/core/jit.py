"""How the compiled code is compiled: the options every compiled function takes
(:data:`JIT`, :data:`JIT_NRT`), and where numba keeps what it compiled.

**Why no reference counting.** numba's runtime (NRT) counts references to every array: a
compiled function counts in and out each array it is handed, each view or slice it makes,
each array taken out of a tuple, with an atomic add on shared memory each time. In the
search that was about a fifth of the time (a profile of a duel's search: two instructions,
the atomic adds of ``NRT_incref`` and ``NRT_decref``, held 19 % of the samples), and
compiled without it the search makes its nodes in 0.73x the time in a duel, 0.83x with four
snakes (CPU time a node, fixed-node searches). Nothing needs the counts: the compiled code
makes no array that outlives the call that made it, and the arrays it is handed are held by
the Python that called it. So :data:`JIT` compiles without the runtime; the few functions
that allocate arrays (the search's set-up, a collision's bookkeeping, the change report's
scratch, the network's layer) take :data:`JIT_NRT`, which says so explicitly: a function
compiled from one without the runtime would otherwise inherit its caller's choice.

**Why a cache folder of our own.** numba checks a cached function against its own source
file only (numba 0.68): a function that calls one defined in another file, or reads
another file's constants, is loaded from the cache unchanged after that other file has
changed. So an edit of board control (``evaluation/compiled/control.py``) left the search
(``search/compiled/tree.py``) evaluating with the old code, silently, until its own file
changed too; a checkout updated in place would serve the old search the same way. Here
the cache lives in a folder named by a digest of every project file compiled code is built
from (:data:`SOURCES`): a change in any of them compiles everything afresh, in a new
folder.

The folder is ``nuppeppou-<digest>`` under ``NUMBA_CACHE_DIR`` when that is set, else
under the first writable of ``snake/core/__pycache__``, the user's cache folder
(``$XDG_CACHE_HOME`` or ``~/.cache``, then ``nuppeppou``) and a folder of the user's own
in the temporary folder. It is also put in the environment, so that processes started
from this one (the arena's, gunicorn's workers) use it. When a new folder is made, the
folders of other digests not used for :data:`KEEP_DAYS` days are removed (but the
:data:`KEEP_RECENT` most recently used), and so are the cache files numba wrote beside
the sources before this folder existed.

Import this module before any ``@njit`` is applied (each compiled module imports
:data:`JIT` from it): numba picks the cache folder when a function is decorated.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import numba

#: The options of every compiled function: cached on disk, the GIL released while it runs
#: (two searches on two cores in one process), and no reference counting (module docstring):
#: such a function may make views of the arrays it is handed, never a new array.
JIT = dict(cache=True, nogil=True, _nrt=False)
#: The options of a compiled function that allocates arrays (with numba's runtime).
JIT_NRT = dict(cache=True, nogil=True, _nrt=True)

#: The project files compiled code is built from, relative to the project's root: those
#: that define compiled functions and every project module they import, transitively
#: (``tests/test_jit.py`` derives the list from the imports and checks it).
SOURCES = (
    "nnue/__init__.py", "nnue/feature_transformer.py", "nnue/features.py", "nnue/layers.py",
    "snake/__init__.py", "snake/board.py",
    "snake/core/__init__.py", "snake/core/jit.py", "snake/core/occupancy.py",
    "snake/core/state.py", "snake/core/step.py",
    "snake/evaluation/__init__.py", "snake/evaluation/compiled/__init__.py",
    "snake/evaluation/compiled/control.py", "snake/evaluation/compiled/leaf.py",
    "snake/evaluation/compiled/network.py",
    "snake/evaluation/control.py",
    "snake/rules/__init__.py", "snake/rules/geometry.py", "snake/rules/maps.py",
    "snake/rules/occupancy.py", "snake/rules/results.py", "snake/rules/stages.py",
    "snake/search/__init__.py", "snake/search/compiled/__init__.py",
    "snake/search/compiled/table.py", "snake/search/compiled/timer.py",
    "snake/search/compiled/tree.py",
)

#: Days after which another digest's folder, not used since, is removed (the
#: :data:`KEEP_RECENT` most recently used are kept whatever their age).
KEEP_DAYS = 2
KEEP_RECENT = 3

_ROOT = Path(__file__).resolve().parents[2]
_FOLDER = re.compile(r"nuppeppou-[0-9a-f]{16}")
#: Set beside ``NUMBA_CACHE_DIR`` for the processes started from this one: the base the
#: digest's folder was put in, so that they use it rather than a folder below it.
_BASE_VARIABLE = "NUPPEPPOU_NUMBA_CACHE_BASE"
#: Where numba kept this project's cache before it had a folder of its own (stale now).
_OLD_PLACES = ("snake/core/__pycache__", "nnue/__pycache__", "bench/__pycache__")


def source_digest(root: Path = _ROOT) -> str:
    """A digest of the contents of :data:`SOURCES` under ``root`` (and numba's version)."""
    digest = hashlib.sha256(numba.__version__.encode())
    for name in SOURCES:
        digest.update(name.encode() + b"\0" + (root / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _private_temporary() -> Path | None:
    """A folder of this user's own in the shared temporary folder (cache files are
    pickles: a folder another user could write to would let them run code as this one),
    or ``None``."""
    folder = Path(tempfile.gettempdir()) / f"nuppeppou-numba-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.lstat()
    except OSError:
        return None
    if folder.is_symlink() or info.st_uid != os.getuid() or info.st_mode & 0o022:
        return None
    return folder


def _bases() -> list[Path]:
    """Where the digests' folders may go, in order of preference (module docstring)."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    inherited = os.environ.get(_BASE_VARIABLE)
    if given and inherited and Path(given).parent == Path(inherited):
        return [Path(inherited)]
    if given:
        return [Path(given).absolute()]
    bases = [Path(__file__).resolve().parent / "__pycache__"]
    try:
        bases.append(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                     / "nuppeppou")
    except RuntimeError:        # no home folder to be found
        pass
    temporary = _private_temporary()
    return bases + ([temporary] if temporary else [])


def prune(base: Path, keep: str, days: float = KEEP_DAYS,
          recent: int = KEEP_RECENT) -> list[Path]:
    """Remove the digests' folders in ``base`` (named as this module names them) other
    than ``keep`` and the ``recent`` most recently used that were not used for ``days``
    days; returns those removed."""
    folders = []
    try:
        entries = list(base.iterdir())
    except OSError:
        return []
    for folder in entries:
        try:
            if folder.name != keep and _FOLDER.fullmatch(folder.name) and folder.is_dir():
                folders.append((folder.stat().st_mtime, folder))
        except OSError:
            pass        # another process removed it first
    folders.sort(reverse=True)
    cutoff = time.time() - days * 86400
    removed = []
    for used, folder in folders[recent:]:
        if used < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _remove_old_caches(root: Path = _ROOT) -> None:
    """Delete the cache files numba wrote beside the sources before the digest's folder
    (:data:`_OLD_PLACES`): numba would fall back to them if the folder failed it."""
    for place in _OLD_PLACES:
        for pattern in ("*.nbi", "*.nbc"):
            for file in (root / place).glob(pattern):
                try:
                    file.unlink()
                except OSError:
                    pass


def cache_folder() -> Path:
    """This checkout's cache folder (module docstring), made if needed and marked used
    now. Raises ``OSError`` when no place for it is writable."""
    name = "nuppeppou-" + source_digest()
    error: OSError | None = None
    for base in _bases():
        folder = base / name
        try:
            if not folder.is_dir():
                folder.mkdir(parents=True, exist_ok=True)
                prune(base, keep=name)
                _remove_old_caches()
            os.utime(folder)        # used now (numba writes below it, not in it)
            if os.access(folder, os.W_OK):
                return folder
        except OSError as exc:
            error = exc
    raise error or OSError("no writable folder for numba's cache")


def _use(folder: Path) -> None:
    # the environment too: numba reloads its settings from it when a NUMBA_ variable
    # changes, and processes started from this one inherit it
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    os.environ[_BASE_VARIABLE] = str(folder.parent)
    numba.config.CACHE_DIR = str(folder)


_use(cache_folder())
