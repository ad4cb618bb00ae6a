"""Tune a value head's weights by the results of games played with them (SPSA).

    python -m training.tune --dir runs/tune --iterations 1000 [--nodes 10000]
        [--records DIR...] [--positions FILE] [--without NAME...] [--c 0.1] [--step 0.02]
        [--workers 2] [--seed 1]

A head fitted to results or to search scores (:mod:`training.fit_head`) learns what
goes with winning in games played well, and that has not yet made a better search
(docs/training.md). This learns from the searches' own results instead: the weights move
towards whatever wins games.

**The head** is linear and residual: ``z = w . (x - m)``, ``x`` the snake's
:data:`~snake.evaluation.control.MEASUREMENTS` and ``m`` their means over the records' duel
positions (0 without ``--records``), added to the logit of the style's value (so ``w = 0``
is the style itself; :mod:`snake.evaluation.value_head`). Centred, a weight changes how positions
compare rather than shifting every leaf's logit alike (uncentred, about two thirds of a
perturbation's effect was such a shift, which only moves leaves against proven results).
It is saved as a value head file with two hidden units (``relu(u) - relu(-u) = u``, the
means in their biases), which the search reads like any other head:
``search[value_head=DIR/head.npz]``. ``--without NAME...`` keeps some weights at zero
(``opponents`` by default: in a duel it is the same in every position, a constant); with
``--records``, so are those of measurements nearly constant in those positions or equal to
another's (:func:`measured_inputs`; ``tune.json`` says which and why).

**SPSA** (simultaneous perturbation stochastic approximation, Spall 1992; engines tune
their evaluation weights this way): iteration ``k`` draws a sign for every weight,
``D_k`` in ``{-1, +1}^p``, and plays the head ``w + c_k D_k`` against ``w - c_k D_k`` in a
pair of games from one start with the sides swapped (an arena pair: 11x11 standard duel
unless ``--size`` says otherwise, both searching ``--nodes`` per move, so that the games do
not depend on the machine's load); then ``w += step_k * (r_k / 2) * D_k``, ``r_k`` the plus
head's points minus the minus head's over the pair (-2 to 2; a win 1, a draw 1/2). The
gains fall as Spall's do: ``c_k = c / (k + 1) ** 0.101`` and
``step_k = step * ((A + 1) / (A + k + 1)) ** 0.602``, ``A`` a tenth of the first run's
``--iterations``. ``--workers`` iterations are played at a time from the same ``w`` (their
moves added), as distributed tuners do. With ``--positions FILE`` (duels,
:mod:`snake.arena.positions`) pair ``k`` starts from position ``k`` of the file (cycling)
instead of a new start: the weights then move towards what wins those positions (the last
duels of four-snake games, say). With ``--records DIR...``, weight ``i`` is
perturbed by ``c_k / s_i`` and moved by ``step_k / s_i``, ``s_i`` its measurement's standard
deviation over the duel positions of those records (every fourth turn; at least
:data:`MIN_SPREAD`): with the means taken off, as if every input were standardised, so that
each weight changes the head's output about as much (the spreads run from 0.02 to 0.72 in
this machine's records); without it every ``s_i`` is 1. Each pair in ``tune.json`` records
the number of iterations done when it was played (``from``): the ``w`` it was played from.
``--workers`` is therefore not one of the settings: a run resumed with another value goes on
from the same ``w`` in batches of the new size, and ``from`` records them; but a run begun
again from nothing with another ``--workers`` takes another path (its pairs see other ``w``).

``DIR/tune.json`` holds the settings, ``w`` and every iteration (``r``, the two games'
results and turns); ``DIR/head.npz`` is ``w`` as a value head file, rewritten after every
batch. Stopping loses the batch being played; the same command resumes it (a directory made
with other settings is refused; ``--iterations`` may grow). The result is screened as any
head is: an arena match against ``search`` without a head, ``search[value_head=none]`` (the
command is printed at the end).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from snake.evaluation.control import MEASUREMENTS, N_MEASUREMENTS, STYLES
from snake.evaluation.value_head import ValueHead, board_of
from snake.progress import Progress

#: Spall's exponents of the gains (the perturbation's and the step's).
GAMMA, ALPHA = 0.101, 0.602
POINTS = {"win": 1.0, "draw": 0.5, "loss": 0.0}
#: The least spread a measurement is given (one that hardly varies would take huge steps).
MIN_SPREAD = 0.02
#: A measurement whose spread over the records' duel positions is below this is not tuned
#: (its weight stays 0): it is nearly constant there (``short_of_food``, 0.027: 1 position in
#: about 1,300), so the games hardly ever see it, and its weight, moved by ``step / s`` a
#: pair, would only wander (to +5 in 300 pairs of the first run: a logit of +5 where a snake
#: is about to starve).
MIN_TUNED_SPREAD = 0.05


def linear_head(w: np.ndarray, style: str = "default", meta: dict[str, Any] | None = None,
                means: np.ndarray | None = None, size: Sequence[int] | None = None) -> ValueHead:
    """The residual value head ``z = w . (x - means)`` (module docstring), for duels
    (``means`` 0: ``z = w . x``) on standard boards of ``size`` (the tuner's; ``None``: any
    board), in games begun as duels (the tuner's games, from the start or from its duel
    positions, begin with two snakes)."""
    w = np.asarray(w, dtype=np.float64)
    shift = 0.0 if means is None else float(w @ np.asarray(means, dtype=np.float64))
    return ValueHead(np.stack([w, -w]), np.array([-shift, shift]), np.array([1.0, -1.0]), 0.0,
                     style=style, snakes=(2,), meta=dict(meta or {}), residual=True,
                     boards=(board_of("standard", *size),) if size is not None else (),
                     began=(2,))


def signs(seed: int, k: int, tuned: np.ndarray) -> np.ndarray:
    """Iteration ``k``'s perturbation: +1 or -1 for each tuned weight, 0 for the others."""
    rng = np.random.default_rng([seed, k])
    return np.where(tuned, rng.choice([-1.0, 1.0], size=len(tuned)), 0.0)


def gains(settings: dict[str, Any], k: int) -> tuple[float, float]:
    """``(c_k, step_k)`` of iteration ``k`` (module docstring)."""
    a = settings["stability"]
    return (settings["c"] / (k + 1) ** GAMMA,
            settings["step"] * ((a + 1) / (a + k + 1)) ** ALPHA)


def play_pair(task: tuple) -> dict[str, Any]:
    """Play iteration ``k``'s pair of games (the plus head against the minus head, sides
    swapped) and return its ``r`` (module docstring), results and turns."""
    from snake.arena.match import play_game
    from snake.arena.players import parse_players
    from snake.arena.schedule import plan_games

    folder, k, w_plus, w_minus, settings = task
    work = Path(folder) / "work"
    work.mkdir(parents=True, exist_ok=True)
    files = [work / f"{k}-plus.npz", work / f"{k}-minus.npz"]
    try:
        for path, w in zip(files, (w_plus, w_minus)):
            linear_head(np.array(w), settings["style"], means=settings.get("means"),
                        size=settings["size"]).save(path)
        players = parse_players([f"plus=search[value_head={files[0]},{player_options(settings)}]",
                                 f"minus=search[value_head={files[1]},{player_options(settings)}]"])
        width, height = settings["size"]
        suite = suite_positions(settings["positions"]) if settings.get("positions") else None
        specs = plan_games(n_players=2, games=2, seed=settings["seed"] * 1_000_003 + k,
                           ruleset="standard", map_name="standard", width=width, height=height,
                           timeout=500, n_snakes=2, max_turns=settings["max_turns"],
                           positions=[suite[k % len(suite)]] if suite else None)
        t0 = time.monotonic()
        results, turns, r = [], [], 0.0
        for spec in specs:
            game = play_game(spec, players)
            results.append(game.results[0])
            turns.append(game.turns)
            r += POINTS[game.results[0]] - POINTS[game.results[1]]
    finally:
        for path in files:
            path.unlink(missing_ok=True)
    return {"k": k, "r": r, "results": results, "turns": turns,
            "seconds": round(time.monotonic() - t0, 2)}


_SUITES: dict[str, list[dict[str, Any]]] = {}


def suite_positions(path: str) -> list[dict[str, Any]]:
    """The duels of a positions file (:mod:`snake.arena.positions`), read once per process;
    ``ValueError`` naming the file (and its line) for one that cannot be read, or that holds
    other than standard duels (the board size and turns are checked by :func:`run`)."""
    if path not in _SUITES:
        from snake.arena.positions import load_positions

        loaded = load_positions(path)
        if any(len(p["board"]["snakes"]) != 2 for p in loaded):
            raise ValueError(f"--positions {path}: a tuning plays duels; some positions have "
                             "other than two snakes alive")
        if any(p["game"]["ruleset"]["name"] != "standard" for p in loaded):
            raise ValueError(f"--positions {path}: a tuning plays standard games; some "
                             "positions are of another ruleset")
        _SUITES[path] = loaded
    return _SUITES[path]


def player_options(settings: dict[str, Any]) -> str:
    """The search's options for a head of this tuning: the node limit alone ends a move
    (the clock is set far out), so the games do not depend on the machine's load."""
    return f"max_nodes={settings['nodes']},style={settings['style']},think_ms=600000"


class Tuning:
    """A tuning directory: its settings, ``w`` and the iterations played (``tune.json``)."""

    def __init__(self, folder: Path, settings: dict[str, Any]) -> None:
        self.folder = folder
        self.path = folder / "tune.json"
        if self.path.exists():
            kept = json.loads(self.path.read_text())
            if kept["settings"] != settings:
                raise ValueError(f"{folder} holds a tuning made with other settings "
                                 f"({kept['settings']}); use another --dir")
            self.state = kept
        else:
            self.state = {"settings": settings, "measurements": list(MEASUREMENTS),
                          "w": [0.0] * N_MEASUREMENTS, "iterations": [], "seconds": 0.0}
        if self.state["measurements"] != list(MEASUREMENTS):
            raise ValueError(f"{folder} was tuned on measurements {self.state['measurements']}, "
                             f"the core has {list(MEASUREMENTS)}")

    @property
    def settings(self) -> dict[str, Any]:
        return self.state["settings"]

    @property
    def done(self) -> int:
        return len(self.state["iterations"])

    @property
    def w(self) -> np.ndarray:
        return np.array(self.state["w"], dtype=np.float64)

    @property
    def tuned(self) -> np.ndarray:
        untuned = set(self.settings["without"]) | set(self.settings.get("untuned", {}))
        return np.array([name not in untuned for name in MEASUREMENTS])

    @property
    def spreads(self) -> np.ndarray:
        return np.array(self.settings["spreads"], dtype=np.float64)

    def tasks(self, first: int, count: int) -> list[tuple]:
        """The pairs of iterations ``first``.. ``first + count - 1``, all from today's ``w``
        (each pair records that it was played from ``w`` after ``first`` iterations)."""
        out = []
        for k in range(first, first + count):
            c, _ = gains(self.settings, k)
            c = c / self.spreads
            d = signs(self.settings["seed"], k, self.tuned)
            out.append((str(self.folder), k, (self.w + c * d).tolist(), (self.w - c * d).tolist(),
                        self.settings))
        return out

    def apply(self, played: list[dict[str, Any]], seconds: float) -> None:
        """Move ``w`` by a batch of played pairs and save."""
        w = self.w
        first = self.done
        for pair in sorted(played, key=lambda p: p["k"]):
            pair.setdefault("from", first)      # the w it was played from
            _, step = gains(self.settings, pair["k"])
            w += (step / self.spreads * pair["r"] / 2.0
                  * signs(self.settings["seed"], pair["k"], self.tuned))
            self.state["iterations"].append(pair)
        self.state["w"] = w.tolist()
        self.state["seconds"] = round(self.state["seconds"] + seconds, 1)
        self.save()

    def head(self) -> ValueHead:
        games = 2 * self.done
        return linear_head(self.w, self.settings["style"], {
            "tuned_by": "SPSA (training.tune)", "iterations": self.done, "games": games,
            "settings": self.settings}, means=self.settings.get("means"),
            size=self.settings["size"])

    def save(self) -> None:
        temporary = self.path.with_suffix(".part")
        temporary.write_text(json.dumps(self.state, indent=1))
        temporary.replace(self.path)
        self.head().save(self.folder / "head.part.npz")
        (self.folder / "head.part.npz").replace(self.folder / "head.npz")

    def summary(self) -> list[str]:
        """What the tuning has done: the plus heads' score, the speed and the weights."""
        pairs = self.state["iterations"]
        plus = sum(POINTS[r] for p in pairs for r in p["results"])
        games = 2 * len(pairs)
        lines = [f"{len(pairs)} iterations, {games} games "
                 f"(the plus heads scored {plus:g} of {games})"]
        if self.state["seconds"]:
            lines.append(f"{games / self.state['seconds'] * 3600:.0f} games per hour of wall time")
        lines.append("w: " + ", ".join(f"{n} {v:+.3f}" for n, v, tuned
                                       in zip(MEASUREMENTS, self.w, self.tuned) if tuned))
        untuned = self.settings.get("untuned", {})
        if untuned:
            lines.append("not tuned: " + ", ".join(f"{n} ({why})" for n, why in untuned.items()))
        return lines


def measured_inputs(records: Sequence[str], style: str,
                    quiet: bool) -> tuple[list[float], list[float], dict[str, str]]:
    """Over the duel positions of ``records`` (every fourth turn): each measurement's mean
    and standard deviation (at least :data:`MIN_SPREAD`), and the measurements not to tune,
    with why: nearly constant (a spread below :data:`MIN_TUNED_SPREAD`), or equal in every
    position to one listed before it (``most`` and ``others`` in a duel: two weights on one
    input move only through their sum). Without records: means 0, spreads 1, none left out."""
    if not records:
        return [0.0] * N_MEASUREMENTS, [1.0] * N_MEASUREMENTS, {}
    from training.fit_head import positions, record_files

    x = positions(record_files(records), [2], style, every=4, show_progress=not quiet)["x"]
    if len(x) < 2:
        raise ValueError(f"--records {' '.join(records)}: no duel positions to measure")
    untuned: dict[str, str] = {}
    for i, name in enumerate(MEASUREMENTS):
        twin = next((MEASUREMENTS[j] for j in range(i) if np.array_equal(x[:, i], x[:, j])), None)
        if twin is not None:
            untuned[name] = f"equal to {twin}"
        elif x[:, i].std() < MIN_TUNED_SPREAD:
            untuned[name] = f"nearly constant: spread {x[:, i].std():.4f}"
    return ([round(float(m), 6) for m in x.mean(axis=0)],
            [round(max(MIN_SPREAD, float(s)), 4) for s in x.std(axis=0)], untuned)


def run(args: argparse.Namespace) -> Tuning:
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    settings = {"nodes": args.nodes, "c": args.c, "step": args.step,
                "without": sorted(args.without),
                "seed": args.seed, "size": list(args.size), "style": args.style,
                "max_turns": args.max_turns,
                "stability": args.stability if args.stability is not None
                else max(1, args.iterations // 10)}
    if args.positions is not None:
        from snake.arena.schedule import plan_games

        settings["positions"] = str(args.positions)
        suite = suite_positions(settings["positions"])
        try:        # the checks a pair's games would make, before any is played
            plan_games(n_players=2, games=2, seed=0, ruleset="standard", map_name="standard",
                       width=args.size[0], height=args.size[1], timeout=500, n_snakes=2,
                       max_turns=args.max_turns, positions=suite)
        except ValueError as exc:
            raise ValueError(f"--positions {args.positions}: {exc}") from None
    if (folder / "tune.json").exists():
        kept = json.loads((folder / "tune.json").read_text())["settings"]
        if args.stability is None:
            # A resumed run keeps the A it was started with, whatever --iterations says now,
            settings["stability"] = kept["stability"]
        for key in ("spreads", "means", "untuned"):     # and what it measured
            if key in kept:
                settings[key] = kept[key]
    else:
        settings["means"], settings["spreads"], settings["untuned"] = measured_inputs(
            args.records, args.style, args.quiet)
    tuning = Tuning(folder, settings)
    bar = Progress(args.iterations, "tune", unit="pair", start=min(tuning.done, args.iterations),
                   enabled=not args.quiet)
    pool = None if args.workers == 1 else multiprocessing.get_context("spawn").Pool(args.workers)
    try:
        while tuning.done < args.iterations:
            count = min(args.workers, args.iterations - tuning.done)
            tasks = tuning.tasks(tuning.done, count)
            t0 = time.monotonic()
            played = list(pool.imap_unordered(play_pair, tasks) if pool else map(play_pair, tasks))
            tuning.apply(played, time.monotonic() - t0)
            bar.update(count, r=" ".join(f"{p['r']:+g}" for p in played))
    except BaseException:
        if pool is not None:
            pool.terminate()        # a stopped run: the batch being played is lost
        raise
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    bar.close()
    return tuning


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    from snake.arena.__main__ import parse_size

    p = argparse.ArgumentParser(prog="python -m training.tune",
                                description=__doc__.split("\n")[0])
    p.add_argument("--dir", required=True, help="the tuning's directory (a rerun resumes)")
    p.add_argument("--iterations", type=int, default=1000, help="pairs of games (1000)")
    p.add_argument("--nodes", type=int, default=10_000, help="nodes a move for both heads (10000)")
    p.add_argument("--without", nargs="*", default=["opponents"], metavar="NAME",
                   help="measurements whose weights stay zero (opponents)")
    p.add_argument("--c", type=float, default=0.1,
                   help="the first perturbation of a weight, in units of 1/spread (0.1)")
    p.add_argument("--step", type=float, default=0.02,
                   help="the first move of a weight for a pair won 2-0, likewise (0.02)")
    p.add_argument("--records", nargs="+", default=[], metavar="DIR",
                   help="game records whose duel positions give each measurement's spread")
    p.add_argument("--stability", type=int,
                   help="Spall's A (a tenth of the first run's --iterations)")
    p.add_argument("--positions", metavar="FILE",
                   help="play pair k from duel k of this positions file (cycling; "
                        "python -m snake.arena.positions) instead of a new start")
    p.add_argument("--style", default="default", choices=sorted(STYLES),
                   help="the board-control style the head corrects (default)")
    p.add_argument("--size", type=parse_size, default=(11, 11), help="board size (11)")
    p.add_argument("--max-turns", type=int, default=1000,
                   help="a game still going is a draw (1000)")
    p.add_argument("--workers", type=int, default=2, help="pairs played at once (2)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    unknown = sorted(set(args.without) - set(MEASUREMENTS))
    if unknown:
        p.error(f"--without: unknown measurements {unknown} (known: {', '.join(MEASUREMENTS)})")
    for name in ("iterations", "nodes", "workers", "max_turns"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.c <= 0 or args.step <= 0:
        p.error("--c and --step must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        tuning = run(args)
    except ValueError as exc:
        print(f"tune: {exc}", file=sys.stderr)
        return 2
    for line in tuning.summary():
        print(line)
    head = Path(args.dir) / "head.npz"
    options = player_options(tuning.settings)
    width, height = tuning.settings["size"]
    print(f"wrote {head}; screen it with:\n  python -m snake.arena "
          f"\"tuned=search[value_head={head},{options}]\" "
          f"\"base=search[value_head=none,{options}]\" "
          f"--size {width}x{height} -g 100 -p 1 --seed 301")
    if tuning.settings.get("positions"):
        print(f"  (and from its positions: the same with "
              f"--positions {tuning.settings['positions']} "
              f"-g {2 * len(suite_positions(tuning.settings['positions']))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
