"""`make bench`: the benchmarks, each printing ratios measured in one run (verif.bench).

    python -m scripts.bench [paged] [chip] [testbench] [gather] [scaling]   (default: all)
"""

import sys

from verif.bench import chip, gather, paged, scaling, testbench

BENCHMARKS = {"paged": paged.main, "chip": chip.main, "testbench": testbench.main,
              "gather": gather.main, "scaling": scaling.main}

if __name__ == "__main__":
    names = sys.argv[1:] or list(BENCHMARKS)
    unknown = [name for name in names if name not in BENCHMARKS]
    if unknown:
        sys.exit(f"unknown benchmark {unknown}; choose from {', '.join(BENCHMARKS)}")
    for name in names:
        print(f"\n==== bench {name}", flush=True)
        status = BENCHMARKS[name]()
        if status:
            sys.exit(status)
