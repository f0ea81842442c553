"""Entry point of the frozen app (PyInstaller's script): the same as `python -m gpudesk`."""

import sys

# The bundle is read-only for users (/opt, Program Files) and must stay unchanged when root runs
# it: never write __pycache__ next to the Alembic migrations loaded from it as .py files.
sys.dont_write_bytecode = True

from gpudesk.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
