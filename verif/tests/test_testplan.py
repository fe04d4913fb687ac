"""The testplan (verif/testplan/testplan.yml) against the tree, and TESTPLAN.md against it."""

from __future__ import annotations

import pytest
from cocotb_coverage.coverage import coverage_db

from verif.coverage import points  # registers every coverage point
from verif.testplan import plan as testplan
from verif.tests.session_shared import collected_node_ids


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return collected_node_ids(tmp_path_factory)


def test_the_plan_and_the_tree_agree(collected):
    assert points.STEP_POINTS  # the points are registered
    assert testplan.problems(testplan.load(), collected, set(coverage_db)) == []


def test_testplan_md_is_rendered_from_the_plan():
    assert testplan.MARKDOWN_FILE.read_text() == testplan.markdown(testplan.load()), (
        "verif/TESTPLAN.md is stale: run `python -m scripts.testplan`")


def test_the_checks_see_every_kind_of_disagreement(tmp_path):
    plan = testplan.load()
    broken = testplan.Testplan(
        plan.title, plan.intro, {**plan.facts, "opcodes": plan.facts["opcodes"] + 1},
        (*plan.roles, {"role": "r", "class": "Missing", "file": "verif/env/env.py"},
         {"role": "s", "class": "X", "file": "no/such.py"}),
        plan.sections,
        (testplan.Testpoint("a", "g", "s", "c", ("x/test_a.py::test_one", "x/test_none.py"),
                            ("decode.step_cg.context", "decode.no_cg.point")),
         testplan.Testpoint("a", "g", "s", "c", ("x/test_a.py::test_one",))))
    found = testplan.problems(broken, ["x/test_a.py::test_one", "x/test_b.py::test_two"],
                              set(coverage_db))
    assert "no testpoint selects x/test_b.py::test_two" in found
    assert "a: x/test_none.py selects no test" in found
    assert "a: no coverage point decode.no_cg.point" in found
    assert "testpoint a is named twice" in found
    assert any("defines no Missing" in f for f in found)
    assert any("no file no/such.py" in f for f in found)
    assert any(f.startswith("the plan says opcodes =") for f in found)


def test_a_run_annotates_each_testpoint_with_its_tests_outcomes(tmp_path):
    junit = tmp_path / "run.xml"
    junit.write_text(
        '<testsuites><testsuite>'
        '<testcase classname="verif.tests.test_chip" name="test_error_paths_stop_the_chip_with_'
        'the_documented_code[icarus-seed1]"/>'
        '<testcase classname="verif.tests.test_chip" name="test_every_error_case_stops_the_'
        'reference_machine_with_its_documented_code"><failure/></testcase>'
        '</testsuite></testsuites>')
    rows = {r.name: r for r in testplan.results(testplan.load(),
                                                 testplan.junit_outcomes(junit))}
    assert (rows["error_paths"].passed, rows["error_paths"].failed) == (1, 1)
    assert rows["error_paths"].verdict == "FAILED"
    assert rows["serving"].verdict == "not run"
