"""Watching the service: every game in SQLite (:mod:`.gamelog`), the dashboard that shows
it (:mod:`.dashboard`), Prometheus metrics (:mod:`.metrics`), and their routes with the
dashboard's access control (:mod:`.blueprint`)."""
