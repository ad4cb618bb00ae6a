"""The compiled twin of :mod:`snake.evaluation` (numba): board control with its styles,
hunger and value head (:mod:`.control`), the network's value at a leaf (:mod:`.network`),
and the leaf evaluator the compiled search is given, one of them or a blend
(:mod:`.leaf`)."""
