"""Decode-level checks: what a whole decode must show beyond its steps matching one by one.

Checked once per decode test against closed forms derived independently of the step rule: the
tokens, the pages in use, one program per context, cycles flat once the window is full. A run
records ``decode_verdicts``, so reports read them instead of deriving them again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from model.kv.step_rule import pages_held, programs_needed
from model.lm.tiny_lm import rule_tokens
from verif.runs.spec import DecodeSpec


@dataclass
class DecodeFacts:
    """What a decode run showed: one entry per step, as the chip and the page table reported."""

    spec: DecodeSpec
    tokens: list[int]  # the inputs of every step, then the last output
    pages_after: list[int | None]  # pages in use once each step appended and trimmed
    totals: list[int]  # the chip's cycle counter `total` per step
    programs_compiled: int
    shares_pool: bool = False  # forked: the pool's page count is not this request's alone


def decode_verdicts(facts: DecodeFacts) -> dict[str, list[str]]:
    """Each check's problems (empty: it held)."""
    return {"tokens": token_problems(facts.spec, facts.tokens), "pages": page_problems(facts),
            "programs": program_problems(facts),
            "cycles": cycle_problems(facts.spec, facts.totals)}


def decode_problems(facts: DecodeFacts) -> list[str]:
    """Every way the decode departs from the closed forms; empty when it does not."""
    return [line for lines in decode_verdicts(facts).values() for line in lines]


def token_problems(spec: DecodeSpec, tokens: Sequence[int]) -> list[str]:
    """The structured model, greedy, follows the rule; a forced decode used its tokens."""
    if len(tokens) != spec.steps + 1:
        return [f"{spec.label()}: {len(tokens) - 1} steps ran, {spec.steps} planned"]
    if spec.force is not None:
        if list(tokens[1:]) != list(spec.force[1 : spec.steps + 1]):
            return [f"{spec.label()}: inputs {list(tokens)} are not the forced {spec.force}"]
        return []
    if spec.model == "structured" and list(tokens) != rule_tokens(spec.start, spec.steps):
        return [f"{spec.label()}: tokens {list(tokens)} break the rule, expected "
                f"{rule_tokens(spec.start, spec.steps)}"]
    return []


def page_problems(facts: DecodeFacts) -> list[str]:
    """A request alone in its pool holds exactly the closed-form count after every step."""
    if facts.shares_pool:
        return []
    spec = facts.spec
    expected = [pages_held(step, spec.window, spec.page_size, spec.sinks)
                for step in range(1, len(facts.pages_after) + 1)]
    if list(facts.pages_after) != expected:
        return [f"{spec.label()}: pages in use after each step {list(facts.pages_after)}, "
                f"the window rule says {expected}"]
    return []


def program_problems(facts: DecodeFacts) -> list[str]:
    """One program per context that occurred: W with a window, every step without."""
    expected = programs_needed(facts.spec.steps, facts.spec.window)
    if facts.programs_compiled != expected:
        return [f"{facts.spec.label()}: {facts.programs_compiled} programs compiled, "
                f"expected {expected}"]
    return []


def cycle_problems(spec: DecodeSpec, totals: Sequence[int]) -> list[str]:
    """Cycles grow with every step until the window is full, then every step costs the same."""
    full = len(totals) if spec.window is None else min(spec.window, len(totals))
    growing, flat = list(totals[:full]), list(totals[full - 1 :])
    problems = []
    if not all(a < b for a, b in pairwise(growing)):
        problems.append(f"{spec.label()}: cycles do not grow up to step {full}: {growing}")
    if len(set(flat)) > 1:
        problems.append(f"{spec.label()}: cycles from step {full} on are not flat: {flat}")
    return problems
