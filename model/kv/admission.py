"""Admission rules: may the next waiting request start, given the free pages of the pool?

Each rule is one small frozen dataclass with one method,
``admits(free_pages, request, page_size) -> bool``; a scheduler asks it about the request at
the head of its queue and admits while the answer is yes. A rule sees only the pool's free
page count and what is known about the request (``Request``), never the running requests,
so it can be reused by any scheduler (the admission simulation, model/kv/admission_sim.py,
and later a serving scheduler).

* ``OnePageFree``     the chapter's rule: admit while one page is free.
* ``CoversExpected``  the chapter's exercise 2: admit only when the free pages cover the
                      request's expected length. It does not reserve those pages: requests
                      already running may still take them first.
* ``Watermark``       vLLM's rule: admit when, after the request's first pages, at least
                      ``reserve_pages`` stay free for the running requests to grow into.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Protocol

from model.chip.geometry import pages_for

__all__ = [
    "WATERMARK_FRACTION",
    "AdmissionRule",
    "CoversExpected",
    "OnePageFree",
    "Request",
    "Watermark",
]

WATERMARK_FRACTION = 0.01  # vLLM's default watermark: 1% of the pool's pages, rounded down


class InvalidRequest(ValueError):
    """A request was refused with nothing changed: the scheduler or simulation is as before."""


@dataclass(frozen=True)
class Request:
    """What an admission rule may know about a waiting request."""

    rid: Hashable
    expected_rows: int  # rows it is expected to hold when it finishes
    first_rows: int = 1  # rows written when admitted (a prompt's prefill; 1 = one token)


class AdmissionRule(Protocol):
    """The one question a scheduler asks before starting a waiting request."""

    @property
    def name(self) -> str: ...

    def admits(self, free_pages: int, request: Request, page_size: int) -> bool: ...


@dataclass(frozen=True)
class OnePageFree:
    """The chapter's rule: admit while at least one page is free."""

    @property
    def name(self) -> str:
        return "one page free (chapter)"

    def admits(self, free_pages: int, request: Request, page_size: int) -> bool:
        return free_pages >= 1


@dataclass(frozen=True)
class CoversExpected:
    """Exercise 2: admit only when the free pages cover the request's expected length."""

    @property
    def name(self) -> str:
        return "free pages cover expected length"

    def admits(self, free_pages: int, request: Request, page_size: int) -> bool:
        return free_pages >= pages_for(request.expected_rows, page_size)


@dataclass(frozen=True)
class Watermark:
    """Admit when the free pages minus the request's first pages stay at or above a reserve."""

    reserve_pages: int

    def __post_init__(self) -> None:
        if not isinstance(self.reserve_pages, int) or self.reserve_pages < 0:
            raise ValueError(f"reserve_pages must be an integer >= 0, got {self.reserve_pages!r}")

    @classmethod
    def of_pool(cls, n_pages: int, fraction: float = WATERMARK_FRACTION) -> Watermark:
        """The reserve as a fraction of the pool, rounded down (vLLM: int(0.01 * n_pages))."""
        return cls(int(fraction * n_pages))

    @property
    def name(self) -> str:
        return f"watermark ({self.reserve_pages} pages reserved)"

    def admits(self, free_pages: int, request: Request, page_size: int) -> bool:
        first_pages = pages_for(request.first_rows, page_size)
        return free_pages - first_pages >= self.reserve_pages
