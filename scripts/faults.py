"""`make faults`: a seeded fault-injection campaign on the chip (verif.faults), before and after
its parity checks (hw/ISA.md, "CORRUPTION").

    python -m scripts.faults [--sim verilator] [--count 9604] [--outside 385] [--seed 1]
                             [--jobs 2] [--labels before after] [--executor local|dask]
                             [--scheduler tcp://host:port]
    python -m scripts.faults --build-cost   (the public-sites build against the normal one)
"""

import argparse
import sys

from verif.faults.build_cost import build_cost
from verif.faults.campaign import EXECUTORS, LABELS, run_campaign
from verif.faults.report import write


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sim", default="verilator")
    parser.add_argument("--count", type=int, default=9604, help="chip-state injections")
    parser.add_argument("--outside", type=int, default=385,
                        help="injections in each stratum outside the chip (external, AXI)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--chunks", type=int, default=None)
    parser.add_argument("--labels", nargs="+", choices=list(LABELS), default=list(LABELS),
                        help="before: the chip without its parity checks; after: with them")
    parser.add_argument("--executor", choices=EXECUTORS, default="local")
    parser.add_argument("--scheduler", default=None,
                        help="--executor dask: a running scheduler (default: a local cluster)")
    parser.add_argument("--build-cost", action="store_true")
    args = parser.parse_args(argv)
    if args.build_cost:
        print(build_cost())
        return 0
    for label in args.labels:
        run = run_campaign(args.sim, args.seed, args.count, args.outside, args.jobs, args.chunks,
                           detection=LABELS[label], executor=args.executor,
                           scheduler=args.scheduler)
        speed = {"sim": args.sim, "injections": len(run.records), "wall_s": run.wall_s,
                 "cpu_s": run.cpu_s, "processes": run.processes, "executor": run.executor,
                 "injections_per_s": len(run.records) / run.wall_s}
        campaign = write(label, run.records, speed)
        print(f"{label}: {len(run.records)} injections in {run.wall_s:.0f} s "
              f"({speed['injections_per_s']:.1f}/s, {run.cpu_s:.0f} CPU s): chip "
              f"{campaign['overall']['counts']}; out/faults.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
