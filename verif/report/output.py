"""Where the reports write their results: JSON files in ``out/``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from model.paths import OUT


def write_json(name: str, data: Any) -> Path:
    """Write ``data`` as ``out/<name>`` (creating ``out/``) and return the path."""
    OUT.mkdir(exist_ok=True)
    path = OUT / name
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path
