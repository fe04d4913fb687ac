"""The checking kit: what every check of the RTL against the reference machine shares.

    clock.py     the clock (or the harness's own) and a synchronous reset
    bfm.py       the whole chip's pins: start, await done against the watchdog, the status
    memory.py    bulk backdoor access to a memory array, through a mirror of what it holds
    compare.py   the first difference of memory words and of writes, named for a person
    write_log.py a harness's event log, read after the fact: the writes, with their cycles
    provenance.py the input words an output word of an instruction was made from

The pyuvm testbench (env, agents, scoreboard), the RTL block tests and the replay's report all
use these, and the reference machine's own `model.chip.machine.counter_differences` for counters.
"""
