"""The KV cache and its rules: the decode step rule (the window), the paged cache, the prefix
cache and admission."""
