"""The chip agent: sequencer, driver, the monitor of each run and the write monitor."""
