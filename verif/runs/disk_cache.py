"""Results kept on disk under build/, as JSON, named by a digest of everything they depend on.

A result that is a pure function of its inputs and of model/'s code (a calibration, the trained
model's report) is computed once per machine and read back by every later run: its file is
named by a digest of the inputs and of model/'s sources, so a change to any of them misses and
recomputes. Files are written atomically (parallel runs may share the folder), and a folder that
cannot be written, or a file that cannot be read, only costs the computation.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from model.paths import MODEL_DIR


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
