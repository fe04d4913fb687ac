"""The page-table agent: the host's paged KV cache, a step host per request (or a scheduler)."""
