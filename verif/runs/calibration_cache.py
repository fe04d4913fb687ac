"""Calibrations kept on disk, so every simulator run of the same decode skips the float decodes.

model.compiler.quantize.calibrate (float decodes from every start token) was most of the host's
compile: about 1 ms of each decode step on Verilator, paid again by every simulator run. It is a
pure function of the model's weights, its arguments and the code of model/ (and numpy's floats), so
a file in build/calibration/ is keyed by a digest of all of them: a change to any of them misses
and recalibrates (verif.runs.disk_cache).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, fields
from pathlib import Path

import numpy as np

from model.compiler.quantize import Calibration, calibrate
from model.lm.tiny_lm import TinyLM
from model.paths import BUILD_ROOT
from verif.runs.disk_cache import load_json, model_code_digest, store_json

CALIBRATION_DIR = BUILD_ROOT / "calibration"


def cached_calibration(model: TinyLM, steps: int, window: int | None, sinks: int = 0,
                       cache_dir: Path = CALIBRATION_DIR) -> Calibration:
    """model.compiler.quantize.calibrate's result, kept in ``cache_dir`` across runs and processes.

    Stored as JSON (floats round-trip exactly); written atomically, so parallel runs can share
    the folder; a folder that cannot be written only costs the recalibration.
    """
    digest = hashlib.sha256(repr((steps, window, sinks, np.__version__)).encode())
    for weights in (getattr(model, f.name) for f in fields(model)):
        digest.update(repr((weights.dtype.str, weights.shape)).encode())
        digest.update(np.ascontiguousarray(weights).tobytes())
    digest.update(model_code_digest())
    path = cache_dir / f"{digest.hexdigest()[:32]}.json"
    stored = load_json(path)
    if isinstance(stored, dict) and {"shared", "per_context"} <= stored.keys():
        return Calibration(shared=stored["shared"],
                           per_context={int(context): ranges for context, ranges
                                        in stored["per_context"].items()})
    calibration = calibrate(model, steps, window, sinks=sinks)
    store_json(path, asdict(calibration))
    return calibration
