"""A leaf sequence that sends one item to one agent's sequencer and waits for its answer.

The decode and serving sequences coordinate two agents, so they run on no sequencer of their
own; each operation they need is one `ItemSequence` started on the right sequencer.
"""

from __future__ import annotations

from pyuvm import uvm_sequence, uvm_sequence_item, uvm_sequencer


class ItemSequence(uvm_sequence):
    """Start one item; with `want_response`, wait for the driver's response to it."""

    def __init__(self, item: uvm_sequence_item, want_response: bool = False):
        super().__init__(f"{item.get_name()}_seq")
        self.item = item
        self.want_response = want_response
        self.response: uvm_sequence_item | None = None

    async def body(self) -> None:
        await self.start_item(self.item)
        await self.finish_item(self.item)
        if self.want_response:
            self.response = await self.get_response()


async def send(sequencer: uvm_sequencer, item: uvm_sequence_item,
               want_response: bool = False) -> uvm_sequence_item:
    """Run one item through `sequencer`; returns the response, or the item the driver filled."""
    seq = ItemSequence(item, want_response)
    await seq.start(sequencer)
    return seq.response if want_response else item
