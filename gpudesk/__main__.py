"""Entry point for `python -m gpudesk`."""

import sys

from gpudesk.cli import main

if __name__ == "__main__":
    sys.exit(main())
