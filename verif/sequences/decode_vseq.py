"""Virtual sequences: several decodes on the chip agent and the page-table agent.

`ForkDecodeVseq` runs a request and its fork in turn, so appends hit shared pages.
"""

from __future__ import annotations

import random
from dataclasses import replace

from pyuvm import uvm_sequence, uvm_sequencer

from model.lm.tiny_lm import VOCAB
from verif.runs.spec import DecodeSpec
from verif.sequences.decode_seq import DecodeSeq


class DecodeVseq(uvm_sequence):  # virtual sequences end in Vseq (OpenTitan: _vseq)
    """Run each DecodeSpec of the plan, in order, to completion."""

    def __init__(self, name: str = "DecodeVseq", specs: list[DecodeSpec] | None = None,
                 chip_sqr: uvm_sequencer | None = None, pt_sqr: uvm_sequencer | None = None,
                 seed: int = 0):
        super().__init__(name)
        self.specs = list(specs or [])
        self.seed = seed
        self.chip_sqr, self.pt_sqr = chip_sqr, pt_sqr
        self.decodes: list[DecodeSeq] = []

    def new_decode(self, spec: DecodeSpec) -> DecodeSeq:
        decode = DecodeSeq(spec, self.chip_sqr, self.pt_sqr)
        self.decodes.append(decode)
        return decode

    async def body(self) -> None:
        for spec in self.specs:
            await self.new_decode(spec).start()


class ForkDecodeVseq(DecodeVseq):
    """Decode `fork_at` steps, fork, then step the parent and the child alternately."""

    async def body(self) -> None:
        for spec in self.specs:
            await self.fork_pair(spec)

    async def fork_pair(self, spec: DecodeSpec) -> None:
        parent = self.new_decode(spec)
        await parent.open()
        for _ in range(spec.fork_at or 0):
            await parent.step()
        child = await parent.fork(child_spec(spec, parent.tokens, self.seed))
        self.decodes.append(child)
        while not (parent.finished and child.finished):
            for decode in (parent, child):
                if not decode.finished:
                    await decode.step()
        await parent.close()
        await child.close()


def child_spec(parent: DecodeSpec, parent_tokens: list[int], seed: int) -> DecodeSpec:
    """The forked request: the parent's inputs up to the fork, then its own forced tokens,
    drawn from the run's seed and the decode's name alone."""
    rng = random.Random(f"{seed}/{parent.name}/fork")
    fork_at = parent.fork_at or 0
    own = [rng.randrange(VOCAB) for _ in range(parent.steps - fork_at)]
    force = [parent.start, *parent_tokens[1 : fork_at + 1], *own]
    return replace(parent, name=f"{parent.name}-fork", force=force, force_random=False,
                   fork_at=None)
