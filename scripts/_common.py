"""Where the example scripts write their results: ``out/`` at the repository root."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]


def write_json(name: str, data: Any) -> Path:
    """Write ``data`` as ``out/<name>`` (creating ``out/``) and return the path."""
    out_dir = REPO_ROOT / "out"
    out_dir.mkdir(exist_ok=True)
    path = out_dir / name
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path
