"""Runs of the testbench: what a run is asked to do (specs, the shared plans), how pytest
launches and batches them, what a run leaves (its record), results kept on disk, and a failing
run again with waves."""
