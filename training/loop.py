"""The learning loop: each generation plays, the next learns from it, a match decides.

    python -m training.loop --dir runs/loop --generations 5 [--games 2000] [--nodes 8000]
        [--window 3] [--hidden 128 32] [--epochs 10] [--network-weight 0.5] [--gate-games 400]
        [--gate-piece 20] [--sprt 0,30] [--gate-timeout 500] [--workers 2] [--ray ADDRESS]

Generation 0 is ``search-joint``: the compiled search with board control, whose tree
(joint replies of the two nearest opponents) is self-play's and that of ``search-net`` and
``search-blend``, so a gate measures a network against board control and nothing else (in
duels it is the default without its value head). For generation ``g = 1, 2, ...``:

1. **play**: the current best generation plays ``--games`` self-play games
   (:mod:`training.selfplay`: ``--nodes`` per move, every move scored; generation 0 with
   board control, a later one with its network in the leaves at ``--network-weight``) into
   ``DIR/gen-g/data``;
2. **train**: :mod:`training.fit` (``--hidden``, ``--epochs``) on the games of the last
   ``--window`` generations (``g`` and the ones before it, linked together into
   ``DIR/gen-g/window`` by :mod:`training.merge`; generation ``g``'s alone with
   ``--window 1``), starting from the best generation's weights when it has a network of
   the same shape, into ``DIR/gen-g/run``;
3. **export**: the quantised network ``DIR/gen-g/nnue.npz`` (:mod:`training.export`);
4. **gate**: an arena match (:mod:`snake.arena`, 11x11 standard 1v1 unless told otherwise,
   built-ins held to ``--gate-timeout`` ms as the engine holds a snake) of the compiled
   search with this network (``search-blend`` at weight 0.5, ``search-net`` at 1) against
   the best generation, in pieces of ``--gate-piece`` games with fixed seeds, scored
   together after each piece: a sequential test (``--sprt ELO0,ELO1``) stops it once
   decided, and so does a significant loss (``--futility``, on by default: the 95 % Wilson
   interval wholly below 50 %, verdict ``worse``); ``--gate-games`` caps it. Only a
   significant win is promoted: SPRT's H1, or at the cap a 95 % Wilson interval wholly
   above 50 %.

Every stage is resumable: ``DIR/loop.json`` records what is done (with each stage's wall
time), self-play resumes its finished chunks, training its checkpoint, and a match its
finished pieces (a piece cut short is played again). Stop it any time and run the same
command again. After each generation ``DIR/generations.md`` (the table: data, training,
match, Elo, promoted) and ``DIR/elo.png`` (Elo by generation, generation 0 at 0: a promoted
generation's Elo is its best's plus its match Elo) are rewritten; the best network so far is
``DIR/best.npz`` (absent while generation 0, board control alone, is the best).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

from snake.arena.stats import Score, sprt_llr, sprt_verdict

#: The arena strategy that searches with a generation's network, by network weight.
VARIANT_OF_WEIGHT = {0.5: "search-blend", 1.0: "search-net"}


class Loop:
    """The state of a loop directory (``loop.json``) and its stages."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.dir = Path(args.dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / "loop.json"
        settings = {k: getattr(args, k) for k in SETTINGS}
        if self.path.is_file():
            self.state = json.loads(self.path.read_text())
            old = self.state["settings"]
            # a directory made before an option existed takes it as given, once
            old.update({k: v for k, v in settings.items() if k not in old})
            if old != settings:
                changed = sorted(k for k in settings if old.get(k) != settings[k])
                raise SystemExit(f"{self.path}: made with other settings ({', '.join(changed)}); "
                                 "use the same options or another --dir")
        else:
            self.state = {"settings": settings, "best": 0, "generations": []}
            self.save()

    def save(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(self.state, indent=1))
        os.replace(tmp, self.path)

    # -- the generations -------------------------------------------------------------------

    def generation(self, g: int) -> dict[str, Any]:
        gens = self.state["generations"]
        while len(gens) < g:
            gens.append({"generation": len(gens) + 1, "parent": self.state["best"], "stages": {}})
        return gens[g - 1]

    def gen_dir(self, g: int) -> Path:
        return self.dir / f"gen-{g}"

    def weights_of(self, g: int) -> Path | None:
        """The network of generation ``g`` (None for generation 0: board control)."""
        return None if g == 0 else self.gen_dir(g) / "nnue.npz"

    def player_of(self, g: int) -> str:
        """Generation ``g`` as an arena player (``LABEL=STRATEGY[@FILE]``)."""
        if g == 0:
            # the tree and last chance of search-net and search-blend, with board control:
            # a gate measures the leaf value alone (self-play's tree too)
            return "gen-0=search-joint"
        variant = VARIANT_OF_WEIGHT[self.args.network_weight]
        return f"gen-{g}={variant}@{self.weights_of(g)}"

    def run(self) -> None:
        while True:
            gens = self.state["generations"]
            g = len(gens) if gens and not gens[-1]["stages"].get("gate") else len(gens) + 1
            if g > self.args.generations:
                break
            record = self.generation(g)
            self.save()
            parent = record["parent"]
            say(f"generation {g} (parent: generation {parent})")
            self.stage(record, "play", lambda: self.play(g, parent))
            self.stage(record, "train", lambda: self.train(g, parent))
            self.stage(record, "export", lambda: self.export(g))
            self.stage(record, "gate", lambda: self.gate(g, parent))
            self.report()
        self.report()

    def stage(self, record: dict, name: str, work) -> None:
        """Run stage ``name`` of a generation unless ``loop.json`` says it is done; record
        what it returns and its wall time."""
        if record["stages"].get(name):
            return
        t0 = time.monotonic()
        try:
            out = work() or {}
        finally:
            # Wall time accumulates over the attempts of the stage, interrupted ones too.
            record.setdefault("seconds", {})
            record["seconds"][name] = round(record["seconds"].get(name, 0.0)
                                            + time.monotonic() - t0, 1)
            self.save()
        record.update(out)
        record["stages"][name] = True
        self.save()

    def play(self, g: int, parent: int) -> dict:
        from training import selfplay

        a = self.args
        argv = ["--out", str(self.gen_dir(g) / "data"), "--games", str(a.games), "--nodes",
                str(a.nodes), "--seed", str(a.seed * 1000 + g), "--workers", str(a.workers),
                "--chunk", str(a.chunk), "--lambda", str(a.lam), "--holdout", str(a.holdout),
                "--quiet"]
        if parent:
            argv += ["--weights", str(self.weights_of(parent)), "--network-weight",
                     str(a.network_weight)]
        if a.ray:
            argv += ["--ray", a.ray]
        say(f"  play: python -m training.selfplay {' '.join(argv)}")
        meta = selfplay.generate(selfplay.parse_args(argv), argv)
        return {"data": {"games": meta["games"], "positions": meta["positions"],
                         "positions_per_hour": meta["positions_per_hour"],
                         "player": self.player_of(parent)}}

    def window(self, g: int) -> list[int]:
        """The generations whose games generation ``g`` learns from, oldest first."""
        return list(range(max(1, g - self.args.window + 1), g + 1))

    def training_data(self, g: int) -> Path:
        """The data directory generation ``g`` is trained on: its own self-play games, or
        with a window of several generations their finished chunks linked into one
        directory (links, not copies; made again identically on resume)."""
        from training.merge import MergeError, merge

        gens = self.window(g)
        if len(gens) == 1:
            return self.gen_dir(g) / "data"
        out = self.gen_dir(g) / "window"
        sources = [self.gen_dir(k) / "data" for k in gens]
        try:
            merge(out, sources, command=f"python -m training.merge --out {out} "
                                        + " ".join(map(str, sources)))
        except MergeError as exc:
            raise SystemExit(f"generation {g}: its window of games ({', '.join(map(str, gens))}) "
                             f"cannot be merged: {exc}") from None
        return out

    def train(self, g: int, parent: int) -> dict:
        from training import fit
        from training.shards import load_meta

        a = self.args
        run = self.gen_dir(g) / "run"
        data = self.training_data(g)
        argv = ["--data", str(data), "--run", str(run), "--hidden",
                str(a.hidden[0]), str(a.hidden[1]), "--epochs", str(a.epochs), "--threads",
                str(a.workers), "--seed", str(a.seed), "--quiet"]
        if (run / "checkpoint.pt").is_file():
            argv.append("--resume")
        elif parent and self._same_shape(parent):
            argv += ["--init", str(self.gen_dir(parent) / "run" / "best.pt")]
        say(f"  train: python -m training.fit {' '.join(argv)}")
        state = fit.fit(fit.parse_args(argv), argv)
        # (a resumed run says where it started from in its own history, not in this argv)
        init = json.loads((run / "history.json").read_text())["config"].get("init")
        meta = load_meta(data)
        return {"train": {"best_val": state["best_val"], "best_epoch": state["best_epoch"],
                          "epochs": len(state["history"]), "stopped": state["stopped"],
                          "initialised_from": parent if init else None,
                          "generations": self.window(g), "games": meta["games"],
                          "positions": meta["positions"]}}

    def _same_shape(self, parent: int) -> bool:
        history = self.gen_dir(parent) / "run" / "history.json"
        if not history.is_file():
            return False
        return json.loads(history.read_text())["config"]["hidden"] == list(self.args.hidden)

    def export(self, g: int) -> dict:
        from training import export

        out = self.weights_of(g)
        say(f"  export: {out}")
        run = self.gen_dir(g) / "run"
        # the data the network was trained on, as its run recorded it
        data = json.loads((run / "history.json").read_text())["config"]["data"]
        manifest = export.export(run, data, out,
                                 command=f"python -m training.loop --dir {self.dir} "
                                         f"(generation {g})",
                                 threads=self.args.workers,
                                 note=f"generation {g} of {self.dir}")
        return {"export": {"bytes": out.stat().st_size,
                           "validation_loss": manifest["validation_loss"]}}

    def gate(self, g: int, parent: int) -> dict:
        """The match of generation ``g`` against ``parent``, played in pieces (resumable),
        stopped by SPRT or the cap; returns the record's ``match`` and ``promoted``."""
        from snake.arena.__main__ import main as arena

        a = self.args
        match_dir = self.gen_dir(g) / "match"
        piece = 0
        while True:
            score = self.match_score(match_dir)
            if (decide(score, a.sprt, a.alpha, a.beta, a.futility)[0] != "undecided"
                    or score.games >= a.gate_games):
                break
            out = match_dir / f"piece-{piece:03d}"
            if not (out / "results.json").is_file():
                # A piece is played into a ".part" folder and takes its name only once all
                # its games are in: one cut short (the arena writes the results of the games
                # it finished when interrupted) is played again from its seed, not counted.
                part = match_dir / f"piece-{piece:03d}.part"
                for stale in (out, part):
                    if stale.exists():
                        shutil.rmtree(stale)
                games = min(a.gate_piece, a.gate_games - score.games)
                argv = [self.player_of(g), self.player_of(parent), "--games", str(games),
                        "--size", str(a.gate_size), "--snakes", str(a.gate_snakes),
                        "--timeout", str(a.gate_timeout), "--builtin-timeout",
                        "--parallel", str(a.workers),
                        "--seed", str(a.seed * 100_000 + g * 1000 + piece),
                        "--max-turns", str(a.gate_max_turns), "-q", "-o", str(part)]
                say(f"  gate: python -m snake.arena {' '.join(argv)}")
                code = arena(argv)
                if code != 0:
                    raise SystemExit(f"generation {g}: the arena match "
                                     f"{'was interrupted' if code == 130 else 'failed'} "
                                     f"(piece {piece}; it is played again on resume)")
                if self.piece_score(part).games != games:
                    raise SystemExit(f"generation {g}: piece {piece} has not all its "
                                     f"{games} games (played again on resume)")
                os.replace(part, out)
            piece += 1
        lo, hi = score.interval
        llr = sprt_llr(score, *a.sprt)
        verdict, promoted = decide(score, a.sprt, a.alpha, a.beta, a.futility)
        elo_lo, elo_hi = score.elo_interval
        match = {"games": score.games, "wins": score.wins, "draws": score.draws,
                 "losses": score.losses, "score": score.fraction, "score_ci95": [lo, hi],
                 "elo": score.elo, "elo_ci95": [elo_lo, elo_hi], "sprt": list(a.sprt),
                 "llr": llr, "verdict": verdict, "against": parent}
        say(f"  gate: {score.wins}-{score.draws}-{score.losses}, score {score.fraction:.3f} "
            f"[{lo:.3f}, {hi:.3f}], verdict {verdict}: "
            f"{'promoted' if promoted else 'not promoted'}")
        if promoted:    # saved with the stage; a crash before that replays the (finished) match
            shutil.copyfile(self.weights_of(g), self.dir / "best.npz.tmp")
            os.replace(self.dir / "best.npz.tmp", self.dir / "best.npz")
            self.state["best"] = g
        return {"match": match, "promoted": promoted}

    @staticmethod
    def piece_score(piece: Path) -> Score:
        """The first player's W/D/L in one piece (none when it has no results)."""
        results = piece / "results.json"
        if not results.is_file():
            return Score(0, 0, 0)
        first = json.loads(results.read_text())["players"][0]
        return Score(first["wins"], first["draws"], first["losses"])

    @classmethod
    def match_score(cls, match_dir: Path) -> Score:
        """The first player's W/D/L over the finished pieces of a match (``piece-NNN``;
        a ``.part`` folder is a piece not finished)."""
        wins = draws = losses = 0
        for piece in sorted(p for p in match_dir.glob("piece-*") if PIECE.fullmatch(p.name)):
            score = cls.piece_score(piece)
            wins, draws, losses = wins + score.wins, draws + score.draws, losses + score.losses
        return Score(wins, draws, losses)

    # -- the report ---------------------------------------------------------------------------

    def elo_by_generation(self) -> dict[int, float]:
        """Generation 0 at 0; a gated generation at its parent's Elo plus its match Elo
        (finite: a match won or lost outright counts as ±800)."""
        elo = {0: 0.0}
        for record in self.state["generations"]:
            match = record.get("match")
            if match and record["parent"] in elo:
                diff = (match["elo"] if math.isfinite(match["elo"])
                        else math.copysign(800.0, match["score"] - 0.5))
                elo[record["generation"]] = elo[record["parent"]] + diff
        return elo

    def report(self) -> None:
        from training.plot import plot_curves

        elo = self.elo_by_generation()
        lines = ["| gen | parent | self-play games | positions | play s | trained on "
                 "| train (val loss, epochs) | train s | export s | match W-D-L | score [95 %] "
                 "| Elo [95 %] | SPRT | promoted | gate s |",
                 "|---:|---:|---:|---:|---:|---|---|---:|---:|---|---|---|---|---|---:|"]
        for r in self.state["generations"]:
            data, train, match, secs = (r.get("data", {}), r.get("train", {}), r.get("match"),
                                        r.get("seconds", {}))
            if match:
                lo, hi = match["score_ci95"]
                e_lo, e_hi = match["elo_ci95"]
                m = (f"{match['wins']}-{match['draws']}-{match['losses']} | "
                     f"{100 * match['score']:.1f} % "
                     f"[{100 * lo:.1f}, {100 * hi:.1f}] | {match['elo'] + 0.0:+.0f} "
                     f"[{e_lo + 0.0:+.0f}, {e_hi + 0.0:+.0f}] | "
                     f"{match['verdict']} (LLR {match['llr']:.2f}) | "
                     f"{'yes' if r.get('promoted') else 'no'}")
            else:
                m = "… | | | | (in progress)"
            t = (f"{train['best_val']:.4f}, {train['epochs']}" if train else "")
            on = _trained_on(train)
            lines.append(f"| {r['generation']} | {r['parent']} | {data.get('games', '')} | "
                         f"{data.get('positions', '')} | {secs.get('play', '')} | {on} | {t} | "
                         f"{secs.get('train', '')} | {secs.get('export', '')} | {m} | "
                         f"{secs.get('gate', '')} |")
        best = self.state["best"]
        text = (f"# Learning loop `{self.dir}`\n\n"
                f"Settings: `{json.dumps(self.state['settings'])}`\n\n"
                + "\n".join(lines) + f"\n\nBest: generation {best}"
                + (" (board control alone)" if best == 0 else f" (`{self.weights_of(best)}`)")
                + "\n")
        (self.dir / "generations.md").write_text(text)
        gens = sorted(elo)
        chain = [0] + [r["generation"] for r in self.state["generations"] if r.get("promoted")]
        plot_curves(self.dir / "elo.png", {"gated": (gens, [elo[g] for g in gens]),
                                           "best": (chain, [elo[g] for g in chain])},
                    title="elo by generation", x_label="generation")


def _trained_on(train: dict) -> str:
    """The table's "trained on" cell: the generations' games a training run read."""
    if not train:
        return ""
    gens = train.get("generations")
    if not gens:    # recorded before --window: its own generation's games
        return "own games"
    span = f"gen {gens[0]}" if len(gens) == 1 else f"gens {gens[0]}–{gens[-1]}"
    return f"{span}: {train['games']:,} games, {train['positions']:,} positions"


def decide(score: Score, sprt: list[float], alpha: float, beta: float,
           futility: bool = False) -> tuple[str, bool]:
    """The gate's verdict on a match score (``H1``, ``H0``, ``worse`` or ``undecided``) and
    whether the new generation is promoted: on H1, or undecided with its 95 % interval above
    50 %. With ``futility``, a score whose 95 % interval lies wholly below 50 % is ``worse``
    (a significant loss) and ends the match: a candidate that far behind is not promoted,
    and SPRT between two close hypotheses would take dozens of games more to say H0."""
    verdict = sprt_verdict(score, *sprt, alpha, beta)
    if verdict == "undecided" and futility and score.games > 0 and score.interval[1] < 0.5:
        verdict = "worse"
    return verdict, verdict == "H1" or (verdict == "undecided" and score.games > 0
                                         and score.interval[0] > 0.5)


#: A finished gate piece's folder (``piece-NNN``, more digits past 999; not ``.part``).
PIECE = re.compile(r"piece-\d{3,}")

#: Options that must stay the same over a loop directory's life.
SETTINGS = ("games", "nodes", "hidden", "epochs", "lam", "network_weight", "gate_games",
            "gate_piece", "sprt", "alpha", "beta", "gate_timeout", "gate_size", "gate_snakes",
            "gate_max_turns", "seed", "chunk", "holdout", "futility", "window")


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from snake.arena.__main__ import _elo_pair

    ap = argparse.ArgumentParser(prog="python -m training.loop", description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True, help="the loop's directory (created; a rerun resumes)")
    ap.add_argument("--generations", type=int, default=3, help="stop after this generation (3)")
    ap.add_argument("--games", type=int, default=2000, help="self-play games per generation (2000)")
    ap.add_argument("--nodes", type=int, default=8000,
                    help="self-play search nodes per move (8000)")
    ap.add_argument("--lambda", dest="lam", type=float, default=0.5,
                    help="result's share of the target")
    ap.add_argument("--chunk", type=int, default=10, help="self-play games per chunk (10)")
    ap.add_argument("--holdout", type=float, default=0.05,
                    help="self-play games held out for validation, and as many for test (0.05)")
    ap.add_argument("--window", type=int, default=3,
                    help="generations whose games each one learns from: it and the ones before (3)")
    ap.add_argument("--hidden", type=int, nargs=2, default=[128, 32], metavar=("H1", "H2"))
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--network-weight", type=float, default=0.5, choices=sorted(VARIANT_OF_WEIGHT),
                    help="the network's share of a leaf's value: 0.5 (search-blend) "
                         "or 1 (search-net)")
    ap.add_argument("--gate-games", type=int, default=400, help="match games at most (400)")
    ap.add_argument("--gate-piece", type=int, default=20, help="games per match piece (20)")
    ap.add_argument("--sprt", type=_elo_pair, default=(0.0, 30.0), metavar="ELO0,ELO1")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--beta", type=float, default=0.05)
    ap.add_argument("--futility", action=argparse.BooleanOptionalAction, default=True,
                    help="stop a match whose 95%% interval lies wholly below 50%% (on)")
    ap.add_argument("--gate-timeout", type=int, default=500, help="ms per move in the match (500)")
    ap.add_argument("--gate-size", type=int, default=11)
    ap.add_argument("--gate-snakes", type=int, default=2)
    ap.add_argument("--gate-max-turns", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2,
                    help="processes (self-play, match) and threads (training)")
    ap.add_argument("--ray", metavar="ADDRESS", help="self-play on a Ray cluster")
    args = ap.parse_args(argv)
    args.hidden = list(args.hidden)
    args.sprt = list(args.sprt)
    if min(args.generations, args.games, args.nodes, args.epochs, args.gate_games, args.window,
           args.gate_piece, args.gate_timeout, args.gate_snakes, args.workers, args.chunk) < 1:
        ap.error("counts and sizes must be positive")
    # (a loop begun before this rule goes on with the pieces it began with)
    if (args.gate_piece % args.gate_snakes or args.gate_games % args.gate_snakes) \
            and not (Path(args.dir) / "loop.json").is_file():
        # the arena plays a start once per seat in a row: a piece must not split the block
        ap.error(f"--gate-piece and --gate-games must be multiples of --gate-snakes "
                 f"({args.gate_snakes}), so that every start is played from every seat")
    return args


def _stop(signum, frame) -> None:
    # SIGTERM (kill, a session's end) unwinds like Ctrl-C, so the stage being run records
    # its wall time and the arena ends its games, instead of the process just vanishing.
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> None:
    loop = Loop(parse_args(argv))
    signal.signal(signal.SIGTERM, _stop)
    try:
        loop.run()
    except KeyboardInterrupt:
        raise SystemExit(f"{loop.dir}: interrupted; the same command resumes it") from None
    say(f"best: generation {loop.state['best']}; table {loop.dir / 'generations.md'}, "
        f"plot {loop.dir / 'elo.png'}")


if __name__ == "__main__":
    main()
