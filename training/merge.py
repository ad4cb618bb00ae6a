"""One data directory from several (``python -m training.merge``).

    python -m training.merge --out data/all data/sp1 data/sp2 [...]

Self-play runs stopped by hand, or made with other settings (another seed, another turn
cap), are trained on together: every *finished* chunk of each source (one with its
``chunk-<n>.json`` marker; a chunk cut short by a stop has none) is hard-linked into
``--out`` as ``<split>-<letter><n>.npz`` (``a`` for the first source, ``b`` for the next, so
names never collide; a copy where a link is impossible), and ``meta.json`` describes the
whole: the sources with their settings and commands, and the games, positions, capped games
and worker-seconds summed from the chunk markers (``seconds`` is worker-seconds here, not
wall time). :mod:`training.fit` and :mod:`training.export` read the result like any data
directory. The sources must be of one kind (all self-play, or all random games).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import string
import sys
from pathlib import Path

from training.shards import SPLITS, load_meta


class MergeError(ValueError):
    """Sources that cannot be merged, or an output directory already holding other data."""


def _settings(meta: dict) -> dict:
    keys = ("seed", "nodes", "lambda", "opening", "max_turns", "holdout", "weights",
            "network_weight", "chunk")
    out = {k: meta[k] for k in keys if k in meta}
    out["capped"] = meta.get("capped", "drop")
    return out


def _kind(meta: dict) -> str:
    """``self-play`` or ``random games``: a self-play run stopped by hand before 2026-11-23
    wrote only its settings (``nodes`` among them) and no ``source``."""
    return meta.get("source") or ("self-play" if "nodes" in meta else "random games")


def merge(out: str | Path, sources: list[str | Path], command: str = "") -> dict:
    """Link the finished chunks of ``sources`` into ``out`` and write its ``meta.json``;
    returns that meta."""
    out = Path(out)
    sources = [Path(s) for s in sources]
    if not sources or len(sources) > len(string.ascii_lowercase):
        raise MergeError(f"give 1 to {len(string.ascii_lowercase)} source directories")
    if len({s.resolve() for s in sources}) != len(sources):
        raise MergeError("a source is given twice")
    metas = []
    for src in sources:
        if not (src / "meta.json").is_file():
            raise MergeError(f"{src}: not a data directory (no meta.json)")
        metas.append(load_meta(src))
    kinds = {_kind(m) for m in metas}
    if len(kinds) != 1:
        raise MergeError(f"sources of different kinds ({', '.join(sorted(kinds))}) are not merged")
    seeds = [m.get("seed") for m in metas]
    if len(set(seeds)) != len(seeds):
        # game n of a run is set up (and put in its split) from (seed, n): two runs with one
        # seed hold the same games, in other splits when their --holdout differs
        raise MergeError(f"sources share a --seed ({seeds}): their games would be counted "
                         "twice, and could fall in two splits")
    described = [{"dir": str(src), "command": m.get("command"), **_settings(m)}
                 for src, m in zip(sources, metas)]
    if (out / "meta.json").is_file():
        if load_meta(out).get("merged_from") != described:
            raise MergeError(f"{out} holds other data; use another --out")
    out.mkdir(parents=True, exist_ok=True)

    blocks = None
    counts = {s: {"games": None, "positions": None} for s in SPLITS}
    games = positions = capped = 0
    worker_seconds = 0.0
    for letter, src in zip(string.ascii_lowercase, sources):
        for marker in sorted(src.glob("chunk-*.json")):
            done = json.loads(marker.read_text())
            if blocks is None:
                blocks = done["blocks"]
            elif done["blocks"] != blocks:
                raise MergeError(f"{marker}: blocks named otherwise than in the first source")
            number = marker.stem.split("-", 1)[1]
            for split in SPLITS:
                shard = src / f"{split}-{number}.npz"
                if shard.is_file():
                    target = out / f"{split}-{letter}{number}.npz"
                    if not target.exists():
                        try:
                            os.link(shard, target)
                        except OSError:
                            shutil.copyfile(shard, target)
                for key in ("games", "positions"):
                    values = done["counts"][split][key]
                    old = counts[split][key]
                    counts[split][key] = (values if old is None
                                          else [a + b for a, b in zip(old, values)])
                games += sum(done["counts"][split]["games"])
                positions += sum(done["counts"][split]["positions"])
            capped += int(done["capped"] if isinstance(done["capped"], int)
                          else sum(done["capped"]))
            worker_seconds += float(done.get("seconds", 0.0))
    if blocks is None:
        raise MergeError("no finished chunk in any source")
    counts = {s: {k: v or [0] * len(blocks) for k, v in c.items()} for s, c in counts.items()}

    def common(key):
        values = [d.get(key) for d in described]
        return values[0] if all(v == values[0] for v in values) else values

    meta = {
        "source": _kind(metas[0]),
        "merged_from": described,
        "command": command or " ; ".join(str(d["command"]) for d in described),
        "seed": common("seed"), "nodes": common("nodes"), "lambda": common("lambda"),
        "opening": common("opening"), "max_turns": common("max_turns"),
        "capped": common("capped"),
        "games": games, "positions": positions, "capped_games": capped,
        "seconds": round(worker_seconds, 1), "workers": "worker-seconds of the merged runs",
        "blocks": blocks, "counts": counts,
    }
    if any(d.get("weights") is not None for d in described):
        meta["weights"] = common("weights")
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    return meta


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m training.merge",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="the merged data directory (created)")
    ap.add_argument("sources", nargs="+", help="data directories (self-play or datagen)")
    args = ap.parse_args(argv)
    command = " ".join(["python -m training.merge", *(argv if argv is not None else sys.argv[1:])])
    try:
        meta = merge(args.out, args.sources, command)
    except MergeError as exc:
        raise SystemExit(f"merge: {exc}") from None
    print(f"{args.out}: {meta['games']:,} games, {meta['positions']:,} positions, "
          f"{meta['capped_games']} capped, {meta['seconds']:.0f} worker-seconds, "
          f"from {len(args.sources)} directories")


if __name__ == "__main__":
    main()
