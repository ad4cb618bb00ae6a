"""How a person reads a game's snakes: by their names.

A snake's id is for machines (a UUID from the official engine, ``snake-0-4c4c870f`` from
the arena); what a person reads (the dashboard, ``python -m snake.explain``, the replay
viewer, the post-mortem) names each snake by its name. :func:`snake_names` is the one rule
for it, so that every view of a game names its snakes alike.
"""

from __future__ import annotations

from typing import Iterable

#: The fewest characters of an id shown after a name two snakes share: enough to read
#: ``1f1f`` of a UUID; the rule takes more where the first ones are alike
#: (``snake-0`` and ``snake-1`` of the arena's ids).
SHORT_ID = 4


def snake_names(snakes: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The name to show for each snake of a game, by id, from its ``(id, name)`` pairs.

    A snake is shown by its name, unless another snake of the game has the same name: then
    each of those is shown as its name, ``#`` and the shortest start of its id (at least
    :data:`SHORT_ID` characters, the whole id when it is shorter) that no other of them
    shares: ``nuppeppou#1f1f`` beside ``nuppeppou#9084``. A snake without a name is shown
    by its id. A snake given twice (the same id, say once per turn) counts once, under the
    first non-empty name given for it.
    """
    named: dict[str, str] = {}
    for snake_id, name in snakes:
        if not named.get(snake_id):
            named[snake_id] = name or ""
    sharing: dict[str, list[str]] = {}
    for snake_id, name in named.items():
        if name:
            sharing.setdefault(name, []).append(snake_id)
    shown = {}
    for snake_id, name in named.items():
        if not name:
            shown[snake_id] = snake_id
        elif len(sharing[name]) == 1:
            shown[snake_id] = name
        else:
            shown[snake_id] = f"{name}#{_short_id(snake_id, sharing[name])}"
    return shown


def _short_id(snake_id: str, group: list[str]) -> str:
    """The shortest start of ``snake_id`` (at least :data:`SHORT_ID` characters) that no
    other id of ``group`` starts with the same way; ids are distinct, so the whole id
    always is one."""
    for length in range(SHORT_ID, len(snake_id) + 1):
        start = snake_id[:length]
        if not any(other != snake_id and other[:length] == start for other in group):
            return start
    return snake_id
