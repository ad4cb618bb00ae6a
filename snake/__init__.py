"""Nuppeppou: a Battlesnake that picks its moves with an NNUE.

The package holds the game model (:mod:`snake.board`), and everything built on it:
the rules engine, the move filter, flood fill, sessions, strategies and the arena.
"""

__version__ = "0.1.0"
