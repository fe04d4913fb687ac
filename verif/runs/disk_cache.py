"""Results kept on disk under build/ as JSON, named by a digest of everything they depend on.

A result that is a pure function of its inputs and model/'s code is computed once per machine;
an unwritable folder or unreadable file only costs the work.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, fields
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from model.compiler.quantize import Calibration, calibrate
from model.lm.tiny_lm import TinyLM
from model.paths import BUILD_ROOT, MODEL_DIR


def load_json(path: Path) -> Any | None:
    """The JSON stored at ``path``; None when it is missing or unreadable."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def store_json(path: Path, data: Any) -> None:
    """Write ``data`` to ``path`` atomically (a temporary file, then a rename)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(data))
        os.replace(temporary, path)
    except OSError:  # a read-only tree still runs, it only computes again
        pass


@cache
def model_code_digest() -> bytes:
    """A digest of model/'s sources (read once per process)."""
    digest = hashlib.sha256()
    for source in sorted(MODEL_DIR.rglob("*.py")):
        digest.update(str(source.relative_to(MODEL_DIR)).encode())
        digest.update(source.read_bytes())
    return digest.digest()


CALIBRATION_DIR = BUILD_ROOT / "calibration"


def cached_calibration(model: TinyLM, steps: int, window: int | None, sinks: int = 0,
                       cache_dir: Path = CALIBRATION_DIR) -> Calibration:
    """``calibrate``'s result, kept in ``cache_dir`` as JSON (floats round-trip exactly)."""
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
