"""The chip's contract: the ISA, the bit- and cycle-exact reference machine, its integer
arithmetic and exp table, page geometry, random programs, and the files generated for the RTL."""
