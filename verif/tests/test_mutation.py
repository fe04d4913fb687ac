"""The mutation framework (verif/mutation/framework.py): a mutant changes exactly its one line of a
copy."""

from __future__ import annotations

import pytest

from verif.mutation.framework import (
    REPO_ROOT,
    Mutant,
    MutantDoesNotApply,
    Outcome,
    Verdict,
    apply,
    changed_lines,
    check_applies,
    mutate_text,
    run_mutants,
)

EXAMPLE = Mutant("example", "x.py", "a = 1", "a = 2", "a becomes 2")


def test_the_line_is_replaced_with_its_indentation():
    assert mutate_text("if b:\n    a = 1\n", EXAMPLE) == "if b:\n    a = 2\n"


@pytest.mark.parametrize("text", ["b = 1\n", "a = 1\na = 1\n", "a = 10\n"])
def test_a_missing_or_repeated_line_fails_loudly(text):
    with pytest.raises(MutantDoesNotApply, match="not once"):
        mutate_text(text, EXAMPLE)


def test_changed_lines_names_exactly_the_differing_lines():
    assert changed_lines("a\nb\nc\n", "a\nB\nc\n") == [("b", "B")]
    assert changed_lines("a\nb\n", "a\nb\n") == []
    assert len(changed_lines("a\nb\nc\n", "A\nb\nC\n")) == 2


def test_apply_breaks_a_copy_and_leaves_the_tree_alone(tmp_path):
    mutant = Mutant("rule-late", "model/kv/step_rule.py",
                    "return max(0, step + 1 - window + sinks)",
                    "return max(0, step - window + sinks)", "the trim point is one step late")
    check_applies(mutant)
    root = apply(mutant, tmp_path, ["model"])
    assert tmp_path in root.parents
    broken = (root / mutant.path).read_text()
    pairs = changed_lines((REPO_ROOT / mutant.path).read_text(), broken)
    assert [(a.strip(), b.strip()) for a, b in pairs] == [(mutant.original, mutant.mutated)]
    assert "return max(0, step + 1 - window + sinks)" in (REPO_ROOT / mutant.path).read_text()


def test_run_mutants_checks_the_unbroken_copy_and_every_mutant(tmp_path):
    mutant = Mutant("rule-late", "model/kv/step_rule.py",
                    "return max(0, step + 1 - window + sinks)",
                    "return max(0, step - window + sinks)", "the trim point is one step late")
    seen = []

    def check(m, root):
        text = (root / "model/kv/step_rule.py").read_text()
        seen.append(m)
        broken = "return max(0, step - window + sinks)" in text
        return Outcome(m.name if m else "unbroken",
                       Verdict.CAUGHT if broken else Verdict.SURVIVED, "")

    unbroken, outcomes = run_mutants([mutant], ["model"], check, workers=1)
    assert unbroken.verdict == Verdict.SURVIVED and [o.verdict for o in outcomes] == [
        Verdict.CAUGHT]
    assert seen == [None, mutant]


def test_a_control_checks_the_unbroken_copy_after_the_mutants_on_their_outcomes():
    mutant = Mutant("rule-late", "model/kv/step_rule.py",
                    "return max(0, step + 1 - window + sinks)",
                    "return max(0, step - window + sinks)", "the trim point is one step late")
    seen = []

    def check(m, root):
        seen.append(m)
        return Outcome(m.name, Verdict.CAUGHT, "test_trim")

    def control(outcomes, root):
        seen.append([o.detail for o in outcomes])
        unbroken = "step + 1 - window" in (root / "model/kv/step_rule.py").read_text()
        return Outcome("unbroken", Verdict.SURVIVED if unbroken else Verdict.CAUGHT, "")

    unbroken, outcomes = run_mutants([mutant], ["model"], check, workers=1, control=control)
    assert seen == [mutant, ["test_trim"]]  # the mutants first, the unbroken copy never by check
    assert unbroken.verdict == Verdict.SURVIVED and [o.verdict for o in outcomes] == [
        Verdict.CAUGHT]


def test_a_tree_edited_during_the_run_changes_no_copy(tmp_path):
    """Copies come from a snapshot taken when the run begins: an edit to the tree meanwhile
    (here, made while the unbroken copy is checked) reaches no mutant's copy."""
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "x.py").write_text("a = 1\n")
    mutant = Mutant("two", "pkg/x.py", "a = 1", "a = 2", "a becomes 2")
    copies = {}

    def check(m, root):
        (tree / "pkg" / "x.py").write_text("a = 3\n")  # someone edits the working tree
        copies[m.name if m else "unbroken"] = (root / "pkg" / "x.py").read_text()
        return Outcome(m.name if m else "unbroken", Verdict.SURVIVED, "")

    run_mutants([mutant], ["pkg"], check, workers=1, source=tree)
    assert copies == {"unbroken": "a = 1\n", "two": "a = 2\n"}
