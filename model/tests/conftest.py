"""Options of the model tests: ``--exhaustive-depth N`` deepens the exhaustive page-table check.

Without it, test_paged_exhaustive.py runs at its own DEFAULT_DEPTH (a few seconds).
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--exhaustive-depth", type=int, default=None, metavar="N",
                     help="explore every page-table operation sequence up to N operations "
                          "(default: test_paged_exhaustive.DEFAULT_DEPTH)")  # fmt: skip


@pytest.fixture
def exhaustive_depth(request: pytest.FixtureRequest) -> int:
    """The depth asked for on the command line, else the test module's DEFAULT_DEPTH."""
    depth = request.config.getoption("exhaustive_depth")
    return request.module.DEFAULT_DEPTH if depth is None else depth
