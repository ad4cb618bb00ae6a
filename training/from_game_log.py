"""Training positions from the service's game log: real opponents' games as data.

    python -m training.datagen --out data/prod --from-game-log games.db

Every finished game of the log (won, lost or drawn, and solo games; abandoned ones have no
result) is replayed from the bodies we received. A position is a living snake on a recorded
turn whose next turn is recorded too, so its move is known (read off its next head): ours
and every opponent's, each from its own view (:func:`nnue.features.active_features`), with
its own result as the target (SPEC section 5: 1 win, 0.5 draw, 0 loss), read off the final
body by :func:`snake.rules.outcome_at_end` with the last turn that snake was seen on; in
solo (or a game of one snake, played as solo), ``min(T / 100, 1)`` for the ``T`` moves of
the game (as datagen scores it).

The move that eliminated *us* is a position too: the ``/end`` body's ``you`` is our snake as
the engine left it, head on the square the move took it to (off the board for a wall), so
the move is read off it. An opponent's last move is not: it is gone from the next body.

When no one is left at the end, a snake still alive on our last recorded turn, before the
final one, has no known result (it drew if it fell on the final turn, and the engine sends
us no turn after our death): its positions are left out. Games the network has no features
for (other rulesets or board sizes) are skipped and counted.

The split (train / val / test) is drawn per game from its id, so a game never straddles two
splits, and the same log gives the same split every time. The output is the datagen format
(:mod:`training.shards`, ``meta.json``), so ``training.fit`` reads it as it is, or
together with generated data.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

from nnue.features import N_BLOCKS, active_features, block_of
from snake.board import Snake, parse_request
from snake.observability.gamelog.reader import training_games
from snake.observability.gamelog.store import connect_readonly
from snake.rules import MOVES, last_move, next_square, outcome_at_end, plays_solo
from training.shards import BLOCK_NAMES, SPLITS, PositionBuilder, save_shard
from training.targets import OUTCOME_TARGET, solo_target


def split_of(game_id: str, holdout: float) -> str:
    u = int.from_bytes(hashlib.sha256(game_id.encode()).digest()[:8], "big") / 2**64
    return "train" if u < 1 - 2 * holdout else "val" if u < 1 - holdout else "test"


def game_positions(replay) -> list[tuple]:
    """(features, move index, target, block, turn) of every position of one game."""
    requests = [parse_request(body) for body in replay.turns]
    states = [request.state for request in requests]
    final = states[-1]
    block = block_of(final.game.ruleset.name, final.board.width)
    if block is None or final.board.width != final.board.height:
        return []                          # no features for this ruleset or size
    last_seen: dict[str, int] = {}
    snakes: dict[str, Snake] = {}
    for state in states:
        for s in state.board.snakes:
            last_seen[s.id] = state.turn
            snakes[s.id] = s
    # Our last /move: after it the engine sends us nothing until /end, so a snake alive
    # then and gone at the end fell on some turn we did not see.
    watched_until = states[-2].turn if len(states) >= 2 else final.turn
    us = replay.turns[0]["you"]["id"]
    if len(states) >= 2 and plays_solo(states[0]):
        # Solo, or one snake in another ruleset (a /move lists the living, and no move is
        # asked in a game that is over): every move has one target, the game's T moves.
        targets = {us: solo_target(final.turn)}
    else:
        targets = _results(final, snakes, last_seen, us, watched_until)
    out = []

    def add(state, snake: Snake, after: Snake) -> bool:
        move = last_move(after.head, snake.head)
        if next_square(state, snake.head, move) != after.head:
            return True                    # not one step: a record we cannot read
        features = active_features(state, snake)
        if features is None:
            return False
        out.append((features, MOVES.index(move), targets[snake.id], block, state.turn))
        return True

    for state, following in zip(states, states[1:]):
        if following.turn != state.turn + 1:
            continue                       # a turn missing from the log: moves unknown
        for snake in state.board.snakes:
            after = following.board.snake(snake.id)
            if after is not None and snake.id in targets and not add(state, snake, after):
                return []
    # The move that ended us, from our last /move to where /end shows our head; only when
    # that /move is the turn we fell on (its body is the one that moved: the log may have
    # dropped later turns, and a gap can still look like one step).
    last = states[-2] if len(states) >= 2 else None
    mine = last.board.snake(us) if last is not None else None
    if mine is not None and final.board.snake(us) is None and us in targets:
        ended = requests[-1].you
        if (ended.id == us and ended.body[1:len(mine.body)] == mine.body[:-1]
                and not add(last, mine, ended)):
            return []
    return out


def _results(final, snakes: dict[str, Snake], last_seen: dict[str, int], us: str,
             watched_until: int) -> dict[str, float]:
    """Each snake's target from the /end body (solo aside), where it can be told."""
    targets = {}
    for sid, snake in snakes.items():
        alive = final.board.snake(sid)
        if (sid != us and alive is None and not final.board.snakes
                and last_seen[sid] == watched_until < final.turn - 1):
            continue     # a draw if it fell on the final turn, else a loss: cannot be told
        # (the record's last line is the final turn:
        # snake.observability.gamelog.reader.record_lines)
        result = outcome_at_end(final, alive if alive is not None else snake,
                                last_seen[sid] if alive is None else None, final_turn=final.turn)
        if result in OUTCOME_TARGET:
            targets[sid] = OUTCOME_TARGET[result]
    return targets


def write_from_game_log(db: str | Path, out: str | Path, holdout: float = 0.05,
                        chunk: int = 200, quiet: bool = False) -> dict:
    """Write the positions of every finished game in ``db`` to ``out`` (shards and
    ``meta.json``); returns the meta."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    conn = connect_readonly(db)
    counts = {s: {"games": [0] * N_BLOCKS, "positions": [0] * N_BLOCKS} for s in SPLITS}
    builders = {s: PositionBuilder() for s in SPLITS}
    skipped = games = positions = shard = 0
    number = 0

    def flush() -> None:
        nonlocal shard
        for split, builder in builders.items():
            if len(builder):
                save_shard(out / f"{split}-log{shard:05d}.npz", builder.build())
                builders[split] = PositionBuilder()
        shard += 1

    unreadable: list[str] = []
    for game, replay in training_games(conn, unreadable=unreadable):
        number += 1
        rows = game_positions(replay)
        if not rows:
            skipped += 1
            continue
        split = split_of(game.game_id, holdout)
        for features, move, target, block, turn in rows:
            builders[split].add(features, move, target, block, number, turn)
        block = rows[0][3]
        counts[split]["games"][block] += 1
        counts[split]["positions"][block] += len(rows)
        games += 1
        positions += len(rows)
        if games % chunk == 0:
            flush()
        if not quiet and games % 50 == 0:
            print(f"\r{games} games, {positions} positions", end="", file=sys.stderr)
    flush()
    if not quiet:
        print(file=sys.stderr)
    meta = {
        "source": "game log", "game_log": str(db), "games": games, "positions": positions,
        "games_skipped": skipped + len(unreadable), "games_unreadable": len(unreadable),
        "holdout": holdout,
        "split_fractions": {"train": 1 - 2 * holdout, "val": holdout, "test": holdout},
        "seconds": round(time.monotonic() - t0, 1), "workers": 1,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "blocks": list(BLOCK_NAMES), "counts": counts,
        "capped_games": [0] * N_BLOCKS, "turns_played": [0] * N_BLOCKS,
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    return meta
