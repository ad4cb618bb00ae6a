"""Watching the service: every game in SQLite (:mod:`.gamelog`), the dashboard that shows
it (:mod:`.dashboard`) and Prometheus metrics (:mod:`.metrics`)."""
