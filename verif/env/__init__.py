"""The env: its configuration object and the env that wires the agents to the scoreboard and
coverage."""
