"""The layers point down only, checked on the source tree so that they stay that way.

``model`` (pure Python) <- ``sim`` (simulator plumbing) <- ``verif`` (the testbench) <-
``scripts`` (entry points). A module imports its own layer and the ones below; a test imports
its own layer and below; and no module outside a ``tests`` folder names a test module, by import
or in a string (a cocotb module to run, say). The entry points in ``scripts`` may name tests in
strings, never import them: a regression suite is a list of pytest selections, and a report
counts results by test package.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("model", "sim", "verif", "scripts")  # each may import those before it, and itself
TEST_MODULE = re.compile(r"(model|sim|verif|scripts)\.tests(\.\w+)*")  # dotted: importable
TEST_PATH = re.compile(r"(model|sim|verif|scripts)/tests(/\S*)?")


def python_files() -> list[Path]:
    return sorted(p for layer in LAYERS for p in (REPO_ROOT / layer).rglob("*.py"))


def is_test(path: Path) -> bool:
    return "tests" in path.relative_to(REPO_ROOT).parts


def imported_modules(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def code_strings(tree: ast.AST) -> list[str]:
    """String constants that are not docstrings (prose may mention a test file)."""
    docstrings = {id(node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, str) and id(node) not in docstrings]


def layer_problems(path: Path) -> list[str]:
    layer = path.relative_to(REPO_ROOT).parts[0]
    allowed = LAYERS[: LAYERS.index(layer) + 1]
    tree = ast.parse(path.read_text())
    where = path.relative_to(REPO_ROOT)
    problems = []
    for module in imported_modules(tree):
        top = module.split(".")[0]
        if top in LAYERS and top not in allowed:
            problems.append(f"{where} ({layer}) imports {module}: {top} is a higher layer")
        if not is_test(path) and TEST_MODULE.fullmatch(module):
            problems.append(f"{where} imports the test module {module}")
    if not is_test(path) and layer != "scripts":
        problems += [f"{where} names the test module {text!r}" for text in code_strings(tree)
                     if TEST_MODULE.fullmatch(text) or TEST_PATH.fullmatch(text)]
    return problems


@pytest.mark.parametrize("path", python_files(), ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_the_module_imports_only_its_layer_and_below(path):
    assert layer_problems(path) == []


def test_the_check_sees_an_upward_import_and_a_named_test_module(tmp_path, monkeypatch):
    fake = tmp_path / "model" / "bad.py"
    fake.parent.mkdir()
    fake.write_text('"""doc: verif/tests/test_x.py is fine here."""\n'
                    "from verif.env import DecodeEnv\n"
                    "MODULE = 'sim.tests.blocks_cocotb'\n")
    monkeypatch.setattr(f"{__name__}.REPO_ROOT", tmp_path)
    problems = layer_problems(fake)
    assert len(problems) == 2, problems
    assert "higher layer" in problems[0] and "names the test module" in problems[1]
