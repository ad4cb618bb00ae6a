"""Geometry: moves, the square a move leads to, wrapping, distances and neighbours.

Conventions of the official API: ``(0, 0)`` is the bottom-left square, ``up`` is ``y + 1``.
In the wrapping rulesets (:attr:`snake.board.Ruleset.wraps`) a step off one edge comes back
on the opposite edge; otherwise the square one step away may lie off the board (and a head
there is eliminated by the rules).

Everything here is a pure function of points and the board's size; nothing reads a game.
:func:`next_square` is the one exception, a convenience that takes those from a state.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # annotations only: the game model imports nothing from the rules
    from snake.board import GameState, Point

#: The four moves, in the order that breaks ties and lays out the network's outputs.
MOVES: tuple[str, ...] = ("up", "down", "left", "right")
#: The step of each move.
DELTAS: dict[str, tuple[int, int]] = {"up": (0, 1), "down": (0, -1),
                                      "left": (-1, 0), "right": (1, 0)}


def step(point: Point, move: str, width: int, height: int, wraps: bool) -> Point:
    """The square one ``move`` away from ``point``: across the edges when ``wraps``,
    otherwise possibly off the board. Raises ``KeyError`` for a string that is not a move."""
    dx, dy = DELTAS[move]
    x, y = point[0] + dx, point[1] + dy
    if wraps:
        x %= width
        y %= height
    return (x, y)


def next_square(state: GameState, point: Point, move: str) -> Point:
    """:func:`step` on ``state``'s board and ruleset."""
    board = state.board
    return step(point, move, board.width, board.height, state.game.ruleset.wraps)


def last_move(head: Point, neck: Point | None) -> str:
    """The move that took a snake from ``neck`` to ``head`` (also across a wrapped edge),
    ``up`` when there is none (no neck, or head and neck on one square). The engine
    repeats it for a snake that gave no valid move."""
    if neck is not None:
        (hx, hy), (nx, ny) = head, neck
        if hx == nx + 1:
            return "right"
        if hx == nx - 1:
            return "left"
        if hy == ny + 1:
            return "up"
        if hy == ny - 1:
            return "down"
        # Not adjacent: a step across a wrapped edge.
        if hx == 0 and nx > 0:
            return "right"
        if nx == 0 and hx > 0:
            return "left"
        if hy == 0 and ny > 0:
            return "up"
        if ny == 0 and hy > 0:
            return "down"
    return "up"


def distance(a: Point, b: Point, width: int, height: int, wraps: bool) -> int:
    """Manhattan distance between two squares, the short way round when ``wraps``."""
    dx, dy = abs(a[0] - b[0]), abs(a[1] - b[1])
    if wraps:
        dx = min(dx, width - dx)
        dy = min(dy, height - dy)
    return dx + dy


@lru_cache(maxsize=64)
def neighbour_table(width: int, height: int, wraps: bool) -> tuple[tuple[int, ...], ...]:
    """For each square index ``y * width + x``, the indices of its neighbours in
    :data:`MOVES` order: those on the board, or all four across the edges when ``wraps``
    (a square is never its own neighbour, as on a 1-wide wrapped board). For the grid
    searches of flood fill and board control."""
    table = []
    for y in range(height):
        for x in range(width):
            out = []
            for move in MOVES:
                nx, ny = step((x, y), move, width, height, wraps)
                if (nx, ny) != (x, y) and 0 <= nx < width and 0 <= ny < height:
                    out.append(ny * width + nx)
            table.append(tuple(out))
    return tuple(table)
