"""The last chance: when the search has proved that every move can be killed this turn,
the move most likely to live through it.

The paranoid search lets the opponents answer knowing our move. When it finds that every
move loses on this very turn (the score :data:`LOST_THIS_TURN`), all moves score the same
loss, certain death and a head-to-head one reply in three would win alike, and the one it
answers is an accident of move order. But a real opponent moves without knowing ours: a move that
loses to one of its replies and survives the others is a chance, one that loses to all of them is
none. So then each of our candidate moves (:func:`snake.rules.candidate_moves`) is played
against every joint reply of the opponents near enough to meet our head this turn (head
within two moves of ours; each on its candidate moves, the others on their cheap move), by
the rules (:func:`snake.rules.apply_rules`), and the move that leaves us alive, with a move
left that is not certain death next turn, after the most replies is played; then the one
that leaves us alive at all after the most (a pocket with no way out is a death put off by
a turn, not a chance); ties keep the search's move, then the order up, down, left, right.

Only this turn is looked at, and only then: the search already said that every move loses
now against best play, so what is left is not to die now. (A loss proved for a later turn
is left to the search, which plays the latest one.)

It runs within the move's time: the replies are taken one at a time, each against every
candidate move, and at the ``deadline`` the count stops where it is, so every move is
judged on the same replies; with none tried, the search's move stands. (On 11×11 the
whole count takes milliseconds; on a huge board with many snakes each reply is a full turn
of the rules, and the deadline is what keeps the answer on time.)
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

from snake.board import GameState, Snake
from snake.moves import filter_moves
from snake.rules import (
    MOVES,
    apply_rules,
    candidate_moves,
    distance,
    obstacles_after_move,
    passes_through,
)
from snake.search.plan import WIN, cheap_move

#: The score of a search whose every move loses on this turn (a loss at ply 1).
LOST_THIS_TURN = -(WIN - 1)

#: Opponents whose head is at most this far from ours can meet it this turn.
REACH = 2
#: At most this many of them are enumerated (nearest first): 3 ** 3 joint replies.
MAX_NEAR = 3


@dataclass(frozen=True, slots=True)
class LastChance:
    """The move played, and per candidate move how many of the replies tried it survives
    with a way out (a move next turn that is not certain death), and without one.
    ``replies`` is how many joint replies there are, ``tried`` how many were played before
    the deadline (all of them unless it came first)."""

    move: str
    survives: dict[str, int]
    replies: int
    trapped: dict[str, int] | None = None     # per move: replies survived with no way out
    tried: int | None = None                  # replies played (None: all of them)


def last_chance(state: GameState, you: Snake, searched_move: str,
                deadline: float | None = None, clock=time.perf_counter) -> LastChance:
    """The move of ``you`` that survives this turn against the most replies (module
    docstring); ``searched_move`` is the search's answer, kept on ties and when no reply
    could be tried before ``deadline`` (``clock()`` seconds; ``None``: no limit)."""
    board = state.board
    obstacles = obstacles_after_move(state)
    mine = candidate_moves(state, you, obstacles)
    wraps = state.ruleset.wraps
    others = [s for s in board.living_snakes if s.id != you.id]
    near = sorted((s for s in others if not you.is_squadmate(s)
                   and distance(you.head, s.head, board.width, board.height, wraps) <= REACH),
                  key=lambda s: distance(you.head, s.head, board.width, board.height, wraps))
    near = near[:MAX_NEAR]
    near_ids = {s.id for s in near}
    ruleset = state.game.ruleset

    by_squad: dict[str, set] = {}

    def obstacles_for(snake: Snake) -> set:
        # the shared set, unless squadmates' bodies are passable to this snake: then its
        # squad's own set, made once per squad (not once per snake: 60 squad snakes on a
        # big board cost 144 ms so)
        if not any(passes_through(ruleset, snake, other) for other in others):
            return obstacles
        if snake.squad not in by_squad:
            by_squad[snake.squad] = obstacles_after_move(state, snake)
        return by_squad[snake.squad]
    fixed = {}
    for s in others:
        if s.id in near_ids:
            continue
        if deadline is not None and clock() >= deadline:
            return LastChance(searched_move, {m: 0 for m in mine}, 0, {m: 0 for m in mine}, 0)
        fixed[s.id] = cheap_move(state, s, obstacles_for(s))
    options = [candidate_moves(state, s, obstacles) for s in near]
    replies = list(itertools.product(*options))
    survives = {move: 0 for move in mine}
    trapped = {move: 0 for move in mine}
    tried = 0
    for reply in replies:
        if deadline is not None and clock() >= deadline:
            break
        for move in mine:
            moves = {**fixed, **{s.id: m for s, m in zip(near, reply)}, you.id: move}
            after = apply_rules(state, moves)
            me = after.board.snake(you.id)
            if me.eliminated_cause:
                continue
            if filter_moves(after, me).allowed:      # a move next turn not certain death
                survives[move] += 1
            else:
                trapped[move] += 1
        tried += 1
    if not tried:
        return LastChance(searched_move, survives, len(replies), trapped, 0)
    best = max(mine, key=lambda m: (survives[m], trapped[m], m == searched_move,
                                    -MOVES.index(m)))
    return LastChance(best, survives, len(replies), trapped,
                      None if tried == len(replies) else tried)
