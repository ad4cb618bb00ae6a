"""Search: look ahead within the time budget (docs/search.md).

- :mod:`.state`: the search's view of the game (searched snakes, cheap moves for the others,
  exact terminal values; every turn is played by :func:`snake.rules.apply_rules`);
- :mod:`.evaluate`: board-control (Voronoi) and NNUE evaluators;
- :mod:`.alphabeta`: paranoid alpha-beta with iterative deepening, the readable search;
- :mod:`.compiled`: the adapter of the compiled alpha-beta (:mod:`snake.core.search`);
- :mod:`.clock`: deadline and node budget;
- :mod:`.result`: what a search returns;
- :mod:`.strategy`: :class:`SearchStrategy`, its variants (:data:`VARIANTS`) and
  :func:`make_search_strategy`; the registry :mod:`snake.strategies` offers them by name.

The package imports none of them, so a module may use one part (the result type, say)
without loading the rest.
"""
