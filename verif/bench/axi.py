"""The DMA's words per cycle on the AXI4 port against the memory's latency and stalls.

A LOAD of 4,000 words on Verilator (verif/tests/bandwidth_cocotb.py) at read latencies 1 .. 200,
each channel held low 0 to 60% of cycles; the aim: AIM words per cycle at latency 20, ready
high. ``python -m scripts.bench axi`` writes out/bench_axi.{json,md}, out/plots/bench_axi.png.
"""

from __future__ import annotations

import json
from pathlib import Path

from model.paths import OUT, PLOTS, RUNS_ROOT
from sim.runner import run_test
from verif.report.output import markdown_table, save_figure, subplots, write_json
from verif.runs.launch import chip_build

LATENCIES = (1, 2, 5, 10, 20, 50, 100, 200)
LOWS = (0, 102, 307, 614)  # per 1024: 0%, 10%, 30%, 60%
AIM = 0.9  # words per cycle at latency 20, ready always high
SIM = "verilator"


def measure(points: list[tuple[int, int]] | None = None,
            test_dir: Path = RUNS_ROOT / SIM / "bench_axi") -> list[dict]:
    """One row per (latency, low) point (default: every LATENCIES x LOWS)."""
    chip = chip_build(SIM, waves=False)  # the decodes' build: no build of its own
    points = points or [(latency, low) for low in LOWS for latency in LATENCIES]
    run = run_test(chip, "verif.tests.bandwidth_cocotb", testcase="dma_bandwidth", seed=1,
                   test_dir=test_dir,
                   extra_env={"BENCH_POINTS": json.dumps(points)})
    return json.loads((run.test_dir / "bandwidth.json").read_text())


def table(rows: list[dict]) -> list[str]:
    words = {(r["latency"], r["low"]): r["words_per_cycle"] for r in rows}
    return markdown_table(["latency", *(f"low {100 * low / 1024:.0f}%" for low in LOWS)],
                          [[latency, *(f"{words[latency, low]:.3f}" for low in LOWS)]
                           for latency in LATENCIES]).splitlines()


def plot(rows: list[dict]) -> None:
    figure, axes = subplots(figsize=(6, 4))
    for low in LOWS:
        points = [(r["latency"], r["words_per_cycle"]) for r in rows if r["low"] == low]
        axes.plot(*zip(*points, strict=True), marker="o", label=f"low {100 * low / 1024:.0f}%")
    axes.axhline(AIM, linestyle=":", color="gray", label="aim at latency 20")
    axes.set(xscale="log", xlabel="read latency (cycles)", ylabel="words per cycle",
             title="DMA LOAD of 4,000 words on the AXI4 port")
    axes.legend()
    save_figure(figure, PLOTS / "bench_axi.png")


def main() -> int:
    rows = measure()
    lines = table(rows)
    print("DMA words per cycle (LOAD of 4,000 words, fetch and check once) against the memory's "
          "read latency and the share of cycles each channel is held low")
    print("\n".join(lines))
    at_20 = next(r for r in rows if r["latency"] == 20 and r["low"] == 0)["words_per_cycle"]
    verdict = "meets" if at_20 >= AIM else "MISSES"
    print(f"latency 20, ready always high: {at_20:.3f} words per cycle, {verdict} the aim {AIM}")
    (OUT / "bench_axi.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {write_json('bench_axi.json', rows)}")
    plot(rows)
    return 0 if at_20 >= AIM else 1
