"""Search: look ahead within the time budget (issue 6; docs/search.md).

- :mod:`.state`: the search's view of the game (searched snakes, candidate moves, exact
  terminal values; every turn is played by :func:`snake.rules.apply_rules`);
- :mod:`.evaluate`: board-control (Voronoi) and NNUE evaluators;
- :mod:`.alphabeta`: paranoid alpha-beta with iterative deepening (the default);
- :mod:`.mcts`: decoupled UCT with priors;
- :mod:`.clock`: deadline and node budget;
- :mod:`.strategy`: :class:`SearchStrategy`, the ``search`` strategies.

This module imports nothing else at import time, so :mod:`snake.strategy` can register the
search strategies without an import cycle::

    from .search import SEARCH_STRATEGIES, make_search_strategy
    for _name in SEARCH_STRATEGIES:
        _REGISTRY[_name] = lambda network=None, seed=None, _n=_name: make_search_strategy(_n, network, seed)
"""

from __future__ import annotations

import os
from typing import Any

#: strategy names and their options (kept in step with ``strategy.VARIANTS``)
SEARCH_STRATEGIES: tuple[str, ...] = ("search", "search-mcts", "search-nnue", "search-mcts-nnue")


def make_search_strategy(name: str = "search", network: Any | None = None,
                         seed: int | None = None) -> Any:
    """The search strategy ``name``. The environment may override the default ``search``'s
    options: ``NUPPEPPOU_SEARCH_ALGORITHM`` (alphabeta, mcts), ``NUPPEPPOU_SEARCH_EVAL``
    (voronoi, nnue, auto); ``NUPPEPPOU_SEARCH_MARGIN_MS`` and ``NUPPEPPOU_SEARCH_MAX_CONCURRENT``
    (searches at once per process) for every variant. ``seed``
    is accepted for the registry's signature; the search is deterministic."""
    from .strategy import VARIANTS, SearchStrategy
    if name not in VARIANTS:
        raise ValueError(f"unknown search strategy {name!r}; choose one of {', '.join(VARIANTS)}")
    options: dict[str, Any] = dict(VARIANTS[name])
    if name == "search":
        options["algorithm"] = os.environ.get("NUPPEPPOU_SEARCH_ALGORITHM") or options["algorithm"]
        options["evaluator"] = os.environ.get("NUPPEPPOU_SEARCH_EVAL") or options["evaluator"]
    for variable, option, kind in (("NUPPEPPOU_SEARCH_MARGIN_MS", "margin_ms", float),
                                   ("NUPPEPPOU_SEARCH_MAX_CONCURRENT", "max_concurrent", int)):
        value = os.environ.get(variable)
        if value:
            try:
                options[option] = kind(value)
            except ValueError:
                expected = "a number" if kind is float else "an integer"
                raise ValueError(f"{variable}={value!r}: expected {expected}") from None
    return SearchStrategy(network, name=name, **options)


def register(register_strategy) -> None:
    """Register every search strategy with ``snake.strategy.register_strategy`` (for
    scripts and tests until the registry lists them itself)."""
    import functools
    for name in SEARCH_STRATEGIES:
        register_strategy(name, functools.partial(make_search_strategy, name))
