"""`make formal`: the blocks' properties proven with SymbiYosys (verif.formal.report).

    python -m scripts.formal [--quick] [--jobs N] [--only BLOCK ...]
"""

import sys

from verif.formal.report import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
