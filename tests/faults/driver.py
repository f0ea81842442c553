"""A small driver the fault tests run as a real subprocess and kill with SIGKILL (not a test).

    python tests/faults/driver.py [--kill-at K] [--every N] [--ready] MODE ARGS...

Modes (GPUDESK_HOME names the data folder, as for gpudesk itself):

    cli ARGS...                     gpudesk's own command line (`gpudesk import FILE...` and so on)
    upgrade DATA_DIR                open the catalogue with the bundled data in DATA_DIR (an upgrade
                                    when its catalogue differs from the database's)
    save PATH SCENARIO [POINT]      save the scenario file SCENARIO to PATH with save_scenario;
                                    POINT kills the process at a point of the write: before-write,
                                    mid-write (half the bytes written and flushed), after-fsync,
                                    after-replace
    save-loop PATH A B              save A, B, A, B... to PATH until killed

Injected kill points: every SQLite connection gets a progress handler called every N virtual
machine instructions (--every, default 100), and every online-backup copy reports each page;
each call is one step. --kill-at K sends SIGKILL to this process at step K, wherever SQLite is
then (inside a statement, between an import's batches, before a COMMIT). Without --kill-at the
driver prints `steps=<total>` on stderr at the end, so a test can spread K over the whole run.
--ready prints `ready` on stdout once gpudesk is imported, just before the work starts (for
kills after a delay).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

_steps = 0
_kill_at = 0
_every = 100


def _step() -> int:
    """One step; SIGKILL at the chosen one. Returns 0 (SQLite's 'go on')."""
    global _steps
    _steps += 1
    if _kill_at and _steps >= _kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
    return 0


class _Connection(sqlite3.Connection):
    def backup(self, target, *, pages=-1, progress=None, name="main", sleep=0.250):
        def each(status, remaining, total):
            _step()
            if progress is not None:
                progress(status, remaining, total)

        return super().backup(target, pages=1, progress=each, name=name, sleep=0)


_real_connect = sqlite3.connect


def _connect(*args, **kwargs):
    kwargs.setdefault("factory", _Connection)
    conn = _real_connect(*args, **kwargs)
    conn.set_progress_handler(_step, _every)
    return conn


def _patch_file_writes(point: str) -> None:
    """Kill at one point of gpudesk.core.fileio's atomic write."""
    import gpudesk.core.fileio as fileio

    real_fdopen, real_fsync, real_replace = os.fdopen, os.fsync, os.replace

    class HalfWriter:
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return self.handle.__exit__(*exc)

        def write(self, data):
            self.handle.write(data[: len(data) // 2])
            self.handle.flush()
            os.kill(os.getpid(), signal.SIGKILL)

        def __getattr__(self, name):
            return getattr(self.handle, name)

    class Os:
        def __getattr__(self, name):
            return getattr(os, name)

        def fdopen(self, *args, **kwargs):
            if point == "before-write":
                os.kill(os.getpid(), signal.SIGKILL)
            handle = real_fdopen(*args, **kwargs)
            return HalfWriter(handle) if point == "mid-write" else handle

        def fsync(self, fd):
            real_fsync(fd)
            if point == "after-fsync":
                os.kill(os.getpid(), signal.SIGKILL)

        def replace(self, src, dst):
            real_replace(src, dst)
            if point == "after-replace":
                os.kill(os.getpid(), signal.SIGKILL)

    fileio.os = Os()


def main(argv: list[str]) -> int:
    global _kill_at, _every
    ready = False
    while argv and argv[0].startswith("--"):
        opt = argv.pop(0)
        if opt == "--kill-at":
            _kill_at = int(argv.pop(0))
        elif opt == "--every":
            _every = int(argv.pop(0))
        elif opt == "--ready":
            ready = True
        else:
            raise SystemExit(f"unknown option {opt}")
    mode, args = argv[0], argv[1:]
    sqlite3.connect = sqlite3.dbapi2.connect = _connect  # SQLAlchemy's pysqlite calls the latter
    import gpudesk.cli
    from gpudesk.core.catalogue.service import Catalogue
    from gpudesk.core.scenario import load_scenario, save_scenario

    if mode.startswith("save"):
        scenarios = [load_scenario(p) for p in args[1:3] if mode == "save-loop"] or [load_scenario(args[1])]
        if mode == "save" and len(args) > 2:
            _patch_file_writes(args[2])
    if ready:
        print("ready", flush=True)
    code = 0
    if mode == "cli":
        code = gpudesk.cli.main(args)
    elif mode == "upgrade":
        Catalogue.open(None, Path(args[0])).close()
    elif mode == "save":
        save_scenario(scenarios[0], args[0])
    elif mode == "save-loop":
        n = 0
        while True:
            save_scenario(scenarios[n % 2], args[0])
            n += 1
    else:
        raise SystemExit(f"unknown mode {mode}")
    if not _kill_at:
        print(f"steps={_steps}", file=sys.stderr, flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
