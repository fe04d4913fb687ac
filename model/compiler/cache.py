"""Programs compiled on demand: one per tuple of contexts (and copy-on-write prologue).

With a window W a decode meets contexts 1..W only, so W programs serve it. Each context's
scales are chosen once and shared by every program that runs it, so a request computes the same
integers alone or batched.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from model.chip.isa import ChipConfig
from model.compiler.gather import Gather, HostGather
from model.compiler.layout import Layout, Pool
from model.compiler.program import StepProgram, check_contexts, compile_program
from model.compiler.quantize import Calibration, Scales, choose_scales, int8_scale, quantize
from model.compiler.quantize import weight_words as quantized_weights
from model.lm.tiny_lm import TinyLM


class ProgramCache:
    """Step programs of one model, calibration and chip, in one gather mode and layout;
    ``len()`` counts the distinct context tuples compiled."""

    def __init__(self, model: TinyLM, calibration: Calibration, cfg: ChipConfig | None = None,
                 gather: Gather | None = None, max_batch: int = 1, pool: Pool | None = None):
        self.model = model
        self.calibration = calibration
        self.cfg = cfg or ChipConfig()
        self.gather = gather or HostGather()
        if (self.gather.mode == "chip") != (pool is not None):
            raise ValueError(f"{self.gather.mode} gather takes {'a' if pool is None else 'no'} "
                             "pool")
        self.layout = Layout.for_model(model, self.cfg, max_batch, pool)
        self.x_table = quantize(model.embed, int8_scale(calibration.shared["x"]))
        self._scales: dict[int, Scales] = {}
        self._programs: dict[tuple[tuple[int, ...], bool], StepProgram] = {}
        self._weights: np.ndarray | None = None

    def scales(self, context: int) -> Scales:
        if context not in self._scales:
            self._scales[context] = choose_scales(self.model, self.calibration, context)
        return self._scales[context]

    def get(self, contexts: int | Sequence[int], copy: bool = False) -> StepProgram:
        """The program for requests at ``contexts`` (an int: a solo step); ``copy``: with PCOPYs."""
        contexts = check_contexts([contexts] if isinstance(contexts, int) else contexts,
                                  self.layout, self.cfg)
        key = (contexts, copy)
        if key not in self._programs:
            scales = [self.scales(n) for n in key[0]]
            self._programs[key] = compile_program(self.model, key[0], scales, self.weight_words,
                                                  self.layout, self.cfg, self.gather, copy)
        return self._programs[key]

    @property
    def weight_words(self) -> np.ndarray:
        """The quantized weights, which every program of the model shares."""
        if self._weights is None:
            self._weights = quantized_weights(self.model, self.scales(min(
                self.calibration.per_context)))
        return self._weights

    def __len__(self) -> int:
        return len({contexts for contexts, _ in self._programs})
