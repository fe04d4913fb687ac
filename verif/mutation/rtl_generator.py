"""Mutants of the chip's Verilog, generated from operator classes (for verif/mutation/rtl_run.py).

Pure text processing of hw/rtl/*.v, no simulator: each compiled line offers sites where one of
seven operator classes can break its expression; ``generate(seed, count)`` spreads the mutants
over the modules, the same ones for the same seed (README, "The RTL mutants"). A mutant's name
is its module, its class and a digest of its line's text: the equivalence proofs key on it.
"""

from __future__ import annotations

import ast
import hashlib
import math
import random
import re
import subprocess
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from verif.mutation.framework import REPO_ROOT, Mutant, MutantDoesNotApply, check_applies

RTL_FOLDER = "hw/rtl"
DEFINES_FILE = "hw/rtl/chip_defs.vh"
OPERATORS = ("arith", "logic", "compare", "const", "negate", "stuck", "drop")
DEFAULT_SEED = 1
DEFAULT_COUNT = 72
MIN_PER_MODULE = 3
GROUP = "rtl"
STUCK_BITS = 8  # a stuck bit is one of the low 8: values the tests' sizes reach

ARITH = {"+": "-", "-": "+", "*": "+", "<<": ">>", ">>": "<<", ">>>": ">>"}
LOGIC = {"&&": "||", "||": "&&", "&": "|", "|": "&", "^": "&"}
COMPARE = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}
EQUALITY = {"==": "!=", "!=": "=="}

TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<literal>\d*\s*'[sS]?[bBoOdDhH]\s*[0-9a-fA-F_xXzZ?]+ | \d[\d_]*)
  | (?P<name>`?[A-Za-z_$][\w$]*)
  | (?P<string>"[^"]*")
  | (?P<op>>>>|<<<|===|!==|==|!=|<=|>=|&&|\|\||<<|>>|\+:|-:|~&|~\||~\^|\^~
          |[-+*/%<>!~&|^?:=(){}\[\],;@\#.])
""", re.VERBOSE)
SIZED = re.compile(r"(\d*)\s*'([sS]?)([bBoOdDhH])\s*([0-9a-fA-F_]+)$")
DECLARATION = re.compile(
    r"^(?:(?:input|output|inout)\s+)?(?:wire|reg|integer)\b\s*(?:signed\s+)?(\[[^\]]*\])?\s*(.*)$")
PROCEDURAL = re.compile(r"^(?P<label>[^=<>!]*?:\s*)?(?P<lhs>[A-Za-z_]\w*(?:\[[^\]]*\])?)\s*"
                        r"(?P<op><=|=)(?!=)\s*(?P<rhs>.*?);$")
CONTINUOUS = re.compile(r"^assign\s+(?P<lhs>[^=]+?)\s*=(?!=)\s*(?P<rhs>.*?)(?P<end>;?)$")
DECLARED = re.compile(r"^(?P<head>(?:wire|localparam)\b[^=]*?\b(?P<lhs>[A-Za-z_]\w*))\s*=(?!=)"
                      r"\s*(?P<rhs>.*?)(?P<end>;?)$")
IF = re.compile(r"^(?P<head>(?:end\s+)?(?:else\s+)?if\s*)\((?P<cond>.*)\)(?P<tail>\s*begin)?$")
PORT = re.compile(r"^\.(?P<port>[a-z]\w*)\s*\((?P<expr>.*)\)(?P<end>,?)$")
SKIPPED_STARTS = ("module", "endmodule", "parameter", "input", "output", "inout", "genvar",
                  "integer", "always", "case", "endcase", "default", "begin", "end", "else",
                  "generate", "endgenerate", "for", "`", "$", ")", "initial")


@dataclass(frozen=True)
class Site:
    """One way to break one line: the operator class, the new line, and what changed."""

    operator: str
    mutated: str
    what: str


@dataclass(frozen=True)
class Tok:
    kind: str
    text: str
    start: int
    protected: bool  # inside a bit select, a part select or a replication count


# ---- reading the source ------------------------------------------------------------------------


def rtl_files(root: Path = REPO_ROOT) -> list[Path]:
    """The chip's modules (hw/rtl/*.v), in name order."""
    return sorted((root / RTL_FOLDER).glob("*.v"))


def defines(root: Path = REPO_ROOT) -> dict[str, str]:
    """The `define values of the generated header, for widths written with macros."""
    found = {}
    for line in (root / DEFINES_FILE).read_text().splitlines():
        match = re.match(r"\s*`define\s+(\w+)\s+(\S+)", line)
        if match:
            found[match[1]] = match[2]
    return found


def split_comment(line: str) -> tuple[str, str]:
    """The code of a line and its trailing `//` comment (kept as it is by every mutant)."""
    at = line.find("//")
    return (line, "") if at < 0 else (line[:at].rstrip(), line[at:])


def compiled_lines(text: str, defined: set[str]) -> list[tuple[int, str]]:
    """(line number, code) of the lines a build compiles, outside initial blocks and comments.

    Skips block comments, `ifdef branches not taken (a name counts as defined when the file
    or the header defines it; the builds define nothing for hw/rtl), directives and every
    line of an `initial` block (parameter checks and memory clears).
    """
    lines = []
    taken: list[bool] = []
    in_block_comment = False
    initial_depth = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw
        if in_block_comment:
            if "*/" not in line:
                continue
            line = line.split("*/", 1)[1]
            in_block_comment = False
        while "/*" in line:
            head, _, tail = line.partition("/*")
            if "*/" in tail:
                line = head + tail.split("*/", 1)[1]
            else:
                line, in_block_comment = head, True
        code = split_comment(line)[0].strip()
        directive = re.match(r"`(ifdef|ifndef|elsif|else|endif|define)\b\s*(\w*)", code)
        if directive:
            kind, name = directive.groups()
            if kind in ("ifdef", "ifndef"):
                taken.append((name in defined) == (kind == "ifdef"))
            elif kind in ("else", "elsif") and taken:
                taken[-1] = not taken[-1] if kind == "else" else name in defined
            elif kind == "endif" and taken:
                taken.pop()
            elif kind == "define" and all(taken):
                defined.add(name)
            continue
        if not all(taken) or not code:
            continue
        if initial_depth or re.match(r"initial\b", code):
            initial_depth += len(re.findall(r"\bbegin\b", code))
            initial_depth -= len(re.findall(r"\bend\b", code))
            initial_depth = max(initial_depth, 0)
            continue
        lines.append((number, code))
    return lines


PARAMETER_DEFAULT = re.compile(r"parameter\s+(\w+)\s*=\s*([^,]+)")
GENERATE_IF = re.compile(r"if\s*\(\s*(\w+)\s*\)\s*begin\s*:\s*\w+$")


def elaborated_lines(code_lines: Sequence[tuple[int, str]],
                     macros: dict[str, str]) -> list[tuple[int, str]]:
    """The lines the chip as built elaborates: of a generate ``if (P) begin : a .. end else
    begin : b .. end`` on a module parameter, only the branch its default takes (the other is
    the chip without a feature, such as its parity checks: not the design a mutant breaks, as
    an `ifdef's untaken branch)."""
    values = {f"`{name}": value for name, value in macros.items()}
    defaults: dict[str, int | None] = {}
    branches: list[tuple[int, bool]] = []  # (depth of the if, its branch taken) of each open if
    kept, depth = [], 0
    for number, code in code_lines:
        if match := PARAMETER_DEFAULT.match(code):
            defaults[match[1]] = evaluate(match[2].strip(), values)
        if branches and code.startswith("end") and depth - 1 == branches[-1][0]:
            level, taken = branches.pop()
            if re.match(r"end\s+else\s+begin\b", code):
                branches.append((level, not taken))
        elif (match := GENERATE_IF.match(code)) and defaults.get(match[1]) is not None:
            branches.append((depth, bool(defaults[match[1]])))
        elif all(taken for _, taken in branches):
            kept.append((number, code))
        depth += len(re.findall(r"\b(begin|case)\b", code))
        depth -= len(re.findall(r"\b(end|endcase)\b", code))
    return kept


def evaluate(expr: str, values: dict[str, str]) -> int | None:
    """The value of a constant expression of numbers and known names, else None.

    ``values`` holds the macros as ```NAME`` and the localparams as ``NAME``; the expression
    may use ``+ - * /`` and parentheses (a declaration's range: ```CNT_TOTAL_W-1``).
    """
    def substitute(match: re.Match) -> str:
        name = match[0]
        return f"({values[name]})" if name in values else name

    for _ in range(4):  # macros and localparams may refer to each other
        expr = re.sub(r"`?[A-Za-z_]\w*", substitute, expr)
    try:
        return arithmetic(ast.parse(expr.strip(), mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError):
        return None


def arithmetic(node: ast.AST) -> int:
    """An integer expression tree of + - * / (Verilog's integer division truncates)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -arithmetic(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        left, right = arithmetic(node.left), arithmetic(node.right)
        if isinstance(node.op, ast.Div):
            quotient = abs(left) // abs(right)
            return quotient if (left < 0) == (right < 0) else -quotient
        return {ast.Add: left + right, ast.Sub: left - right,
                ast.Mult: left * right}[type(node.op)]
    raise ValueError(f"not a constant: {ast.dump(node)}")


def widths(code_lines: Sequence[tuple[int, str]], macros: dict[str, str]) -> dict[str, int | None]:
    """Declared signal widths; None where a module parameter (set per instance) sets it."""
    values = {f"`{name}": value for name, value in macros.items()}
    for _, code in code_lines:
        match = re.match(r"localparam\s+(?:\[[^\]]*\]\s*)?(\w+)\s*=\s*([^;]+);", code)
        if match and evaluate(match[2], values) is not None:
            values[match[1]] = str(evaluate(match[2], values))
    found: dict[str, int | None] = {}
    for _, code in code_lines:
        match = DECLARATION.match(code)
        if not match:
            continue
        width: int | None = 32 if code.startswith("integer") else 1
        if match[1]:
            msb, _, lsb = match[1][1:-1].partition(":")
            high, low = evaluate(msb, values), evaluate(lsb, values)
            width = None if high is None or low is None else high - low + 1
        names = match[2].split("=")[0] if "=" in match[2] else match[2]
        for piece in names.rstrip(";,").split(","):
            name = re.match(r"\s*([A-Za-z_]\w*)", piece)
            if name:
                found[name[1]] = width
    return found


# ---- tokens ------------------------------------------------------------------------------------


def tokens(expr: str) -> list[Tok]:
    """The tokens of an expression, marking those that are not operands of the expression:
    inside a bit or part select, a system function's arguments, a replication count."""
    raw = [(m.lastgroup, m[0], m.start()) for m in TOKEN.finditer(expr) if m.lastgroup != "space"]
    texts = [text for _, text, _ in raw]
    protected = [False] * len(raw)
    for first, last in [*selects(texts), *calls(texts), *replication_counts(texts)]:
        protected[first:last + 1] = [True] * (last + 1 - first)
    return [Tok(kind, text, start, protected[i]) for i, (kind, text, start) in enumerate(raw)]


def selects(texts: Sequence[str]) -> list[tuple[int, int]]:
    """(first, last) token index of every outermost ``[...]``."""
    spans, depth, opened = [], 0, 0
    for i, text in enumerate(texts):
        if text == "[":
            opened = i if depth == 0 else opened
            depth += 1
        elif text == "]":
            depth -= 1
            if depth == 0:
                spans.append((opened, i))
    return spans


def calls(texts: Sequence[str]) -> list[tuple[int, int]]:
    """The argument lists of system functions (``$clog2(...)``: a width, not an operand)."""
    spans = []
    for i, text in enumerate(texts[:-1]):
        if text.startswith("$") and texts[i + 1] == "(":
            depth = 0
            for j in range(i + 1, len(texts)):
                depth += {"(": 1, ")": -1}.get(texts[j], 0)
                if depth == 0:
                    spans.append((i + 1, j))
                    break
    return spans


def replication_counts(texts: Sequence[str]) -> list[tuple[int, int]]:
    """The COUNT of every ``{COUNT{...}}``: what lies between two ``{`` with no ``,`` between."""
    spans = []
    for i, text in enumerate(texts):
        if text != "{":
            continue
        depth = 0
        for j in range(i + 1, len(texts)):
            if texts[j] in ("(", "["):
                depth += 1
            elif texts[j] in (")", "]"):
                depth -= 1
            elif depth == 0 and texts[j] in (",", "}"):
                break
            elif depth == 0 and texts[j] == "{":
                if j > i + 1:
                    spans.append((i + 1, j - 1))
                break
    return spans


def is_binary(toks: Sequence[Tok], i: int) -> bool:
    """Whether the operator at i has a left operand (else it is unary or a reduction)."""
    if i == 0:
        return False
    before = toks[i - 1]
    return before.kind in ("name", "literal") or before.text in (")", "]", "}")


def literal_variants(text: str) -> list[str]:
    """The literal plus one and minus one, inside its width; a 1-bit literal flips."""
    sized = SIZED.match(text.replace(" ", ""))
    if sized:
        size, signed, base, digits = sized.groups()
        radix = {"b": 2, "o": 8, "d": 10, "h": 16}[base.lower()]
        value = int(digits.replace("_", ""), radix)
        limit = (1 << int(size)) - 1 if size else (1 << 32) - 1
        out = []
        for new in (value + 1, value - 1):
            if 0 <= new <= limit:
                shown = {2: f"{new:b}", 8: f"{new:o}", 10: f"{new}", 16: f"{new:X}"}[radix]
                out.append(f"{size}'{signed}{base}{shown}")
        return out
    if re.fullmatch(r"\d[\d_]*", text):
        value = int(text.replace("_", ""))
        return [str(v) for v in (value + 1, value - 1) if v >= 0]
    return []


# ---- the sites of one line ---------------------------------------------------------------------


class Line:
    """One line being mutated: ``splice`` puts a new text in place of a span of its code."""

    def __init__(self, text: str):
        self.text = text  # the whole line, stripped, with its comment
        self.code = split_comment(text)[0]

    def splice(self, start: int, end: int, new: str) -> str:
        return self.text[:start] + new + self.text[end:]


def expression_sites(line: Line, start: int, end: int, whole_is_bit: bool = False) -> list[Site]:
    """The operator, comparison, literal and negation sites of the expression code[start:end]."""
    expr = line.code[start:end]
    toks = tokens(expr)
    sites = []
    for i, tok in enumerate(toks):
        if tok.protected:
            continue
        at = start + tok.start
        swap = swapped(toks, i)
        if swap:
            operator, new = swap
            sites.append(Site(operator, line.splice(at, at + len(tok.text), new),
                              f"'{tok.text}' became '{new}'" if new else "a '!' was dropped"))
        elif tok.kind == "literal" and not zero_pad(toks, i):
            for new in literal_variants(tok.text):
                sites.append(Site("const", line.splice(at, at + len(tok.text), new),
                                  f"{tok.text} became {new}"))
    question = [t for t in toks if t.text == "?" and not t.protected]
    if question and question[0].start > 0:
        cond = expr[: question[0].start].rstrip()
        if balanced(cond) and "?" not in cond and ":" not in cond:
            sites.append(Site("negate", line.splice(start, start + len(cond), f"!({cond})"),
                              f"the condition '{cond.strip()}' was negated"))
    if whole_is_bit and not constant(expr) and balanced(expr) and expr.strip():
        sites.append(Site("negate", line.splice(start, end, f"!({expr.strip()})"),
                          "the 1-bit value was negated"))
    return sites


def swapped(toks: Sequence[Tok], i: int) -> tuple[str, str] | None:
    """(operator class, new text) for an operator token that a class swaps, else None."""
    text = toks[i].text
    if toks[i].kind != "op":
        return None
    if not is_binary(toks, i):
        return ("negate", "") if text == "!" else None
    for operator, table in (("arith", ARITH), ("logic", LOGIC), ("compare", COMPARE),
                            ("negate", EQUALITY)):
        if text in table:
            return operator, table[text]
    return None


def zero_pad(toks: Sequence[Tok], i: int) -> bool:
    """A zero literal that opens a concatenation only widens it (``{1'b0, x}``): not a site."""
    zero = re.fullmatch(r"\d*'[sS]?[bBoOdDhH]0+", toks[i].text.replace(" ", ""))
    return bool(zero) and i > 0 and toks[i - 1].text == "{" and i + 1 < len(toks) \
        and toks[i + 1].text == ","


def constant(expr: str) -> bool:
    """Whether an expression is made of literals and named constants only (a reset value)."""
    return all(t.kind == "literal" or t.protected or t.text in "{}," or
               (t.kind == "name" and (t.text.startswith("`") or t.text.isupper()))
               for t in tokens(expr))


def balanced(expr: str) -> bool:
    depth = 0
    for char in expr:
        depth += {"(": 1, ")": -1, "{": 1, "}": -1, "[": 1, "]": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def stuck_sites(line: Line, lhs: str, start: int, end: int, width: int | None,
                rng: random.Random) -> list[Site]:
    """One bit of a register's next value (code[start:end]) stuck at 0 and at 1."""
    rhs = line.code[start:end]
    if width == 1:
        values = [("1'b0", f"{lhs} stuck at 0"), ("1'b1", f"{lhs} stuck at 1")]
    elif width is None:  # the width is a parameter of the instance: bit 0 exists at every width
        values = [(f"(({rhs}) >> 1) << 1", f"bit 0 of {lhs} stuck at 0"),
                  (f"({rhs}) | 1'b1", f"bit 0 of {lhs} stuck at 1")]
    else:
        bit = rng.randrange(min(width, STUCK_BITS))
        clear = ((1 << width) - 1) ^ (1 << bit)
        values = [(f"({rhs}) & {width}'h{clear:X}", f"bit {bit} of {lhs} stuck at 0"),
                  (f"({rhs}) | {width}'h{1 << bit:X}", f"bit {bit} of {lhs} stuck at 1")]
    return [Site("stuck", line.splice(start, end, new), what) for new, what in values]


def line_sites(line: Line, continued: bool, sizes: dict[str, int | None], in_procedure: bool,
               ports: set[str], rng: random.Random) -> list[Site]:
    """Every way to break one line of code (its comment and spacing are kept)."""
    code = line.code
    if continued:  # a line of an expression that started on an earlier line
        return expression_sites(line, 0, len(code))
    if "unused" in code or (code.startswith(SKIPPED_STARTS) and not IF.match(code)):
        return []
    if match := IF.match(code):
        if not balanced(match["cond"]):
            return []
        start, end = match.span("cond")
        return [*expression_sites(line, start, end),
                Site("negate", line.splice(start, end, f"!({match['cond']})"),
                     f"the condition '{match['cond']}' was negated")]
    if match := PORT.match(code):
        if match["port"] not in ports or match["port"] == "clk" or not match["expr"].strip():
            return []
        return expression_sites(line, *match.span("expr"),
                                whole_is_bit=sizes.get(match["expr"].strip()) == 1)
    if match := CONTINUOUS.match(code):
        lhs = match["lhs"].strip()
        sites = expression_sites(line, *match.span("rhs"),
                                 whole_is_bit=bool(match["end"]) and sizes.get(lhs) == 1)
        if match["end"]:
            sites.append(Site("drop", f"// dropped: {line.text}", f"'assign {lhs}' was dropped"))
        return sites
    if match := DECLARED.match(code):
        return expression_sites(line, *match.span("rhs"),
                                whole_is_bit=bool(match["end"]) and sizes.get(match["lhs"]) == 1)
    if in_procedure and (match := PROCEDURAL.match(code)):
        lhs, name = match["lhs"], match["lhs"].split("[")[0]
        start, end = match.span("rhs")
        sites = expression_sites(line, start, end, whole_is_bit=sizes.get(name) == 1)
        if match["op"] == "<=" and not constant(match["rhs"]):
            width = sizes.get(name) if "[" not in lhs else None  # a memory word: bit 0
            sites += stuck_sites(line, lhs, start, end, width, rng)
        label = match["label"] or ""
        sites.append(Site("drop", f"{label};  // dropped: {code[len(label):]}",
                          f"the assignment to {lhs} was dropped"))
        return sites
    return []


def unique_lines(text: str) -> set[str]:
    counts = Counter(line.strip() for line in text.splitlines())
    return {line for line, n in counts.items() if n == 1}


def module_inputs(root: Path = REPO_ROOT) -> dict[str, set[str]]:
    """The input ports of every module: a port connection is mutated only on an input."""
    found = {}
    for path in rtl_files(root):
        code = [split_comment(line)[0].strip() for line in path.read_text().splitlines()]
        module = next(m[1] for line in code if (m := re.match(r"module\s+(\w+)", line)))
        found[module] = {name for line in code if line.startswith("input")
                         for name in re.findall(r"(\w+)\s*,?$", line)}
    return found


def candidates(path: Path, macros: dict[str, str], inputs: dict[str, set[str]],
               rng: random.Random) -> list[tuple[int, str, list[Site]]]:
    """(line number, original line, sites) of each line of one file that can be mutated.

    The lines of a reset branch (``if (rst) begin .. end``) are left out: the reset values are
    zeros, and Verilator (the simulator of this run) starts every register at zero, so most
    of their mutants could not change anything.
    """
    text = path.read_text()
    raw_lines = text.splitlines()
    code_lines = elaborated_lines(compiled_lines(text, set(macros)), macros)
    sizes = widths(code_lines, macros)
    unique = unique_lines(text)
    found = []
    open_statement = False  # the previous code line left an expression unfinished
    depth = 0  # begin/end nesting: assignments inside always blocks are procedural
    reset_level: int | None = None  # the depth of the reset branch being skipped
    instance: str | None = None  # the module whose ports are being connected
    for number, code in code_lines:
        line = Line(raw_lines[number - 1].strip())
        in_procedure = depth > 0 or bool(re.match(r"always\b", code))
        if reset_level is not None and code.startswith("end") and depth - 1 == reset_level:
            reset_level = None
        if (started := re.match(r"(\w+)\s+(#\s*\(|\w+\s*\()", code)) and started[1] in inputs:
            instance = started[1]
        ports = inputs.get(instance or "", set())
        if reset_level is None and line.code == code and line.text in unique:
            sites = line_sites(line, open_statement, sizes, in_procedure, ports, rng)
            if sites:
                found.append((number, line.text, sites))
        if re.fullmatch(r"if\s*\(\s*rst\s*\)\s*begin", code):
            reset_level = depth
        if code == ");":
            instance = None
        depth += len(re.findall(r"\b(begin|case)\b", code))
        depth -= len(re.findall(r"\b(end|endcase)\b", code))
        open_statement = statement_open(code, open_statement)
    return found


def statement_open(code: str, was_open: bool) -> bool:
    """Whether an expression continues on the next line."""
    if code.endswith((";", "begin", "end", "endcase", "endgenerate", "generate")):
        return False
    if code.startswith(("assign", "wire", "localparam")) and "=" in code:
        return True
    if re.match(r"[A-Za-z_]\w*(\[[^\]]*\])?\s*<=", code) and not code.endswith(";"):
        return True
    return was_open and not code.endswith((")", ","))


# ---- choosing --------------------------------------------------------------------------------


def allocate(sizes: dict[str, int], count: int, generated: set[str]) -> dict[str, int]:
    """How many mutants each module gets: a floor each, the rest by sqrt(candidate lines).

    A generated table (exp_lut) keeps the floor: its lines are all alike.
    """
    share = {m: min(MIN_PER_MODULE, n) for m, n in sizes.items()}
    weight = {m: math.sqrt(n) for m, n in sizes.items()}
    while sum(share.values()) < count:
        open_modules = [m for m in sizes if share[m] < sizes[m] and m not in generated]
        if not open_modules:
            break
        module = max(open_modules, key=lambda m: (weight[m] / (share[m] + 1), m))
        share[module] += 1
    return share


def mutant_name(module: str, operator: str, path: str, original: str, mutated: str) -> str:
    digest = hashlib.sha1(f"{path}\n{original}\n{mutated}".encode()).hexdigest()[:8]
    return f"{module}-{operator}-{digest}"


def is_generated(path: Path) -> bool:
    return "GENERATED" in "".join(path.read_text().splitlines(keepends=True)[:6])


def changed_lines(revision: str, root: Path = REPO_ROOT) -> dict[str, set[int]]:
    """The lines of each hw/rtl file added or changed since a git revision (the mutation run of
    a change, such as the parity checks: every changed line that can be mutated, once)."""
    diff = subprocess.run(["git", "diff", "-U0", revision, "--", "hw/rtl"], cwd=root,
                          capture_output=True, text=True, check=True).stdout
    lines: dict[str, set[int]] = {}
    path = ""
    for line in diff.splitlines():
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else ""
        elif (hunk := re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)) and path:
            start, length = int(hunk[1]), int(hunk[2] or 1)
            lines.setdefault(path, set()).update(range(start, start + length))
    return lines


def generate(seed: int = DEFAULT_SEED, count: int = DEFAULT_COUNT, root: Path = REPO_ROOT,
             only_lines: dict[str, set[int]] | None = None) -> list[Mutant]:
    """``count`` mutants over every module of hw/rtl (or over ``only_lines`` of each file), the
    same ones for the same seed.

    Module by module, each of its mutants takes the operator class used least so far (among
    the classes its remaining lines offer), then a random line offering that class, then a
    random site of it on that line.
    """
    rng = random.Random(seed)
    macros = defines(root)
    inputs = module_inputs(root)
    per_file = {path: candidates(path, macros, inputs, random.Random(f"{seed}:{path.name}"))
                for path in rtl_files(root)}
    if only_lines is not None:
        per_file = {path: [c for c in found
                           if c[0] in only_lines.get(path.relative_to(root).as_posix(), ())]
                    for path, found in per_file.items()}
    share = allocate({p.stem: len(c) for p, c in per_file.items()}, count,
                     {p.stem for p in per_file if is_generated(p)})
    used: Counter = Counter()
    chosen = []
    for path, lines in per_file.items():
        left = list(lines)
        while left and sum(1 for c in chosen if c[0] == path.name) < share[path.stem]:
            offered = sorted({s.operator for _, _, sites in left for s in sites})
            operator = min(offered, key=lambda op: (used[op], rng.random()))
            fitting = [entry for entry in left if any(s.operator == operator for s in entry[2])]
            entry = rng.choice(fitting)
            left.remove(entry)
            number, original, sites = entry
            mutant = choose(path, root, original, [s for s in sites if s.operator == operator],
                            rng)
            if mutant is not None:
                used[operator] += 1
                chosen.append((path.name, number, mutant))
    return [m for _, _, m in sorted(chosen, key=lambda c: (c[0], c[1]))]


def choose(path: Path, root: Path, original: str, sites: list[Site],
           rng: random.Random) -> Mutant | None:
    """A random one of the sites of a line that applies as a Mutant (check_applies)."""
    relative = path.relative_to(root).as_posix()
    options = [s for s in sites if s.mutated.strip() != original]
    rng.shuffle(options)
    for site in options:
        mutated = site.mutated.strip()
        mutant = Mutant(mutant_name(path.stem, site.operator, relative, original, mutated),
                        relative, original, mutated, f"{site.operator}: {site.what}",
                        f"{GROUP}:{site.operator}")
        try:
            check_applies(mutant, root)
        except MutantDoesNotApply:
            continue
        return mutant
    return None


def operator_of(mutant: Mutant) -> str:
    """The operator class of a generated mutant (its group is ``rtl:<class>``)."""
    return mutant.group.split(":", 1)[1]


def module_of(mutant: Mutant) -> str:
    return Path(mutant.path).stem


def line_of(mutant: Mutant, root: Path = REPO_ROOT) -> int:
    """The line number of the mutant's line in its file (1-based)."""
    for number, line in enumerate((root / mutant.path).read_text().splitlines(), start=1):
        if line.strip() == mutant.original:
            return number
    raise MutantDoesNotApply(f"{mutant.name}: {mutant.path} no longer has its line")


def sample(mutants: Sequence[Mutant], k: int, seed: int = DEFAULT_SEED) -> list[Mutant]:
    """A fixed subset of ``k`` mutants: modules taken in a seeded order, one at a time."""
    rng = random.Random(f"sample:{seed}")
    by_module: dict[str, list[Mutant]] = {}
    for mutant in mutants:
        by_module.setdefault(module_of(mutant), []).append(mutant)
    for group in by_module.values():
        rng.shuffle(group)
    modules = sorted(by_module)
    rng.shuffle(modules)
    picked: list[Mutant] = []
    while len(picked) < min(k, len(mutants)):
        for module in modules:
            if by_module[module] and len(picked) < k:
                picked.append(by_module[module].pop())
    order = {m.name: i for i, m in enumerate(mutants)}
    return sorted(picked, key=lambda m: order[m.name])
