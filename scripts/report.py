"""One report, example or table of the main job on its own (verif.report).

    python -m scripts.report NAME [ARGS]   NAME: one of REPORTS
"""

import inspect
import sys

from verif.report import chapter, example_a, example_b, exercises, gather, serving, trained

REPORTS = {"example-a": example_a.main, "example-b": example_b.main,
           "example-b-part3": example_b.main_part3, "exercises": exercises.main,
           "exercise-plots": example_b.main_figures, "model-decodes": chapter.main,
           "gather": gather.main, "serving": serving.main, "trained": trained.main}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in REPORTS:
        sys.exit(f"usage: python -m scripts.report NAME [ARGS]; NAME: {', '.join(REPORTS)}")
    report, args = REPORTS[sys.argv[1]], sys.argv[2:]
    # a report that reads options gets the arguments after NAME (argparse would read NAME too)
    takes_args = bool(inspect.signature(report).parameters)
    if args and not takes_args:
        sys.exit(f"{sys.argv[1]} takes no arguments, got {' '.join(args)}")
    status = report(args) if takes_args else report()
    sys.exit(status if isinstance(status, int) else 0)
