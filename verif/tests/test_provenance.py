"""The inputs a failure report names for an output word (verif/tests/blocks/provenance.py), by
hand."""

from __future__ import annotations

import numpy as np

from model.chip import isa
from model.chip.isa import ChipConfig
from verif.tests.blocks.provenance import Memories, inputs_of

CFG = ChipConfig(sram_words=256, ext_words=1024)


def sram_with(values: dict[int, list[int]]) -> np.ndarray:
    """A scratchpad holding int8 ``values`` (with noise above the low byte) at their addresses."""
    sram = np.full(CFG.sram_words, 0xABCDEF00, dtype=np.uint32)
    for start, low in values.items():
        sram[start : start + len(low)] = [0xABCDEF00 | (v & 0xFF) for v in low]
    return sram


def test_a_vadd_output_names_its_two_operands():
    before = Memories(sram_with({10: [1, -2, 3], 20: [4, 5, -128]}))
    vadd = isa.vadd(10, 20, 30, 3)
    assert inputs_of(vadd, "sram", 32, before) == (
        "a[2] = 3 (sram word 12), b[2] = -128 (sram word 22)")
    assert inputs_of(vadd, "sram", 33, before) == ""  # not an output
    assert inputs_of(vadd, "ext", 32, before) == ""


def test_a_matmul_output_names_its_row_of_a_and_column_of_b():
    a = [1, 2, 3, 4, 5, 6]  # 2 x 3
    b = [7, 8, 9, 10, 11, -12]  # 3 x 2, row-major
    before = Memories(sram_with({0: a, 50: b}))
    plain = isa.matmul(0, 50, 100, 2, 3, 2)
    assert inputs_of(plain, "sram", 103, before) == (
        "C[1][1] from A row 1 = [4, 5, 6] (sram words 3 .. 5) and B column 1 = [8, 10, -12] "
        "(sram words 51 .. 55 every 2)")
    transposed = isa.matmul(0, 50, 100, 2, 3, 2, b_transposed=True)  # B is 2 rows of 3
    assert inputs_of(transposed, "sram", 101, before).endswith(
        "B column 1 = [10, 11, -12] (sram words 53 .. 55)")


def test_a_reduction_lists_a_short_vector_and_locates_a_long_ones_maximum():
    before = Memories(sram_with({0: [3, 9, -1, 9], 100: [5] * 20 + [7, 1, 7]}))
    assert inputs_of(isa.vmax(0, 50, 4), "sram", 50, before) == (
        "a = [3, 9, -1, 9] (sram words 0 .. 3)")
    assert inputs_of(isa.argmax(100, 50, 23), "sram", 50, before) == (
        "a = 23 int8 (sram words 100 .. 122), minimum 1, maximum 7 at element 20, 22")
    assert inputs_of(isa.vmax(0, 50, 4), "sram", 51, before) == ""
    assert inputs_of(isa.argmax(2, 50, 1), "sram", 50, before) == "a = [-1] (sram word 2)"


def test_a_softmax_output_names_its_element_and_the_vector():
    before = Memories(sram_with({0: [3, 9, -1]}))
    assert inputs_of(isa.softmax(0, 8, 3), "sram", 10, before) == (
        "x[2] = -1 (sram word 2) of x = [3, 9, -1] (sram words 0 .. 2)")


def test_a_copied_word_names_its_source_word():
    sram = sram_with({})
    ext = np.arange(CFG.ext_words, dtype=np.uint32) * 3
    before = Memories(sram, ext)
    assert inputs_of(isa.load(100, 10, 5), "sram", 12, before) == "ext word 102 = 0x00000132"
    assert inputs_of(isa.store(10, 200, 5), "ext", 204, before) == "sram word 14 = 0xabcdef00"
    assert inputs_of(isa.load(100, 10, 5), "ext", 102, before) == ""


def test_a_paged_word_names_its_pool_word_through_the_block_table():
    ext = np.arange(CFG.ext_words, dtype=np.uint32) + 0x1000
    ext[16:19] = [1, 3, 0]  # header: slot 1; table pages 3, 0 (pages of 2 rows)
    pool, row_words = 512, 2
    sram = sram_with({})
    before = Memories(sram, ext, CFG)
    pload = isa.pload(16, 40, pool, row_words, 3, 1, 4)  # rows 0 .. 2 from slot 1
    # row 1 lands at slot 2: table entry 1, page 0, slot 0: pool row 0, its word 1 is 513
    assert inputs_of(pload, "sram", 43, before) == f"ext word 513 = {0x1000 + 513:#010x}"
    pstore = isa.pstore(16, 40, pool, row_words, 3, 1, 4)
    assert inputs_of(pstore, "ext", 513, before) == "sram word 43 = 0xabcdef00"
    assert inputs_of(pstore, "ext", 600, before) == ""
    ext[16:18] = [3, 1]  # PCOPY's pair: page 3 to page 1
    pcopy = isa.pcopy(16, 40, pool, row_words, 1, 1, 4, row=1)  # slot 1
    assert inputs_of(pcopy, "ext", pool + 3 * row_words, before) == (
        f"ext word {pool + 7 * row_words} = {0x1000 + pool + 7 * row_words:#010x} "
        "through sram word 40")
