"""``python -m snake.arena``: play many games between players and report the results.

    python -m snake.arena floodfill random --games 200 --size 11 --parallel 2
    python -m snake.arena seed floodfill --snakes 4 --ruleset royale --output-dir runs/r1
    python -m snake.arena mine=http://127.0.0.1:8000 floodfill --timeout 500
    python -m snake.arena "search" "search[value_head=none]" --sprt 0,30 --ray HEAD:6379

See docs/arena.md for every option, the replay format and how results are counted.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sys
import urllib.parse
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Sequence

from snake.arena.cluster import WorkerLost, require_ray
from snake.arena.match import GameResult, play_game, record_name
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
                   help="games played at once, in worker processes (number of cores); "
                        "with --ray local, the CPUs of the Ray started here")
    p.add_argument("--ray", metavar="ADDRESS",
                   help="play the games as tasks on a Ray cluster, one core each: HOST:PORT "
                        "of its head, auto (the cluster this machine is in) or local (start "
                        "one here with --parallel CPUs); see docs/arena.md")
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
    p.add_argument("--one-at-a-time", action="store_true",
                   help="ask the snakes for their moves one after another instead of all at "
                        "once, so that each thinks with the machine to itself, as it would on "
                        "a server of its own: for games of more snakes than this machine has "
                        "cores (a turn then lasts as long as all the answers together)")
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


def _play(spec: GameSpec, worker: dict[str, Any] | None = None) -> GameResult:
    """Play one game with what this worker process was given: :data:`_WORKER` (set by
    :func:`_init_worker`), or ``worker`` (a Ray worker's, :func:`_ray_worker`)."""
    worker = _WORKER if worker is None else worker
    return play_game(spec, worker["players"], network=worker["network"],
                     settings=worker["settings"], replay_dir=worker["replay_dir"],
                     networks=worker["networks"], keep_record=worker.get("keep_record", False))


def _ray_worker(shipped: tuple) -> dict[str, Any]:
    """What a Ray worker plays with (:func:`_play`), from what the driver sent
    (:func:`_ray_games`): the networks come as their files' bytes (a cluster's machines
    need not share a disk), and each game's record comes back to the driver."""
    players, settings, main, files, keep_record = shipped
    from nnue.network import Network
    return {"players": players, "settings": settings, "replay_dir": None,
            "keep_record": keep_record,
            "network": Network.from_bytes(main) if main is not None else None,
            "networks": {name: Network.from_bytes(data) for name, data in files.items()}}


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
    if args.ray is not None:
        require_ray()
        _warn_unreachable(players, args.ray)

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
                       until_decided=args.until_decided,
                       one_at_a_time=args.one_at_a_time, positions=positions)
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
    # ``threads``, take only that share), unless the environment says otherwise; a Ray
    # task has one core of its machine.
    cores_before = read_setting("NUPPEPPOU_SEARCH_CORES")
    if cores_before is None and args.ray is None:
        from snake.search.cores import available_cores
        os.environ["NUPPEPPOU_SEARCH_CORES"] = str(max(1, available_cores() // parallel))
    init = (players, settings, replay_dir, args.weights, network is not None)
    if args.ray is not None:
        games = _ray_games(specs, args.ray, parallel, init,
                           str(cores_before) if cores_before is not None else "1")
    elif parallel == 1:
        games = _serial_games(specs, init, network)
    else:
        games = _process_games(specs, parallel, init, network)
    try:
        try:
            # A sequential test counts the games in their order, as one process would,
            # so that where it stops does not depend on which game finished first.
            for result in _in_order(games) if args.sprt is not None else games:
                _collect(result, totals, results, bar, games_log, players, replay_dir)
                if decided():
                    break
        finally:
            games.close()       # the games still running or not begun are stopped
    except WorkerLost as exc:
        lost = True
        print(f"\narena: {exc}; results of the finished games:", file=sys.stderr)
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


def _serial_games(specs: Sequence[GameSpec], init: tuple, network: Any) -> Iterator[GameResult]:
    """The games played one after the other in this process."""
    _WORKER.update(network=network)
    _init_worker(*init)
    for spec in specs:
        yield _play(spec)


def _process_games(specs: Sequence[GameSpec], parallel: int, init: tuple,
                   network: Any) -> Iterator[GameResult]:
    """The games played in ``parallel`` worker processes of this machine, as they finish.
    Closing the generator stops the games still running; a worker that dies raises
    :class:`WorkerLost` (a pool of multiprocessing waits for ever for a killed worker's
    game)."""
    ctx = multiprocessing.get_context(
        "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    if ctx.get_start_method() == "fork":
        _WORKER["network"] = network   # shared with the forked workers
    executor = ProcessPoolExecutor(parallel, mp_context=ctx, initializer=_init_worker,
                                   initargs=init)
    futures = [executor.submit(_play, spec) for spec in specs]
    try:
        for future in as_completed(futures):
            yield future.result()
    except BrokenProcessPool:
        raise WorkerLost("a game process died (killed, out of memory?)") from None
    finally:
        if not all(future.done() for future in futures):
            # The games still running are stopped, not waited for; the pool then fails
            # the games not begun, which nothing reads. (Cancelling them first makes its
            # manager thread raise on the cancelled ones.)
            processes = getattr(executor, "_processes", None) or {}
            for process in list(processes.values()):
                process.terminate()
        executor.shutdown(wait=True)


def _ray_games(specs: Sequence[GameSpec], address: str, cpus: int, init: tuple,
               cores: str) -> Iterator[GameResult]:
    """The games played as Ray tasks on the cluster at ``address`` (``local``: one started
    here with ``cpus`` CPUs), one core each (``cores``: their searches' cores,
    ``NUPPEPPOU_SEARCH_CORES``), as they finish (:func:`snake.arena.cluster.ray_map`): the
    same games as :func:`_process_games`, by the same :func:`_play`. The players, settings
    and networks go to the object store once; each game's record comes back with its result
    and is written here (:func:`_collect`)."""
    from nnue.network import DEFAULT_WEIGHTS
    from snake.arena.cluster import ray_map

    players, settings, replay_dir, weights, network_loaded = init
    main = Path(weights or DEFAULT_WEIGHTS).read_bytes() if network_loaded else None
    files = {p.weights: Path(p.weights).read_bytes() for p in players if p.weights}
    shipped = (players, settings, main, files, replay_dir is not None)
    return ray_map(_play, specs, address=address, cpus=cpus, shared=shipped,
                   setup=_ray_worker, env={"NUPPEPPOU_SEARCH_CORES": cores})


def _warn_unreachable(players: Sequence[PlayerSpec], address: str) -> None:
    """Say so when an HTTP snake's address is this machine's loopback while the games may
    be played on other machines, from which it names another machine (or none)."""
    if address == "local":
        return
    for p in players:
        host = urllib.parse.urlsplit(p.target).hostname if p.is_http else None
        if host in ("localhost", "::1") or (host or "").startswith("127."):
            print(f"arena: {p.label}: {host} is reached from the machine that plays each "
                  "game: on a cluster, give an address the other machines reach",
                  file=sys.stderr)


def _in_order(results: Iterable[GameResult]) -> Iterator[GameResult]:
    """The games of ``results`` (any order) in their order (``index``), each as soon as
    it and all those before it are in."""
    waiting: dict[int, GameResult] = {}
    following = 0
    for result in results:
        waiting[result.index] = result
        while following in waiting:
            yield waiting.pop(following)
            following += 1


def _collect(result: GameResult, totals: Totals, results: list[GameResult], bar: Progress,
             games_log: Path | None = None, players: Sequence[PlayerSpec] = (),
             replay_dir: str | None = None) -> None:
    if result.record is not None and replay_dir is not None:
        # played on a machine that does not hold the output directory
        result.replay_path = str(Path(replay_dir) / record_name(result.index))
        Path(result.replay_path).write_text(result.record, encoding="utf-8")
        result.record = None
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
