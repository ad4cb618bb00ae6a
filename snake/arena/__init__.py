"""The local arena: many games between built-in strategies and HTTP Battlesnakes.

- :mod:`.players`  — who plays: built-in strategies and HTTP snakes, one seat object per snake
- :mod:`.schedule` — who sits where in each game, and each game's seeds
- :mod:`.match`    — one game, played with :func:`snake.rules.play_turn`
- :mod:`.scoring`  — win/draw/loss of each player in a game
- :mod:`.stats`    — score, Wilson interval, Elo
- :mod:`.report`   — totals and the printed tables
- :mod:`.replay`   — the official CLI's JSONL game records
- :mod:`.tally`    — records scored later, and ledgers of them
- :mod:`.ending`   — how a snake's game ended, by the rules (cause, trapped, cut off)
- :mod:`.postmortem` — what its search saw of a death
- :mod:`.render`   — a replay as an HTML page to watch
- :mod:`snake.progress` — the progress bar (shared with training)

Run it with ``python -m snake.arena``; see docs/arena.md.
"""
