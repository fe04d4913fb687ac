"""Decode-level checks: a whole decode against the reference host and the chapter's claims.

The scoreboard checks each step of the RTL against the reference machine on the same image.
These check what a step-level comparison cannot see: that the testbench's host loop (window,
gather, trim, forced tokens) is the model's (model.host.decode gives the same tokens, counters
and pages), that the structured model follows f(t) = (5t + 3) mod 16, and that cycles per step
stop growing once the window is full. Pure functions: pytest uses them on result files too.
"""

from __future__ import annotations

from collections.abc import Sequence

from model.host import Decode, decode
from model.tiny_lm import make_model, rule_next
from verif.decode_spec import DecodeSpec


def reference_decode(spec: DecodeSpec) -> Decode:
    """The same decode on the reference host (reference machine, paged cache, same programs)."""
    model = make_model(spec.model, spec.model_seed)
    return decode(model, spec.steps, spec.start, spec.window, page_size=spec.page_size,
                  n_pages=spec.n_pages, force=spec.force)


def rule_tokens(start: int, steps: int) -> list[int]:
    """[start, f(start), f(f(start)), ...]: what the structured model must generate."""
    tokens = [start]
    for _ in range(steps):
        tokens.append(rule_next(tokens[-1]))
    return tokens


def reference_differences(spec: DecodeSpec, tokens: Sequence[int],
                          cycles: Sequence[Sequence[int]], pages: Sequence[int | None] | None,
                          reference: Decode | None = None) -> list[str]:
    """Where a decode run on the chip departs from the reference host; empty when it does not."""
    ref = reference or reference_decode(spec)
    problems = []
    if list(tokens) != ref.tokens:
        problems.append(f"{spec.label()}: tokens {list(tokens)}, reference host {ref.tokens}")
    for step, (got, record) in enumerate(zip(cycles, ref.records, strict=True), start=1):
        if tuple(got) != record.cycles:
            problems.append(f"{spec.label()} step {step}: cycles {tuple(got)}, "
                            f"reference host {record.cycles}")
            break
    if pages is not None and list(pages) != [r.pages for r in ref.records]:
        problems.append(f"{spec.label()}: pages in use {list(pages)}, "
                        f"reference host {[r.pages for r in ref.records]}")
    return problems


def rule_differences(spec: DecodeSpec, tokens: Sequence[int]) -> list[str]:
    """The structured model, greedy, must follow f(t) = (5t + 3) mod 16 under every window."""
    if spec.model != "structured" or spec.force is not None:
        return []
    expected = rule_tokens(spec.start, spec.steps)
    if list(tokens) != expected:
        return [f"{spec.label()}: tokens {list(tokens)} break the rule, expected {expected}"]
    return []


def flatness_differences(spec: DecodeSpec, totals: Sequence[int]) -> list[str]:
    """With a window W, every step from W on runs the same program: the same cycle count."""
    if spec.window is None or spec.window > len(totals):
        return []
    flat = list(totals[spec.window - 1 :])
    if len(set(flat)) != 1:
        return [f"{spec.label()}: cycles from step {spec.window} on are not flat: {flat}"]
    return []
