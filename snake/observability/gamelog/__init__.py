"""The game log: every game the service plays, kept in SQLite for the dashboard, for
explaining a loss and for training (see :mod:`.store` for the file and who writes it,
:mod:`.records` for what a turn keeps, :mod:`.reader` for the queries, :mod:`.channel` and
:mod:`.writer` for a server's writer process)."""

from snake.observability.gamelog.records import (
                                                EndRecord,
                                                GameInfo,
                                                TurnRecord,
                                                end_record,
                                                turn_record,
)
from snake.observability.gamelog.store import GameLog, connect, connect_readonly, from_settings

__all__ = ["EndRecord", "GameInfo", "GameLog", "TurnRecord", "connect", "connect_readonly",
           "end_record", "from_settings", "turn_record"]
