"""The host's mutants, read from host_mutants.yml: the chapter's 18 one-line breaks of the page
table, the window and the host, and two of our own that survived a first run."""

from __future__ import annotations

from pathlib import Path

import yaml

from verif.mutation.framework import Mutant

CATALOGUE = Path(__file__).with_name("host_mutants.yml")


def mutant_name(description: str) -> str:
    """A mutant named after its description's words (stable across runs and machines)."""
    return "-".join(description.replace(",", "").replace("'", "").split()[:8])


def load(path: Path = CATALOGUE) -> tuple[Mutant, ...]:
    return tuple(Mutant(mutant_name(m["description"]), m["path"], m["original"], m["mutated"],
                        m["description"], m["group"]) for m in yaml.safe_load(path.read_text()))


HOST_MUTANTS = load()
