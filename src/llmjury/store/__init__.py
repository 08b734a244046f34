"""The run store: where a run's processes, and runs on other machines, share answers, claims,
hand-offs, progress and spend. SQLite (one machine, the default) or PostgreSQL (many)."""
