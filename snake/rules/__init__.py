"""The rules of Battlesnake, in one place: the readable reference every other part asks.

- :mod:`.geometry`: moves, the square a move leads to, wrapping, distances, neighbours;
- :mod:`.occupancy`: what a body still blocks as the snakes move (the tail and squad
  rules), and the moves that are certain death whatever the others do;
- :mod:`.stages`: the turn step, one function per stage of the official engine, in the
  order of its :data:`~.stages.STAGES` table; game over;
- :mod:`.results`: win, draw or loss for a snake in a finished game, and its place.

The game model they act on is :mod:`snake.board`; map stages (food spawning, map hazards)
are :mod:`snake.rules.maps`. Nothing outside this package moves a snake, decides a collision or
feeds one.
"""

from snake.rules.geometry import (
                       DELTAS,
                       MOVES,
                       distance,
                       last_move,
                       neighbour_table,
                       next_square,
                       step,
)
from snake.rules.occupancy import (
                       BODY,
                       NECK,
                       NEVER,
                       WALL,
                       HazardCopies,
                       candidate_moves,
                       dies_of_health,
                       fatal_reason,
                       obstacles_after_move,
                       passes_through,
                       removed_before_collisions,
                       segments_after_move,
                       turns_until_vacated,
)
from snake.rules.results import (
                       END_AFTER_FINAL,
                       final_turn_at_end,
                       finished_at_end,
                       outcome,
                       outcome_at_end,
                       place,
                       recorded_outcome,
                       recorded_results,
)
from snake.rules.stages import (
                       BODY_COLLISION,
                       GAME_OVER,
                       HAZARD,
                       HEAD_COLLISION,
                       MAX_HEALTH,
                       OUT_OF_HEALTH,
                       SELF_COLLISION,
                       SQUAD_ELIMINATED,
                       STAGES,
                       WALL_COLLISION,
                       Turn,
                       apply_rules,
                       default_move,
                       is_game_over,
                       play_turn,
                       plays_solo,
)

__all__ = [
    "DELTAS", "MOVES", "distance", "last_move", "neighbour_table", "next_square", "step",
    "BODY", "NECK", "NEVER", "WALL", "candidate_moves", "fatal_reason", "obstacles_after_move",
    "passes_through", "segments_after_move", "turns_until_vacated", "dies_of_health",
    "removed_before_collisions", "HazardCopies",
    "outcome", "recorded_outcome", "recorded_results", "place",
    "outcome_at_end", "final_turn_at_end", "finished_at_end", "END_AFTER_FINAL",
    "BODY_COLLISION", "GAME_OVER", "HAZARD", "HEAD_COLLISION", "MAX_HEALTH", "OUT_OF_HEALTH",
    "SELF_COLLISION", "SQUAD_ELIMINATED", "STAGES", "WALL_COLLISION", "Turn", "apply_rules",
    "default_move", "is_game_over", "play_turn", "plays_solo",
]
