"""The decode plans the tests, the main job and the report share: one definition each.

The chapter's three decodes and its exercises 1 and 3, the random-model, fork, short and chip
gather plans, and the trained model's decodes."""

from __future__ import annotations

from dataclasses import replace

from model.compiler.gather import GATHER_MODES
from sim.lengths import run_length, runs_full
from verif.runs.spec import DecodeSpec, ServingSpec

CHAPTER_STEPS = 32
CHAPTER_WINDOWS = (None, 8, 4)
TABLE_STEPS = (1, 4, 8, 9, 12, 16, 24, 32)  # the chapter's cycle table

SHORT_STEPS = 12  # decodes on Icarus: past the chapter's windows, trimming, cycles flat
CHIP_GATHER_SHORT_STEPS = 16  # chip gather on Icarus: a freed page reused and read back
SHORT_PROGRAMS = 25  # random programs on Icarus (200 at full length)
SHORT_REQUESTS = 7  # serving requests on Icarus (24): still preempts, hits and evicts
SHORT_FORK = {"steps": 12, "fork_at": 6}  # the fork on Icarus: mid-page, both decodes trimmed
# the error paths' illegal opcode at addresses 8 .. 1024 on Icarus (at full length 8 .. 8192)
SHORT_ERROR_ADDRESSES = 8


def error_addresses_on(sim: str) -> int:
    """The error paths' illegal-opcode addresses on ``sim`` (0: every one, at full length)."""
    return run_length(sim, 0, SHORT_ERROR_ADDRESSES)


def short_plan(plan: list[DecodeSpec]) -> list[DecodeSpec]:
    """A plan's Icarus version: each decode for half its steps (still past its window)."""
    return [replace(spec, steps=spec.steps // 2) for spec in plan]


def chapter_spec(window: int | None, steps: int = CHAPTER_STEPS) -> DecodeSpec:
    return DecodeSpec(f"structured-W{window}", "structured", steps=steps, window=window,
                      page_size=4)


EXERCISE_WINDOW = 8
PAGE_SIZES = (1, 2, 4, 8, 16)
SINKS = 2


def page_size_spec(page_size: int, steps: int = CHAPTER_STEPS) -> DecodeSpec:
    """Exercise 1: the chapter's W = 8 decode with another page size."""
    return DecodeSpec(f"structured-W{EXERCISE_WINDOW}-P{page_size}", "structured",
                      steps=steps, window=EXERCISE_WINDOW, page_size=page_size)


def sinks_spec(steps: int = CHAPTER_STEPS) -> DecodeSpec:
    """Exercise 3: the W = 8 decode keeping the first SINKS rows in every window."""
    return DecodeSpec(f"structured-W{EXERCISE_WINDOW}-S{SINKS}", "structured",
                      steps=steps, window=EXERCISE_WINDOW, sinks=SINKS, page_size=4)


RANDOM_PLAN = [
    DecodeSpec("random1-forced", "random", model_seed=1, start=3, steps=24, window=6,
               page_size=2, force_random=True),
    DecodeSpec("random2-forced", "random", model_seed=2, start=5, steps=24, window=3,
               page_size=1, force_random=True),
    DecodeSpec("random3-greedy", "random", model_seed=3, start=7, steps=16, window=None,
               page_size=1),
]

FORK_PLAN = [DecodeSpec("random4-fork", "random", model_seed=4, start=1, steps=20, window=8,
                        page_size=4, fork_at=10, force_random=True)]

SHORT_PLAN = [DecodeSpec("structured-short", "structured", steps=4, window=None)]

SERVING_BATCHES = (1, 2, 4, 8)


SERVING_REQUESTS = 24


def serving_spec(batch_size: int, gather: str = "host",
                 n_requests: int = SERVING_REQUESTS) -> ServingSpec:
    """The serving workload (24 requests, W = 8) at batch size B over 16 pages of 4 rows."""
    suffix = "-chip" if gather == "chip" else ""
    return ServingSpec(f"workload-B{batch_size}{suffix}", batch_size=batch_size, window=8,
                       page_size=4, n_pages=16, gather=gather, n_requests=n_requests)


# ---- chip gather: the chip reads the rows through the block table --------------------------


def chip_gather_spec(window: int | None, steps: int = CHAPTER_STEPS) -> DecodeSpec:
    """The chapter's decode with the pool in the chip's memory (gather "chip")."""
    return replace(chapter_spec(window, steps), name=f"structured-W{window}-chip",
                   gather="chip")


CHIP_FORK_PLAN = [replace(FORK_PLAN[0], name="random4-fork-chip", gather="chip")]


def fork_plan(sim: str, plan: list[DecodeSpec]) -> list[DecodeSpec]:
    """A fork plan on ``sim``: at full length, or on Icarus SHORT_FORK."""
    return plan if runs_full(sim) else [replace(spec, **SHORT_FORK) for spec in plan]


def fork_steps(spec: DecodeSpec) -> int:
    """The steps a fork decode checks: the parent's, then the child's after the fork."""
    return 2 * spec.steps - spec.fork_at

# the table of step 10 (context 8, pages of 4) names page n_pages: the first PLOAD stops
BAD_PAGE_PLAN = [DecodeSpec("structured-bad-page", "structured", steps=12, window=8,
                            page_size=4, gather="chip", bad_table_at=10)]


# ---- the trained model (issue 23): weights learned from English text (model.lm.train_lm) ----

TRAINED_START = 0  # the space (the most frequent character): a decode from a word boundary

# the first held-out sequence of the trained report's chip table ("currentl# onl# one standard
# #a##i"), spelled out so importing the plans does not read the corpus (test_trained_decode.py)
TRAINED_TEXT = (10, 14, 8, 8, 1, 5, 2, 9, 15, 0, 7, 5, 9, 15, 0, 7, 5, 1, 0, 6, 2, 3, 5, 12, 3, 8,
                12, 0, 15, 3, 15, 15, 4)


def trained_spec(window: int | None, gather: str = "host",
                 steps: int = CHAPTER_STEPS) -> DecodeSpec:
    """The trained model's greedy decode from the space, pages of 4, in either gather mode."""
    suffix = "-chip" if gather == "chip" else ""
    return DecodeSpec(f"trained-W{window}{suffix}", "trained", start=TRAINED_START, steps=steps,
                      window=window, page_size=4, gather=gather)


def trained_forced_spec(window: int | None, steps: int = CHAPTER_STEPS) -> DecodeSpec:
    """The trained model teacher-forced along TRAINED_TEXT: each step's input is the text's next
    character, so the chip's decisions are the report's chip table on its first sequence."""
    return DecodeSpec(f"trained-forced-W{window}", "trained", start=TRAINED_TEXT[0],
                      steps=steps, window=window, page_size=4,
                      force=list(TRAINED_TEXT[: steps + 1]))


def decode_plans() -> list[DecodeSpec]:
    """Every decode the tests run (host and chip gather): coverage takes its windows and page
    sizes from here, so a decode added to a plan adds its bins."""
    return [*(chapter_spec(w) for w in CHAPTER_WINDOWS), *(page_size_spec(p) for p in PAGE_SIZES),
            sinks_spec(), *RANDOM_PLAN, *FORK_PLAN, *SHORT_PLAN,
            *(chip_gather_spec(w) for w in CHAPTER_WINDOWS), *CHIP_FORK_PLAN, *BAD_PAGE_PLAN,
            *(trained_spec(w, gather) for gather in GATHER_MODES for w in CHAPTER_WINDOWS),
            *(trained_forced_spec(w) for w in CHAPTER_WINDOWS)]
