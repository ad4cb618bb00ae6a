"""``python -m snake.arena``: play many games between players and report the results.

    python -m snake.arena floodfill random --games 200 --size 11 --parallel 2
    python -m snake.arena seed floodfill --snakes 4 --ruleset royale --output-dir runs/r1
    python -m snake.arena mine=http://127.0.0.1:8000 floodfill --timeout 500

See docs/arena.md for every option, the replay format and how results are counted.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Sequence

from snake.arena.match import GameResult, play_game
from snake.arena.players import PlayerError, PlayerSpec, fetch_metadata, parse_players
from snake.arena.positions import load_positions
from snake.arena.report import Totals, format_report, game_entry
from snake.arena.schedule import GameSpec, plan_games
from snake.arena.stats import sprt_bounds, sprt_llr, sprt_verdict
from snake.board import RULESETS, Settings
from snake.progress import Progress
from snake.records.replay import GAMES_LOG
from snake.rules.start import check_ruleset_on_map
from snake.settings import read as read_setting

SIZES = {"small": 7, "medium": 11, "large": 19}
NO_NETWORK = ("random", "floodfill")

# What a worker process needs besides its GameSpec (set by _init_worker).
_WORKER: dict[str, Any] = {}


def parse_size(text: str) -> tuple[int, int]:
    text = text.strip().lower()
    if text in SIZES:
        return SIZES[text], SIZES[text]
    try:
        if "x" in text:
            w, h = text.split("x", 1)
            return int(w), int(h)
        return int(text), int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"bad size {text!r}: use 11, 11x11 or small/medium/large") from None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m snake.arena",
        description="Play games between built-in strategies and HTTP Battlesnakes; report "
                    "wins, draws, losses, score and Elo with 95%% intervals.")
    p.add_argument("players", nargs="+", metavar="PLAYER",
                   help="a strategy name (random, floodfill, seed, ...) or an http:// URL, "
                        "optionally LABEL=...; the first player is the one reported on")
    p.add_argument("-g", "--games", type=int, default=100, help="games to play (100)")
    p.add_argument("-r", "--ruleset", default="standard", choices=RULESETS)
    p.add_argument("-m", "--map", default="standard", help="game map (standard)")
    p.add_argument("-s", "--size", type=parse_size, default=(11, 11),
                   help="board size: 11, 11x11, small, medium or large (11)")
    p.add_argument("-W", "--width", type=int, help="board width (overrides --size)")
    p.add_argument("-H", "--height", type=int, help="board height (overrides --size)")
    p.add_argument("-n", "--snakes", type=int,
                   help="snakes per game (2; 1 in solo; 4 in squad)")
    p.add_argument("--seats", help="explicit player of every seat, comma separated labels "
                                   "or 1-based player numbers, e.g. seed,random,random,random")
    p.add_argument("--seed", type=int, default=0, help="seed of the whole run (0)")
    p.add_argument("-t", "--timeout", type=int, default=500,
                   help="game.timeout in ms: HTTP answers later than this are missed (500)")
    p.add_argument("-p", "--parallel", type=int, default=os.cpu_count() or 1,
                   help="games played at once, in worker processes (number of cores)")
    p.add_argument("-o", "--output-dir", type=Path,
                   help="write every game there as game-NNNNN.jsonl (CLI --output format) "
                        "and a line in games.jsonl as it ends, and the totals as results.json")
    p.add_argument("--max-turns", type=int, default=2000,
                   help="stop a game at this turn, survivors drawing (2000; 0: never)")
    p.add_argument("--solo-target", type=int, default=100,
                   help="solo: moves a snake must make to count as a win (100)")
    p.add_argument("--builtin-timeout", action="store_true",
                   help="hold built-in strategies to --timeout too: a later answer is missed, "
                        "as an HTTP snake's would be (off by default: runs stay reproducible)")
    p.add_argument("--until-decided", action="store_true",
                   help="stop a game as soon as every player's result is settled (the "
                        "living snakes all belong to one player): with four snakes, the rest "
                        "of a game after the first player is out costs nothing")
    p.add_argument("--positions", type=Path, metavar="FILE",
                   help="start the games from these positions (request bodies, one per line: "
                        "python -m snake.arena.positions) instead of new set-ups, each in a "
                        "block of games with the seats rotating")
    p.add_argument("--weights", type=Path,
                   help="network for built-in NNUE strategies (default weights/nnue.npz)")
    p.add_argument("--food-spawn-chance", type=int, default=15)
    p.add_argument("--minimum-food", type=int, default=1)
    p.add_argument("--hazard-damage", type=int, default=14)
    p.add_argument("--shrink-every", type=int, default=25)
    p.add_argument("--sprt", metavar="ELO0,ELO1", type=_elo_pair,
                   help="stop as soon as a sequential test decides whether the first player is "
                        "at most ELO0 or at least ELO1 Elo stronger (--games is then a cap)")
    p.add_argument("--alpha", type=float, default=0.05, help="SPRT: false H1 rate (0.05)")
    p.add_argument("--beta", type=float, default=0.05, help="SPRT: false H0 rate (0.05)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    return p


def _elo_pair(text: str) -> tuple[float, float]:
    try:
        low, high = (float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected two Elo differences, e.g. 0,30; got {text!r}") from None
    if not low < high:
        raise argparse.ArgumentTypeError("ELO0 must be below ELO1")
    return low, high


def parse_seats(text: str, players: Sequence[PlayerSpec]) -> list[int]:
    seats = []
    labels = {p.label: i for i, p in enumerate(players)}
    for item in (part.strip() for part in text.split(",")):
        if item in labels:
            seats.append(labels[item])
        elif item.isdigit() and 1 <= int(item) <= len(players):
            seats.append(int(item) - 1)
        else:
            raise PlayerError(f"--seats: {item!r} is not a player label nor a number "
                              f"1..{len(players)}")
    return seats


def load_network(weights: Path | None, players: Sequence[PlayerSpec]) -> Any:
    """The network given to built-in strategies: ``--weights``, else the shipped default,
    loaded only when some built-in player may use one (not random/floodfill alone)."""
    wanted = weights is not None or any(
        not p.is_http and p.target not in NO_NETWORK for p in players)
    if not wanted:
        return None
    from nnue.network import Network, load_default
    return Network.load(weights) if weights is not None else load_default()


def load_player_networks(players: Sequence[PlayerSpec]) -> dict[str, Any]:
    """The networks of players with a file of their own (``STRATEGY@FILE``), by file."""
    from nnue.network import Network
    return {p.weights: Network.load(p.weights) for p in players if p.weights}


def _init_worker(players, settings, replay_dir, weights, network_loaded) -> None:
    _WORKER.update(players=players, settings=settings, replay_dir=replay_dir)
    if "network" not in _WORKER:   # spawned (not forked) workers load their own copy
        _WORKER["network"] = load_network(weights, players) if network_loaded else None
    if "networks" not in _WORKER:
        _WORKER["networks"] = load_player_networks(players)


def _play(spec: GameSpec) -> GameResult:
    return play_game(spec, _WORKER["players"], network=_WORKER["network"],
                     settings=_WORKER["settings"], replay_dir=_WORKER["replay_dir"],
                     networks=_WORKER["networks"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return run(args)
    except (PlayerError, ValueError, OSError) as exc:
        print(f"arena: error: {exc}", file=sys.stderr)
        return 2


def run(args: argparse.Namespace) -> int:
    players = parse_players(args.players)
    for flag, value, least in (("--width", args.width, 1), ("--height", args.height, 1),
                               ("--snakes", args.snakes, 1), ("--max-turns", args.max_turns, 1),
                               ("--solo-target", args.solo_target, 1)):
        if value is not None and value < least:
            raise ValueError(f"{flag} must be at least {least}, not {value}")
    width = args.width or args.size[0]
    height = args.height or args.size[1]
    if args.games < 1:
        raise ValueError("--games must be at least 1")
    if args.timeout < 1:
        raise ValueError("--timeout must be at least 1 ms")
    seats = parse_seats(args.seats, players) if args.seats else None
    positions = load_positions(args.positions) if args.positions is not None else None
    n_snakes = len(seats) if seats else args.snakes or {"solo": 1, "squad": 4}.get(args.ruleset, 2)
    if positions is not None:
        n_snakes = len(positions[0]["board"]["snakes"])
        if args.snakes and args.snakes != n_snakes:
            raise ValueError(f"--snakes {args.snakes}: the positions have {n_snakes} snakes alive")
    if args.ruleset == "solo" and n_snakes != 1:
        raise ValueError("solo games have one snake")
    if args.ruleset != "solo" and n_snakes < 2:
        raise ValueError(f"{args.ruleset} games need at least two snakes (use --ruleset solo)")
    if args.sprt is not None and n_snakes != 2:
        # its Elo is a duel's: 0 Elo is a 50 % score, where even play with 4 snakes is 25 %
        raise ValueError(f"--sprt tests duels; these games have {n_snakes} snakes")
    check_ruleset_on_map(args.ruleset, args.map)    # games from positions skip the set-up

    # Ask every HTTP snake for its looks once, as the CLI does; an unreachable snake stops
    # the run before it starts.
    for i, p in enumerate(players):
        if p.is_http:
            meta = fetch_metadata(p.target, args.timeout)
            players[i] = PlayerSpec(p.label, p.target, str(meta.get("color") or p.color),
                                    str(meta.get("head") or p.head),
                                    str(meta.get("tail") or p.tail))

    settings = Settings(food_spawn_chance=args.food_spawn_chance, minimum_food=args.minimum_food,
                        hazard_damage_per_turn=args.hazard_damage,
                        shrink_every_n_turns=args.shrink_every)
    specs = plan_games(n_players=len(players), games=args.games, seed=args.seed,
                       ruleset=args.ruleset, map_name=args.map, width=width, height=height,
                       timeout=args.timeout, n_snakes=n_snakes, seats=seats,
                       max_turns=args.max_turns, solo_target=args.solo_target,
                       builtin_timeout=args.builtin_timeout,
                       until_decided=args.until_decided, positions=positions)
    if positions is None:
        _check_setup(specs[0], settings)
    network = load_network(args.weights, players)
    _WORKER["networks"] = load_player_networks(players)   # a bad file stops the run here
    if network is None and any(not p.is_http and p.target not in NO_NETWORK for p in players):
        print("arena: no network (weights/nnue.npz absent): NNUE strategies play by flood fill",
              file=sys.stderr)
    replay_dir = games_log = None
    if args.output_dir is not None:
        args.output_dir.mkdir(parents=True, exist_ok=True)
        replay_dir = str(args.output_dir)
        games_log = args.output_dir / GAMES_LOG
        games_log.write_text("")     # this run's games (their records are written anew too)

    title = (f"arena: {' vs '.join(p.label for p in players)}; {args.ruleset} {width}x{height}, "
             f"map {args.map}, {n_snakes} snake{'s' if n_snakes > 1 else ''}, "
             f"{args.games} games, seed {args.seed}, timeout {args.timeout} ms"
             + (f", from the {len(positions)} positions of {args.positions}" if positions else ""))
    if not (0 < args.alpha < 0.5 and 0 < args.beta < 0.5):
        raise ValueError("--alpha and --beta must be between 0 and 0.5")
    totals = Totals(players)
    results: list[GameResult] = []
    bounds = sprt_bounds(args.alpha, args.beta)

    def decided() -> bool:
        return args.sprt is not None and sprt_verdict(
            totals.score(0), *args.sprt, args.alpha, args.beta) != "undecided"
    bar = Progress(len(specs), "arena", unit="game", enabled=not args.quiet)
    parallel = max(1, min(args.parallel, len(specs)))
    interrupted = lost = False
    # Each game's process searches on its share of the machine (a search's helper threads,
    # ``threads``, take only that share), unless the environment says otherwise.
    cores_before = read_setting("NUPPEPPOU_SEARCH_CORES")
    if cores_before is None:
        from snake.search.cores import available_cores
        os.environ["NUPPEPPOU_SEARCH_CORES"] = str(max(1, available_cores() // parallel))
    try:
        if parallel == 1:
            _WORKER.update(network=network)
            _init_worker(players, settings, replay_dir, args.weights, network is not None)
            outcomes = map(_play, specs)
            for result in outcomes:
                _collect(result, totals, results, bar, games_log, players)
                if decided():
                    break
        else:
            ctx = multiprocessing.get_context(
                "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
            if ctx.get_start_method() == "fork":
                _WORKER["network"] = network   # shared with the forked workers
            executor = ProcessPoolExecutor(
                parallel, mp_context=ctx, initializer=_init_worker,
                initargs=(players, settings, replay_dir, args.weights, network is not None))
            futures = [executor.submit(_play, spec) for spec in specs]
            try:
                # A sequential test counts the games in their order, as one process would,
                # so that where it stops does not depend on which game finished first.
                for future in iter(futures) if args.sprt is not None else as_completed(futures):
                    _collect(future.result(), totals, results, bar, games_log, players)
                    if decided():
                        break
            except BrokenProcessPool:
                # (a pool of multiprocessing waited for ever for a killed worker's game)
                lost = True
                print("\narena: a game process died (killed, out of memory?); results of "
                      "the finished games:", file=sys.stderr)
            finally:
                if not all(future.done() for future in futures):
                    # The games still running are stopped, not waited for; the pool then
                    # fails the games not begun, which nothing reads. (Cancelling them
                    # first makes its manager thread raise on the cancelled ones.)
                    processes = getattr(executor, "_processes", None) or {}
                    for process in list(processes.values()):
                        process.terminate()
                executor.shutdown(wait=True)
    except KeyboardInterrupt:
        interrupted = True
        print("\narena: interrupted; results of the finished games:", file=sys.stderr)
    finally:
        if cores_before is None:
            os.environ.pop("NUPPEPPOU_SEARCH_CORES", None)
    bar.close()

    for i, p in enumerate(players):
        problems = totals.timing[i].problems if i in totals.timing else []
        for problem in problems:
            print(f"arena: {p.label}: {problem}", file=sys.stderr)
    if replay_dir is not None:
        summary = totals.to_json()
        summary["options"] = {k: str(v) if isinstance(v, Path) else v
                              for k, v in vars(args).items()}
        summary["games_played"] = [game_entry(r, players)
                                   for r in sorted(results, key=lambda r: r.index)]
        (Path(replay_dir) / "results.json").write_text(json.dumps(summary, indent=1) + "\n")
    if args.sprt is not None:
        llr = sprt_llr(totals.score(0), *args.sprt)
        elo0, elo1 = args.sprt
        verdict = {"H1": f"H1 accepted: {players[0].label} is at least {elo1:g} Elo stronger",
                   "H0": f"H0 accepted: {players[0].label} is at most {elo0:g} Elo stronger",
                   "undecided": "undecided (the --games cap came first)"}[
            sprt_verdict(totals.score(0), elo0, elo1, args.alpha, args.beta)]
        print(f"sprt [{elo0:g}, {elo1:g}], alpha {args.alpha:g}, beta {args.beta:g}: {verdict} "
              f"after {totals.score(0).games} games (LLR {llr:.2f}, bounds "
              f"[{bounds[0]:.2f}, {bounds[1]:.2f}])")
    print(format_report(totals, title))
    return 130 if interrupted else 2 if lost else 0


def _collect(result: GameResult, totals: Totals, results: list[GameResult], bar: Progress,
             games_log: Path | None = None, players: Sequence[PlayerSpec] = ()) -> None:
    totals.add(result)
    results.append(result)
    if games_log is not None:   # as each game ends: a run killed later keeps what it played
        with games_log.open("a") as out:
            out.write(json.dumps(game_entry(result, players)) + "\n")
    bar.update(1, totals.short(0))


def _check_setup(spec: GameSpec, settings: Settings) -> None:
    """Set up the first game once here, so a bad map or a board too small for the snakes
    is reported before any worker starts."""
    from snake.rules.start import make_ruleset, new_game
    new_game(make_ruleset(spec.ruleset, settings, version="arena"), spec.width, spec.height,
             list(spec.snake_ids),
             map=spec.map, rng=random.Random(spec.setup_seed), game_id=spec.game_id,
             squads=list(spec.squads) if spec.squads else None, timeout=spec.timeout)


if __name__ == "__main__":
    from snake.cli import run_main
    run_main(main)
