"""The area benchmark's reading of Yosys's `stat` (verif/bench/area.py); the synthesis itself
runs in `make bench area`."""

from verif.bench.area import TOTAL, ModuleCost, module_costs

# Yosys 0.23's `stat` after `synth -top softmax_unit`, cut to a few gate types per section.
STAT = r"""
19. Printing statistics.

=== $paramod$377c6ddbe1f175fc07e7e08418d42b35b3a4ee7f\divu ===

   Number of wires:               1703
   Number of cells:                 30
     $_ANDNOT_                      20
     $_SDFFE_PP0P_                  10

=== softmax_unit ===

   Number of cells:                 14
     $_DFF_P_                        4
     $_XOR_                          8
     $paramod$377c6ddbe1f175fc07e7e08418d42b35b3a4ee7f\divu      1
     exp_lut                         1

=== design hierarchy ===

   softmax_unit                      1
     $paramod$377c6ddbe1f175fc07e7e08418d42b35b3a4ee7f\divu      1

   Number of cells:                 42
     $_ANDNOT_                      20
     $_DFF_P_                        4
     $_SDFFE_PP0P_                  10
     $_XOR_                          8
"""


def test_each_module_counts_its_own_gates_and_the_hierarchy_is_the_total():
    assert module_costs(STAT) == [ModuleCost("divu", 30, 10),
                                  ModuleCost("softmax_unit", 12, 4),  # not its 2 submodules
                                  ModuleCost(TOTAL, 42, 14)]


def test_a_modules_name_drops_its_parameters():
    named = STAT.replace("$paramod$377c6ddbe1f175fc07e7e08418d42b35b3a4ee7f\\divu ===",
                         "$paramod\\divu\\DIV_W=s32'00000000000000000000000000100000 ===")
    assert named != STAT and module_costs(named)[0] == ModuleCost("divu", 30, 10)


def test_a_unit_without_submodules_is_its_own_total():
    alone = STAT.split("=== softmax_unit")[0]
    assert module_costs(alone) == [ModuleCost("divu", 30, 10), ModuleCost(TOTAL, 30, 10)]
