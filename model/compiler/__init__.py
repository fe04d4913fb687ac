"""The compiler: a decode step of B requests (B = 1 is the solo step) as a chip program.

quantize (scales), layout (addresses), gather (who moves the cached rows), program (the one
builder), cache (programs on demand), inputs (the one record of a step's inputs).
"""
