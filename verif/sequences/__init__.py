"""Sequence items and sequences: decode and serving steps, bare programs, page operations."""
