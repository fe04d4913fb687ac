"""The layers point down only, checked on the source tree so that they stay that way; inside
model/ and verif/ no folder imports one that imports it back.

``model`` (pure Python) <- ``sim`` (simulator plumbing) <- ``verif`` (the testbench and its
tools) <- ``scripts`` (entry points). A module imports its own layer and the ones below, tests
included; and no module but a test module imports a test module. A test module is any module
in a ``tests`` folder, and any module that defines a cocotb test, wherever it is (the block
testbenches of verif/blocks, the uvm tests). Only test modules and the runners name a test
module in a string (a cocotb module to run, a suite's selection): the env's launcher, the
regression tools and the mutation runs, whose job is to run tests.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from model.paths import REPO_ROOT

LAYERS = ("model", "sim", "verif", "scripts")  # each may import those before it, and itself
RUNNERS = ("verif/runs/launch.py", "verif/regress/", "verif/mutation/", "verif/bench/",
           "verif/faults/campaign.py")
COCOTB_TEST = re.compile(r"@(cocotb\.test|uvm_cocotb_test)\b")


def python_files(root: Path) -> list[Path]:
    return sorted(p for layer in LAYERS for p in (root / layer).rglob("*.py"))


def module_name(path: Path, root: Path) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts)


def is_test_module(path: Path, root: Path) -> bool:
    return "tests" in path.relative_to(root).parts or bool(COCOTB_TEST.search(path.read_text()))


def cocotb_modules(root: Path) -> set[str]:
    """The test modules outside a tests folder: those that define a cocotb test."""
    return {module_name(p, root) for p in python_files(root)
            if "tests" not in p.relative_to(root).parts and is_test_module(p, root)}


def is_test_name(name: str, cocotb: set[str]) -> bool:
    """A dotted name inside a tests package, or of a module that defines a cocotb test."""
    return "tests" in name.split(".") or any(
        name == module or name.startswith(module + ".") for module in cocotb)


def imported_modules(tree: ast.AST) -> list[tuple[str, list[str]]]:
    """(module, the names imported from it) of every absolute import."""
    imports = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imports.append((node.module, [alias.name for alias in node.names]))
    return imports


def code_strings(tree: ast.AST) -> list[str]:
    """String constants that are not docstrings (prose may mention a test file)."""
    docstrings = {id(node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, str) and id(node) not in docstrings]


def names_a_test(text: str, cocotb: set[str]) -> bool:
    """A dotted module name or a file path (a pytest selection) of a test module."""
    if not re.fullmatch(r"[\w./]+(\.py)?(::\w+)?", text) or "." not in text + "/" * ("/" in text):
        return False
    dotted = text.split("::")[0].removesuffix(".py").replace("/", ".")
    return dotted.split(".")[0] in LAYERS and is_test_name(dotted, cocotb)


def layer_problems(path: Path, root: Path = REPO_ROOT) -> list[str]:
    where = path.relative_to(root)
    layer = where.parts[0]
    allowed = LAYERS[: LAYERS.index(layer) + 1]
    tree = ast.parse(path.read_text())
    cocotb = cocotb_modules(root)
    test = is_test_module(path, root)
    problems = []
    for module, names in imported_modules(tree):
        top = module.split(".")[0]
        if top in LAYERS and top not in allowed:
            problems.append(f"{where} ({layer}) imports {module}: {top} is a higher layer")
        if not test and any(is_test_name(name, cocotb)
                            for name in [module, *(f"{module}.{n}" for n in names)]):
            problems.append(f"{where} imports the test module {module}")
    if not test and not str(where).startswith(RUNNERS):
        problems += [f"{where} names the test module {text!r}" for text in code_strings(tree)
                     if names_a_test(text, cocotb)]
    return problems


def room_of(module: str, root: Path = REPO_ROOT) -> str:
    """The folder a module's room is: its layer and first sub-package (``verif.agents`` for
    ``verif.agents.chip.driver``, and for ``verif.agents`` itself), or the layer for a module
    at its top (``model.paths``)."""
    parts = module.split(".")
    folder = ".".join(parts[:2])
    return folder if len(parts) > 2 or (root / parts[0] / parts[-1]).is_dir() else parts[0]


def room_imports(root: Path, layer: str) -> dict[str, set[str]]:
    """Which rooms of a layer each room imports (test modules left out: they sit on top)."""
    graph: dict[str, set[str]] = {}
    for path in sorted((root / layer).rglob("*.py")):
        if is_test_module(path, root):
            continue
        room = room_of(module_name(path, root).removesuffix(".__init__"), root)
        targets = graph.setdefault(room, set())
        for module, _ in imported_modules(ast.parse(path.read_text())):
            if module.split(".")[0] == layer and room_of(module, root) != room:
                targets.add(room_of(module, root))
    return graph


def room_cycle(graph: dict[str, set[str]]) -> list[str]:
    """A cycle of rooms (the first room repeated at its end), or [] when there is none."""
    state: dict[str, str] = {}

    def visit(room: str, path: list[str]) -> list[str]:
        state[room] = "open"
        for target in sorted(graph.get(room, ())):
            if state.get(target) == "open":
                return [*path[path.index(target):], target]
            if target not in state and (found := visit(target, [*path, target])):
                return found
        state[room] = "done"
        return []

    for room in sorted(graph):
        if room not in state and (found := visit(room, [room])):
            return found
    return []


@pytest.mark.parametrize("layer", ["model", "verif"])
def test_no_folder_imports_one_that_imports_it_back(layer):
    cycle = room_cycle(room_imports(REPO_ROOT, layer))
    assert not cycle, f"{layer}'s folders import each other in a circle: {' -> '.join(cycle)}"


def test_the_cycle_check_finds_a_circle_of_three_and_passes_a_chain():
    assert room_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert room_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) == []


@pytest.mark.parametrize("path", python_files(REPO_ROOT),
                         ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_the_module_imports_only_its_layer_and_below(path):
    assert layer_problems(path) == []


def test_the_check_sees_an_upward_import_a_test_import_and_a_named_test_module(tmp_path):
    for folder in ("model", "verif/blocks", "verif/tests"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "verif/blocks/unit_cocotb.py").write_text("@cocotb.test()\nasync def t(dut): ...\n")
    (tmp_path / "verif/tests/test_x.py").write_text("")
    fake = tmp_path / "model" / "bad.py"
    fake.write_text('"""doc: verif/tests/test_x.py is fine here."""\n'
                    "from verif.env.env import ChipEnv\n"
                    "from model.tests import helpers\n"
                    "MODULE = 'verif.blocks.unit_cocotb'\n"
                    "PATH = 'verif/tests/test_x.py::test_y'\n")
    problems = layer_problems(fake, tmp_path)
    assert len(problems) == 4, problems
    assert "higher layer" in problems[0] and "imports the test module" in problems[1]
    assert all("names the test module" in p for p in problems[2:])
    assert layer_problems(tmp_path / "verif/blocks/unit_cocotb.py", tmp_path) == []
