"""`make run`: the chapter's whole check on both simulators, and its report
(verif.regress.main_job)."""

import sys

from verif.regress.main_job import main

if __name__ == "__main__":
    sys.exit(main())
