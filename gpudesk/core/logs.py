"""The log file: gpudesk.log in the log folder (paths.log_dir), for the app and the command line."""

from __future__ import annotations

import logging
from pathlib import Path

from gpudesk.core import paths

LOG_MAX_BYTES = 1_000_000
LOG_BACKUPS = 3


def log_path() -> Path:
    return paths.log_dir() / "gpudesk.log"


def setup_logging() -> Path | None:
    """Log to gpudesk.log in the log folder, rotated at start-up when it passed LOG_MAX_BYTES
    (logging.handlers' rotating handler would cost the start-up its socket and pickle imports)."""
    root = logging.getLogger()
    for h in root.handlers:
        if getattr(h, "gpudesk_log", False):
            return Path(h.baseFilename)
    try:
        path = log_path()
        if path.exists() and path.stat().st_size > LOG_MAX_BYTES:
            for i in range(LOG_BACKUPS - 1, 0, -1):
                older = path.with_name(f"{path.name}.{i}")
                if older.exists():
                    older.replace(path.with_name(f"{path.name}.{i + 1}"))
            path.replace(path.with_name(f"{path.name}.1"))
        handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    except OSError:
        return None
    handler.gpudesk_log = True
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return path


def log_exception(message: str, exc: BaseException) -> Path | None:
    """Append `message` and the trace of `exc` to the log file; its path, or None when it cannot be
    written (a read-only or full disk: the caller then says so)."""
    import traceback
    from datetime import datetime

    try:
        path = log_path()
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"{datetime.now().isoformat(sep=' ', timespec='seconds')} ERROR gpudesk: {message}\n")
            handle.write("".join(traceback.format_exception(exc)))
    except OSError:
        return None
    return path
