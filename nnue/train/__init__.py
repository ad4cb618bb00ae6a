"""Supervised training of Nuppeppou's NNUE (SPEC section 5).

The pipeline, one module per job:

- :mod:`nnue.train.datagen` plays games of random snakes through the rules engine and writes
  positions (active features, move played, WDL target) to shards, split by game;
- :mod:`nnue.train.shards` is the shard format and its loader;
- :mod:`nnue.train.model` is the PyTorch network (63720 -> 512 -> 512 -> 4);
- :mod:`nnue.train.fit` trains it with checkpoints, resume and early stopping;
- :mod:`nnue.train.export` writes the quantised numpy network and its manifest;
- :mod:`nnue.train.evaluate` tabulates test loss per ruleset x board size.

PyTorch is needed only here (``requirements-train.txt``), never by the server.
"""
