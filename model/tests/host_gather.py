"""Steps on rows a test chooses itself, rather than rows a host gathered."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from model.compiler.inputs import RequestInputs, StepInputs
from model.compiler.program import StepProgram
from model.kv.step_rule import plan_step


def host_gather_inputs(program: StepProgram, xs: Sequence[np.ndarray],
                       kcs: Sequence[np.ndarray], vcs: Sequence[np.ndarray]) -> StepInputs:
    """A host-gather run of ``program`` on rows the caller chooses, with no window."""
    if not len(xs) == len(kcs) == len(vcs) == program.batch:
        raise ValueError(f"a step of {program.batch} requests takes as many x, kc and vc, got "
                         f"{len(xs)}, {len(kcs)} and {len(vcs)}")
    d = program.layout.dim
    requests = tuple(
        RequestInputs(rid=i, plan=plan_step(n, None), token=-1,
                      x=np.asarray(x, np.int64).reshape(d),
                      kc=np.asarray(kc, np.int64).reshape(-1, d),
                      vc=np.asarray(vc, np.int64).reshape(-1, d))
        for i, (n, x, kc, vc) in enumerate(zip(program.contexts, xs, kcs, vcs, strict=True)))
    return StepInputs(program=program, requests=requests)
