"""NNUE inference for Nuppeppou (SPEC §4): the input features of a state
(:mod:`nnue.features`), the 63720 -> 512 -> 512 -> 4 network and its weight file
(:mod:`nnue.network`), the per-game incrementally updated first layer
(:mod:`nnue.accumulator`) and the recycle stack of 32 accumulators (:mod:`nnue.pool`).
Training lives in :mod:`training`. See docs/nnue.md."""
