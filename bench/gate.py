"""How the learning loop's gate decides, simulated: games played, and how often each verdict.

    python -m bench.gate [--matches 1000] [--scores 0.25,0.4,0.5,0.543] [--draws 0.02]
        [--sprt 0,30] [--piece 10] [--cap 400] [--seed 1]

Each match draws games of a candidate with a given expected score (wins and losses at
``score ∓ draws / 2``, draws at ``--draws``), looks after every ``--piece`` games, and stops
as :func:`training.loop.decide` says (SPRT between ``--sprt`` Elo bounds, α = β = 0.05)
or at ``--cap`` games; once without the futility stop, once with it (a 95 % interval wholly
below 50 % ends the match as ``worse``), on the same games (one random stream per match, so
the two rules differ only where they decide differently). It prints, for each expected
score and rule, the mean number of games and the share of each verdict (``cap``: the cap
came first) and of promotions. A score of 0.543 is +30 Elo. No arena game is played: this is
the arithmetic of the stopping rules, for choosing ``--sprt``, ``--gate-piece`` and ``--futility``.
"""

from __future__ import annotations

import argparse
import random

from snake.arena.stats import Score
from training.loop import decide


def simulate(score: float, draws: float, sprt: list[float], piece: int, cap: int,
             futility: bool, rng: random.Random) -> tuple[str, int, bool]:
    """One match: (verdict, games, promoted)."""
    win = score - draws / 2
    wins = ties = losses = 0
    while True:
        for _ in range(min(piece, cap - wins - ties - losses)):
            r = rng.random()
            if r < win:
                wins += 1
            elif r < win + draws:
                ties += 1
            else:
                losses += 1
        s = Score(wins, ties, losses)
        verdict, promoted = decide(s, sprt, 0.05, 0.05, futility)
        if verdict != "undecided":
            return verdict, s.games, promoted
        if s.games >= cap:
            return "cap", s.games, promoted


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.gate", description=__doc__.split("\n")[0])
    ap.add_argument("--matches", type=int, default=1000)
    ap.add_argument("--scores", default="0.25,0.4,0.5,0.543",
                    help="the candidate's expected scores, comma separated")
    ap.add_argument("--draws", type=float, default=0.02)
    ap.add_argument("--sprt", default="0,30", metavar="ELO0,ELO1")
    ap.add_argument("--piece", type=int, default=10)
    ap.add_argument("--cap", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    sprt = [float(x) for x in args.sprt.split(",")]
    scores = [float(x) for x in args.scores.split(",")]
    if len(sprt) != 2 or min(args.matches, args.piece, args.cap) < 1 or not all(
            args.draws / 2 <= s <= 1 - args.draws / 2 for s in scores):
        ap.error("--sprt takes two Elo values; counts must be positive; every score must "
                 "lie within [draws/2, 1 - draws/2]")
    print(f"gate: SPRT [{sprt[0]:g}, {sprt[1]:g}], a look every {args.piece} games, cap "
          f"{args.cap}, {args.draws:.0%} draws, {args.matches} matches each")
    for score in scores:
        for futility in (False, True):
            counts: dict[str, int] = {}
            games = promoted = 0
            for match in range(args.matches):
                rng = random.Random(f"{args.seed}/{score}/{match}")
                verdict, n, up = simulate(score, args.draws, sprt, args.piece, args.cap,
                                          futility, rng)
                counts[verdict] = counts.get(verdict, 0) + 1
                games, promoted = games + n, promoted + up
            shares = ", ".join(f"{v} {100 * c / args.matches:.1f} %"
                               for v, c in sorted(counts.items()))
            print(f"score {score:.3f}, {'futility' if futility else 'SPRT only'}: "
                  f"mean {games / args.matches:.1f} games; {shares}; "
                  f"promoted {100 * promoted / args.matches:.1f} %")


if __name__ == "__main__":
    main()
