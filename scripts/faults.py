"""`make faults`: a seeded fault-injection campaign on the chip (verif.faults).

    python -m scripts.faults [--sim verilator] [--count 9604] [--outside 385] [--seed 1]
                             [--jobs 2] [--label before]
    python -m scripts.faults --build-cost   (the public-sites build against the normal one)
"""

import argparse
import sys

from verif.faults.build_cost import build_cost
from verif.faults.campaign import run_campaign
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
    parser.add_argument("--label", default="before")
    parser.add_argument("--build-cost", action="store_true")
    args = parser.parse_args(argv)
    if args.build_cost:
        print(build_cost())
        return 0
    run = run_campaign(args.sim, args.seed, args.count, args.outside, args.jobs, args.chunks)
    speed = {"sim": args.sim, "injections": len(run.records), "wall_s": run.wall_s,
             "cpu_s": run.cpu_s, "processes": run.processes,
             "injections_per_s": len(run.records) / run.wall_s}
    campaign = write(args.label, run.records, speed)
    print(f"{len(run.records)} injections in {run.wall_s:.0f} s ({speed['injections_per_s']:.1f}"
          f"/s, {run.cpu_s:.0f} CPU s): chip {campaign['overall']['counts']}; out/faults.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
