"""Mutants classified by proof (verif/mutation/rtl_equivalence.py): the recorded proofs name
current mutants and hold when re-run (the quickest here, all of them under the slow mark), the
miter finds a difference with its replayable inputs, and the report's mcy tags."""

from __future__ import annotations

import importlib

import pytest

from model.paths import RTL_DIR
from verif.formal import equivalence
from verif.formal.equivalence import Scope, check
from verif.mutation import rtl_equivalence, rtl_run
from verif.mutation.framework import Mutant, Verdict, apply
from verif.mutation.rtl_run import RtlOutcome

PROOFS = rtl_equivalence.recorded()
PROVEN = sorted(n for n, p in PROOFS.items() if p["status"] == "equivalent")
REQUANT_CLAMP = "wire         [5:0] shift_c   = (shift > 8'd63) ? 6'd63 : shift[5:0];"


def test_every_recorded_proof_names_a_mutant_the_generator_can_make():
    found = {m.name: m for m in rtl_equivalence.every_site(set(PROOFS))}
    assert set(found) == set(PROOFS)
    for name, proof in PROOFS.items():
        assert (found[name].original, found[name].mutated) == (proof["original"],
                                                               proof["mutated"])
        assert proof["status"] in ("equivalent", "different", "unknown")
        assert proof["top"] == rtl_equivalence.scope_of(found[name]).top


def rerun(name: str, tmp_path) -> None:
    again = rtl_equivalence.recheck(name, root=tmp_path)
    assert again.status == PROOFS[name]["status"], again.log


@pytest.mark.timeout(120)
def test_the_quickest_recorded_proof_still_holds(tmp_path):
    rerun(min(PROVEN, key=lambda n: PROOFS[n]["seconds"]), tmp_path)


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("name", PROVEN)
def test_each_recorded_proof_still_holds(name, tmp_path):
    rerun(name, tmp_path)


@pytest.mark.timeout(120)
def test_the_miter_finds_a_difference_and_the_inputs_that_show_it(tmp_path):
    """Clamping at shift > 64 instead of > 63 differs at shift = 64 only (63 clamps to itself
    either way): the counterexample must be that shift."""
    source = (RTL_DIR / "requant.v").read_text()
    assert source.count(REQUANT_CLAMP) == 1
    mutant = equivalence.Mutant("requant-clamp-late", "requant", source.replace(
        REQUANT_CLAMP, REQUANT_CLAMP.replace("8'd63)", "8'd64)")))
    verdict = check(mutant, Scope("requant", ("requant",)), "prove", 1, root=tmp_path)
    assert verdict.status == "different" and verdict.vcd
    assert [step["shift"] for step in verdict.inputs] == [64]


MAX_LEN = "(counting && sm_finish && (op_len > ev_sm_max_len)) ? op_len : ev_sm_max_len;"


@pytest.mark.timeout(120)
def test_a_changed_wire_is_proven_only_where_its_expression_is_the_same(tmp_path):
    """The local proof: ``>=`` in a running maximum changes nothing (a tie keeps the same
    value), ``<`` does, in some state; a line outside a wire's expression is not its to judge."""
    def judged(mutated: str) -> str:
        mutant = Mutant("max-len", "hw/rtl/controller.v", MAX_LEN, mutated, "")
        wire = rtl_equivalence.changed_wire(mutant)
        assert wire.name == "ev_sm_max_len_next"
        source = equivalence.Mutant("max-len", "controller", "")
        return equivalence.check_local(source, wire, root=tmp_path).status

    assert judged(MAX_LEN.replace(">", ">=")) == "equivalent"
    assert judged(MAX_LEN.replace(">", "<")) == "unknown"
    register = "cnt_total     <= cnt_total_next;"
    assert rtl_equivalence.changed_wire(Mutant("r", "hw/rtl/controller.v", register,
                                                "cnt_total     <= 0;", "")) is None


def outcome(verdict: Verdict) -> RtlOutcome:
    return RtlOutcome("m", verdict, "")


def test_the_tags_are_mcys_and_an_eqgap_is_a_defect():
    proof = {"status": "equivalent"}
    assert rtl_run.tag(True, True, None) == rtl_run.COVERED
    assert rtl_run.tag(False, True, None) == rtl_run.UNCOVERED
    assert rtl_run.tag(False, True, proof) == rtl_run.NOCHANGE
    assert rtl_run.tag(True, True, proof) == rtl_run.EQGAP
    assert rtl_run.tag(False, False, None) is None
    records = [{"tag": t, "counts_as_caught": t in (rtl_run.COVERED, rtl_run.EQGAP)}
               for t in (rtl_run.COVERED, rtl_run.COVERED, rtl_run.UNCOVERED, rtl_run.NOCHANGE)]
    assert rtl_run.score(records) == (2, 3)  # NOCHANGE is not scored


def test_a_caught_mutant_needs_no_proof_and_a_recorded_one_is_used():
    mutant = Mutant("x", "hw/rtl/requant.v", REQUANT_CLAMP, REQUANT_CLAMP, "")
    assert rtl_run.proof_of(mutant, outcome(Verdict.CAUGHT), {}, timeout=1) is None
    recorded = {"x": {"status": "equivalent"}}
    assert rtl_run.proof_of(mutant, outcome(Verdict.SURVIVED), recorded,
                             timeout=1) == recorded["x"]


def test_the_mutation_suite_runs_the_fetch_burst_test():
    """chip_top-const-b4c0bcda (a 5-beat fetch) is not equivalent and only that test sees it."""
    stage = rtl_run.FETCH_BURSTS
    assert stage in rtl_run.SUITES["rtl-mutation"]
    path, _, node = stage.node.partition("::")
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    assert callable(getattr(module, node.partition("[")[0]))
    assert PROOFS["chip_top-const-b4c0bcda"]["status"] == "different"


def test_the_suites_end_with_lint_and_the_mutated_modules_own_proof(tmp_path):
    """Only survivors reach them: lint (a latch no simulation shows) and the module's proof."""
    for suite in ("rtl-mutation", "detection"):
        assert rtl_run.SUITES[suite][-2:] == (rtl_run.LINT, rtl_run.FORMAL)
    dropped = Mutant("drop", "hw/rtl/controller.v", "error_pc_next = error_pc_reg;", ";", "")
    assert rtl_run.stage_blocks(rtl_run.FORMAL, dropped, set()) == ["controller"]
    sram = Mutant("s", "hw/rtl/sram.v", "assign rd_b_bad = b_bad;", "", "")
    assert rtl_run.stage_blocks(rtl_run.FORMAL, sram, set()) == []
    found = rtl_run.lint_verdict(apply(dropped, tmp_path, ["hw"]), 120)
    assert not found.passed and "LATCH" in found.difference and found.unit == "controller"

