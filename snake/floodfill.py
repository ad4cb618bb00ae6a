"""Flood fill: the fallback that scores a move by the room it leads into (SPEC §2 step 4).

For each move, the region the move enters is the square it leads to plus every square
reachable from there through squares that are free after this turn's movement
(:func:`snake.rules.obstacles_after_move`: a tail square is free iff that snake did not just
eat and the ruleset is not a constrictor one; squadmates' bodies are free with squad
``allowBodyCollisions``; edges wrap in wrapped rulesets). The region is worth the sum of its
squares: an empty square 1, a hazard square 1/16, a food square the health ``you`` would
restore by eating it now, ``100 − health`` (food on a hazard counts as food). A move into a
square that is not free, or off the board, is worth 0.

Every value is a multiple of 1/16, so the sums are exact and ties are exact ties, broken by
:data:`~snake.rules.MOVES` order by :func:`best_move`.

The board is held as a flat ``bytearray`` indexed ``y * width + x`` with cached neighbour
tables, and each connected region is filled once even when several moves enter it.
"""

from __future__ import annotations

from typing import Iterable

from snake.board import GameState, Snake
from snake.rules import MOVES, neighbour_table, next_square, obstacles_after_move

HAZARD_VALUE = 1.0 / 16.0
_FREE, _HAZARD, _FOOD = 1, 2, 3


def free_grid(state: GameState, you: Snake) -> bytearray:
    """The board after this turn's movement as seen by ``you``: 0 for a blocked square,
    otherwise 1 (empty), 2 (hazard) or 3 (food)."""
    board = state.board
    width, height = board.width, board.height
    grid = bytearray([_FREE]) * (width * height)
    for x, y in board.hazards:
        if 0 <= x < width and 0 <= y < height:
            grid[y * width + x] = _HAZARD
    for x, y in board.food:
        if 0 <= x < width and 0 <= y < height:
            grid[y * width + x] = _FOOD
    for x, y in obstacles_after_move(state, you):
        if 0 <= x < width and 0 <= y < height:
            grid[y * width + x] = 0
    return grid


def flood_fill_scores(state: GameState, you: Snake,
                      moves: Iterable[str] = MOVES) -> dict[str, float]:
    """The flood-fill sum of each move in ``moves`` (see the module docstring)."""
    board = state.board
    width = board.width
    grid = free_grid(state, you)
    neighbours = neighbour_table(width, board.height, state.ruleset.wraps)
    values = (0.0, 1.0, HAZARD_VALUE, float(max(0, 100 - you.health)))
    region_of: dict[int, int] = {}  # square index -> region number
    region_sums: list[float] = []

    scores: dict[str, float] = {}
    for move in moves:
        square = next_square(state, you.head, move)
        if not board.in_bounds(square) or not you.alive:
            scores[move] = 0.0
            continue
        start = square[1] * width + square[0]
        if not grid[start]:
            scores[move] = 0.0
            continue
        region = region_of.get(start)
        if region is None:
            region = len(region_sums)
            region_of[start] = region
            total = 0.0
            stack = [start]
            while stack:
                i = stack.pop()
                total += values[grid[i]]
                for j in neighbours[i]:
                    if grid[j] and j not in region_of:
                        region_of[j] = region
                        stack.append(j)
            region_sums.append(total)
        scores[move] = region_sums[region]
    return scores


def room(state: GameState, snake: Snake) -> set[int]:
    """The squares (indices ``y * width + x``) ``snake`` can reach: every region its moves
    enter, through squares free after this turn's movement as :func:`free_grid` sees them
    for it. Empty for a snake that is not alive."""
    board = state.board
    width = board.width
    if not snake.alive:
        return set()
    grid = free_grid(state, snake)
    neighbours = neighbour_table(width, board.height, state.ruleset.wraps)
    head = snake.head
    stack = [j for j in neighbours[head[1] * width + head[0]] if grid[j]]
    seen = set(stack)
    while stack:
        for j in neighbours[stack.pop()]:
            if grid[j] and j not in seen:
                seen.add(j)
                stack.append(j)
    return seen


def best_move(scores: dict[str, float], allowed: Iterable[str]) -> str | None:
    """The allowed move with the greatest score, ties broken in MOVES order; ``None`` when
    nothing is allowed."""
    allowed = set(allowed)
    best: str | None = None
    for move in MOVES:
        if move in allowed and (best is None or scores[move] > scores[best]):
            best = move
    return best
