"""Which RTL mutants change nothing, decided by proof (verif/formal/equivalence.py), never by
argument: each module's mutants are judged at a scope (its own outputs, or an enclosing block's
where only the block's contract hides the change), proofs recorded in rtl_equivalent_proofs.json.
``python -m verif.mutation.rtl_equivalence [--only NAME] [--write] [--check]``
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from dataclasses import asdict, replace
from pathlib import Path

from verif.formal import equivalence
from verif.formal.equivalence import (
    Constraint,
    Scope,
    Verdict,
    Wire,
    check,
    check_local,
    check_structural,
)
from verif.mutation import rtl_generator as gen
from verif.mutation.framework import REPO_ROOT, Mutant, mutate_text

PROOFS_FILE = Path(__file__).with_name("rtl_equivalent_proofs.json")
MATRIX = ("matrix_unit", "systolic_array", "pe", "tile_buffer", "requant")
SOFTMAX = ("softmax_unit", "divu", "exp_lut", "rowmem")
CHIP = ("chip_top", "controller", "paged_geometry", "mem_if", "dma", "pdma", "sram",
        *MATRIX, "vector_unit", *SOFTMAX)
NARROW_MATRIX = ("ARRAY_N = 2, K_MAX = 4, SRAM_AW = 5 (the chip's 4, 64, 12): the mutated "
                 "logic compares, selects and skews per row and column, whatever their count")
# the matrix unit's contract with the controller (matrix_unit.v's ports, controller.v's CHECK):
# one command at a time, its fields held until done, sizes that pass MATMUL's checks; the SRAM's
# data free; its write address and data read by the SRAM only with the write enable
MATMUL_FIELDS = "{cmd_a, cmd_b, cmd_c, cmd_m, cmd_k, cmd_n, cmd_flags, cmd_shift, cmd_mult}"
MATMUL_MONITOR = f"""reg running = 1'b0;  // a command taken, its done not yet
reg [119:0] held = 120'd0;  // the command's fields
always @(posedge clk) begin
    running <= !rst && (cmd_matmul || (running && !gold_done));
    if (cmd_matmul) held <= {MATMUL_FIELDS};
end"""
MATMUL_CONTRACT = (
    Constraint("ONE_COMMAND", "!(cmd_matmul && running)",
               "a command only while the unit is idle (the controller waits for done)"),
    Constraint("FIELDS_HELD", f"!running || {MATMUL_FIELDS} == held",
               "the command's fields held stable by the controller while the unit runs"),
    Constraint("SIZES_CHECKED", "!cmd_matmul || (cmd_m != 0 && cmd_n != 0 && cmd_k != 0 "
               "&& cmd_k <= K_MAX)", "CHECK stops MATMUL with a zero size or k > K_MAX"))
# RAW writes the accumulator itself: sram_wdata = raw ? acc : requant(acc), sat = !raw && ...,
# and raw is read nowhere else, so equal accumulators at every write under RAW are equal outputs
# without it (the two sides share the requantizer); it spares the solver a 32 x 32 multiply.
# Not for a mutant whose line reads the write-back (RAW_READERS).
RAW_ONLY = Constraint("RAW_ONLY", "cmd_flags[1]", "a reduction: the accumulators written raw")
RAW_READERS = re.compile(r"\b(raw|rq_\w+|sram_wdata|sat|acc_sel)\b")
MATMUL_WRITES = {"sram_wdata": "sram_we", "sram_waddr": "sram_we"}
MATRIX_PARAMETERS = {"ARRAY_N": 2, "K_MAX": 4, "SRAM_AW": 5}
# the controller's contract with the host and the units (controller.v's ports and header)
CONTROLLER_MONITOR = """reg past_stall = 1'b0, past_done = 1'b0, past_fault = 1'b0;
reg past_bus_err = 1'b0, past_clear = 1'b1;
always @(posedge clk) begin
    {past_stall, past_done, past_fault, past_bus_err} <= {stall, unit_done, unit_fault, bus_err};
    past_clear <= rst || gold_mem_clear;
end"""
CONTROLLER_CONTRACT = (
    Constraint("START_WHILE_IDLE", "!start || !gold_busy", "start: one cycle while idle"),
    Constraint("STALL_WHILE_BUSY", "!stall || gold_busy",
               "stall: the memory interface unit freezes only a running instruction's cycles"),
    Constraint("WORD_ADVANCING", "!rd_valid || !stall",
               "rd_valid: a word is delivered only in an advancing cycle (mem_if.v's header)"),
    Constraint("BUS_ERR_STICKY", "past_clear || !past_bus_err || bus_err",
               "bus_err: a bus error since start (mem_clear clears it)"),
    Constraint("UNITS_FROZEN", "!past_stall || (unit_done == past_done && unit_fault == "
               "past_fault)", "a stalled cycle changes nothing: the unit's last cycle follows it"))
# the modules whose mutants are judged at an enclosing block, and that block's scope
SCOPES: dict[str, Scope] = {
    "requant": Scope("requant", ("requant",)),
    "mem_if": Scope("mem_if", ("mem_if",)),
    "controller": Scope("controller", ("controller", "paged_geometry"),
                        constraints=CONTROLLER_CONTRACT, monitor=CONTROLLER_MONITOR),
    "matrix_unit": Scope("matrix_unit", MATRIX, MATRIX_PARAMETERS, MATMUL_CONTRACT,
                         NARROW_MATRIX, MATMUL_MONITOR, MATMUL_WRITES),
    "pe": Scope("matrix_unit", MATRIX, MATRIX_PARAMETERS, MATMUL_CONTRACT,
                NARROW_MATRIX + "; a PE's outputs reach only the array's neighbours, so its "
                                "mutants are judged at the matrix unit",
                MATMUL_MONITOR, MATMUL_WRITES),
    "softmax_unit": Scope("softmax_unit", SOFTMAX, {"SM_MAX": 4, "SRAM_AW": 5},
                          narrowed="SM_MAX = 4, SRAM_AW = 5 (the chip's 64, 12): the mutated "
                                   "registers' logic does not depend on the vector's length"),
    "chip_top": Scope("chip_top", CHIP, {"ARRAY_N": 2, "K_MAX": 4, "SRAM_WORDS": 32,
                                         "EXT_WORDS": 64, "SM_MAX": 4},
                      narrowed="ARRAY_N = 2, K_MAX = 4, SRAM_WORDS = 32, EXT_WORDS = 64, "
                               "SM_MAX = 4: the instruction fetch does not depend on them"),
}


def recorded() -> dict[str, dict]:
    """The recorded verdicts by mutant name (a test re-runs them: tests/test_rtl_equivalence.py)."""
    return json.loads(PROOFS_FILE.read_text()) if PROOFS_FILE.exists() else {}


def scope_of(mutant: Mutant) -> Scope:
    module = gen.module_of(mutant)
    scope = SCOPES.get(module) or Scope(module, (module,))
    if scope.top == "matrix_unit" and not RAW_READERS.search(mutant.original):
        scope = replace(scope, constraints=(*scope.constraints, RAW_ONLY))
    return scope


def gate_of(mutant: Mutant) -> equivalence.Mutant:
    """The mutant as the miter takes it: its module's whole mutated source."""
    return equivalence.Mutant(mutant.name, gen.module_of(mutant),
                              mutate_text((REPO_ROOT / mutant.path).read_text(), mutant))


WIRE = re.compile(r"wire\s*(?P<range>\[[^\]]+\])?\s*(?P<name>\w+)\s*=\s*(?P<expr>.+);")


def changed_wire(mutant: Mutant) -> Wire | None:
    """The module-level wire whose declaring expression the mutant's line is part of (the lines
    from its ``wire`` to its ``;``), with the mutant's expression; None for any other line."""
    gold = (REPO_ROOT / mutant.path).read_text().splitlines()
    gate = mutate_text("\n".join(gold) + "\n", mutant).splitlines()
    line = gen.line_of(mutant) - 1
    start = line
    while not gold[start].startswith("wire"):
        start -= 1
        if start < 0 or gen.split_comment(gold[start])[0].rstrip().endswith((";", "begin", "end")):
            return None  # not inside a module-level wire's expression
    end = line
    while not gen.split_comment(gold[end])[0].rstrip().endswith(";"):
        end += 1
    code = " ".join(gen.split_comment(text)[0].strip() for text in gate[start:end + 1])
    match = WIRE.fullmatch(code)
    return Wire(match["name"], match["range"] or "", match["expr"]) if match else None


def every_site(names: set[str], seed: int = gen.DEFAULT_SEED) -> list[Mutant]:
    """The mutants of these names among every site the generator could pick (not only the
    ``count`` that ``generate`` picks): the proofs outlive a change of count or seed."""
    macros, inputs = gen.defines(), gen.module_inputs()
    found = {}
    for path in gen.rtl_files():
        rng = random.Random(f"{seed}:{path.name}")
        relative = path.relative_to(REPO_ROOT).as_posix()
        for _, original, sites in gen.candidates(path, macros, inputs, rng):
            for site in sites:
                mutated = site.mutated.strip()
                name = gen.mutant_name(path.stem, site.operator, relative, original, mutated)
                if name in names:
                    found[name] = Mutant(name, relative, original, mutated,
                                         f"{site.operator}: {site.what}",
                                         f"{gen.GROUP}:{site.operator}")
    return [found[n] for n in sorted(found)]


def prove(mutant: Mutant, depth: int = 12, timeout: float = 300,
          structural_only: bool = False) -> Verdict:
    """A changed wire's expression proven equal in any state, else Yosys's structural proof
    (both unbounded); else the miter by k-induction (a difference found from reset is its
    counterexample) and, where induction does not close, the miter from reset to ``depth``
    (bounded)."""
    scope = scope_of(mutant)
    gate = gate_of(mutant)
    if (wire := changed_wire(mutant)) is not None:  # one wire's expression: proven locally
        verdict = check_local(gate, wire, timeout=timeout)
        if verdict.status == "equivalent":
            return verdict
    verdict = check_structural(gate, scope, timeout=timeout)
    if verdict.status == "equivalent" or structural_only:
        return verdict
    verdict = check(gate, scope, "prove", depth, timeout=timeout)
    if verdict.status == "unknown":  # induction did not close: bounded, from reset
        verdict = check(gate, scope, "bmc", depth, timeout=timeout)
    return verdict


def recheck(name: str, root: Path = equivalence.EQUIV_ROOT) -> Verdict:
    """A recorded verdict's check run again the same way (its engine, mode and depth)."""
    (mutant,) = every_site({name})
    proof, scope, gate = recorded()[name], scope_of(mutant), gate_of(mutant)
    if proof["engine"].startswith("yosys sat"):
        return check_local(gate, changed_wire(mutant), root=root)
    if proof["engine"].startswith("yosys"):
        return check_structural(gate, scope, root=root)
    return check(gate, scope, "bmc" if proof["bounded"] else "prove", proof["depth"], root=root)


def check_all() -> int:
    """make formal: every recorded proof of equivalence re-run; 1 when one no longer holds."""
    failed = []
    for name, proof in sorted(recorded().items()):
        if proof["status"] == "equivalent":
            again = recheck(name)
            print(f"{name}: {again.status} ({again.seconds} s)", flush=True)
            if again.status != "equivalent":
                failed.append(name)
    print(f"recorded proofs that no longer hold: {', '.join(failed) or 'none'}")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", metavar="NAME")
    parser.add_argument("--write", action="store_true", help=f"record in {PROOFS_FILE.name}")
    parser.add_argument("--check", action="store_true", help="re-run the recorded proofs")
    parser.add_argument("--depth", type=int, default=12, help="induction and bounded depth")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per check")
    parser.add_argument("--structural", action="store_true",
                        help="Yosys's structural proof only; record only what it proves")
    args = parser.parse_args(argv)
    if args.check:
        return check_all()
    proofs = recorded()
    names = set(args.only or proofs)
    for mutant in every_site(names):
        verdict = prove(mutant, args.depth, args.timeout, args.structural)
        print(f"{mutant.name}: {verdict.status} ({verdict.engine}, depth {verdict.depth}, "
              f"{'bounded' if verdict.bounded else 'unbounded'}, {verdict.seconds} s)"
              f" {verdict.differing} {verdict.log[-300:] if verdict.status == 'unknown' else ''}",
              flush=True)
        if args.structural and verdict.status != "equivalent":
            continue
        proofs[mutant.name] = asdict(verdict) | {
            "module": gen.module_of(mutant), "file": mutant.path, "original": mutant.original,
            "mutated": mutant.mutated, "narrowed": scope_of(mutant).narrowed}
        if args.write:
            PROOFS_FILE.write_text(json.dumps(proofs, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
