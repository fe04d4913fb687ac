"""The checking kit, below every checker: the chip's BFM, clock and reset, memory backdoors, the
harnesses' event logs, first-difference reports, failure points, the units of each RTL module,
and the helpers components share (failures recorded before they propagate, Python profiling)."""
