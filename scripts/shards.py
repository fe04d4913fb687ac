"""Print a suite's deterministic shards without running anything (verif.regress.shards).

    python -m scripts.shards --suite full --seeds 20 --shards 8 [--list]
"""

import sys

from verif.regress.shards import main

if __name__ == "__main__":
    sys.exit(main())
