"""`make coverage`: the functional coverage of every passing run, merged, with its holes
(verif.coverage.report); `code`: Verilator's code coverage (verif.coverage.code_coverage).

    python -m scripts.coverage [RUNS_DIR]
    python -m scripts.coverage code [--check] [RUN_DIRS ...]
"""

import sys

from verif.coverage import code_coverage, report

if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["code"]:
        sys.exit(code_coverage.main(args[1:]))
    sys.exit(report.main(args))
