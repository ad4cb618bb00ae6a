"""The compiled twin of the search (numba), split as a chess engine splits its own:

- :mod:`.tree`: paranoid alpha-beta over simultaneous moves, iterative deepening (the twin
  of :mod:`snake.search.alphabeta`);
- :mod:`.table`: the transposition table and the position key;
- :mod:`.threads`: one search on several threads (lazy SMP) and what it found;
- :mod:`.timer`: the monotonic clock read inside the compiled loop;
- :mod:`.alphabeta`: :class:`~.alphabeta.CompiledAlphaBeta`, the compiled search behind the
  readable one's interface (a request's state in, a :class:`snake.decision.SearchResult`
  out).

Positions are valued by :mod:`snake.evaluation.compiled`. See docs/core.md.
"""
