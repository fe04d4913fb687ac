"""`make coverage`: merge the per-run functional coverage databases and list the holes.

Every passing decode run exports its cocotb-coverage database (coverage.yml) into its run
folder; this merges them (out/coverage/merged.yml) and lists each covergroup and point.

    python -m scripts.coverage [RUNS_DIR]
"""

from __future__ import annotations

import json
from pathlib import Path

from cocotb_coverage.coverage import merge_coverage

from model.paths import OUT, RUNS_ROOT
from verif.coverage import libyaml
from verif.report.output import markdown_table, text_table

MERGED = OUT / "coverage" / "merged.yml"


def passing_runs(runs: Path) -> list[str]:
    """Coverage files of runs that passed: a negative test's broken chip covers nothing."""
    files = []
    for path in sorted(runs.rglob("coverage.yml")):
        result = path.parent / "result.json"
        if result.exists() and json.loads(result.read_text()).get("status") == "passed":
            files.append(str(path))
    return files


def merge(runs: Path) -> dict:
    files = passing_runs(runs)
    if not files:
        raise SystemExit(f"no coverage.yml under {runs}: run `make test` (or pytest) first")
    current, stale = current_model(files)
    if stale:
        print(f"skipped {len(stale)} runs recorded with an older coverage model (other points "
              f"or bins), for example {stale[0]}: re-run their tests to count them")
    database = merge_files(current, MERGED)
    print(f"merged {len(current)} runs into {MERGED}")
    return database


def current_model(files: list[str]) -> tuple[list[str], list[str]]:
    """(files, stale files): the runs whose bins match those of the newest run's points.

    cocotb-coverage cannot merge a point whose bins changed (a run kept from before a coverage
    point was edited), so such runs are left out, and said so, rather than failing the merge.
    """
    bins = {path: bin_names(path) for path in files}
    newest = max(files, key=lambda path: Path(path).stat().st_mtime)
    matches = [path for path in files if compatible(bins[path], bins[newest])]
    return matches, [path for path in files if path not in matches]


def bin_names(path: str) -> dict[str, tuple[str, ...]]:
    """Each point of a coverage file and its bins' names."""
    database = libyaml.safe_load(Path(path).read_text()) or {}
    return {name: tuple(map(str, entry.get("bins:_hits", {})))
            for name, entry in database.items()}


def compatible(points: dict[str, tuple[str, ...]], model: dict[str, tuple[str, ...]]) -> bool:
    """Every point both files have has the same bins (a run need not sample every point)."""
    return all(points[name] == model[name] for name in points.keys() & model.keys())


def merge_files(files: list[str], merged: Path) -> dict:
    """Merge the given coverage.yml files into `merged` and return the merged database."""
    merged.parent.mkdir(parents=True, exist_ok=True)
    with libyaml.in_cocotb_coverage():
        merge_coverage(lambda message: None, str(merged), *files)
    return libyaml.safe_load(merged.read_text())


def missing_bins(entry: dict) -> list[str]:
    hits = entry.get("bins:_hits", {})
    return [str(name) for name, count in hits.items() if count < entry.get("at_least", 1)]


def rows(database: dict, markdown: bool = False) -> list[list[str]]:
    """Every covergroup and point: coverage, (Markdown: each bin's hits), the holes."""
    table = []
    for name in sorted(database):
        entry = database[name]
        hits = entry.get("bins:_hits", {})
        holes = ", ".join(missing_bins(entry)) or ("none" if hits else "")
        cells = ", ".join(f"{bin_name}: {count}" for bin_name, count in hits.items())
        table.append([f"`{name}`" if markdown else name, f"{entry['coverage']}/{entry['size']}",
                      f"{entry['cover_percentage']:.1f}", *([cells] if markdown else []), holes])
    return table


def report(database: dict) -> None:
    print(text_table(["group / point", "covered", "%", "holes"], rows(database), left=(0, 3)))


def to_markdown(database: dict) -> str:
    """Every covergroup and point as a table row: coverage, each bin's hits, the holes."""
    return markdown_table(["group / point", "covered", "%", "hits per bin", "holes"],
                          rows(database, markdown=True), left=(0, 3, 4))


def main(argv: list[str]) -> int:
    runs = Path(argv[0]) if argv else RUNS_ROOT
    report(merge(runs))
    return 0
