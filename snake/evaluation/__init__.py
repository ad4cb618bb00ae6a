"""What a position is worth to a snake, on the search's scale (-1 lost, +1 won).

- :mod:`.control`: board control (Voronoi): who reaches each square first, and the value
  of a snake's share; the readable reference;
- :mod:`.network`: the NNUE's value of a position, its accumulator kept along the search
  path;
- :mod:`.value_head`: the learned value head over board control's measurements (its file);
- :mod:`.compiled`: the compiled twin (numba) that the compiled search plays.
"""
