"""Test-wide settings: the service's game log is off unless a test gives one (an app made
by a test must not write games.db into the working directory)."""

import os

os.environ.setdefault("NUPPEPPOU_GAME_LOG", "off")
