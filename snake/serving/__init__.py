"""Serving the Battlesnake API: the game sessions with their leased accumulators
(:mod:`.sessions`) and when a request arrived (:mod:`.arrival`). The routes are ``app.py``."""
