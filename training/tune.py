"""Tune a value head's weights by the results of games played with them (SPSA).

    python -m training.tune --dir runs/tune --iterations 1000 [--nodes 10000]
        [--records DIR...] [--positions FILE] [--without NAME...] [--c 0.1] [--step 0.02]
        [--workers 2 | --ray ADDRESS] [--seed 1] [--tune head | --tune style --style NAME]

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
batch, and ``DIR/tune.png`` plots the weights and the pairs' results by iteration (the
weights as the iterations moved them, recomputed from ``tune.json``, each times its
input's spread; ``r`` averaged over the last 20 pairs and over all: SPSA's signal, not a
strength, which the screen measures).
Stopping loses the batch being played; the same command resumes it (a directory made
with other settings is refused; ``--iterations`` may grow). The result is screened as any
head is: an arena match against ``search`` without a head, ``search[value_head=none]`` (the
command is printed at the end).

**What is tuned** (``--tune``). ``head`` (the default): the value head above, over
:data:`~snake.evaluation.control.MEASUREMENTS` (the duel head, ``weights/value-duel.npz``,
was made so). ``style``: the weights of ``--style``'s board control
(:class:`~snake.evaluation.control.Style`: control, length, cramped, food, food_health, hunt,
hunger), from the style's own, both sides searching with ``value_head=none`` (board control
alone: a head would correct the style's value and hide the weights' effect); weight ``i`` is
perturbed by ``c_k * |v_i|`` and moved by ``step_k * |v_i|``, ``v_i`` its value in the style
(each term moves in proportion to its size: ``food_health`` is in points of health, the
others near 0.5), and a term the style does not play (0 in it: ``hunt`` and ``hunger`` in
``default``) is not tuned. The result is ``DIR/style.json``, which a search plays with
``search[style=DIR/style.json]`` (:func:`~snake.evaluation.control.resolve_style`); a style
that wins its screen is then copied into :data:`~snake.evaluation.control.STYLES`. What is
not tunable here: anything outside those two weight sets (the search's own settings: its
nodes, replies, opponents; the network); and since every pair is a duel, the weights of
games with three snakes or more (the default's ``multi_style``, ``hungry``, whose ``hunger``
matters there): a style tuned here is tuned as a duel's style. A value head and a style are
tuned one at a time (the other held as it is).

**On a cluster** (``--ray ADDRESS``; ``local`` starts a one-machine Ray with ``--workers``
CPUs): each pair of a batch is a Ray task on one core of any machine of the cluster
(:mod:`snake.arena.cluster`), so make ``--workers`` (pairs a batch, from one ``w``) the
cluster's cores. A pair's task writes its two trial heads (or styles) on its own machine and
sends back its results; the driver keeps ``DIR`` and moves ``w``, so the machines need not
share a disk, and the same command resumes a run whichever way it was played.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from snake.evaluation.control import (
    MEASUREMENTS,
    N_MEASUREMENTS,
    SHIPPED_STYLES,
    STYLES,
    Style,
    save_style,
)
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
#: What a tuning may tune (``--tune``; module docstring).
TARGETS = ("head", "style")
#: The pairs' results are plotted as the mean ``r`` over this many last pairs.
PLOT_WINDOW = 20


def target(settings: dict[str, Any]) -> str:
    """What a tuning tunes (a directory from before ``--tune`` tuned a head)."""
    return settings.get("target", "head")


def weight_names(settings: dict[str, Any]) -> tuple[str, ...]:
    """The names of the weights a tuning moves, in the order of ``w``."""
    return MEASUREMENTS if target(settings) == "head" else Style._fields


def first_weights(settings: dict[str, Any]) -> list[float]:
    """``w`` before the first iteration: a head of zeros (the style itself), or the
    style's own weights."""
    if target(settings) == "head":
        return [0.0] * N_MEASUREMENTS
    return [float(v) for v in STYLES[settings["style"]]]


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


def play_pair(task: tuple, shared: Any = None) -> dict[str, Any]:
    """Play iteration ``k``'s pair of games (the plus weights against the minus weights,
    sides swapped) and return its ``r`` (module docstring), results and turns. The trial
    heads (or styles) are written in a folder of this process's own, removed after, so
    that it plays alike on any machine (``shared``: unused, for
    :func:`snake.arena.cluster.ray_map`)."""
    from snake.arena.match import play_game
    from snake.arena.players import parse_players
    from snake.arena.schedule import plan_games

    k, w_plus, w_minus, settings, position = task
    width, height = settings["size"]
    specs = plan_games(n_players=2, games=2, seed=settings["seed"] * 1_000_003 + k,
                       ruleset="standard", map_name="standard", width=width, height=height,
                       timeout=500, n_snakes=2, max_turns=settings["max_turns"],
                       positions=[position] if position is not None else None)
    t0 = time.monotonic()
    results, turns, r = [], [], 0.0
    with tempfile.TemporaryDirectory(prefix="tune-") as work:
        players = parse_players(trial_players(settings, Path(work), w_plus, w_minus))
        for spec in specs:
            game = play_game(spec, players)
            results.append(game.results[0])
            turns.append(game.turns)
            r += POINTS[game.results[0]] - POINTS[game.results[1]]
    return {"k": k, "r": r, "results": results, "turns": turns,
            "seconds": round(time.monotonic() - t0, 2)}


def trial_players(settings: dict[str, Any], work: Path, w_plus: Sequence[float],
                  w_minus: Sequence[float]) -> list[str]:
    """The arena players ``plus`` and ``minus`` of a pair: the search with each side's
    weights, written into ``work`` as a value head file (``--tune head``) or a style file
    (``--tune style``, with no head)."""
    texts = []
    for side, w in (("plus", w_plus), ("minus", w_minus)):
        if target(settings) == "head":
            path = work / f"{side}.npz"
            linear_head(np.array(w), settings["style"], means=settings.get("means"),
                        size=settings["size"]).save(path)
            texts.append(f"{side}=search[value_head={path},{player_options(settings)}]")
        else:
            path = work / f"{side}.json"
            save_style(path, Style(*w))
            texts.append(f"{side}=search[value_head=none,{player_options(settings, str(path))}]")
    return texts


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


def player_options(settings: dict[str, Any], style: str | None = None) -> str:
    """The search's options for the weights of this tuning (``style``: another style than
    the tuning's, a style file): the node limit alone ends a move (the clock is set far
    out), so the games do not depend on the machine's load."""
    return f"max_nodes={settings['nodes']},style={style or settings['style']},think_ms=600000"


class Tuning:
    """A tuning directory: its settings, ``w`` and the iterations played (``tune.json``)."""

    def __init__(self, folder: Path, settings: dict[str, Any]) -> None:
        self.folder = folder
        self.path = folder / "tune.json"
        # what the weights weigh: a head's measurements, a style's terms
        names = "measurements" if target(settings) == "head" else "terms"
        if self.path.exists():
            kept = json.loads(self.path.read_text())
            if kept["settings"] != settings:
                raise ValueError(f"{folder} holds a tuning made with other settings "
                                 f"({kept['settings']}); use another --dir")
            self.state = kept
        else:
            self.state = {"settings": settings, names: list(weight_names(settings)),
                          "w": first_weights(settings), "iterations": [], "seconds": 0.0}
        if self.state[names] != list(weight_names(settings)):
            raise ValueError(f"{folder} was tuned on {names} {self.state[names]}, "
                             f"the core has {list(weight_names(settings))}")

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
        return np.array([name not in untuned for name in weight_names(self.settings)])

    @property
    def units(self) -> np.ndarray:
        """Each weight's unit of perturbation and step: ``1 / s_i`` of a head, ``|v_i|``
        of a style (module docstring)."""
        if target(self.settings) == "style":
            return np.array(self.settings["scales"], dtype=np.float64)
        return 1.0 / np.array(self.settings["spreads"], dtype=np.float64)

    def tasks(self, first: int, count: int) -> list[tuple]:
        """The pairs of iterations ``first``.. ``first + count - 1``, all from today's ``w``
        (each pair records that it was played from ``w`` after ``first`` iterations)."""
        suite = (suite_positions(self.settings["positions"]) if self.settings.get("positions")
                 else None)
        out = []
        for k in range(first, first + count):
            c, _ = gains(self.settings, k)
            c = c * self.units
            d = signs(self.settings["seed"], k, self.tuned)
            out.append((k, (self.w + c * d).tolist(), (self.w - c * d).tolist(), self.settings,
                        suite[k % len(suite)] if suite else None))
        return out

    def apply(self, played: list[dict[str, Any]], seconds: float) -> None:
        """Move ``w`` by a batch of played pairs and save."""
        w = self.w
        first = self.done
        for pair in sorted(played, key=lambda p: p["k"]):
            pair.setdefault("from", first)      # the w it was played from
            w += self.move(pair)
            self.state["iterations"].append(pair)
        self.state["w"] = w.tolist()
        self.state["seconds"] = round(self.state["seconds"] + seconds, 1)
        self.save()

    def move(self, pair: dict[str, Any]) -> np.ndarray:
        """How a played pair moves ``w``: ``step_k * unit * (r / 2) * D_k``."""
        _, step = gains(self.settings, pair["k"])
        return (step * self.units * pair["r"] / 2.0
                * signs(self.settings["seed"], pair["k"], self.tuned))

    def trajectory(self) -> np.ndarray:
        """``w`` before the first iteration and after each (``[done + 1, weights]``), as
        :meth:`apply` moved it."""
        w = np.array(first_weights(self.settings), dtype=np.float64)
        out = [w.copy()]
        for pair in self.state["iterations"]:
            w += self.move(pair)
            out.append(w.copy())
        return np.array(out)

    @property
    def result_path(self) -> Path:
        """The file the tuned weights are written to (a value head, or a style)."""
        return self.folder / ("head.npz" if target(self.settings) == "head" else "style.json")

    def head(self) -> ValueHead:
        games = 2 * self.done
        return linear_head(self.w, self.settings["style"], {
            "tuned_by": "SPSA (training.tune)", "iterations": self.done, "games": games,
            "settings": self.settings}, means=self.settings.get("means"),
            size=self.settings["size"])

    def save(self) -> None:
        """Write ``tune.json``, the tuned weights (:attr:`result_path`) and the plot, each
        under a temporary name first, so a stopped run never leaves half a file."""
        temporary = self.path.with_suffix(".part")
        temporary.write_text(json.dumps(self.state, indent=1))
        temporary.replace(self.path)
        part = self.result_path.with_name("part-" + self.result_path.name)
        if target(self.settings) == "head":
            self.head().save(part)
        else:
            save_style(part, Style(*self.w), {
                "tuned_by": "SPSA (training.tune --tune style)", "iterations": self.done,
                "games": 2 * self.done, "settings": self.settings})
        part.replace(self.result_path)
        self.plot(self.folder / "part-tune.png")
        (self.folder / "part-tune.png").replace(self.folder / "tune.png")

    def plot(self, path: Path) -> None:
        """The weights and the pairs' results by iteration, as a PNG (module docstring):
        the tuned weights six to a panel, each in its unit (a head's times its input's
        spread, a style's over its value in the style: on one scale, which the weights
        themselves are not), then ``r``."""
        from training.plot import plot_panels

        ks = list(range(self.done + 1))
        w = self.trajectory() / np.where(self.units > 0, self.units, 1.0)   # (0: untuned)
        names = [(i, n) for i, n in enumerate(weight_names(self.settings)) if self.tuned[i]]
        title = ("weights times their input's spread" if target(self.settings) == "head"
                 else "weights over their value in the style")
        panels = [({n: (ks, w[:, i].tolist()) for i, n in names[j:j + 6]},
                   title if j == 0 else "", "iteration") for j in range(0, len(names), 6)]
        r = np.array([p["r"] for p in self.state["iterations"]], dtype=np.float64)
        last = [float(r[max(0, i - PLOT_WINDOW):i].mean()) for i in range(1, len(r) + 1)]
        overall = (np.cumsum(r) / np.arange(1, len(r) + 1)).tolist()
        panels.append(({f"r last {PLOT_WINDOW}": (ks[1:], last), "r all": (ks[1:], overall)},
                       "pairs: plus points minus minus points", "iteration"))
        plot_panels(path, panels, height=300)

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
                                       in zip(weight_names(self.settings), self.w, self.tuned)
                                       if tuned))
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
    if args.tune != "head":       # (a head's settings stay as they were before --tune)
        settings["target"] = args.tune
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
        for key in ("spreads", "means", "untuned", "scales"):     # and what it measured
            if key in kept:
                settings[key] = kept[key]
    elif args.tune == "head":
        settings["means"], settings["spreads"], settings["untuned"] = measured_inputs(
            args.records, args.style, args.quiet)
    else:
        settings["scales"] = [abs(v) for v in first_weights(settings)]
        settings["untuned"] = {n: "0 in the style: a term it does not play"
                               for n, v in zip(Style._fields, first_weights(settings)) if v == 0}
    tuning = Tuning(folder, settings)
    bar = Progress(args.iterations, "tune", unit="pair", start=min(tuning.done, args.iterations),
                   enabled=not args.quiet)
    with pair_player(args.workers, args.ray) as play:
        while tuning.done < args.iterations:
            count = min(args.workers, args.iterations - tuning.done)
            tasks = tuning.tasks(tuning.done, count)
            t0 = time.monotonic()
            played = play(tasks)
            tuning.apply(played, time.monotonic() - t0)
            bar.update(count, r=" ".join(f"{p['r']:+g}" for p in played))
    bar.close()
    return tuning


@contextlib.contextmanager
def pair_player(workers: int, ray: str | None) -> Iterator[Callable[[list], list]]:
    """A function that plays a batch of pairs (:func:`play_pair`) and returns their
    results: in this process (one worker), in ``workers`` processes, or as tasks on the
    Ray cluster at ``ray`` (``local``: one started here with ``workers`` CPUs), connected
    once for all the batches. A stopped run loses the batch being played (its processes
    are stopped, its tasks cancelled)."""
    if ray is not None:
        from snake.arena.cluster import ray_map, session

        with session(ray, workers):
            yield lambda tasks: list(ray_map(play_pair, tasks))
    elif workers == 1:
        yield lambda tasks: list(map(play_pair, tasks))
    else:
        pool = multiprocessing.get_context("spawn").Pool(workers)
        try:
            yield lambda tasks: list(pool.imap_unordered(play_pair, tasks))
        except BaseException:
            pool.terminate()
            raise
        finally:
            pool.close()
            pool.join()


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    from snake.arena.__main__ import parse_size

    p = argparse.ArgumentParser(prog="python -m training.tune",
                                description=__doc__.split("\n")[0])
    p.add_argument("--dir", required=True, help="the tuning's directory (a rerun resumes)")
    p.add_argument("--iterations", type=int, default=1000, help="pairs of games (1000)")
    p.add_argument("--nodes", type=int, default=10_000, help="nodes a move for both heads (10000)")
    p.add_argument("--tune", choices=TARGETS, default="head",
                   help="what to tune: a value head over the measurements (head), or the "
                        "weights of --style's board control (style)")
    p.add_argument("--without", nargs="*", metavar="NAME",
                   help="weights held as they are: measurements (head: opponents) or style "
                        "terms (style: none but those 0 in the style)")
    p.add_argument("--c", type=float, default=0.1,
                   help="the first perturbation of a weight, in units of 1/spread (head) or "
                        "of its value (style) (0.1)")
    p.add_argument("--step", type=float, default=0.02,
                   help="the first move of a weight for a pair won 2-0, likewise (0.02)")
    p.add_argument("--records", nargs="+", default=[], metavar="DIR",
                   help="game records whose duel positions give each measurement's spread")
    p.add_argument("--stability", type=int,
                   help="Spall's A (a tenth of the first run's --iterations)")
    p.add_argument("--positions", metavar="FILE",
                   help="play pair k from duel k of this positions file (cycling; "
                        "python -m snake.arena.positions) instead of a new start")
    p.add_argument("--style", default="default", choices=sorted(SHIPPED_STYLES),
                   help="the board-control style the head corrects, or (--tune style) whose "
                        "weights are tuned (default)")
    p.add_argument("--size", type=parse_size, default=(11, 11), help="board size (11)")
    p.add_argument("--max-turns", type=int, default=1000,
                   help="a game still going is a draw (1000)")
    p.add_argument("--workers", type=int, default=2,
                   help="pairs played at once, from one w (2): processes here, or with --ray "
                        "tasks on the cluster (make it the cluster's cores)")
    p.add_argument("--ray", metavar="ADDRESS",
                   help="play the pairs on a Ray cluster: HOST:PORT of its head, auto, or "
                        "local (start one here with --workers CPUs)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    names = MEASUREMENTS if args.tune == "head" else Style._fields
    if args.without is None:
        args.without = ["opponents"] if args.tune == "head" else []
    unknown = sorted(set(args.without) - set(names))
    if unknown:
        what = "measurements" if args.tune == "head" else "style terms"
        p.error(f"--without: unknown {what} {unknown} (known: {', '.join(names)})")
    if args.tune == "style" and args.records:
        p.error("--records measures a head's inputs; a style's weights move in units of "
                "their own values")
    if args.ray is not None:
        from snake.arena.cluster import require_ray
        try:
            require_ray()
        except ValueError as exc:
            p.error(str(exc))
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
    result = tuning.result_path
    options = player_options(tuning.settings)
    if target(tuning.settings) == "head":
        tuned = f"search[value_head={result},{options}]"
    else:
        tuned = f"search[value_head=none,{player_options(tuning.settings, str(result))}]"
    width, height = tuning.settings["size"]
    print(f"wrote {result} and {Path(args.dir) / 'tune.png'}; screen it with:\n"
          f"  python -m snake.arena \"tuned={tuned}\" "
          f"\"base=search[value_head=none,{options}]\" "
          f"--size {width}x{height} -g 100 -p 1 --seed 301")
    if tuning.settings.get("positions"):
        print(f"  (and from its positions: the same with "
              f"--positions {tuning.settings['positions']} "
              f"-g {2 * len(suite_positions(tuning.settings['positions']))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
