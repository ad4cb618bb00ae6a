"""Game records: reading the official CLI's JSONL replays (:mod:`.replay`), how a game
ended (:mod:`.ending`) and a replay drawn as an HTML page (:mod:`.render`). The arena, the
dashboard, the game log and training read games through it."""
