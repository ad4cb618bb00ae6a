"""``python -m bench.search`` runs end to end on tiny sizes (its figures are for a person to
read on an idle machine, not asserted: the machine is shared)."""

from __future__ import annotations

import re

from bench import search as bench_search


def test_the_search_benchmark_measures_every_row_and_names_the_default(capsys):
    bench_search.main(["--ms", "5", "--positions", "1"])
    out = capsys.readouterr().out.splitlines()
    rows = [line for line in out if re.match(r"11x11 .+: +[\d,]+ nodes/s", line)]
    # board control in both engines and the default, for 1v1 and four snakes
    for label in ("1v1", "4 snakes"):
        named = {tuple(line.split(":")[0].split()[-2:]) for line in rows if label in line}
        assert named == {("compiled", "voronoi"), ("python", "voronoi"), ("compiled", "default")}
    assert re.fullmatch(r"search: \d+ nodes/s, depth \d+ on 11x11 1v1", out[-1])
