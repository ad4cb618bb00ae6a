"""Boards drawn as text, for tests, ``snake.explain`` and the arena's console view.

A diagram has one line per row, the top line being the highest ``y``; spaces are ignored,
so ``". A a"`` and ``".Aa"`` are the same row. Each cell is one character:

====  ==========================================================
``.``  empty square
``*``  food
``~``  hazard
``@``  food on a hazard square
``A``  head of snake ``A`` (any capital letter names a snake)
``a``  a body segment of snake ``A``
====  ==========================================================

A body is traced from its head through neighbouring cells of the same lowercase letter
(across the edges in wrapped rulesets); a drawing where the next segment is ambiguous is
refused. Segments stacked on the tail (a snake that just ate, or the three stacked
segments of turn 0) are given with ``stacked={"A": n}``: ``n`` extra copies of the tail.
"""

from __future__ import annotations

from typing import Iterable

from snake.board import Board, Game, GameState, MoveRequest, Point, Ruleset, Settings, Snake
from snake.rules import MOVES, step


def from_ascii(
    drawing: str,
    ruleset: str | Ruleset = "standard",
    *,
    you: str = "A",
    health: dict[str, int] | None = None,
    squads: dict[str, str] | None = None,
    stacked: dict[str, int] | None = None,
    hazards: Iterable[Point] = (),
    turn: int = 10,
    settings: Settings | None = None,
    game_id: str = "drawn-game",
    timeout: int = 500,
) -> MoveRequest:
    """Build a :class:`MoveRequest` from a drawing; ``you`` names the snake we play."""
    rows = [line.replace(" ", "") for line in drawing.strip("\n").splitlines()]
    rows = [r for r in rows if r]
    if not rows:
        raise ValueError("empty drawing")
    height, width = len(rows), len(rows[0])
    if any(len(r) != width for r in rows):
        raise ValueError("rows of a drawing must all have the same width")
    if isinstance(ruleset, str):
        ruleset = Ruleset(name=ruleset, settings=settings or Settings())
    wraps = ruleset.wraps

    cells: dict[Point, str] = {}
    food: list[Point] = []
    hazard_list: list[Point] = list(hazards)
    heads: dict[str, Point] = {}
    for row_index, row in enumerate(rows):
        y = height - 1 - row_index
        for x, c in enumerate(row):
            p = (x, y)
            if c == ".":
                continue
            if c in "*@":
                food.append(p)
            if c in "~@":
                hazard_list.append(p)
            if c.isalpha():
                cells[p] = c
                if c.isupper():
                    if c in heads:
                        raise ValueError(f"snake {c} has two heads")
                    heads[c] = p
            elif c not in "*~@":
                raise ValueError(f"unknown cell {c!r} at {p}")

    def neighbours(p: Point) -> list[Point]:
        return [step(p, move, width, height, wraps) for move in MOVES]

    snakes: list[Snake] = []
    for letter in sorted(heads):
        body = [heads[letter]]
        seen = {heads[letter]}
        while True:
            nxt = [q for q in neighbours(body[-1])
                   if cells.get(q) == letter.lower() and q not in seen]
            if not nxt:
                break
            if len(nxt) > 1:
                raise ValueError(f"snake {letter}: ambiguous body after {body[-1]}")
            body.append(nxt[0])
            seen.add(nxt[0])
        body.extend([body[-1]] * (stacked or {}).get(letter, 0))
        snakes.append(Snake(
            id=letter, name=letter, body=body,
            health=(health or {}).get(letter, 100),
            squad=(squads or {}).get(letter, ""),
        ))
    strays = [p for p, c in cells.items() if c.islower() and c.upper() not in heads]
    if strays:
        raise ValueError(f"body segments without a head at {strays}")

    board = Board(width, height, food, hazard_list, snakes)
    state = GameState(Game(game_id, ruleset, timeout=timeout), turn, board)
    me = board.snake(you)
    if me is None:
        raise ValueError(f"no snake {you!r} in the drawing")
    return MoveRequest(state, me)


def to_ascii(state: GameState) -> str:
    """Draw the living snakes, food and hazards of ``state`` (the inverse of
    :func:`from_ascii`, stacked segments aside). Snakes are lettered A, B, ... in board order."""
    board = state.board
    grid = [["." for _ in range(board.width)] for _ in range(board.height)]
    hazards = set(board.hazards)
    for x, y in hazards:
        if board.in_bounds((x, y)):
            grid[y][x] = "~"
    for x, y in board.food:
        if board.in_bounds((x, y)):
            grid[y][x] = "@" if (x, y) in hazards else "*"
    for i, s in enumerate(board.living_snakes):
        letter = chr(ord("A") + i % 26)
        for x, y in reversed(s.body):
            if board.in_bounds((x, y)):
                grid[y][x] = letter.lower()
        hx, hy = s.head
        if board.in_bounds((hx, hy)):
            grid[hy][hx] = letter
    return "\n".join(" ".join(row) for row in reversed(grid))
