"""`make bench`: the benchmarks, each printing ratios measured in one run (verif.bench).

    python -m scripts.bench [paged] [chip] [testbench] [gather] [scaling] [axi] [area] [-- OPTS]

Default: all of them. OPTS go to chip or testbench: ``testbench -- --sim verilator``.
"""

import sys

from verif.bench import area, axi, chip, gather, paged, scaling, testbench

BENCHMARKS = {"paged": paged.main, "chip": chip.main, "testbench": testbench.main,
              "gather": gather.main, "scaling": scaling.main, "axi": axi.main,
              "area": area.main}
WITH_OPTIONS = ("chip", "testbench")


def main(argv: list[str]) -> int:
    names, options = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv \
        else (argv, [])
    names = names or list(BENCHMARKS)
    unknown = [name for name in names if name not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark {unknown}; choose from {', '.join(BENCHMARKS)}",
              file=sys.stderr)
        return 2
    if options and any(name not in WITH_OPTIONS for name in names):
        print(f"options {options} need one benchmark that takes them: {', '.join(WITH_OPTIONS)}",
              file=sys.stderr)
        return 2
    for name in names:
        print(f"\n==== bench {name}", flush=True)
        status = BENCHMARKS[name](options) if name in WITH_OPTIONS else BENCHMARKS[name]()
        if status:
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
