"""Play one arena game from a :class:`~snake.arena.schedule.GameSpec`.

The game is played as the official engine plays it: set up by
:func:`snake.rules.start.new_game` (or started from a position:
:mod:`snake.arena.positions`), ``/start`` to every snake, then each turn every living snake
is asked for its move (HTTP snakes concurrently, each with the game's timeout; with
``one_at_a_time`` one after another, so that each thinks alone on the machine, as it would
on a server of its own), and the moves are applied by :func:`snake.rules.play_turn` — the
one rules engine; the arena only asks and records. A missing answer repeats the snake's
previous move (``up`` on the first turn). When the rules say the game is over (or at
``max_turns``, if set; or, with ``until_decided``, as soon as every player's result is
settled: the living snakes all belong to one player, who has outlasted every other),
``/end`` goes to every snake, living or not, and the game is scored
(:mod:`snake.arena.scoring`) and optionally written as a CLI-format replay
(:mod:`snake.records.replay`).

Built-in snakes receive the same body an HTTP snake would, parsed by
:func:`snake.board.parse_request` (one parse per turn, shared by the built-in seats), so
they see exactly what the server would see.
"""

from __future__ import annotations

import json
import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from snake.arena import scoring
from snake.arena.players import Answer, BuiltinSeat, HttpSeat, PlayerSpec
from snake.arena.schedule import GameSpec
from snake.board import Game, GameState, Settings, parse_request
from snake.records.replay import (
    Replay,
    SnakeLook,
    dumps_replay,
    game_object,
    request_body,
    result_line,
    write_replay,
)


@dataclass(slots=True)
class Timing:
    """One player's answers in one game: latencies (ms) of every ``/move``, and counts."""

    latencies: list[float] = field(default_factory=list)
    timeouts: int = 0
    invalid: int = 0
    problems: list[str] = field(default_factory=list)   # the first few, for the report

    def add(self, answer: Answer) -> None:
        self.latencies.append(answer.latency_ms)
        if answer.problem == "timeout":
            self.timeouts += 1
        elif answer.problem:
            self.invalid += 1
        if answer.problem and len(self.problems) < 3:
            self.problems.append(f"{answer.problem}: {answer.detail}")

    def merge(self, other: Timing) -> None:
        self.latencies.extend(other.latencies)
        self.timeouts += other.timeouts
        self.invalid += other.invalid
        room = 3 - len(self.problems)
        if room > 0:
            self.problems.extend(other.problems[:room])


@dataclass(slots=True)
class GameResult:
    index: int
    game_id: str
    turns: int
    seats: tuple[int, ...]
    results: dict[int, str]          # player index -> win / draw / loss
    winner_id: str
    winner_name: str
    is_draw: bool
    stopped: bool                    # stopped at max_turns with the game not over
    timing: dict[int, Timing]
    replay_path: str | None = None
    decided: bool = False            # stopped early, every player's result settled
    #: the game's record (CLI format) when it was played away from the disk it is kept on
    #: (a Ray task on another machine): the driver writes it (``keep_record``)
    record: str | None = None


def record_name(index: int) -> str:
    """The file name of game ``index``'s record in a run's output directory."""
    return f"game-{index + 1:05d}.jsonl"


def make_seat(player: PlayerSpec, spec: GameSpec, seat: int,
              network: Any) -> BuiltinSeat | HttpSeat:
    if player.is_http:
        return HttpSeat(player.target, spec.timeout)
    return BuiltinSeat(player.target, network=network, seed=spec.strategy_seeds[seat],
                       deadline_ms=spec.timeout if spec.builtin_timeout else None)


def play_game(spec: GameSpec, players: Sequence[PlayerSpec], *, network: Any = None,
              settings: Settings | None = None, replay_dir: str | Path | None = None,
              networks: dict[str, Any] | None = None, keep_record: bool = False) -> GameResult:
    """Play one game to its end and score it. ``network`` is the built-in players'
    network, ``networks`` those of players with a file of their own (by file). The game's
    record is written into ``replay_dir`` (``replay_path``), or, with ``keep_record``,
    returned as text (``record``) for the caller to write."""
    networks = networks or {}
    from snake.rules import default_move, is_game_over, play_turn
    from snake.rules.start import make_ruleset, new_game

    setup_rng = random.Random(spec.setup_seed)
    ruleset = make_ruleset(spec.ruleset, settings, version="arena")
    if spec.position:
        # the position's board and turn in the run's game (ruleset, settings, map, timeout)
        start = parse_request(json.loads(spec.position)).state
        state = GameState(Game(spec.game_id, ruleset, spec.map, spec.timeout), start.turn,
                          start.board)
    else:
        state = new_game(ruleset, spec.width, spec.height, list(spec.snake_ids), map=spec.map,
                         rng=setup_rng, game_id=spec.game_id,
                         squads=list(spec.squads) if spec.squads else None, timeout=spec.timeout)
    # The turns draw from the same stream as the set-up, so a block's games stay alike.
    turn_rng = setup_rng

    ids = spec.snake_ids
    owner = {sid: spec.seats[i] for i, sid in enumerate(ids)}
    looks = {}
    for i, sid in enumerate(ids):
        p = players[spec.seats[i]]
        looks[sid] = SnakeLook(name=p.label, color=p.color, head=p.head, tail=p.tail)
    seats = {sid: make_seat(players[spec.seats[i]], spec, i,
                            networks.get(players[spec.seats[i]].weights, network))
             for i, sid in enumerate(ids)}
    timing = {p: Timing() for p in set(spec.seats)}
    # what the engine repeats for a snake without an answer: its last move, as its head and
    # neck show it (``up`` for the stacked bodies of turn 0)
    last_move = {s.id: default_move(s) for s in state.board.snakes}
    game = game_object(state)
    replay = Replay(game) if replay_dir is not None or keep_record else None
    you_id = ids[spec.seats.index(0)] if 0 in spec.seats else ids[0]
    http_seats = [sid for sid in ids if seats[sid].is_http]
    concurrent = http_seats and not spec.one_at_a_time
    pool = ThreadPoolExecutor(max_workers=len(http_seats)) if concurrent else None

    try:
        for sid in ids:
            seats[sid].start(request_body(state, sid, looks, game))
        stopped = decided = False
        while not is_game_over(state):
            if spec.max_turns and state.turn >= spec.max_turns:
                stopped = True
                break
            if spec.until_decided and settled(state, owner):
                decided = True
                break
            if replay is not None:
                replay.turns.append(request_body(state, you_id, looks, game))
            living = [s.id for s in state.board.living_snakes]
            answers = _ask(state, living, seats, looks, game, pool)
            moves = {}
            for sid in living:
                answer = answers[sid]
                timing[owner[sid]].add(answer)
                if answer.move is not None:
                    last_move[sid] = answer.move
                moves[sid] = last_move[sid]
                # the next request shows this answer's latency and shout, as the engine does
                looks[sid].latency = f"{answer.latency_ms:.0f}" if seats[sid].is_http else "0"
                looks[sid].shout = answer.shout
            state = play_turn(state, moves, turn_rng)
        if replay is not None:
            replay.turns.append(request_body(state, you_id, looks, game))
        # /end as the engine sends it: a finished game is played one turn more (the rules
        # change nothing, the map may spawn food) and shown at that turn
        # (snake.rules.END_AFTER_FINAL); a game stopped early is shown as it stands
        ended = play_turn(state, {}, turn_rng) if is_game_over(state) else state
        for sid in ids:
            seats[sid].end(request_body(ended, sid, looks, game))
    finally:
        for seat in seats.values():
            seat.close()
        if pool is not None:
            pool.shutdown(wait=True)

    if len(ids) == 1:
        results = {spec.seats[0]: scoring.solo_result(state, ids[0], spec.solo_target)}
    else:
        squads = dict(zip(ids, spec.squads)) if spec.squads else None
        results = scoring.player_results(state, owner, squads)
    living = state.board.living_snakes
    # The CLI's result line: a living snake wins; no snake left in a multi-snake game is a
    # draw. A game stopped at max_turns with several snakes alive is written as a draw; one
    # stopped when decided names a living snake of the player who has won (its name is the
    # player's, which is what a record is read by).
    if (decided or len(living) == 1
            or (living and spec.squads and len({s.squad for s in living}) == 1)):
        winner_id, winner_name, is_draw = living[0].id, looks[living[0].id].name, False
    else:
        winner_id, winner_name, is_draw = "", "", len(ids) > 1
    path = record = None
    if replay is not None:
        replay.result = result_line(winner_id, winner_name, is_draw)
        if keep_record:
            record = dumps_replay(replay)
        if replay_dir is not None:
            path = str(Path(replay_dir) / record_name(spec.index))
            write_replay(path, replay)
    return GameResult(spec.index, spec.game_id, state.turn, spec.seats, results, winner_id,
                      winner_name, is_draw, stopped, timing, path, decided, record)


def settled(state, owner: dict[str, int]) -> bool:
    """Whether every player's result is already known: the living snakes all belong to one
    player while another player has none left. That player outlasts every other side
    (:mod:`snake.arena.scoring`), whatever happens next; the others have lost."""
    living = {owner[s.id] for s in state.board.living_snakes}
    return len(living) == 1 and len(set(owner.values())) > 1


def _ask(state, living: list[str], seats: dict, looks: dict[str, SnakeLook],
         game: dict[str, Any], pool: ThreadPoolExecutor | None) -> dict[str, Answer]:
    """Every living snake's answer for this turn: HTTP seats in parallel threads while the
    built-in seats think in this one; without a ``pool``, the HTTP seats one after another,
    before the built-in ones."""
    futures = {}
    builtin = []
    answers: dict[str, Answer] = {}
    for sid in living:
        if seats[sid].is_http:
            payload = json.dumps(request_body(state, sid, looks, game),
                                 separators=(",", ":")).encode()
            if pool is None:
                answers[sid] = seats[sid].move_payload(payload)
            else:
                futures[sid] = pool.submit(seats[sid].move_payload, payload)
        else:
            builtin.append(sid)
    if builtin:
        request = parse_request(request_body(state, builtin[0], looks, game))
        for sid in builtin:
            you = request.state.board.snake(sid)
            answers[sid] = seats[sid].move(type(request)(request.state, you))
    for sid, future in futures.items():
        answers[sid] = future.result()
    return answers
