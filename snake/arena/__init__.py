"""The local arena: many games between built-in strategies and HTTP Battlesnakes.

- :mod:`.players`  — who plays: built-in strategies and HTTP snakes, one seat object per snake
- :mod:`.schedule` — who sits where in each game, and each game's seeds
- :mod:`.match`    — one game, played with :func:`snake.rules.play_turn`
- :mod:`.scoring`  — win/draw/loss of each player in a game
- :mod:`.stats`    — score, Wilson interval, Elo
- :mod:`.report`   — totals and the printed tables
- :mod:`.tally`    — records scored later, and ledgers of them
- :mod:`.postmortem` — what its search saw of a death
- :mod:`snake.progress` — the progress bar (shared with training)

Game records (replays, endings, the HTML viewer) are :mod:`snake.records`.

Run it with ``python -m snake.arena``; see docs/arena.md.
"""
