"""`make regress`: run a suite on xdist, Dask or a shard, or merge shards (verif.regress.regress).

    python -m scripts.regress --suite full --seeds 20 --jobs 2 [--executor dask] [--shard 2/8]
    python -m scripts.regress --merge --suite full --shards 8
"""

import sys

from verif.regress.regress import main

if __name__ == "__main__":
    sys.exit(main())
