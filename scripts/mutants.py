"""`make mutants`: the RTL mutation run (verif.mutation.rtl_run); `host`: the host's mutants
(verif.mutation.host_run).

    python -m scripts.mutants [--seed S] [--count N] [--sample K] [--suite NAME] [--workers J]
    python -m scripts.mutants host [--workers N] [--group G] [--checks PATH]
"""

import sys

from verif.mutation import host_run, rtl_run

if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["host"]:
        sys.exit(host_run.main(args[1:]))
    sys.exit(rtl_run.main(args))
