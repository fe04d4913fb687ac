"""The scoreboard: every chip run against its one prediction; every decode against the
chapter's closed forms."""
