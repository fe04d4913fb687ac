"""The compiler: a decode step of B requests (B = 1 is the solo step) as a chip program.

    quantize.py   int8 quantization, calibration from float decodes, every program's scales
    layout.py     where everything lives: external memory (one layout per batch room and
                  pool) and the scratchpad of one program
    gather.py     who moves a step's cached rows: the host (LOADs of rows it copied) or the
                  chip (PLOADs through block tables, PSTOREs of the new rows, PCOPYs)
    program.py    the one program builder, and the compiled program with its result reader
    cache.py      programs compiled on demand, one per tuple of contexts
    inputs.py     the one record of a step's inputs (what the host hands the chip), and the
                  reference machine's run of it
"""
