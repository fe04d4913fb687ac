"""What a run is asked to do: a decode (``DecodeSpec``) or a serving workload (``ServingSpec``).

Dataclasses that travel as JSON from pytest into the simulator and back in the result file, so
both sides name a run the same way; each builds what it describes from model/."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace

from model.chip.isa import ChipConfig
from model.compiler.cache import ProgramCache
from model.compiler.gather import GATHER_MODES, gather_for
from model.compiler.layout import Pool, max_context
from model.compiler.quantize import shared_context_scales
from model.host.decode import Decode, decode
from model.host.serving import Scheduler
from model.host.workloads import serving_requests
from model.kv.admission import AdmissionRule, CoversExpected, OnePageFree, Watermark
from model.lm.tiny_lm import make_model
from verif.runs.disk_cache import cached_calibration


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
    """The spec's decode by the reference host on the reference machine."""
    return decode(make_model(spec.model, spec.model_seed), spec.steps, spec.start, spec.window,
                  page_size=spec.page_size, n_pages=spec.n_pages, force=spec.force,
                  sinks=spec.sinks, gather=spec.gather)


def plan_to_json(specs: list[DecodeSpec]) -> str:
    return json.dumps([asdict(spec) for spec in specs])


def plan_from_json(text: str) -> list[DecodeSpec]:
    return [DecodeSpec(**entry) for entry in json.loads(text)]


RULES = ("one-page-free", "covers-expected", "watermark")


@dataclass
class ServingSpec:
    """A seeded workload served with continuous batching over one pool (model.host.serving)."""

    name: str
    batch_size: int = 8  # B: requests per chip run
    window: int | None = 8
    page_size: int = 4
    n_pages: int = 16
    rule: str = "one-page-free"  # one of RULES (model.kv.admission)
    prefix_caching: bool = True
    model: str = "random"
    model_seed: int = 1
    workload_seed: int | None = None  # None: model.host.workloads' default seed
    n_requests: int = 24
    gather: str = "host"  # one of model.compiler.gather.GATHER_MODES: who copies the rows

    def __post_init__(self) -> None:
        if self.gather not in GATHER_MODES:
            raise ValueError(f"gather must be one of {GATHER_MODES}, got "
                             f"{self.gather!r}")

    def label(self) -> str:
        return (f"{self.name} (B={self.batch_size}, W={self.window}, {self.n_pages} pages of "
                f"{self.page_size}, {self.rule}, {self.gather} gather)")

    def admission_rule(self) -> AdmissionRule:
        if self.rule not in RULES:
            raise ValueError(f"unknown admission rule {self.rule!r}; choose one of {RULES}")
        return {"one-page-free": OnePageFree(), "covers-expected": CoversExpected(),
                "watermark": Watermark.of_pool(self.n_pages)}[self.rule]

    def scheduler(self, cfg: ChipConfig | None = None) -> Scheduler:
        """The scheduler this spec describes, every request of the workload submitted."""
        cfg = cfg or ChipConfig()
        model = make_model(self.model, self.model_seed)
        calibration = shared_context_scales(cached_calibration(model, max_context(cfg),
                                                                self.window))
        scheduler = Scheduler(ProgramCache(model, calibration, cfg), n_pages=self.n_pages,
                              page_size=self.page_size, batch_size=self.batch_size,
                              rule=self.admission_rule(), window=self.window,
                              prefix_caching=self.prefix_caching, gather=self.gather)
        seed = {} if self.workload_seed is None else {"seed": self.workload_seed}
        for request in serving_requests(n_requests=self.n_requests, cfg=cfg, **seed):
            scheduler.submit(request)
        return scheduler


def spec_to_json(spec: ServingSpec) -> str:
    return json.dumps(asdict(spec))


def spec_from_json(text: str) -> ServingSpec | None:
    return ServingSpec(**json.loads(text)) if text else None
