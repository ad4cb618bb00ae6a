"""Every strategy by name: the one registry.

The service picks one by the environment variable ``NUPPEPPOU_STRATEGY`` (default
:data:`DEFAULT_STRATEGY`, ``search``: it beats ``seed`` and ``floodfill`` in the arena,
docs/search-evidence.md); the arena and ``python -m snake.explain`` use :func:`get_strategy`.

- ``seed``, ``floodfill``, ``random``: the one-step strategies (:mod:`snake.seed`);
- ``search`` (the compiled alpha-beta), ``search-joint`` (the default until 2026-11-24),
  ``search-py`` (the Python alpha-beta), ``search-nnue``,
  ``search-net``, ``search-blend`` and the arena's opponent styles
  ``grower``, ``hunter``, ``space-taker``: look-ahead within the time budget
  (:data:`snake.search.strategy.VARIANTS`, docs/search.md).

Other strategies plug in with :func:`register_strategy`.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from snake.decision import Strategy
from snake.search.strategy import VARIANTS, make_search_strategy, split_options
from snake.seed import FloodFillStrategy, RandomStrategy, SeedStrategy
from snake.settings import DEFAULT_STRATEGY, Settings

StrategyFactory = Callable[..., Strategy]

_REGISTRY: dict[str, StrategyFactory] = {
    "seed": lambda network=None, seed=None: SeedStrategy(),
    "floodfill": lambda network=None, seed=None: FloodFillStrategy(),
    "random": lambda network=None, seed=None: RandomStrategy(seed),
    **{name: functools.partial(make_search_strategy, name) for name in VARIANTS},
}

__all__ = ["DEFAULT_STRATEGY", "STRATEGIES", "check_name", "get_strategy", "register_strategy"]

#: Names of the registered strategies.
STRATEGIES: tuple[str, ...] = tuple(_REGISTRY)


def register_strategy(name: str, factory: StrategyFactory) -> None:
    """Make ``factory(network=..., seed=...)`` available as strategy ``name``."""
    global STRATEGIES
    _REGISTRY[name] = factory
    STRATEGIES = tuple(_REGISTRY)


def check_name(name: str) -> tuple[str, dict[str, Any]]:
    """The registered name and the options of strategy name ``name``, building nothing;
    ``ValueError`` for an unknown name (listing the known ones) or options where there can
    be none. A search strategy's name may carry options in brackets,
    ``search[max_opponents=3,reach=8]`` (:func:`snake.search.strategy.split_options`)."""
    base, options = split_options(name)
    if base not in _REGISTRY:
        raise ValueError(
            f"unknown strategy {base!r}; choose one of: {', '.join(_REGISTRY)}"
        )
    if (options or base != name) and base not in VARIANTS:
        raise ValueError(f"strategy {name!r}: only search strategies take options "
                         f"({', '.join(VARIANTS)})")
    return base, options


def get_strategy(name: str, *, network: Any | None = None, seed: int | None = None,
                 settings: Settings | None = None) -> Strategy:
    """A new strategy by name (:func:`check_name`). A search strategy takes the search's
    settings (``NUPPEPPOU_SEARCH_*``) from ``settings``, by default the environment's."""
    base, options = check_name(name)
    if options or base != name:
        strategy = make_search_strategy(base, network, seed, overrides=options,
                                        settings=settings)
        strategy.name = name
        return strategy
    if base in VARIANTS and settings is not None:
        return make_search_strategy(base, network, seed, settings=settings)
    return _REGISTRY[name](network=network, seed=seed)
