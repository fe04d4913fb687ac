"""What the block-table indirection costs: chip gather against host gather, pages of 1 .. 16 rows.

The chapter's W = 8 decode in both modes on the reference machine (the RTL's cycles), at the
steady state: cycles, the paged unit's cost per row against a LOAD, the block-table words read.
``python -m scripts.bench gather`` writes out/bench_gather.json.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from model.chip import isa
from model.host.decode import decode
from model.lm.tiny_lm import make_model
from verif.report.output import text_table, write_json
from verif.runs.plans import CHAPTER_STEPS, EXERCISE_WINDOW, PAGE_SIZES, chapter_spec

AIM = 0.05  # the aim: at most 5% of a step's cycles at W = 8, pages of 4


@dataclass
class GatherCost:
    """One page size at the steady state of the W = 8 decode."""

    page_size: int
    host_cycles: int  # a step's cycles, host gather
    chip_cycles: int  # .. chip gather
    ratio: float  # chip / host
    pload_entries: int  # E of the step's paged loads
    pload_cycles_per_row: float  # a paged load's EXEC per row moved
    load_cycles_per_row: float  # a LOAD's of the same words
    table_words_read: int  # ev_pt_words of the step (headers and entries)
    table_cycles: int  # of the extra cycles: the paged loads' table phases (the indirection)
    store_cycles: int  # .. the two PSTOREs of the new row, less host gather's two STOREs of it

    @property
    def overhead(self) -> float:
        return self.ratio - 1


def cost(page_size: int) -> GatherCost:
    spec = chapter_spec(EXERCISE_WINDOW)
    model, cfg = make_model(spec.model, spec.model_seed), isa.ChipConfig()
    n_pages = max(4, 64 // page_size)  # the pool must fit the chip's external memory
    runs = {gather: decode(model, CHAPTER_STEPS, spec.start, EXERCISE_WINDOW,
                           page_size=page_size, n_pages=n_pages, gather=gather)
            for gather in ("host", "chip")}
    host, chip = (runs[g].records[-1] for g in ("host", "chip"))
    program = chip.inputs.program.instructions()
    ploads = [i for i in program if i.op == isa.Op.PLOAD]
    pstores = [i for i in program if i.op == isa.Op.PSTORE]
    host_layout = host.inputs.program.layout
    stores = [i for i in host.inputs.program.instructions()  # host gather's of the new rows
              if i.op == isa.Op.STORE and i.a in (host_layout.k_new, host_layout.v_new)]
    rows = ploads[0].length
    load_cycles = isa.read_cycles(rows * ploads[0].m, cfg)  # a LOAD of the same words
    return GatherCost(page_size, host.cycles[0], chip.cycles[0],
                      chip.cycles[0] / host.cycles[0], isa.paged_geometry(ploads[0]).entries,
                      isa.exec_cycles(ploads[0], cfg) / rows, load_cycles / rows,
                      chip.result.counters.pt_words,
                      sum(isa.table_phase_cycles(i, cfg) for i in ploads),
                      isa.program_cycles(pstores, cfg) - isa.program_cycles(stores, cfg))


def main() -> None:
    costs = [cost(page_size) for page_size in PAGE_SIZES]
    print(f"chip gather against host gather, W = {EXERCISE_WINDOW}, steady state "
          f"(step {CHAPTER_STEPS}), reference machine = RTL cycles")
    print(text_table(["page rows", "host cyc", "chip cyc", "ratio", "overhead", "tables",
                      "PSTOREs", "E", "PLOAD cyc/row", "LOAD cyc/row", "table words"],
                     [[c.page_size, c.host_cycles, c.chip_cycles, f"{c.ratio:.4f}",
                       f"{100 * c.overhead:.2f}%", c.table_cycles, c.store_cycles,
                       c.pload_entries, f"{c.pload_cycles_per_row:.2f}",
                       f"{c.load_cycles_per_row:.2f}", c.table_words_read] for c in costs]))
    print("overhead = chip / host - 1; of the extra cycles, 'tables' are the paged loads' "
          "block-table reads (E + L + 3 each) and 'PSTOREs' the new row's stores into the pools, "
          "less host gather's STOREs of it as outputs")
    four = next(c for c in costs if c.page_size == 4)
    verdict = "within" if four.overhead <= AIM else "ABOVE"
    print(f"pages of 4: the indirection costs {100 * four.overhead:.2f}% of a step's cycles, "
          f"{verdict} the aim of {100 * AIM:.0f}% (GPU paged attention: 20-26%)")
    path = write_json("bench_gather.json", [asdict(c) | {"overhead": c.overhead} for c in costs])
    print(f"wrote {path}")
