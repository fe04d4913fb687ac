"""The campaign's report: counts and shares per class for each stratum (the chip, external memory,
AXI read beats), the chip's per unit, model and workload kind, with 95% Wilson intervals; the
most vulnerable registers; the share by cycle of injection; what reported each detected fault.
out/faults.json keeps each campaign under its label; out/faults.md and out/plots/faults_*.png
are rewritten, with the chip before and after its parity checks side by side.

The detection coverage is ISO 26262's single-point fault metric read on the campaign: of the
faults that were not masked (timing, detected, hang, sdc), the share the chip reported or that
stopped it (detected or hang); a timing-only fault counts against it, as an sdc does."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from pathlib import Path

from model.chip.isa import ErrorCode
from model.paths import OUT, PLOTS
from verif.faults.classify import OUTCOMES
from verif.faults.items import stratum
from verif.report.output import markdown_table, save_figure, subplots, write_json

Z95 = 1.959964
CYCLE_BINS = 10
TOP_REGISTERS = 20
DASK_WORKERS = (8, 32)  # the cluster sizes the report estimates a campaign's time on


def wilson(hits: int, total: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a share."""
    if not total:
        return (0.0, 1.0)
    share = hits / total
    centre = (share + Z95**2 / (2 * total)) / (1 + Z95**2 / total)
    half = Z95 * math.sqrt(share * (1 - share) / total + Z95**2 / (4 * total**2)) / (
        1 + Z95**2 / total)
    return (max(0.0, min(share, centre - half)), min(1.0, max(share, centre + half)))


def share(hits: int, total: int) -> list[float]:
    """[share, low, high]: the share with its 95% Wilson interval."""
    return [hits / total if total else 0.0, *wilson(hits, total)]


def shares(records: list[dict]) -> dict:
    counts = Counter(r["outcome"] for r in records)
    latent = sum(1 for r in records if r["latent"])
    total = len(records)
    unmasked = total - counts["masked"]
    return {"injections": total, "counts": {o: counts[o] for o in OUTCOMES}, "latent": latent,
            "shares": {o: share(counts[o], total) for o in OUTCOMES},
            "coverage": share(counts["detected"] + counts["hang"], unmasked) if unmasked else None}


def detected_by(records: list[dict]) -> dict[str, int]:
    """What reported each detected fault: an error code's name, or the protocol checker."""
    return dict(Counter(ErrorCode(r["error"]).name if r.get("error") is not None
                        else "protocol checker" for r in records if r["outcome"] == "detected"))


def grouped(records: list[dict], key) -> dict:
    groups = defaultdict(list)
    for record in records:
        groups[key(record)].append(record)
    return {name: shares(rs) for name, rs in sorted(groups.items())}


def vulnerable(records: list[dict]) -> list[dict]:
    """The registers and arrays with the most silent corruptions."""
    by_site = defaultdict(list)
    for record in records:
        if record["model"] in ("flip-flop", "array"):
            by_site[record["site"]].append(record)
    ranked = sorted(((site, sum(r["outcome"] == "sdc" for r in rs), len(rs))
                     for site, rs in by_site.items()), key=lambda s: (-s[1], -s[1] / s[2], s[0]))
    return [{"site": s, "sdc": n, "injections": t} for s, n, t in ranked[:TOP_REGISTERS]]


def summary(records: list[dict], speed: dict) -> dict:
    """The chip stratum's shares are "overall"; the strata outside the chip stand apart."""
    chip = [r for r in records if stratum(r["model"]) == "chip"]
    external = [r for r in records if r["model"] == "external"]
    return {"overall": shares(chip), "speed": speed,
            "strata": grouped(records, lambda r: stratum(r["model"])),
            "per_unit": grouped(chip, lambda r: r["unit"]),
            "per_model": grouped(chip, lambda r: r["model"]),
            "per_kind": grouped(chip, lambda r: r.get("kind", "program")),
            "per_region": grouped(external, lambda r: f"{r.get('kind', 'program')}: {r['site']}"),
            "most_vulnerable": vulnerable(chip),
            "detected_by": detected_by(records),
            "per_cycle_decile": grouped(
                chip, lambda r: min(CYCLE_BINS - 1, r["cycle"] * CYCLE_BINS // r["run_cycles"]))}


def write(label: str, records: list[dict], speed: dict) -> dict:
    """Add a campaign under ``label`` to out/faults.json, then write out/faults.md and plots."""
    path = OUT / "faults.json"
    campaigns = json.loads(path.read_text()) if path.exists() else {}
    campaigns[label] = summary(records, speed)
    write_json("faults.json", campaigns)
    (OUT / "faults.md").write_text(markdown(campaigns))
    plot(label, campaigns[label])
    return campaigns[label]


def _cell(entry: dict, outcome: str) -> str:
    share, low, high = entry["shares"][outcome]
    return f"{100 * share:.1f} [{100 * low:.1f}, {100 * high:.1f}]"


def _table(title: str, entries: dict) -> list[str]:
    header = [title, "n", *(f"{o} % [95% CI]" for o in OUTCOMES), "latent"]
    rows = [[name, e["injections"], *(_cell(e, o) for o in OUTCOMES), e["latent"]]
            for name, e in entries.items()]
    return [markdown_table(header, rows, left=[0]), ""]


def _percent(entry: list[float] | None) -> str:
    """A share with its interval, in percent; "-" where nothing was counted (no non-masked
    fault for a coverage)."""
    if entry is None:
        return "-"
    value, low, high = entry
    return f"{100 * value:.2f} [{100 * low:.2f}, {100 * high:.2f}]"


def comparison(before: dict, after: dict) -> list[str]:
    """The chip stratum before and after the parity checks: overall and per unit."""
    rows = [[name, b["injections"], _percent(b["shares"]["sdc"]), _percent(b["coverage"]),
             a["injections"], _percent(a["shares"]["sdc"]), _percent(a["coverage"])]
            for name, b, a in [("chip", before["overall"], after["overall"]),
                               *((unit, before["per_unit"].get(unit), after["per_unit"][unit])
                                 for unit in after["per_unit"])] if b]
    header = ["chip stratum", "n before", "sdc % before", "detected or hang % of non-masked "
              "before", "n after", "sdc % after", "detected or hang % of non-masked after"]
    return ["## Before and after the parity checks", "",
            "The same seeded plan of workloads and cycles; each campaign draws its sites over "
            "its own chip's bits (the parity bits are sites after). Shares with 95% Wilson "
            "intervals.", "", markdown_table(header, rows, left=[0]), ""]


def markdown(campaigns: dict) -> str:
    lines = ["# Fault-injection campaigns", "",
             "The chip stratum samples the chip's state (flip-flops, unit arrays, scratchpad) "
             "uniformly over its bits; external memory and AXI read beats are strata of their "
             "own.", ""]
    if {"before", "after"} <= set(campaigns):
        lines += comparison(campaigns["before"], campaigns["after"])
    for label, c in campaigns.items():
        speed = c["speed"]
        lines += [f"## {label}", "",
                  f"{speed['injections']} injections in {speed['wall_s']:.0f} s wall "
                  f"({speed['injections_per_s']:.1f} injections/s), {speed['cpu_s']:.0f} CPU s, "
                  f"{speed['processes']} processes on {speed['sim']} "
                  f"({speed.get('executor', 'local')}); on N Dask workers the simulation "
                  f"takes about CPU s / N: " + ", ".join(
                      f"{n} workers {speed['cpu_s'] / n:.0f} s" for n in DASK_WORKERS)
                  + " (and each worker's one build)", ""]
        lines += _table("stratum", c["strata"]) + _table("chip unit", c["per_unit"])
        lines += _table("chip model", c["per_model"]) + _table("chip workload", c["per_kind"])
        lines += _table("external region", c["per_region"])
        lines += ["Detected by (every stratum): " + ", ".join(f"{name} {count}" for name, count
                                             in sorted(c.get("detected_by", {}).items())), ""]
        lines += ["Most vulnerable registers (silent corruptions / injections):", "",
                  markdown_table(["register", "sdc", "n"],
                                 [[v["site"], v["sdc"], v["injections"]]
                                  for v in c["most_vulnerable"]], left=[0]), ""]
    return "\n".join(lines)


def plot(label: str, campaign: dict) -> list[Path]:
    figure, axes = subplots(figsize=(10, 7))
    entries = {"chip": campaign["overall"], **campaign["per_unit"],
               **{f"[{name}]": e for name, e in campaign["strata"].items() if name != "chip"}}
    left = [0.0] * len(entries)
    for outcome in OUTCOMES:
        values = [100 * e["shares"][outcome][0] for e in entries.values()]
        errors = [[100 * (e["shares"][outcome][0] - e["shares"][outcome][1])
                   for e in entries.values()],
                  [100 * (e["shares"][outcome][2] - e["shares"][outcome][0])
                   for e in entries.values()]]
        axes.barh(list(entries), values, left=left, label=outcome, xerr=errors, capsize=2)
        left = [a + b for a, b in zip(left, values, strict=True)]
    axes.set_xlabel("share of injections, % (95% CI)")
    axes.legend()
    paths = [save_figure(figure, PLOTS / f"faults_{label}_shares.png")]
    figure, axes = subplots(figsize=(8, 4))
    deciles = campaign["per_cycle_decile"]
    for outcome in OUTCOMES:
        axes.plot([int(b) for b in deciles], [100 * d["shares"][outcome][0]
                                             for d in deciles.values()], marker="o",
                  label=outcome)
    axes.set_xlabel("decile of the run in which the bit flipped (chip stratum)")
    axes.set_ylabel("share, %")
    axes.legend()
    paths.append(save_figure(figure, PLOTS / f"faults_{label}_by_cycle.png"))
    return paths
