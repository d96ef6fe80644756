"""Audit: the append-only record of every mutating request (`records`: who did what through which face)."""
