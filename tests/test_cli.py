"""How the commands end when their reader goes away (snake.cli)."""

import subprocess
import sys

from tests.test_arena import CORNERED, write_record


def test_a_reader_that_stops_early_ends_the_tally_quietly(tmp_path):
    # `python -m snake.arena.tally DIR | head -1`: the reader closes the pipe before the
    # report is written; the command ends with the shell's closed-pipe status, no traceback
    write_record(tmp_path / "game-00001.jsonl", CORNERED, {"A": "down", "B": "down"})
    command = subprocess.Popen([sys.executable, "-m", "snake.arena.tally", str(tmp_path)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    command.stdout.close()
    errors = command.stderr.read().decode()
    assert command.wait(timeout=60) == 141
    assert errors == ""


def test_a_broken_pipe_that_is_not_standard_output_is_an_error():
    # a command whose own pipe or socket breaks, its reader still there, fails as it should
    program = ("from snake.cli import run_main\n"
               "def main():\n"
               "    print('working')\n"
               "    raise BrokenPipeError('a socket of the command')\n"
               "run_main(main)\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1
    assert done.stdout == "working\n"
    assert "BrokenPipeError: a socket of the command" in done.stderr
