"""The host mutant catalogue stays in step with the code it breaks."""

from __future__ import annotations

import pytest

from verif.mutation.framework import check_applies
from verif.mutation.host_mutants import HOST_MUTANTS


@pytest.mark.parametrize("mutant", HOST_MUTANTS, ids=lambda m: m.name)
def test_each_host_mutant_changes_exactly_one_line_of_the_current_code(mutant):
    check_applies(mutant)


def test_host_mutants_are_distinct_and_cover_the_chapters_groups():
    assert len({m.name for m in HOST_MUTANTS}) == len(HOST_MUTANTS) == 20
    assert len({(m.path, m.original, m.mutated) for m in HOST_MUTANTS}) == 20
    groups = [m.group for m in HOST_MUTANTS]
    assert (groups.count("page table"), groups.count("window"), groups.count("host")) == (12, 3, 5)
