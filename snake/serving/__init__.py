"""Serving the Battlesnake API: what the routes need, built from the settings
(:mod:`.service`), the game sessions with their leased accumulators (:mod:`.sessions`) and
when a request arrived (:mod:`.arrival`). The routes are ``app.py``."""
