"""The bandwidth benchmark (verif/bench/axi.py) on two of its points, on Verilator: it runs, and
its figures are what the port promises (a word a cycle once the stream flows, less when the
memory holds its channels low)."""

from __future__ import annotations

import pytest

from verif.bench import axi


@pytest.mark.sim
@pytest.mark.timeout(300)
def test_the_dma_streams_about_a_word_a_cycle_at_latency_20(tmp_path):
    rows = axi.measure([(20, 0), (20, 307)], test_dir=tmp_path)
    by_low = {row["low"]: row for row in rows}
    assert by_low[0]["words_per_cycle"] >= axi.AIM
    assert 0.5 < by_low[307]["words_per_cycle"] < by_low[0]["words_per_cycle"]
    assert [(row["latency"], row["low"]) for row in rows] == [(20, 0), (20, 307)]
