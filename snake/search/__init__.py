"""Search: look ahead within the time budget (docs/search.md).

The readable search, the reference:

- :mod:`.plan`: the search's view of the game (which snakes are searched, cheap moves for
  the others, exact terminal values; every turn is played by :func:`snake.rules.apply_rules`);
- :mod:`.alphabeta`: paranoid alpha-beta with iterative deepening;
- :mod:`.clock`: deadline and node budget;
- :mod:`.last_chance`: a root rule for a position proved lost this turn.

Its compiled twin, the search the service plays: :mod:`.compiled` (tree, table, threads).
Positions are valued by :mod:`snake.evaluation`; a search answers a
:class:`snake.decision.SearchResult`.

- :mod:`.strategy`: :class:`SearchStrategy`, its variants (:data:`VARIANTS`) and
  :func:`make_search_strategy`; the registry :mod:`snake.strategies` offers them by name;
- :mod:`.cores`: the server's searches in flight across its processes, and each search's
  share of the cores.

The package imports none of them, so a module may use one part without loading the rest.
"""
