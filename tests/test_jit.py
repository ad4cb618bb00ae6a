"""Where compiled code is cached (snake/core/jit.py): a folder named by a digest of every
project file compiled code is built from, because numba checks a cached function against
its own file only."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from snake.core import jit
from tests.test_structure import PACKAGES, imports_of, project_modules

ROOT = Path(__file__).resolve().parents[1]


def test_the_digest_covers_every_file_compiled_code_is_built_from():
    """SOURCES is exactly the files that define compiled functions and every project
    module they import, transitively: a file left out could change without a recompile."""
    modules = project_modules()
    names = set(modules)
    compiled = {name for name, path in modules.items()
                if "@njit" in path.read_text() or "njit(**JIT)" in path.read_text()}
    assert {"snake.search.compiled.tree", "nnue.layers"} <= compiled
    # a module's own packages run first too (their __init__), which the import graph leaves out
    closure, todo = set(), [".".join(name.split(".")[:k]) for name in compiled
                            for k in range(1, name.count(".") + 2)]
    while todo:
        name = todo.pop()
        if name not in closure:
            closure.add(name)
            todo += imports_of(name, modules[name], names) - closure
    closure = {modules[name] for name in closure}
    assert sorted(str(p.relative_to(ROOT)) for p in closure) == sorted(jit.SOURCES)


def test_the_digest_changes_with_any_source(tmp_path):
    for name in jit.SOURCES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    digest = jit.source_digest(tmp_path)
    assert digest == jit.source_digest(ROOT)
    for name in ("snake/evaluation/compiled/control.py", "snake/rules/stages.py",
                 "nnue/features.py"):
        original = (tmp_path / name).read_text()
        (tmp_path / name).write_text(original + "\n# an edit\n")
        assert jit.source_digest(tmp_path) != digest
        (tmp_path / name).write_text(original)
        assert jit.source_digest(tmp_path) == digest


def test_old_folders_are_pruned_and_recent_ones_kept(tmp_path):
    """Other digests' folders unused for days go, but the most recently used; folders not
    named as the digests' are never touched (a metrics folder beside them, say)."""
    now = time.time()
    ages = {"0" * 16: 0, "1" * 16: 1, "2" * 16: 7, "3" * 16: 14, "4" * 16: 21}
    folders = {}
    for digest, days in ages.items():
        folders[digest] = tmp_path / f"nuppeppou-{digest}"
        folders[digest].mkdir()
        os.utime(folders[digest], (now - days * 86400,) * 2)
    others = [tmp_path / "nuppeppou-metrics-q1w2", tmp_path / "nuppeppou-numba"]
    for folder in others:
        folder.mkdir()
        os.utime(folder, (now - 30 * 86400,) * 2)
    ours = "nuppeppou-" + "4" * 16        # the oldest, but in use
    removed = jit.prune(tmp_path, keep=ours, days=2, recent=2)
    assert sorted(removed) == [folders["2" * 16], folders["3" * 16]]
    assert all(f.exists() for f in others) and (tmp_path / ours).exists()
    assert folders["0" * 16].exists() and folders["1" * 16].exists()


def test_every_compiled_function_takes_the_options_of_jit():
    """A compiled function cached without them would be cached beside its source, where
    numba does not see another file change."""
    for package in (*PACKAGES, "bench"):
        for path in (ROOT / package).rglob("*.py"):
            text = path.read_text()
            if path.name == "jit.py" or "numba" not in text:
                continue
            assert "cache=" not in text, path
            if "njit" in text:
                assert "import JIT" in text and "**JIT" in text, path


PROBE = """
import os, subprocess, sys
import numba
from snake.core import step
print(numba.config.CACHE_DIR)
print(os.environ["NUMBA_CACHE_DIR"])
if len(sys.argv) > 1:       # a child started from here uses the same folder
    print(subprocess.run([sys.executable, "-c", sys.argv[1]], capture_output=True, text=True,
                         check=True).stdout.strip())
"""


def test_the_cache_lives_in_the_digest_folder_under_numba_cache_dir(tmp_path):
    """With NUMBA_CACHE_DIR set, compiled functions are cached in its digest folder; a
    process started from that one (an arena worker) uses the same folder, not one below."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    child = "import numba, snake.core.jit; print(numba.config.CACHE_DIR)"
    out = subprocess.run([sys.executable, "-c", PROBE, child], capture_output=True, text=True,
                         env=env, cwd=ROOT, check=True).stdout.split()
    folder = tmp_path / f"nuppeppou-{jit.source_digest()}"
    assert out == [str(folder)] * 3
    # a compiled call writes its cache there (a small function: quick to compile)
    subprocess.run([sys.executable, "-c",
                    "from snake.search.compiled.timer import monotonic; monotonic()"],
                   env=env, cwd=ROOT, check=True)
    assert list(folder.rglob("timer._monotonic-*.nbi"))
    # a folder of the user's own named like ours is a base, not an inherited folder
    own = tmp_path / "nuppeppou-numba"
    env = dict(env, NUMBA_CACHE_DIR=str(own))
    out = subprocess.run([sys.executable, "-c", "import numba, snake.core.jit; "
                          "print(numba.config.CACHE_DIR)"], capture_output=True, text=True,
                         env=env, cwd=ROOT, check=True).stdout.split()
    assert out == [str(own / folder.name)]
