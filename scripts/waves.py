"""`make waves`: re-run one decode test with waveforms on and say how to open them
(verif.regress.waves).

    python -m scripts.waves TEST SIM
"""

import sys

from verif.regress.waves import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
