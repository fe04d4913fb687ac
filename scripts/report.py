"""One report, example or table of the main job on its own (verif.report).

    python -m scripts.report NAME   NAME: example-a, example-b, example-b-part3, exercises,
                                    exercise-plots, model-decodes, gather, serving,
                                    trained
"""

import inspect
import sys

from verif.report import (
    example_a,
    example_b,
    example_b_part3,
    exercise_plots,
    exercises,
    gather,
    model_decodes,
    serving,
    trained,
)

REPORTS = {"example-a": example_a.main, "example-b": example_b.main,
           "example-b-part3": example_b_part3.main, "exercises": exercises.main,
           "exercise-plots": exercise_plots.main, "model-decodes": model_decodes.main,
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
