"""What one serving run is: the workload, the pool, the batch size and the admission rule.

A dataclass that travels as JSON from pytest into the simulator (environment variable
``SERVING_SPEC``) and back out in the run's result file, like DecodeSpec. `scheduler()` builds
the model's scheduler (model.host.serving) it describes, with its requests submitted. ``gather``
says who moves the cached rows: the host (into each request's kc/vc slot) or the chip
(through each request's block table, model.compiler.gather); the scheduling is the same.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from model.chip.isa import ChipConfig
from model.compiler.cache import ProgramCache
from model.compiler.gather import GATHER_MODES
from model.compiler.layout import max_context
from model.compiler.quantize import shared_context_scales
from model.host.serving import Scheduler
from model.host.workloads import serving_requests
from model.kv.admission import AdmissionRule, CoversExpected, OnePageFree, Watermark
from model.lm.tiny_lm import make_model
from verif.runs.calibration_cache import cached_calibration

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
