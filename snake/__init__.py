"""Nuppeppou: a Battlesnake whose moves are chosen by a compiled alpha-beta search over board
control, with an NNUE whose accumulator is kept per game (README.md).

The package holds the game model (:mod:`snake.board`) and everything built on it, by
concept: the rules (:mod:`snake.rules`) and their compiled twin (:mod:`snake.core`), the
move filter and flood fill, evaluation, search, strategies, game records, serving,
observability and the arena. NNUE inference is the package :mod:`nnue`; training tools are
:mod:`training`.
"""

__version__ = "0.1.0"
