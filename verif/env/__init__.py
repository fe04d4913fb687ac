"""The env: the configuration object, the env that wires agents to the scoreboard and coverage,
what a run is asked to do (decode and serving specs, the shared plans) and how it is launched
from pytest, and what it leaves behind (the result record)."""
