"""The code's shape: one owner per concept, and no import cycles.

The import graph is read from the source (every ``import`` statement, function-level and
``TYPE_CHECKING`` ones included, since a lazy import that closes a loop is still a loop).
A module importing ``a.b.c`` also depends on the packages ``a.b`` and ``a`` (Python runs
their ``__init__`` first), except on its own ancestors.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from snake.board import Ruleset
from snake.rules import STAGES

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("snake", "nnue", "training")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    found = {_module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}
    found["app"] = ROOT / "app.py"
    return found


def imports_of(name: str, path: Path, modules: set[str]) -> set[str]:
    """The project modules that ``name`` imports (with their ancestor packages)."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            targets.add(stem)
            targets.update(f"{stem}.{alias.name}" for alias in node.names)
    out: set[str] = set()
    for target in targets:
        parts = target.split(".")
        for k in range(1, len(parts) + 1):
            candidate = ".".join(parts[:k])
            if candidate in modules and candidate != name and not name.startswith(candidate + "."):
                out.add(candidate)
    return out


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_import_graph_has_no_cycle():
    sources = project_modules()
    modules = set(sources)
    graph = {name: imports_of(name, path, modules) for name, path in sources.items()}
    assert graph["snake.strategies"] >= {"snake.seed", "snake.search.strategy"}   # the reader works
    assert _find_cycle(graph) is None, " -> ".join(_find_cycle(graph))


def test_the_cycle_finder_finds_a_cycle():
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set()}) is None


#: The house's floors, from the ground up: a part imports only parts on its own floor or
#: below (a module of ``snake`` is its subpackage, or itself at the top). What each part
#: is: README.md, "What is here".
FLOORS = (
    ("snake.board", "snake.cli", "snake.progress",            # the game model, small helpers,
     "snake.settings"),                                          # the settings' one table
    ("snake.rules",),                                            # the rules, the reference
    ("snake.core", "snake.moves", "snake.floodfill", "snake.diagram"),  # their compiled twin
    ("nnue", "snake.decision", "snake.conformance", "snake.perft"),    # NNUE inference
    ("snake.evaluation", "snake.seed"),
    ("snake.search", "snake.records"),
    ("snake.strategies", "snake.observability"),
    ("snake.serving", "snake.arena", "snake.explain"),
    ("app", "training"),                                         # the service; the tools
)


def _part(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "snake" and len(parts) > 1 else parts[0]


def test_every_part_imports_only_its_own_floor_or_below():
    sources = project_modules()
    modules = set(sources)
    floor = {part: k for k, parts in enumerate(FLOORS) for part in parts}
    assert {_part(m) for m in modules} - {"snake"} == set(floor), "a part on no floor"
    upward = sorted(f"{name} -> {target}" for name, path in sources.items()
                    for target in imports_of(name, path, modules)
                    if target != "snake" and floor[_part(target)] > floor[_part(name)])
    assert not upward, upward


def test_the_serving_path_imports_neither_the_arena_nor_training():
    sources = project_modules()
    modules = set(sources)
    serving = [m for m in modules if m == "app" or _part(m) in
               ("snake.serving", "snake.observability", "snake.strategies", "snake.search",
                "snake.evaluation", "snake.records", "nnue")]
    for name in serving:
        reached = imports_of(name, sources[name], modules)
        assert not {m for m in reached if _part(m) in ("snake.arena", "training")}, name
    assert imports_of("snake.board", sources["snake.board"], modules) == set()


def test_ray_is_imported_by_one_module_and_only_when_a_command_is_given_ray():
    """Ray is a training requirement (requirements-train.txt), never the server's: one
    module imports it (:mod:`snake.arena.cluster`, which the arena, the tuner and
    self-play call with ``--ray``), and only inside its functions."""
    importers = set()
    for name, path in project_modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top_level = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "ray" or n.startswith("ray.") for n in names):
                importers.add(name)
                assert id(node) not in top_level, f"{name} imports ray when imported"
    assert importers == {"snake.arena.cluster"}


#: Concepts that must be defined in exactly one place (a module-level ``def``, ``class`` or
#: assignment).
ONE_OWNER = {
    "MOVES": "snake/rules/geometry.py",
    "DELTAS": "snake/rules/geometry.py",
    "neighbour_table": "snake/rules/geometry.py",
    "default_move": "snake/rules/stages.py",
    "obstacles_after_move": "snake/rules/occupancy.py",
    "candidate_moves": "snake/rules/occupancy.py",
    "turns_until_vacated": "snake/rules/occupancy.py",
    "is_game_over": "snake/rules/stages.py",
    "outcome": "snake/rules/results.py",
    "recorded_outcome": "snake/rules/results.py",
    "recorded_results": "snake/rules/results.py",
    "place": "snake/rules/results.py",
    "random_move": "snake/seed.py",
    "Decision": "snake/decision.py",
    "N_FEATURES": "nnue/features.py",
    "snake_names": "snake/records/names.py",     # how every view of a game names its snakes
}


#: The compiled twin of the rules: it repeats the reference's names on purpose.
TWIN = ROOT / "snake" / "core"


def test_each_concept_has_one_owner():
    files = [p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")
             if TWIN not in p.parents] + [ROOT / "app.py"]
    for concept, owner in ONE_OWNER.items():
        pattern = re.compile(rf"^(?:def|class)\s+{concept}\b|"
                             rf"^(?![ \t])[\w ,]*\b{concept}\b[\w ,]*(?::[^=\n]*)?=[^=]", re.M)
        where = sorted(str(p.relative_to(ROOT)) for p in files
                       if pattern.search(p.read_text(encoding="utf-8")))
        assert where == [owner], f"{concept} is defined in {where}"


def test_only_the_records_read_a_record_s_result_line():
    """One reader of game records: outside :mod:`snake.records` no code reads (or writes) the
    result line's fields; a game's result is asked of the record (``Replay``), which asks
    the rules (:mod:`snake.rules.results`)."""
    fields = re.compile(r"""["'](winnerId|winnerName|isDraw)["']""")
    files = [p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")] + [ROOT / "app.py"]
    readers = sorted(str(p.relative_to(ROOT)) for p in files
                     if fields.search(p.read_text(encoding="utf-8")))
    assert readers and all(r.startswith("snake/records/") for r in readers), readers


def test_the_stage_table_agrees_with_the_ruleset_facts():
    for name, stages in STAGES.items():
        names = [stage for stage, _ in stages]
        ruleset = Ruleset(name)
        assert ruleset.wraps == ("movement.wrap_boundaries" in names), name
        assert ruleset.constrictor == ("modify_snakes.always_grow" in names), name
        assert ruleset.squad == ("modify_snakes.share_attributes" in names), name
        assert names.index("elimination.standard") > names.index("feed_snakes.standard")


def test_the_compiled_twin_has_every_stage_of_the_reference_by_name():
    from snake.core import step as twin
    from snake.rules import stages as reference
    names = {stage.__name__ for pipeline in STAGES.values() for _, stage in pipeline}
    names |= {check.__name__ for _, check in reference.GAME_OVER.values()}
    names |= {"apply_rules", "default_move", "is_game_over"}
    missing = sorted(name for name in names if not hasattr(twin, name))
    assert not missing, f"the compiled step lacks {missing}"


def test_every_command_runs_its_main():
    """Each ``python -m`` command of the game package (every module with a ``__main__``
    guard) runs its ``main``: ``--help``, which argparse answers inside ``main``, and for
    the arena a one-game match, which goes past the parsing (a name clash in a guard once
    broke the arena: a helper imported under the name of the arena's own ``run``)."""
    import subprocess
    import sys
    root = Path(__file__).resolve().parent.parent
    commands = sorted(
        ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__main__")
        for path in (root / "snake").rglob("*.py")
        if 'if __name__ == "__main__":' in path.read_text())
    assert {"snake.arena", "snake.arena.tally", "snake.arena.postmortem"} <= set(commands)
    runs = [[command, "--help"] for command in commands]
    runs.append(["snake.arena", "random", "random", "-g", "1", "--size", "7", "-p", "1", "-q"])
    for argv in runs:
        done = subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True,
                              timeout=120, cwd=root)
        assert done.returncode == 0, (argv, done.stderr[-2000:])
        assert (done.stdout.startswith("usage: ") if argv[-1] == "--help"
                else "games: 1" in done.stdout), argv
