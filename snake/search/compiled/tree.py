"""Paranoid alpha-beta over simultaneous moves, compiled: the search of the ``search`` strategy.

The same game tree as the Python search (:mod:`snake.search.alphabeta`, kept as ``search-py``):
one turn is two plies, ``you`` choosing a move (a max node) and then the searched opponents
a *joint* move together, knowing yours (a min node: paranoid; or their best replies, one
opponent at a time: :func:`_joint_move`); snakes not searched play
their cheap move (:func:`.occupancy.cheap_move`); every turn is the compiled step
(:func:`.step.apply_rules`). Values are ``you``'s: exact results (win ``WIN - ply``, draw
:data:`DRAW`, loss ``-WIN + ply``; ``you`` eliminated while others play on is a loss) or
the leaf evaluator's at the horizon (:mod:`snake.evaluation.compiled.leaf`: board control,
corrected by a value head or blended with the network's value), one piece chosen once per
search (its ``leaf`` argument).

What the speed makes worth it:

- **iterative deepening** until the deadline, which is checked inside the compiled loop
  (:func:`.timer.monotonic`, ``time.perf_counter``'s clock, every :data:`CHECK_EVERY`
  nodes); the answer is the deepest completed iteration's move, or the
  partial iteration's best when its first move (the previous best) was fully searched;
- a **transposition table** at ``you``'s nodes (:mod:`.table`), with depth, bound and best
  move;
- **principal variation search**: your moves after the first (at the root and below) are
  searched with a null window, asking only whether they beat the best so far, and again in
  full when they do;
- **move ordering**: the table's move, a killer per ply (yours and the opponents' joint
  move), and the history heuristic (``depth²`` per cut-off, by snake, cell and move).

- **threads** (:func:`.threads.run`, "lazy SMP"): helper threads search the same position
  on the same table, every other depth, and the table carries what they find to the main
  thread. Each thread marks the nodes it is in (``searching``), and a thread that comes to
  an opponents' reply whose node another thread is in leaves it for last (as ABDADA
  does): by then the table holds its value, and meanwhile the threads search different
  replies rather than the same one. Your moves after the first are marked and left for
  last the same way, by the node's key and the move.

Everything a search uses is allocated when it starts; a node allocates nothing.
The function releases the GIL, so searches in several threads use several cores.
"""


from __future__ import annotations

import numpy as np
from numba import njit

from snake.core.jit import JIT, JIT_NRT
from snake.core.occupancy import candidate_moves, cheap_move
from snake.core.state import (
    ALIVE,
    G_CAUSE,
    G_CELLS,
    G_N,
    G_ON_TURN,
    G_PIPELINE,
    G_SIZE,
    G_SQUAD,
    SQUAD,
)
from snake.core.step import apply_rules, copy_position, is_game_over, plays_solo, segment
from snake.evaluation.compiled.leaf import evaluate, play_turn, start
from snake.search.compiled.table import EXACT, LOWER, UPPER, entry_check, position_key
from snake.search.compiled.timer import monotonic

WIN = 1000.0
#: A draw is exact but valued below most evaluations (see snake.search.plan.DRAW).
DRAW = -0.5
PROVEN = WIN - 500.0
INF = 1e9
NOT_TERMINAL = 1e8
MAX_PLY = 64
#: Nodes between two looks at the clock (a look costs about 30 ns), on boards whose nodes
#: are cheap; see :func:`check_every`.
CHECK_EVERY = 64
#: Padded cells times snakes up to which a node is cheap enough for :data:`CHECK_EVERY`:
#: eight times an 11×11 duel's, whose nodes cost about 2 µs (a node's cost grows with the
#: board, which board control floods, and the snakes), so 64 nodes are about a millisecond.
CHEAP_NODE_WORK = 8 * 13 * 13 * 2
#: The width of PVS's null window (values are floats: board control shares, ``WIN`` ± ply).
NULL_WINDOW = 1e-7
MAX_OPPONENTS = 3
#: Threads of one search mark the nodes of at least this depth that they are in
#: (``searching``), and defer a reply whose node another thread is in (:func:`_tree`);
#: shallower nodes are too cheap to be worth a key each.
SHARE_MIN_DEPTH = 2
#: What a node's key is XORed with to mark one of your moves there (by its number) as being
#: searched (:func:`_tree`): your moves after the first are shared out like the replies.
MY_MOVE_MARK = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                         0x27D4EB2F165667C5], dtype=np.uint64)
#: Slots of the table of nodes being searched (a power of two: a node's slot is its key's
#: low bits; two nodes in one slot only cost a needless deferral or a missed one).
SEARCHING_SLOTS = 4096
# rows of the per-ply scratch (``scratch[ply, row, :4]``)
R_MINE, R_CHEAP, R_OPPONENTS = 0, 1, 2
R_KEYS, R_COUNTS, R_JOINT = 2 + MAX_OPPONENTS, 3 + MAX_OPPONENTS, 4 + MAX_OPPONENTS
SCRATCH_ROWS = 5 + MAX_OPPONENTS

# control words (int64 array ``ctl``)
C_NODES, C_MAX_NODES, C_ABORT, C_STOP_REASON, C_CHECK_MASK, C_DEFERRED = 0, 1, 2, 3, 4, 5
(STOP_NONE, STOP_DEADLINE, STOP_NODES, STOP_PROVEN, STOP_MAX_DEPTH, STOP_SINGLE,
 STOP_HALTED, STOP_YIELDED) = range(8)
STOP_REASONS = ("", "deadline", "nodes", "proven", "max depth", "single move", "halted",
                "core given back")
#: ``yield_above`` of a thread that never gives its core back (the main thread's).
NEVER_YIELD = 2**62


# ---------------------------------------------------------------------------------------
# Exact results


@njit(inline="always", **JIT)
def terminal_value(g, s, you, ply):
    """The exact value of a finished line for ``you``, or :data:`NOT_TERMINAL`."""
    over = is_game_over(g, s)
    alive = s[g[G_CAUSE] + you] == ALIVE
    if not over:
        return NOT_TERMINAL if alive else -WIN + ply
    if plays_solo(g):
        return -WIN + ply
    first_living = -1
    final_turn = 0
    for i in range(g[G_N]):
        if s[g[G_CAUSE] + i] == ALIVE:
            if first_living < 0:
                first_living = i
        elif s[g[G_ON_TURN] + i] > final_turn:
            final_turn = s[g[G_ON_TURN] + i]
    if first_living >= 0:
        if alive:
            return WIN - ply
        if g[G_PIPELINE] == SQUAD and s[g[G_SQUAD] + you] == s[g[G_SQUAD] + first_living]:
            return WIN - ply
        return -WIN + ply
    return DRAW if s[g[G_ON_TURN] + you] == final_turn else -WIN + ply

@njit(**JIT)
def busy(ledger):
    """The searches in flight on the server: the sum of the processes' counts in the
    ledger's rows (:mod:`snake.search.cores`: pid, searches)."""
    total = 0
    for k in range(ledger.shape[0]):
        total += ledger[k, 1]
    return total


# ---------------------------------------------------------------------------------------
# The tree


@njit(inline="always", **JIT)
def _joint_move(opponent_moves, opponent_counts, k_opponents, index, out, best_reply):
    """The ``index``-th joint move of the opponents into ``out``; returns its code
    (base 4, opponent 0 lowest). Joint replies (``best_reply`` false) are the product of
    the opponents' moves; best replies are the opponents' first moves (their cheap moves),
    then one opponent at a time playing each of its other moves while the rest play their
    first."""
    code = 0
    scale = 1
    if best_reply:
        deviating = -1
        for j in range(k_opponents):
            others = opponent_counts[j] - 1
            if deviating < 0 and 0 < index <= others:
                deviating = j
            elif deviating < 0:
                index -= others
        for j in range(k_opponents):
            move = opponent_moves[j, index if j == deviating else 0]
            out[j] = move
            code += move * scale
            scale *= 4
        return code
    for j in range(k_opponents):
        count = opponent_counts[j]
        move = opponent_moves[j, index % count]
        index //= count
        out[j] = move
        code += move * scale
        scale *= 4
    return code




# Frame fields, per ply: integers (``frame[ply, F_*]``) and values (``bounds[ply, B_*]``).
(F_DEPTH, F_A, F_MY_COUNT, F_JOINTS, F_FIRST, F_R, F_BEST_MOVE, F_BEST_JOINT, F_SLOT, F_DONE,
 F_HEAD, F_CODE, F_NULL, F_TRIED, F_REPLY_NULL, F_DEFERRED, F_PASS, F_MY_DEFERRED,
 F_MY_PASS) = range(19)
F_FIELDS = 19
B_ALPHA, B_BETA, B_ALPHA0, B_BEST, B_BEST_MIN, B_BETA_MIN = range(6)
B_FIELDS = 6
# What the loop of :func:`_tree` does next.
ENTER, NEXT_CHILD, CHILD_VALUE, END_MY_MOVE, FINISH, RETURN = range(6)


@njit(**JIT)
def _enter(g, stack, ply, you, opponents, cheap, only_move, moves, scratch, frame, bounds,
           keys_at, salt, table_keys, table_values, table_info, zobrist, zobrist_health,
           zobrist_food, killers_me, killers_them, history, pv_length, leaf, best_reply):
    """Open ``you``'s node at ``ply`` (depth and bounds already in its frame, its key in
    ``keys_at[ply]``, set by :func:`_tree` where it made the node; the root's moves are
    searched one by one, ``only_move``, and the root is not looked up). Returns its
    value when it needs no children (the horizon, a table hit), else :data:`NOT_TERMINAL`
    after generating and ordering the moves."""
    s = stack[ply]
    pv_length[ply] = ply
    depth = frame[ply, F_DEPTH]
    if depth == 0:
        return evaluate(g, s, you, ply, leaf, scratch[ply, R_MINE])
    n = g[G_N]
    k_opponents = opponents.shape[0]
    alpha, beta = bounds[ply, B_ALPHA], bounds[ply, B_BETA]
    bounds[ply, B_ALPHA0] = alpha

    table_move = -1
    if only_move < 0:
        key = keys_at[ply]
        slot = key & np.uint64(table_keys.shape[0] - 1)
        frame[ply, F_SLOT] = slot
        info = table_info[slot]
        value = table_values[slot]
        if table_keys[slot] == key ^ entry_check(value, info):
            table_move = ((info >> 8) & 7) - 1
            if (info & 255) >= depth:
                bound = (info >> 11) & 3
                if value >= PROVEN:
                    value -= ply
                elif value <= -PROVEN:
                    value += ply
                if bound == EXACT:
                    return value
                if bound == LOWER and value > alpha:
                    alpha = value
                elif bound == UPPER and value < beta:
                    beta = value
                if alpha >= beta:
                    return value
                bounds[ply, B_ALPHA], bounds[ply, B_BETA] = alpha, beta

    # Your moves, in order: the table's, the killer, then by history.
    my_moves = scratch[ply, R_MINE]
    head = segment(g, s, you, 0)
    frame[ply, F_HEAD] = head
    if only_move >= 0:
        my_moves[0] = only_move
        my_count = 1
    else:
        my_count = candidate_moves(g, s, you, my_moves)
    keys = scratch[ply, R_KEYS]
    for k in range(my_count):
        m = my_moves[k]
        keys[k] = history[you, head, m]
        if m == killers_me[ply]:
            keys[k] += 1 << 40
        if m == table_move:
            keys[k] += 1 << 50
    for a in range(1, my_count):            # insertion sort, largest key first
        m, kv = my_moves[a], keys[a]
        b = a
        while b > 0 and keys[b - 1] < kv:
            my_moves[b], keys[b] = my_moves[b - 1], keys[b - 1]
            b -= 1
        my_moves[b], keys[b] = m, kv
    frame[ply, F_MY_COUNT] = my_count

    # The others: cheap snakes' one move, searched opponents' candidates (on this state).
    turn_moves = moves[ply]
    for j in range(n):
        turn_moves[j] = -1
    for c in range(cheap.shape[0]):
        i = cheap[c]
        if s[g[G_CAUSE] + i] == ALIVE:
            turn_moves[i] = cheap_move(g, s, i, scratch[ply, R_CHEAP])
    opponent_moves = scratch[ply, R_OPPONENTS:R_OPPONENTS + MAX_OPPONENTS]
    opponent_counts = scratch[ply, R_COUNTS]
    joints = 1
    for j in range(k_opponents):
        i = opponents[j]
        if s[g[G_CAUSE] + i] == ALIVE:
            count = candidate_moves(g, s, i, opponent_moves[j])
            oh = segment(g, s, i, 0)
            for a in range(1, count):          # by history, largest first
                m = opponent_moves[j, a]
                b = a
                while b > 0 and history[i, oh, opponent_moves[j, b - 1]] < history[i, oh, m]:
                    opponent_moves[j, b] = opponent_moves[j, b - 1]
                    b -= 1
                opponent_moves[j, b] = m
            if best_reply and count > 1:
                # Its cheap move first: what it plays while another opponent replies.
                default = cheap_move(g, s, i, scratch[ply, R_CHEAP])
                b = 0
                while opponent_moves[j, b] != default:
                    b += 1
                while b > 0:
                    opponent_moves[j, b] = opponent_moves[j, b - 1]
                    b -= 1
                opponent_moves[j, 0] = default
            opponent_counts[j] = count
        else:
            opponent_moves[j, 0] = 0           # its move is ignored by the rules
            opponent_counts[j] = 1
        if best_reply:
            joints += opponent_counts[j] - 1
        else:
            joints *= opponent_counts[j]
    frame[ply, F_JOINTS] = joints
    # The opponents' killer joint move is tried first, wherever it is in the product.
    first = -1
    if joints > 1 and killers_them[ply] >= 0:
        joint = scratch[ply, R_JOINT]
        for t in range(joints):
            if (_joint_move(opponent_moves, opponent_counts, k_opponents, t, joint, best_reply)
                    == killers_them[ply]):
                first = t
                break
    frame[ply, F_FIRST] = first
    frame[ply, F_A] = 0
    frame[ply, F_MY_DEFERRED] = 0
    frame[ply, F_MY_PASS] = 0
    frame[ply, F_BEST_MOVE] = my_moves[0]
    bounds[ply, B_BEST] = -INF
    _start_my_move(ply, frame, bounds, False)
    return NOT_TERMINAL


@njit(inline="always", **JIT)
def _start_my_move(ply, frame, bounds, null_window):
    """Begin the opponents' replies to your move ``frame[ply, F_A]``; with ``null_window``
    only whether it beats alpha is asked (PVS: a later move is searched with the window
    ``(alpha, alpha + NULL_WINDOW)`` and again in full only when it does)."""
    frame[ply, F_R] = -2              # before the killer joint
    frame[ply, F_DONE] = 0
    frame[ply, F_TRIED] = 0
    frame[ply, F_DEFERRED] = 0
    frame[ply, F_PASS] = 0
    frame[ply, F_BEST_JOINT] = 0
    bounds[ply, B_BEST_MIN] = INF
    beta = bounds[ply, B_BETA]
    alpha = bounds[ply, B_ALPHA]
    if null_window and alpha > -INF and alpha + NULL_WINDOW < beta:
        frame[ply, F_NULL] = 1
        bounds[ply, B_BETA_MIN] = alpha + NULL_WINDOW
    else:
        frame[ply, F_NULL] = 0
        bounds[ply, B_BETA_MIN] = beta


@njit(inline="always", **JIT)
def _next_joint(ply, frame):
    """The index of the next joint move to try at ``ply``, or -1 when all were tried: in
    order, then the ones deferred because another thread was searching them (a second
    pass, :func:`_tree`)."""
    if frame[ply, F_DONE]:
        return -1
    joints, first = frame[ply, F_JOINTS], frame[ply, F_FIRST]
    r = frame[ply, F_R] + 1
    if r == -1:
        if first >= 0:
            frame[ply, F_R] = -1
            return first
        r = 0
    while r < joints and r == first:
        r += 1
    if r < joints:
        frame[ply, F_R] = r
        return r
    frame[ply, F_R] = joints
    t = _take_deferred(frame, ply, F_DEFERRED)
    if t >= 0:
        frame[ply, F_PASS] = 1
    return t


@njit(inline="always", **JIT)
def _take_deferred(frame, ply, field):
    """The lowest index left in the deferred set ``frame[ply, field]`` (a bit mask), taken
    out of it; -1 when it is empty."""
    deferred = frame[ply, field]
    if deferred == 0:
        return -1
    t = 0
    while (deferred >> t) & 1 == 0:
        t += 1
    frame[ply, field] = deferred ^ (np.int64(1) << t)
    return t


@njit(inline="always", **JIT)
def _next_my_move(ply, frame, my_moves, key, searching, ctl, share):
    """The index of your next move to search at ``ply`` (after ``frame[ply, F_A]``), or -1
    when all were searched: in order, leaving for a second pass those another thread is
    searching at this node (``share``: marked in ``searching`` by ``key`` and the move)."""
    if frame[ply, F_MY_PASS] == 0:
        a = frame[ply, F_A] + 1
        while a < frame[ply, F_MY_COUNT]:
            if share:
                mark = key ^ MY_MOVE_MARK[my_moves[a]]
                if searching[mark & np.uint64(searching.shape[0] - 1)] == mark:
                    frame[ply, F_MY_DEFERRED] |= np.int64(1) << a
                    ctl[C_DEFERRED] += 1
                    a += 1
                    continue
            return a
        frame[ply, F_MY_PASS] = 1
    return _take_deferred(frame, ply, F_MY_DEFERRED)


@njit(**JIT)
def _tree(g, stack, root_ply, you, opponents, cheap, only_move, ctl, deadline, halt, ledger,
          yield_above, moves,
          scratch, frame, bounds, keys_at, salt, table_keys, table_values, table_info, zobrist,
          zobrist_health, zobrist_food, killers_me, killers_them, history, pv_my, pv_joint,
          pv_length, line_my, line_joint, line_length, leaf, no_report, pvs, best_reply,
          searching, share):
    """The value of ``you``'s node at ``root_ply`` (its depth and bounds set in its frame),
    searched with an explicit stack of frames (a loop, not recursion: the compiled code can
    then be cached). ``only_move`` >= 0 restricts the first node to that move of yours (the
    root's moves are searched one by one); ``pvs`` searches your moves after the first
    with a null window first. On abort (``ctl[C_ABORT]``) it returns 0, which
    the caller discards.

    With ``share`` (a search on several threads) a node of at least
    :data:`SHARE_MIN_DEPTH` holds its key in ``searching`` while this thread is in it, and
    a reply after the first whose node another thread is in is deferred: searched after
    the other replies (a second pass), when the table most likely holds its value. Your
    moves after the first at such a node (of depth above :data:`SHARE_MIN_DEPTH`: its
    moves lead to nodes of at least that depth) are marked by the node's key and the move
    (:data:`MY_MOVE_MARK`) and deferred alike. One thread alone never finds its own mark
    (a position recurs only at one ply, and a move of yours is marked only while it is
    searched), so without helpers the search is the same either way."""
    k_opponents = opponents.shape[0]
    ply = root_ply
    mode = ENTER
    value = 0.0
    while True:
        if mode == ENTER and frame[ply, F_DEPTH] == 0:
            # The horizon, valued here rather than in _enter: a call that hands over its
            # two dozen arrays costs a leaf as much as a third of its evaluation.
            pv_length[ply] = ply
            value = evaluate(g, stack[ply], you, ply, leaf, scratch[ply, R_MINE])
            mode = RETURN
        elif mode == ENTER:
            value = _enter(g, stack, ply, you, opponents, cheap,
                           only_move if ply == root_ply else -1,
                           moves, scratch, frame, bounds, keys_at, salt, table_keys, table_values,
                           table_info, zobrist, zobrist_health, zobrist_food, killers_me,
                           killers_them, history, pv_length, leaf, best_reply)
            if value != NOT_TERMINAL:
                mode = RETURN
            else:
                if share and frame[ply, F_DEPTH] >= SHARE_MIN_DEPTH and ply != root_ply:
                    key = keys_at[ply]      # being searched: another thread defers it
                    searching[key & np.uint64(searching.shape[0] - 1)] = key
                mode = NEXT_CHILD
        elif mode == NEXT_CHILD:
            t = _next_joint(ply, frame)
            if t < 0:
                mode = END_MY_MOVE
                continue
            ctl[C_NODES] += 1
            if ctl[C_NODES] > ctl[C_MAX_NODES]:
                ctl[C_ABORT] = 1
                ctl[C_STOP_REASON] = STOP_NODES
                return 0.0
            if ctl[C_NODES] & ctl[C_CHECK_MASK] == 0:     # every check_every() nodes
                if halt[0] != 0:
                    ctl[C_ABORT] = 1
                    ctl[C_STOP_REASON] = STOP_HALTED
                    return 0.0
                if yield_above < NEVER_YIELD and busy(ledger) > yield_above:
                    # a helper whose core another search needs (the main thread never reads)
                    ctl[C_ABORT] = 1
                    ctl[C_STOP_REASON] = STOP_YIELDED
                    return 0.0
                if monotonic() >= deadline:
                    ctl[C_ABORT] = 1
                    ctl[C_STOP_REASON] = STOP_DEADLINE
                    return 0.0
            joint = scratch[ply, R_JOINT]
            code = _joint_move(scratch[ply, R_OPPONENTS:R_OPPONENTS + MAX_OPPONENTS],
                               scratch[ply, R_COUNTS], k_opponents, t, joint, best_reply)
            turn_moves = moves[ply]
            turn_moves[you] = scratch[ply, R_MINE, frame[ply, F_A]]
            for j in range(k_opponents):
                turn_moves[opponents[j]] = joint[j]
            child = stack[ply + 1]
            copy_position(g, stack[ply], child)
            if leaf.follows_path:       # the evaluator's state moves along (the network's)
                play_turn(g, child, turn_moves, you, ply, leaf)
            else:
                apply_rules(g, child, turn_moves, -1, no_report)
            frame[ply, F_CODE] = code                      # the joint being searched
            frame[ply, F_REPLY_NULL] = 0
            frame[ply, F_TRIED] += 1
            value = terminal_value(g, child, you, ply + 1)
            if value != NOT_TERMINAL:
                pv_length[ply + 1] = ply + 1
                mode = CHILD_VALUE
            else:
                if frame[ply, F_DEPTH] > 1:
                    # The child is a node: its key, made once for the table and the
                    # threads' marks (a reply checked for deferral is not keyed again).
                    keys_at[ply + 1] = position_key(g, child, salt, zobrist, zobrist_health,
                                                    zobrist_food)
                if (share and frame[ply, F_PASS] == 0 and frame[ply, F_TRIED] > 1
                        and frame[ply, F_DEPTH] > SHARE_MIN_DEPTH):
                    # Another thread is searching this reply: leave it for the second
                    # pass (by then the table holds its value) and search the next.
                    key = keys_at[ply + 1]
                    if searching[key & np.uint64(searching.shape[0] - 1)] == key:
                        frame[ply, F_DEFERRED] |= np.int64(1) << t
                        frame[ply, F_TRIED] -= 1
                        ctl[C_NODES] -= 1
                        ctl[C_DEFERRED] += 1
                        continue
                # PVS on the opponents' side: a reply after the first is asked only
                # whether it does better for them than the best so far.
                alpha, beta_min = bounds[ply, B_ALPHA], bounds[ply, B_BETA_MIN]
                if (pvs and frame[ply, F_TRIED] > 1 and beta_min < INF
                        and beta_min - NULL_WINDOW > alpha):
                    frame[ply, F_REPLY_NULL] = 1
                    alpha = beta_min - NULL_WINDOW
                frame[ply + 1, F_DEPTH] = frame[ply, F_DEPTH] - 1
                bounds[ply + 1, B_ALPHA] = alpha
                bounds[ply + 1, B_BETA] = beta_min
                ply += 1
                mode = ENTER
        elif mode == CHILD_VALUE:
            # The opponents' reply just searched (a min node over joint moves).
            if frame[ply, F_REPLY_NULL] and bounds[ply, B_ALPHA] < value < bounds[ply, B_BETA_MIN]:
                # It does: search it again, in full (the child's state is still there).
                frame[ply, F_REPLY_NULL] = 0
                frame[ply + 1, F_DEPTH] = frame[ply, F_DEPTH] - 1
                bounds[ply + 1, B_ALPHA] = bounds[ply, B_ALPHA]
                bounds[ply + 1, B_BETA] = bounds[ply, B_BETA_MIN]
                ply += 1
                mode = ENTER
                continue
            code = frame[ply, F_CODE]
            if value < bounds[ply, B_BEST_MIN]:
                bounds[ply, B_BEST_MIN] = value
                frame[ply, F_BEST_JOINT] = code
                line_length[ply] = pv_length[ply + 1]        # keep the reply's continuation
                for q in range(ply + 1, pv_length[ply + 1]):
                    line_my[ply, q] = pv_my[ply + 1, q]
                    line_joint[ply, q] = pv_joint[ply + 1, q]
            if bounds[ply, B_BEST_MIN] < bounds[ply, B_BETA_MIN]:
                bounds[ply, B_BETA_MIN] = bounds[ply, B_BEST_MIN]
            if bounds[ply, B_ALPHA] >= bounds[ply, B_BETA_MIN]:
                killers_them[ply] = code
                s = stack[ply]
                joint = scratch[ply, R_JOINT]          # still the joint just searched
                depth = frame[ply, F_DEPTH]
                for j in range(k_opponents):
                    i = opponents[j]
                    if s[g[G_CAUSE] + i] == ALIVE:
                        history[i, segment(g, s, i, 0), joint[j]] += depth * depth
                frame[ply, F_DONE] = 1
            mode = NEXT_CHILD
        elif mode == END_MY_MOVE:
            a = frame[ply, F_A]
            my_move = scratch[ply, R_MINE, a]
            best_min = bounds[ply, B_BEST_MIN]
            if frame[ply, F_NULL] and bounds[ply, B_ALPHA] < best_min < bounds[ply, B_BETA]:
                # The null window says this move beats alpha: search it again, in full.
                _start_my_move(ply, frame, bounds, False)
                mode = NEXT_CHILD
                continue
            marks = share and frame[ply, F_DEPTH] > SHARE_MIN_DEPTH and ply != root_ply
            if marks and a > 0:     # this thread is done with the move: unmark it
                mark = keys_at[ply] ^ MY_MOVE_MARK[my_move]
                at = mark & np.uint64(searching.shape[0] - 1)
                if searching[at] == mark:
                    searching[at] = np.uint64(0)
            if best_min > bounds[ply, B_BEST]:
                bounds[ply, B_BEST] = best_min
                frame[ply, F_BEST_MOVE] = my_move
                pv_my[ply, ply] = my_move
                pv_joint[ply, ply] = frame[ply, F_BEST_JOINT]
                for q in range(ply + 1, line_length[ply]):
                    pv_my[ply, q] = line_my[ply, q]
                    pv_joint[ply, q] = line_joint[ply, q]
                pv_length[ply] = max(line_length[ply], ply + 1)
            if bounds[ply, B_BEST] > bounds[ply, B_ALPHA]:
                bounds[ply, B_ALPHA] = bounds[ply, B_BEST]
            if bounds[ply, B_ALPHA] >= bounds[ply, B_BETA]:
                killers_me[ply] = my_move
                depth = frame[ply, F_DEPTH]
                history[you, frame[ply, F_HEAD], my_move] += depth * depth
                mode = FINISH
            else:
                a = _next_my_move(ply, frame, scratch[ply, R_MINE], keys_at[ply], searching,
                                  ctl, marks)
                if a < 0:
                    mode = FINISH
                else:
                    frame[ply, F_A] = a
                    if marks:       # being searched: another thread defers it
                        mark = keys_at[ply] ^ MY_MOVE_MARK[scratch[ply, R_MINE, a]]
                        searching[mark & np.uint64(searching.shape[0] - 1)] = mark
                    _start_my_move(ply, frame, bounds, pvs)
                    mode = NEXT_CHILD
        elif mode == FINISH:
            value = bounds[ply, B_BEST]
            if not (ply == root_ply and only_move >= 0):
                # Store: the bound, the depth, the best move; proven values relative to here.
                stored = value
                if value >= PROVEN:
                    stored = value + ply
                elif value <= -PROVEN:
                    stored = value - ply
                bound = EXACT
                if value <= bounds[ply, B_ALPHA0]:
                    bound = UPPER
                elif value >= bounds[ply, B_BETA]:
                    bound = LOWER
                slot = frame[ply, F_SLOT]
                info = (min(frame[ply, F_DEPTH], 255) | ((frame[ply, F_BEST_MOVE] + 1) << 8)
                        | (bound << 11))
                table_values[slot] = stored
                table_info[slot] = info
                table_keys[slot] = keys_at[ply] ^ entry_check(stored, info)
                if share and frame[ply, F_DEPTH] >= SHARE_MIN_DEPTH:
                    key = keys_at[ply]
                    at = key & np.uint64(searching.shape[0] - 1)
                    if searching[at] == key:
                        searching[at] = np.uint64(0)
            mode = RETURN
        else:   # RETURN: hand ``value`` to the parent
            if ply == root_ply:
                return value
            ply -= 1
            mode = CHILD_VALUE


@njit(inline="always", **JIT)
def others_searching(running, me):
    """Whether a thread of this search other than ``me`` is still searching."""
    for h in range(running.shape[0]):
        if h != me and running[h] != 0:
            return True
    return False


@njit(**JIT)
def check_every(cells, n):
    """Nodes between two looks at the clock: :data:`CHECK_EVERY` where a node is cheap,
    fewer in proportion (a power of two, at least 1) on large boards with many snakes,
    whose nodes cost up to milliseconds, so that the search still stops within about a
    millisecond of its deadline."""
    every = CHECK_EVERY
    while every > 1 and every * cells * n > CHECK_EVERY * CHEAP_NODE_WORK:
        every //= 2
    return every


@njit(**JIT_NRT)
def search(g, root, you, opponents, cheap, deadline, hard_deadline, max_nodes, max_depth, salt,
           table_keys, table_values, table_info, zobrist, zobrist_health, zobrist_food,
           history, leaf, result, root_scores, iterations, pv_out, pvs, exact_root, best_reply,
           halt, parity, ledger, yield_above, searching, share, running, me):
    """Iterative deepening from ``root`` until ``deadline`` (monotonic seconds), ``max_nodes``
    or ``max_depth``, or until another thread sets ``halt[0]`` (checked with the clock);
    until one iteration is complete, until ``hard_deadline`` (>= ``deadline``) instead: a
    search whose share of the cores came late still answers with a searched move.
    ``parity`` -1 searches every depth; 0 or 1 only the even or odd ones (and the last,
    ``max_depth``) while another thread of the search is searching: ``running`` holds 1
    per thread of :func:`run` still searching, this one ``me`` (0 the main thread), and
    this thread clears its own when it returns. A helper searches one parity, a depth
    ahead of the main thread half the time; the main thread, in a duel, the other one
    (:func:`snake.search.compiled.threads.run`), and every depth again once its helpers
    are gone. A helper gives its
    core back (stops, "core given back") when the searches in flight on the server
    (:func:`busy` of ``ledger``, :mod:`snake.search.cores`) exceed ``yield_above``
    (:data:`NEVER_YIELD` for the main thread). ``searching`` (shared by the threads) and
    ``share``: the nodes being searched, and whether to mark them and defer replies
    another thread is in (:func:`_tree`). ``leaf`` values the horizon's positions
    (:func:`snake.evaluation.compiled.leaf.leaf_evaluator`; its scratch is this search's
    own). Writes ``result`` (best move, score, depth, nodes, stop reason, iterations
    recorded, principal variation length, replies deferred), ``root_scores`` (per move, of
    the last completed iteration; -INF for moves not searched), ``iterations`` (rows:
    depth, move, score, nodes, ms) and ``pv_out`` (rows: your move, the opponents' joint
    code).

    A root move after the best is searched only to show it is no better, so its score is
    an upper bound; with ``exact_root`` every root move gets a full window and an exact
    score (more nodes: for training data, which learns every move's value)."""
    n = g[G_N]
    started = monotonic()
    stack = np.zeros((MAX_PLY + 2, g[G_SIZE]), dtype=np.int32)
    stack[0] = root
    moves = np.zeros((MAX_PLY + 1, n), dtype=np.int32)
    scratch = np.zeros((MAX_PLY + 1, SCRATCH_ROWS, 4), dtype=np.int64)
    frame = np.zeros((MAX_PLY + 2, F_FIELDS), dtype=np.int64)
    bounds = np.zeros((MAX_PLY + 2, B_FIELDS), dtype=np.float64)
    keys_at = np.zeros(MAX_PLY + 2, dtype=np.uint64)
    killers_me = np.full(MAX_PLY + 1, -1, dtype=np.int64)
    killers_them = np.full(MAX_PLY + 1, -1, dtype=np.int64)
    pv_my = np.zeros((MAX_PLY + 2, MAX_PLY + 2), dtype=np.int64)
    pv_joint = np.zeros((MAX_PLY + 2, MAX_PLY + 2), dtype=np.int64)
    pv_length = np.zeros(MAX_PLY + 2, dtype=np.int64)
    line_my = np.zeros((MAX_PLY + 2, MAX_PLY + 2), dtype=np.int64)
    line_joint = np.zeros((MAX_PLY + 2, MAX_PLY + 2), dtype=np.int64)
    line_length = np.zeros(MAX_PLY + 2, dtype=np.int64)
    no_report = np.zeros((0, 4), dtype=np.int32)
    ctl = np.zeros(6, dtype=np.int64)
    ctl[C_MAX_NODES] = max_nodes
    ctl[C_CHECK_MASK] = check_every(g[G_CELLS], n) - 1      # a power of two
    start(g, root, you, leaf)

    root_moves = np.zeros(4, dtype=np.int64)
    n_root = candidate_moves(g, root, you, root_moves)
    previous = np.full(4, -INF)
    best_move = -1
    best_score = 0.0
    best_depth = 0
    n_iterations = 0
    stop = STOP_MAX_DEPTH
    for depth in range(1, min(max_depth, MAX_PLY - 1) + 1):
        if (parity >= 0 and n_root > 1 and depth % 2 != parity and depth < max_depth
                and others_searching(running, me)):
            continue
        # Order the root: the previous best first, then by the previous scores.
        order = root_moves[:n_root].copy()
        for a in range(1, n_root):
            m = order[a]
            b = a
            while b > 0 and previous[order[b - 1]] < previous[m]:
                order[b] = order[b - 1]
                b -= 1
            order[b] = m
        for a in range(n_root):
            if order[a] == best_move:
                for b in range(a, 0, -1):
                    order[b] = order[b - 1]
                order[0] = best_move
                break
        # One iteration: each root move's value (the opponents' best reply), with the
        # best so far as alpha; no beta cut at the root.
        scores = np.full(4, -INF)
        stop_at = deadline if best_depth >= 1 else hard_deadline
        alpha = -INF
        it_best, it_move = -INF, -1
        completed = 0
        for a in range(n_root):
            # PVS: a move after the first is asked only whether it beats alpha, and
            # searched in full when it does.
            window = -INF if exact_root else alpha
            null_window = pvs and a > 0 and window > -INF
            while True:
                frame[0, F_DEPTH] = depth
                bounds[0, B_ALPHA] = window
                bounds[0, B_BETA] = window + NULL_WINDOW if null_window else INF
                value = _tree(g, stack, 0, you, opponents, cheap, order[a], ctl, stop_at, halt,
                              ledger, yield_above, moves,
                              scratch, frame, bounds, keys_at, salt, table_keys, table_values,
                              table_info, zobrist, zobrist_health, zobrist_food, killers_me,
                              killers_them, history, pv_my, pv_joint, pv_length, line_my,
                              line_joint, line_length, leaf, no_report, pvs, best_reply,
                              searching, share)
                if ctl[C_ABORT] or not null_window or value <= window:
                    break
                null_window = False
            if ctl[C_ABORT]:
                break
            completed += 1
            scores[order[a]] = value
            if value > it_best:
                it_best, it_move = value, order[a]
                for q in range(pv_length[0]):
                    pv_out[q, 0] = pv_my[0, q]
                    pv_out[q, 1] = pv_joint[0, q]
                result[6] = pv_length[0]
            if value > alpha:
                alpha = value
        elapsed = (monotonic() - started) * 1000.0
        if ctl[C_ABORT]:
            stop = ctl[C_STOP_REASON]
            # The partial iteration counts when its first move (the previous best) was
            # searched to the end: a move that beat it is better at this depth. Not at the
            # first depth: its first move was no one's best, only first in order.
            if completed >= 1 and it_move >= 0 and best_depth >= 1:
                best_move, best_score = it_move, it_best
            elif best_depth == 0:
                result[6] = 0           # no line: the first depth's was not adopted
            break
        best_move, best_score, best_depth = it_move, it_best, depth
        for m in range(4):
            previous[m] = scores[m]
            root_scores[m] = scores[m]
        iterations[n_iterations, 0] = depth
        iterations[n_iterations, 1] = it_move
        iterations[n_iterations, 2] = it_best
        iterations[n_iterations, 3] = ctl[C_NODES]
        iterations[n_iterations, 4] = elapsed
        n_iterations += 1
        proven_loss = True
        for a in range(n_root):
            if scores[root_moves[a]] > -PROVEN:
                proven_loss = False
        if abs(it_best) >= PROVEN or proven_loss:
            stop = STOP_PROVEN
            break
        if n_root == 1:
            stop = STOP_SINGLE
            break
    if me > 0 and (stop == STOP_MAX_DEPTH or stop == STOP_PROVEN):
        halt[0] = 1         # a helper finished the search: the other threads stop
    running[me] = 0
    result[0] = best_move
    result[1] = best_score
    result[2] = best_depth
    result[3] = ctl[C_NODES]
    result[4] = stop
    result[5] = n_iterations
    result[7] = ctl[C_DEFERRED]
