"""The agents: the chip (its pins and memory port) and the page table (the host's KV cache)."""
