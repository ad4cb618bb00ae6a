"""How a snake's game ended, by the rules (and, for a starved snake, board control's
partition): no search, so cheap enough for the tally of a thousand records and for a web
page.

- :func:`recorded_moves`: the moves of one turn of a record, read off the next line;
- :func:`how_it_died`: its last turn replayed through :mod:`snake.rules`: the elimination
  cause, the snake that eliminated it, and whether it was *trapped* (no move of its own
  lived through the others' moves);
- :func:`cut_off`: from when no other snake could reach any square it could reach
  (:func:`snake.floodfill.room`), the partition that decides a duel;
- :func:`food_it_had`: for a snake that starved, the food board control's partition gave
  it after its last meal (:func:`snake.evaluation.control.board_control`: food it reaches
  before any other snake): whether it let food go while it still had the health to get it;
- :func:`how_it_ended`: these in words (the dashboard's game page).

What its search saw of the same death is :mod:`snake.arena.postmortem`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterable

from snake.board import parse_request
from snake.evaluation.control import board_control
from snake.floodfill import room
from snake.records.replay import Replay
from snake.rules import HAZARD, MAX_HEALTH, MOVES, OUT_OF_HEALTH, apply_rules, next_square


@dataclass(frozen=True, slots=True)
class Death:
    """How the record's ``you`` died (:func:`how_it_died`)."""

    line: int         # the record line (``replay.turns``) of its last turn alive
    cause: str        # the elimination cause by the rules ("" when the replay cannot tell)
    killer: str       # the id of the snake that eliminated it ("": none, or unknown)
    trapped: bool     # none of its moves would have lived through the others' moves


#: :func:`recorded_moves` tries every move of each snake that fell on the turn (4 ** fallen
#: replays of the turn); with more than this many fallen at once it says it cannot tell.
MAX_FALLEN = 5


def recorded_moves(before: dict, after: dict, you_id: str) -> dict[str, str] | None:
    """The moves that took record line ``before`` to line ``after``: each snake's move read
    off its head in ``after`` (``you``'s off its body there, frozen in place when it fell),
    and for the snakes that fell on that turn the first moves (in move order) under which
    the rules eliminate exactly the snakes the record lost. ``None`` when no moves explain
    the next line, more than :data:`MAX_FALLEN` snakes fell on that turn, or it is not the
    next turn (a game log holds no turns after our snake's last, only the final board of
    ``/end``)."""
    if after.get("turn") != before.get("turn", -2) + 1:
        return None
    state = parse_request(before).state
    heads = {s["id"]: (s["head"]["x"], s["head"]["y"]) for s in after["board"]["snakes"]}
    heads[you_id] = (after["you"]["head"]["x"], after["you"]["head"]["y"])
    survivors = {s["id"] for s in after["board"]["snakes"]}
    living = state.board.living_snakes
    moves = {}
    for snake in (s for s in living if s.id in heads):
        move = next((m for m in MOVES if next_square(state, snake.head, m) == heads[snake.id]),
                    None)
        if move is None:
            return None
        moves[snake.id] = move
    fallen = [s.id for s in living if s.id not in heads]
    if len(fallen) > MAX_FALLEN:
        return None
    for combo in itertools.product(MOVES, repeat=len(fallen)):
        chosen = {**moves, **dict(zip(fallen, combo))}
        if {s.id for s in apply_rules(state, chosen).board.living_snakes} == survivors:
            return chosen
    return None


def how_it_died(replay: Replay) -> Death | None:
    """How the record's ``you`` died, or ``None`` if it did not. Its last turn is replayed
    through the rules with the moves of :func:`recorded_moves`. It was trapped when none of
    its own moves lives through those moves of the others."""
    turns = replay.turns
    you_id = turns[0]["you"]["id"]
    for i in range(len(turns) - 1):
        if (any(s["id"] == you_id for s in turns[i]["board"]["snakes"])
                and not any(s["id"] == you_id for s in turns[i + 1]["board"]["snakes"])):
            break
    else:
        return None
    chosen = recorded_moves(turns[i], turns[i + 1], you_id)
    if chosen is None or you_id not in chosen:
        return Death(i, "", "", False)
    state = parse_request(turns[i]).state
    you = apply_rules(state, chosen).board.snake(you_id)
    trapped = all(apply_rules(state, {**chosen, you_id: m}).board.snake(you_id).eliminated_cause
                  for m in MOVES)
    killer = you.eliminated_by if you.eliminated_by != you_id else ""
    return Death(i, you.eliminated_cause or "", killer, trapped)


@dataclass(slots=True)
class CutOff:
    """From when it was cut off for good from every other snake (:func:`cut_off`)."""

    turn: int
    moves_before: int            # 1: the position of its last move
    room: int                    # the squares it could reach then
    others_room: int             # the most any other snake could reach then


def cut_off(replay: Replay, death: Death, look_back: int | None = None) -> CutOff | None:
    """From which position before its death (looking back through the record, or its last
    ``look_back`` positions) no other snake could reach any square it could reach
    (:func:`snake.floodfill.room`: through squares free after that turn's movement), to the
    end; ``None`` if it never was. A position in which it can reach nothing (boxed in) is
    no partition, and does not end one. In a duel this is the partition that decides the
    game: each snake lives in its own part."""
    you_id = replay.turns[0]["you"]["id"]
    found = None
    positions = death.line + 1 if look_back is None else min(death.line + 1, look_back)
    for back in range(positions):
        state = parse_request(replay.turns[death.line - back]).state
        mine = room(state, state.board.snake(you_id))
        others = [room(state, s) for s in state.board.living_snakes if s.id != you_id]
        if not others or any(mine & theirs for theirs in others):
            break
        if mine:
            found = CutOff(state.turn, back + 1, len(mine),
                           max(len(theirs) for theirs in others))
    return found


def how_text(death: Death, names: dict[str, str], draw: bool) -> str:
    """How it died, in words: the cause by the rules, by whom (named as ``names`` shows each
    snake by id: :meth:`snake.records.replay.Replay.names`), trapped or not."""
    if draw:
        return "a draw: it fell with the last others"
    if not death.cause:
        return "cause unknown"
    killer = names.get(death.killer, death.killer) if death.killer else "no snake"
    return f"{death.cause}, by {killer}{'; trapped' if death.trapped else ''}"


def cut_off_text(cut: CutOff) -> str:
    return (f"cut off from the others for good from turn {cut.turn} ({cut.moves_before} moves "
            f"before its death): it could reach {cut.room} squares, the others at most "
            f"{cut.others_room}")


@dataclass(slots=True)
class Hunger:
    """The food a snake that starved had after its last meal (:func:`food_it_had`)."""

    meal: tuple[int, int] | None  # its last meal: on its move from a turn between these two
    #                               (equal when known to the turn); None: none in the record
    positions: int               # its recorded positions from its last meal
    in_time: int                 # of them, those with a food of its own within reach
    too_far: int                 # those with a food of its own, too far for its health
    turn: int | None = None      # the last position with one within reach (None: none)
    moves_before: int = 0        # that position, 1 being its last move's
    distance: int = 0            # the moves from its head to that food then
    health: int = 0              # its health then
    length: int = 0              # its length then
    longest: int = 0             # the longest other living snake's length then (0: none)
    hazards: bool = False        # hazards on the board: their damage is not counted
    cause: str = OUT_OF_HEALTH   # or HAZARD: its health ran out on a hazard square


def food_it_had(replay: Replay, death: Death) -> Hunger | None:
    """For a snake whose health ran out (``death.cause`` out of health, or hazard: on a
    hazard square; else ``None``), from its last meal in the record (the last line on which
    its length grew) to its death: the positions in which board control's partition (the
    search's values) gave it a food it could reach before its health ran out (the moves to
    it at most its health, hazard damage aside), those in which its own nearest food was
    too far for its health, and the last of the first kind, with its length and the longest
    other's then. A snake that had food within reach and starved let it go; one that owned
    none was beaten to every food (``multi_style=hungry`` is for those).
    ``None`` too in squad games sharing length or health, where a mate's meal feeds it."""
    if death.cause not in (OUT_OF_HEALTH, HAZARD):
        return None
    turns = replay.turns
    first_state = parse_request(turns[0]).state
    settings = first_state.ruleset.settings
    if first_state.ruleset.name == "squad" and (settings.shared_length or settings.shared_health):
        return None
    you_id = turns[0]["you"]["id"]

    def you_on(line: int) -> dict:
        return next(s for s in turns[line]["board"]["snakes"] if s["id"] == you_id)

    first = next((i for i in range(death.line, 0, -1)
                  if len(you_on(i)["body"]) > len(you_on(i - 1)["body"])), 0)
    meal = None
    if first:
        # Fed on the move into line `first`'s turn if its health is full there (feeding is
        # the turn's last health change); else somewhere after the line before (a game log
        # may lack turns).
        after = turns[first]["turn"] - 1
        meal = (after, after) if you_on(first)["health"] == MAX_HEALTH \
            else (turns[first - 1]["turn"], after)
    hunger = Hunger(meal, death.line - first + 1, 0, 0, cause=death.cause)
    for i in range(first, death.line + 1):
        state = parse_request(turns[i]).state
        _, food = board_control(state)[you_id]
        health = state.board.snake(you_id).health
        hunger.hazards = hunger.hazards or bool(state.board.hazards)
        if food is None:
            continue
        if food > health:
            hunger.too_far += 1
            continue
        hunger.in_time += 1
        hunger.turn, hunger.moves_before = state.turn, death.line - i + 1
        hunger.distance, hunger.health = food, health
        hunger.length = state.board.snake(you_id).length
        hunger.longest = max((s.length for s in state.board.snakes
                              if s.id != you_id and s.alive), default=0)
    return hunger


def _moves(n: int) -> str:
    return f"{n} move" if n == 1 else f"{n} moves"


def hunger_text(hunger: Hunger) -> str:
    if hunger.meal is None:
        since = f"in its {hunger.positions} positions (no meal in the record)"
    elif hunger.meal[0] == hunger.meal[1]:
        since = (f"in its {hunger.positions} positions after its last meal (its move from "
                 f"turn {hunger.meal[0]})")
    else:
        since = (f"in its {hunger.positions} recorded positions after its last meal (its "
                 f"move from a turn from {hunger.meal[0]} to {hunger.meal[1]})")
    none = hunger.positions - hunger.in_time - hunger.too_far
    last = (f"; the last within reach on turn {hunger.turn}, {_moves(hunger.moves_before)} "
            f"before its death: {_moves(hunger.distance)} away, health {hunger.health}, "
            f"length {hunger.length}" + (f" (the longest other {hunger.longest})"
                                         if hunger.longest else "")
            if hunger.in_time else "")
    hazards = " (hazard damage not counted)" if hunger.hazards else ""
    how = "starved" if hunger.cause == OUT_OF_HEALTH else "its health ran out on a hazard"
    return (f"{how}: {since}: {hunger.in_time} with a food of its own within reach, "
            f"{hunger.too_far} with its own food too far for its health, {none} with none "
            f"(beaten to every food){last}{hazards}")


def how_it_ended(replay: Replay, look_back: int = 200) -> list[str]:
    """What the rules alone say of the death of the record's ``you`` (no search, and the
    cut-off looked for in its last ``look_back`` positions: for a web page): how it died and
    from when it was cut off; nothing if it did not die."""
    death = how_it_died(replay)
    if death is None:
        return []
    names = replay.names()
    draw = replay.outcome(replay.turns[0]["you"]["id"]) == "draw"   # fell with the last others
    turn, following = (replay.turns[death.line + k]["turn"] for k in (0, 1))
    if following != turn + 1:
        lines = [f"died after its last recorded move, from turn {turn}; the record holds no "
                 f"turn after it but the last ({following}), so how is not known"]
    else:
        lines = [f"died on its move from turn {turn}: {how_text(death, names, draw)}"
                 + (" (none of its moves would have lived)" if death.trapped and not draw
                    else "")]
    cut = cut_off(replay, death, look_back)
    if cut is not None:
        lines.append(cut_off_text(cut))
    hunger = food_it_had(replay, death)
    if hunger is not None:
        lines.append(hunger_text(hunger))
    return lines


def seen_lost_from(positions: Iterable[tuple[bool, bool]]) -> int | None:
    """For positions nearest the death first, each (forced, proven lost): the index of the
    earliest one of the unbroken run of proven losses with a choice that ends at the death
    (forced positions are no choice and are skipped); ``None`` when the nearest position
    with a choice was not proven lost."""
    found = None
    for index, (forced, lost) in enumerate(positions):
        if forced:
            continue
        if not lost:
            break
        found = index
    return found
