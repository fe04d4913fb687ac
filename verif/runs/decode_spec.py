"""What one decode is: the parameters a DecodeSeq runs and the checks compare against.

A plain dataclass that travels as JSON from pytest into the simulator (environment variable
``DECODE_PLAN``) and back out in the run's result file, so both sides name a decode the same way.
``programs()`` compiles its programs as model.host.decode.decode does (the same programs), with the
calibration read from the disk cache; ``reference_decode(spec)`` is the whole decode by the
reference host (model.host.decode.decode), which a chip's run must equal token, page and cycle.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace

from model.chip.isa import ChipConfig
from model.compiler.cache import ProgramCache
from model.compiler.gather import gather_for
from model.compiler.layout import Pool
from model.host.decode import Decode, decode
from model.lm.tiny_lm import make_model
from verif.runs.calibration_cache import cached_calibration


@dataclass
class DecodeSpec:
    """One request: model, start token, steps, window, page size and optional forced tokens."""

    name: str
    model: str = "structured"  # "structured" (follows f(t) = 5t+3 mod 16) or "random"
    model_seed: int = 0
    start: int = 0
    steps: int = 32
    window: int | None = None  # None: full attention
    sinks: int = 0  # first rows kept in every window (model.kv.step_rule)
    page_size: int = 4
    n_pages: int = 64
    force: list[int] | None = None  # force[L] is the input after step L (force[0] unused)
    force_random: bool = False  # draw `force` from the run's seed when the test builds
    fork_at: int | None = None  # ForkDecodeVseq: fork a second request after this many steps
    gather: str = "host"  # who copies a step's cached rows: "host" (into kc/vc) or "chip" (PLOAD)
    bad_table_at: int | None = None  # chip gather: this step's table names a page off the pool

    def label(self) -> str:
        """A short name for reports: the decode's name, window, sinks, page size and gather."""
        sinks = f", S={self.sinks}" if self.sinks else ""
        gather = ", chip gather" if self.gather == "chip" else ""
        return f"{self.name} (W={self.window}{sinks}, P={self.page_size}{gather})"

    def with_force(self, force: list[int]) -> DecodeSpec:
        return replace(self, force=list(force), force_random=False)

    def programs(self, cfg: ChipConfig | None = None) -> ProgramCache:
        """The decode's programs (compiled lazily, one per context the decode meets)."""
        model = make_model(self.model, self.model_seed)
        pool = Pool(self.page_size, self.n_pages, model.dim) if self.gather == "chip" else None
        calibration = cached_calibration(model, self.steps, self.window, self.sinks)
        return ProgramCache(model, calibration, cfg, gather_for(self.gather), pool=pool)


def reference_decode(spec: DecodeSpec) -> Decode:
    """The spec's decode by the reference host on the reference machine (its forced tokens
    included), calibrated as ``programs()`` is."""
    return decode(make_model(spec.model, spec.model_seed), spec.steps, spec.start, spec.window,
                  page_size=spec.page_size, n_pages=spec.n_pages, force=spec.force,
                  sinks=spec.sinks, gather=spec.gather)


def plan_to_json(specs: list[DecodeSpec]) -> str:
    return json.dumps([asdict(spec) for spec in specs])


def plan_from_json(text: str) -> list[DecodeSpec]:
    return [DecodeSpec(**entry) for entry in json.loads(text)]
