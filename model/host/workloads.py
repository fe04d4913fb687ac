"""The workloads of the chapter's example B, as pure functions of their parameters.

``sample_lengths``: part 1's 400 request lengths (also exercise 2's admission simulation);
``share_prompt``: part 2's prompt forked to several requests (also exercise 4's alignment);
``serving_requests``: two dozen requests for the serving scheduler (model.host.serving).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from model.chip.isa import ChipConfig
from model.compiler.layout import max_context
from model.host.serving import Request
from model.kv.paged import PageTable
from model.lm.tiny_lm import VOCAB

LENGTH_SEED = 11
N_REQUESTS = 400
LOGNORMAL_MU, LOGNORMAL_SIGMA = 5.2, 0.9
MIN_LENGTH, MAX_LENGTH = 16, 2048  # MAX_LENGTH is what the contiguous scheme must reserve


def sample_lengths(seed: int = LENGTH_SEED, n_requests: int = N_REQUESTS) -> list[int]:
    """The chapter's request lengths: lognormal (mu 5.2, sigma 0.9), truncated to an integer
    and clamped to [MIN_LENGTH, MAX_LENGTH]; the seed and the order of draws are the
    chapter's, so the same lengths come out (mean 274, median 194, longest 1,884)."""
    rng = random.Random(seed)
    draws = (rng.lognormvariate(LOGNORMAL_MU, LOGNORMAL_SIGMA) for _ in range(n_requests))
    return [min(MAX_LENGTH, max(MIN_LENGTH, int(x))) for x in draws]


@dataclass(frozen=True)
class SharedPrompt:
    """What sharing one prompt cost, once every sharer has appended its own rows."""

    pages: int  # pages in use; the prompt's own request is released, its sharers are not
    cow_copies: int  # shared tail pages copied before a sharer wrote into them
    padding_rows: int  # zero rows padded onto the prompt before the forks (0 if not aligned)


def share_prompt(
    prompt: int, page_size: int, sharers: int, own_rows: int, n_pages: int, align: bool = False
) -> SharedPrompt:
    """Store ``prompt`` rows once, fork them to ``sharers`` requests, append ``own_rows`` each;
    with ``align``, pad the prompt to a page boundary first."""
    table = PageTable(n_pages, page_size)
    table.new("prompt")
    for _ in range(prompt):
        table.append("prompt", 0)
    padding_rows = table.pad_to_page("prompt") if align else 0
    for rid in range(sharers):
        table.fork("prompt", rid)
        for _ in range(own_rows):
            table.append(rid, 0)
    table.release("prompt")
    return SharedPrompt(table.used(), table.cow_copies, padding_rows)


SERVING_SEED = 5
SERVING_REQUESTS = 24
SYSTEM_PROMPT_LENGTHS = (9, 6)  # the two shared system prompts: 2 and 1 full pages of 4


def serving_requests(
    seed: int = SERVING_SEED, n_requests: int = SERVING_REQUESTS, cfg: ChipConfig | None = None
) -> list[Request]:
    """Requests for the serving scheduler: example B's lengths scaled down to the chip's context,
    each prompt one of two shared system prompts then user tokens, arrivals 0 to 2 steps apart."""
    rng = random.Random(seed)
    longest = max_context(cfg or ChipConfig())
    systems = [tuple(rng.randrange(VOCAB) for _ in range(n)) for n in SYSTEM_PROMPT_LENGTHS]
    requests, arrival = [], 0
    for rid, length in enumerate(sample_lengths(n_requests=n_requests)):
        system = systems[rng.randrange(len(systems))]
        own = min(longest + 1 - len(system), max(2, round(length * longest / MAX_LENGTH)))
        user = max(1, own // 2)
        prompt = system + tuple(rng.randrange(VOCAB) for _ in range(user))
        requests.append(Request(rid, arrival, prompt, own - user))
        arrival += rng.randrange(3)
    return requests
