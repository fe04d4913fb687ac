"""The sequences: decode and serving (virtual) sequences, bare programs."""
