"""Who sits where in each arena game, and each game's seeds.

Seats. ``players[0]`` is the *first player*, the one the run is about.

- Explicit seats (``--seats a,b,b,b``) give the player of every seat.
- Solo: one seat per game, the players taking turns (game g: player ``g mod k``).
- Otherwise the first player takes one seat (in squad mode one squad, two seats) and the
  other players fill the remaining seats (squads) in turn, continuing the cycle from game to
  game so that each meets the first player equally often. A lone player fills every seat.

Fairness. Games come in *blocks* of as many games as there are seat groups (snakes, or
squads in squad mode). The games of a block share their set-up seed — the same start
squares and starting food — and rotate the seat list by one group per game, so every
player starts from every start square of the block once. A run from positions
(``--positions``, :mod:`snake.arena.positions`) plays one position per block instead of a
set-up, its snakes (ids, bodies, health) in the seats, every line-up of opponents taking
each position before the next. Squads are consecutive pairs of
seats: seats 0–1 form squad 1, seats 2–3 squad 2, and so on.

Seeds. Everything random in game ``g`` comes from ``random.Random`` seeded with strings
built from the run's ``--seed``: ``arena:<seed>:block:<b>`` sets up the board and feeds the
food spawns and royale shrinks of the block's games, ``arena:<seed>:game:<g>`` names the game
and seeds its built-in strategies. A run is reproducible from its seed (HTTP snakes aside,
whose answers depend on time).
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True, slots=True)
class GameSpec:
    """Everything a worker needs to play game ``index`` (picklable)."""

    index: int
    game_id: str
    ruleset: str
    map: str
    width: int
    height: int
    timeout: int
    seats: tuple[int, ...]            # player index of each seat
    snake_ids: tuple[str, ...]        # snake id of each seat
    squads: tuple[str, ...] | None    # squad of each seat (squad mode)
    setup_seed: str                   # seeds new_game and the turns' rng
    strategy_seeds: tuple[int, ...]   # one per seat
    max_turns: int
    solo_target: int
    builtin_timeout: bool = False     # built-in answers later than timeout are missed
    until_decided: bool = False       # stop once every player's result is settled
    one_at_a_time: bool = False       # ask the snakes in turn, never two at once
    position: str = ""                # a request body (JSON) to start from; "" a new game


def base_seats(n_players: int, n_snakes: int, *, squad: bool, game: int = 0) -> list[int]:
    """The seat list before rotation: the first player, then the others in turn."""
    if n_snakes < 1:
        raise ValueError("a game needs at least one snake")
    if n_snakes == 1:
        return [game % n_players]
    group = 2 if squad else 1
    if squad and n_snakes % 2:
        raise ValueError("squad games need an even number of snakes (squads of two)")
    groups = n_snakes // group
    others = list(range(1, n_players)) or [0]
    first_other = game * (groups - 1)
    fill = [others[(first_other + i) % len(others)] for i in range(groups - 1)]
    return [p for p in [0, *fill] for _ in range(group)]


def rotate(seats: Sequence[int], by_groups: int, group: int) -> list[int]:
    shift = (by_groups * group) % len(seats)
    return list(seats[shift:]) + list(seats[:shift])


def plan_games(*, n_players: int, games: int, seed: int, ruleset: str, map_name: str,
               width: int, height: int, timeout: int, n_snakes: int,
               seats: Sequence[int] | None = None, max_turns: int = 0,
               solo_target: int = 100, builtin_timeout: bool = False,
               until_decided: bool = False, one_at_a_time: bool = False,
               positions: Sequence[dict] | None = None) -> list[GameSpec]:
    """The specs of all games of a run, in order. With ``positions`` (request bodies,
    :mod:`snake.arena.positions`) each block of games starts from a position, its snakes in
    the seats, each position taken by every line-up of opponents in turn (cycling through
    the positions); they must all be of the run's ruleset (not squad), map and board size,
    before ``max_turns``, with as many snakes alive (``n_snakes`` is then theirs)."""
    squad = ruleset == "squad"
    group = 2 if squad else 1
    if positions and squad:
        raise ValueError("games from positions are not played in squad mode (its seats pair "
                         "snakes by seat, a position's squads by its own order)")
    if positions:
        counts = {len(p["board"]["snakes"]) for p in positions}
        sizes = {(p["board"]["width"], p["board"]["height"]) for p in positions}
        if len(counts) > 1:
            raise ValueError(f"the positions have different numbers of snakes alive "
                             f"({', '.join(map(str, sorted(counts)))}); play them apart")
        if sizes != {(width, height)}:
            raise ValueError(f"the positions are played on {width}x{height} (--size) but are "
                             + ", ".join(f"{w}x{h}" for w, h in sorted(sizes)))
        n_snakes = counts.pop()
        rulesets = {str(p["game"]["ruleset"]["name"]) for p in positions} - {ruleset}
        if rulesets:
            raise ValueError(f"the positions include {', '.join(sorted(rulesets))} games; "
                             f"this run plays {ruleset} (--ruleset)")
        maps = {str(p["game"]["map"]) for p in positions} - {map_name}
        if maps:
            raise ValueError(f"the positions include games on the map {', '.join(sorted(maps))}; "
                             f"this run plays {map_name} (--map)")
        late = [p["turn"] for p in positions if max_turns and p["turn"] >= max_turns]
        if late:
            raise ValueError(f"a position at turn {max(late)} is past the turn games stop at "
                             f"({max_turns}: --max-turns)")
        if seats is not None and len(seats) != n_snakes:
            raise ValueError(f"--seats gives {len(seats)} seats for positions of {n_snakes} snakes")
    if seats is not None:
        n_snakes = len(seats)
        if squad and n_snakes % 2:
            raise ValueError("squad games need an even number of seats (squads of two)")
    groups = max(1, n_snakes // group)
    # With positions, each position is played by every line-up of the cycle of opponents
    # (or in solo by every player) before the next one, so that no player meets some
    # positions only.
    if seats is not None:
        cycle = 1
    elif n_snakes == 1:
        cycle = n_players
    else:
        cycle = max(1, n_players - 1)
    specs = []
    for g in range(games):
        block, turn_in_block = divmod(g, groups)
        if seats is not None:
            base = list(seats)
        else:
            # the cycle of opponents advances per block, so a block keeps its line-up
            base = base_seats(n_players, n_snakes, squad=squad, game=block)
            if n_snakes == 1:
                base = [g % n_players]
        line_up = rotate(base, turn_in_block, group) if n_snakes > 1 else base
        position = positions[block // cycle % len(positions)] if positions else None
        position_text = json.dumps(position, separators=(",", ":")) if position else ""
        game_rng = random.Random(f"arena:{seed}:game:{g}")
        game_id = str(uuid.UUID(int=game_rng.getrandbits(128), version=4))
        if position is None:
            ids = tuple(f"snake-{i}-{game_id[:8]}" for i in range(len(line_up)))
            squads = tuple(str(i // 2 + 1) for i in range(len(line_up))) if squad else None
        else:
            ids = tuple(str(s["id"]) for s in position["board"]["snakes"])
            squads = tuple(str(s.get("squad", "")) for s in position["board"]["snakes"]) \
                if squad else None
        specs.append(GameSpec(
            index=g, game_id=game_id, ruleset=ruleset, map=map_name, width=width,
            height=height, timeout=timeout, seats=tuple(line_up), snake_ids=ids,
            squads=squads, setup_seed=f"arena:{seed}:block:{block}",
            strategy_seeds=tuple(game_rng.getrandbits(32) for _ in line_up),
            max_turns=max_turns, solo_target=solo_target, builtin_timeout=builtin_timeout,
            until_decided=until_decided, one_at_a_time=one_at_a_time,
            position=position_text,
        ))
    return specs
