"""Example A: the page table at work, event by event (``python -m scripts.report example-a``).

Part 1: one request decodes 14 tokens (pages of 4 rows, a window of 6, a pool of 8 pages): the
trims give freed pages back, so its footprint stays bounded. Part 2: B is forked from a 10-row
A, then appends into the shared, partly filled last page: a copy-on-write.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from model.chip.geometry import pages_for
from model.kv.paged import PageTable
from verif.report.output import text_table, write_json

WINDOW = 6  # a step attends the new token and the WINDOW - 1 before it
PAGE_SIZE = 4
N_PAGES = 8
STEPS = 14
FORK_PREFIX_ROWS = 10  # ends mid-page, so B's first append writes into a shared page
FORK_NEW_ROW = 100


@dataclass
class Step:
    """The table after one decode step of part 1."""

    step: int
    gathered: list[int]  # rows read by the step: the previous tokens inside the window
    wrote: int
    table: list[int]
    dropped: int
    free: list[int]  # sorted, as the chapter prints it


@dataclass
class Event:
    """The table after one event of part 2 (fork and copy-on-write)."""

    event: str
    tables: dict[str, list[int]]
    refcounts: dict[int, int]  # every page named by a live block table
    free: list[int]
    rows: dict[str, list[int]]  # each live request's readable rows
    cow_copies: int


def window_log(steps: int = STEPS, window: int = WINDOW) -> list[Step]:
    """Decode ``steps`` tokens of one request under the window rule; one record per step."""
    table = PageTable(N_PAGES, PAGE_SIZE)
    table.new("A")
    log = []
    for step in range(1, steps + 1):
        context = min(step, window)
        gathered = table.rows("A", step - context, step - 1).tolist()
        table.append("A", step - 1)
        table.trim("A", max(0, step + 1 - window))  # the next step reads rows >= step+1-window
        log.append(Step(step=step, gathered=gathered, wrote=step - 1,
                        table=table.block_table("A"), dropped=table.first_row("A") // PAGE_SIZE,
                        free=sorted(table.free_pages())))
    return log


def fork_events() -> list[Event]:
    """Fork B from A, let B append into the shared tail page, then release B."""
    table = PageTable(N_PAGES, PAGE_SIZE)
    table.new("A")
    for row in range(FORK_PREFIX_ROWS):
        table.append("A", row)
    events = [_event(table, "before the fork")]
    table.fork("A", "B")
    events.append(_event(table, "after the fork (no copy: the prefix is stored once)"))
    table.append("B", FORK_NEW_ROW)
    events.append(_event(table, f"B appends row {FORK_NEW_ROW} into the shared tail page"))
    table.release("B")
    events.append(_event(table, "release B"))
    return events


def _event(table: PageTable, description: str) -> Event:
    rids = table.requests()
    pages = sorted({page for rid in rids for page in table.block_table(rid)})
    return Event(event=description, tables={rid: table.block_table(rid) for rid in rids},
                 refcounts={page: table.refcount(page) for page in pages},
                 free=sorted(table.free_pages()),
                 rows={rid: table.rows(rid, table.first_row(rid), table.length(rid)).tolist()
                       for rid in rids},
                 cow_copies=table.cow_copies)


def print_window_log(log: list[Step]) -> None:
    print(f"== 1. one request, pages of {PAGE_SIZE} rows, window of {WINDOW} tokens, "
          f"pool of {N_PAGES} pages (row value = token index)")
    print(text_table(["step", "read (+ the new one)", "wrote row", "table", "dropped pages",
                      "free"], [[s.step, s.gathered, s.wrote, s.table, s.dropped, s.free]
                                for s in log], left=(1, 3, 5)))
    no_window = pages_for(STEPS, PAGE_SIZE)
    print(f"  pages in use at the end: {len(log[-1].table)} (without a window: {no_window})")


def print_fork_events(events: list[Event]) -> None:
    print("\n== 2. fork B from A (shares every page), then B appends into the shared tail page")
    for e in events:
        tables = "  ".join(f"{rid} {pages}" for rid, pages in e.tables.items())
        print(f"  {e.event}:\n     {tables}  refcounts {e.refcounts}  free {e.free}  "
              f"copy-on-write copies {e.cow_copies}")
        for rid, rows in e.rows.items():
            print(f"     rows of {rid}: {rows}")


def main() -> None:
    log = window_log()
    events = fork_events()
    print_window_log(log)
    print_fork_events(events)
    path = write_json("example_a.json",
                      {"window_log": [asdict(s) for s in log], "fork": [asdict(e) for e in events]})
    print(f"\nwrote {path}")
