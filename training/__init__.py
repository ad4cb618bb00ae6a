"""Training: the tools that make and judge what the snake plays with (SPEC section 5 and
beyond). A tool above everything else: nothing outside this package imports it.

The NNUE's pipeline, one module per job:

- :mod:`training.datagen` plays games of random snakes through the rules engine and writes
  positions (active features, move played, WDL target) to shards, split by game;
- :mod:`training.selfplay` the same from the compiled search's games, labelled by it;
- :mod:`training.from_game_log` the same from the service's own games;
- :mod:`training.shards` is the shard format and its loader; :mod:`training.merge` joins shards;
- :mod:`training.model` is the PyTorch network (63720 -> 512 -> 512 -> 4);
- :mod:`training.fit` trains it with checkpoints, resume and early stopping;
- :mod:`training.export` writes the quantised numpy network and its manifest;
- :mod:`training.evaluate` tabulates test loss per ruleset x board size;
- :mod:`training.loop` the learning loop: self-play, fit, export, gate in the arena.

The search's learned and tuned weights: :mod:`training.fit_head` fits the value head,
:mod:`training.tune` tunes weights by SPSA in the arena.

PyTorch is needed only here (``requirements-train.txt``), never by the server.
"""
