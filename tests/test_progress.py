"""The one progress bar (arena, data generation, fitting)."""

import io

from snake.progress import Progress


def test_a_log_gets_a_line_per_tenth_with_the_note_and_figures():
    out = io.StringIO()
    bar = Progress(20, "arena", unit="game", stream=out)
    for i in range(20):
        bar.update(1, f"note {i}", loss=0.25)
    bar.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 10                       # 2/20, 4/20, ... 20/20; close adds none
    assert lines[-1].startswith("arena [") and " 20/20 100.0% " in lines[-1]
    assert lines[-1].endswith("loss=0.2500 note 19")


def test_resumed_and_disabled_bars():
    out = io.StringIO()
    bar = Progress(10, "datagen", unit="game", start=4, stream=out, interval=0)
    bar.update(0)
    assert " 4/10 " in out.getvalue()
    quiet = io.StringIO()
    off = Progress(3, enabled=False, stream=quiet)
    for _ in range(3):
        off.update()
    off.close()
    assert quiet.getvalue() == "" and off.done == 3
