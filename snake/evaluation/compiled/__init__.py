"""The compiled twin of :mod:`snake.evaluation` (numba): board control with its styles,
hunger and value head (:mod:`.control`), and the network's value at a leaf
(:mod:`.network`)."""
