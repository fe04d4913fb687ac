"""The hosts that run steps on the chip: one request's paged decode, the serving scheduler, their
workloads and throughput measures."""
