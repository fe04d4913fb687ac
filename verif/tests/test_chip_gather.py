"""Chip gather on the RTL, in the pyuvm environment, on Icarus and Verilator.

The KV pool lives in the chip's external memory and the chip reads it through the block table
(PLOAD, PSTORE, PCOPY; hw/ISA.md, "Paged instructions"); the page-table agent writes only the
block-table words (verif/agents/page_table/pools.py). Inside the simulation, as for host gather: the
scoreboard compares every run (outputs, every memory write, every counter) with the reference
machine, the page-table agent checks pool conservation after every step, and check_phase the
decode's closed forms (tokens, pages, programs, flat cycles). Here, against host gather on the
reference machine (model.host.decode.decode): the same tokens, pages after every step, programs and
new K and V rows. Then a fork whose copy-on-write the chip makes, and a block table naming a page
outside the pool, which must stop the chip with BAD_PAGE having written nothing.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from model.chip.isa import Op
from model.host.decode import PagedHost, decode, paged_cache
from model.lm.tiny_lm import make_model
from sim.lengths import run_length
from sim.toolchain import SIMULATORS
from verif.runs.launch import decode_job
from verif.runs.plans import (
    BAD_PAGE_PLAN,
    CHAPTER_STEPS,
    CHAPTER_WINDOWS,
    CHIP_FORK_PLAN,
    CHIP_GATHER_SHORT_STEPS,
    chip_gather_spec,
    fork_plan,
    fork_steps,
)
from verif.runs.spec import DecodeSpec


def steps_on(sim: str) -> int:
    return run_length(sim, CHAPTER_STEPS, CHIP_GATHER_SHORT_STEPS)


def new_rows(step: dict) -> tuple[np.ndarray, np.ndarray]:
    """The k_new and v_new the chip wrote into the pools in one checked step, as the host read
    them back (chip gather writes them nowhere else)."""
    k_new, v_new = step["new_rows"]
    return np.array(k_new), np.array(v_new)


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.sim_job(launch=decode_job(
    "PlanDecodeTest", lambda sim, window: [chip_gather_spec(window, steps_on(sim))]))
@pytest.mark.parametrize("window", CHAPTER_WINDOWS, ids=lambda w: f"W{w}")
@pytest.mark.parametrize("sim", SIMULATORS)
def test_chip_gather_decodes_as_host_gather(sim, window, seed, sim_run):
    """The chapter's decode in chip gather: host gather's tokens, pages, programs and rows."""
    spec = chip_gather_spec(window, steps_on(sim))
    result = sim_run.raise_if_failed()
    assert result["steps_checked"] == spec.steps
    host = decode(make_model(spec.model, spec.model_seed), spec.steps, spec.start, window,
                  page_size=spec.page_size, n_pages=spec.n_pages)
    (chip,) = result["decodes"]
    assert chip["tokens"] == host.tokens
    assert chip["pages_after"] == [host.pages_after(s) for s in range(1, spec.steps + 1)]
    assert chip["programs_compiled"] == host.programs_compiled
    for step, record in zip(result["steps"], host.records, strict=True):
        k_new, v_new = new_rows(step)
        assert np.array_equal(k_new, record.result.k_new), f"step {record.step}: k_new"
        assert np.array_equal(v_new, record.result.v_new), f"step {record.step}: v_new"
    full = min(window or spec.steps, spec.steps)
    assert max(chip["host_words"][full:] or [0]) <= 1 + -(-full // spec.page_size) + 1
    if window is not None:  # a sliding window: reads across pages, mid-page starts, reuse
        covered = {name: point["covered"]
                   for name, point in result["coverage"]["summary"].items()}
        assert covered["decode.page_cg.table_pages"] >= 2  # tables of one page and of several
        assert covered["decode.page_cg.table_first_slot"] == 2  # from a page start, mid-page
        assert covered["decode.page_cg.table_page_order"] == 2  # contiguous pages and not
        assert covered["decode.page_cg.table_reused_page"] == 1  # a page freed, then read
    totals = [step["counters"]["total"] for step in result["steps"]]
    copied = [record.inputs.host_words for record in host.records]
    print(f"\n[{sim}] {spec.label()}: cycles per step {totals}; host words per step "
          f"{chip['host_words']} (host gather copies {copied})")


def host_gather_fork(parent: DecodeSpec, child: DecodeSpec) -> dict[tuple[str, int], tuple]:
    """The fork decode on the reference machine, host gather: (decode, step) -> (k_new, v_new)."""
    programs = replace(parent, gather="host").programs()
    hosts = {parent.label(): PagedHost(programs, paged_cache(programs.model.dim,
                                                             parent.page_size, parent.n_pages),
                                       parent.start, parent.window, force=parent.force)}
    rows = {}

    def step(label: str) -> None:
        record = hosts[label].step()
        rows[label, record.step] = (record.result.k_new, record.result.v_new)

    for _ in range(parent.fork_at):
        step(parent.label())
    hosts[child.label()] = hosts[parent.label()].fork("child")
    hosts[child.label()].force = child.force
    for _ in range(parent.steps - parent.fork_at):
        for label in list(hosts):
            step(label)
    return rows


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.sim_job(launch=decode_job("ForkDecodeTest",
                                      lambda sim: fork_plan(sim, CHIP_FORK_PLAN)))
@pytest.mark.parametrize("sim", SIMULATORS)
def test_chip_gather_fork_copies_the_shared_page_on_the_chip(sim, seed, sim_run):
    """A fork after 10 steps (mid-page; on Icarus after 6 of 12): the chip copies the shared page
    (PCOPY), both decodes' rows are host gather's."""
    result = sim_run.raise_if_failed()
    specs = [DecodeSpec(**d["spec"]) for d in result["decodes"]]
    assert [s.name for s in specs] == ["random4-fork-chip", "random4-fork-chip-fork"]
    (spec,) = fork_plan(sim, CHIP_FORK_PLAN)
    assert result["steps_checked"] == fork_steps(spec)
    copy = result["coverage"]["summary"]["decode.page_cg.chip_copy"]
    assert copy["covered"] == 1, "the fork never made the chip copy a page"
    assert sum(step["counters"]["ops"][Op.PCOPY] for step in result["steps"]) == 2
    want = host_gather_fork(*specs)
    for step in result["steps"]:
        k_new, v_new = new_rows(step)
        want_k, want_v = want[step["decode"], step["step"]]
        where = f"{step['decode']} step {step['step']}"
        assert np.array_equal(k_new, want_k) and np.array_equal(v_new, want_v), where


@pytest.mark.sim
@pytest.mark.timeout(600)
@pytest.mark.sim_job(launch=decode_job("BadPageDecodeTest", lambda sim: BAD_PAGE_PLAN))
@pytest.mark.parametrize("sim", SIMULATORS)
def test_a_page_outside_the_pool_stops_the_chip_with_bad_page(sim, seed, sim_run):
    """Step 10's block table names page n_pages: the chip stops there with BAD_PAGE at its first
    PLOAD, exactly as the reference machine does (the scoreboard compares every write), having
    run nothing after it; the steps before it are exact."""
    result = sim_run.raise_if_failed()
    (spec,) = BAD_PAGE_PLAN
    assert result["steps_checked"] == spec.bad_table_at  # the stopped step is compared too
    last = result["steps"][-1]["counters"]
    assert last["ops"][Op.PLOAD] == 1 and last["ops"][Op.HALT] == 0
    program = spec.programs().get(min(spec.bad_table_at, spec.window)).instructions()
    before = program[: [i.op for i in program].index(Op.PLOAD)]
    moved = sum(i.length * (i.m if i.op == Op.PSTORE else 1) for i in before
                if i.op in (Op.LOAD, Op.STORE, Op.PSTORE))
    assert last["dma_words"] == moved  # the instructions before the stop, no row read
    bad_page = result["coverage"]["summary"]["decode.chip_cg.bad_page"]
    assert bad_page["covered"] == 1
