"""`make coverage`: merge the passing runs' functional coverage databases and list the holes.

    python -m scripts.coverage [RUNS_DIR]
"""

from __future__ import annotations

from pathlib import Path

from cocotb_coverage.coverage import merge_coverage

from model.paths import OUT, RUNS_ROOT
from verif.coverage import libyaml
from verif.report.output import markdown_table, text_table
from verif.runs.record import RESULT_FILE, read_result

MERGED = OUT / "coverage" / "merged.yml"


def passed(run_dir: Path) -> bool:
    """The run passed: a negative test's broken chip covers nothing."""
    return (run_dir / RESULT_FILE).exists() and read_result(run_dir).get("status") == "passed"


def passing_runs(runs: Path) -> list[str]:
    return [str(path) for path in sorted(runs.rglob("coverage.yml")) if passed(path.parent)]


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
    """(files, stale files): the runs whose bins match the newest run's. cocotb-coverage cannot
    merge a point whose bins changed (a run from before the point was edited): left out, said so."""
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
    return markdown_table(["group / point", "covered", "%", "hits per bin", "holes"],
                          rows(database, markdown=True), left=(0, 3, 4))


def main(argv: list[str]) -> int:
    runs = Path(argv[0]) if argv else RUNS_ROOT
    report(merge(runs))
    return 0
