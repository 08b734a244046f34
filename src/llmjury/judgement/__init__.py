"""Judging: the jury a test awaits, judge calls and their parsing, verdicts, the planner."""
