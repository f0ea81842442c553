"""Where gpudesk keeps things: the user's data, config and logs, and the bundled read-only files.

`GPUDESK_HOME` moves the database, settings and logs into one folder (tests, scripts and a
portable install use it). Bundled files (data/, resources/) are found whether gpudesk runs from
a source checkout, from an installed wheel or from a PyInstaller bundle; they are never written.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from gpudesk import APP_NAME, ORG_NAME

HOME_ENV = "GPUDESK_HOME"


def _home_override() -> Path | None:
    value = os.environ.get(HOME_ENV, "").strip()
    return Path(value).expanduser() if value else None


def data_dir() -> Path:
    """The user's writable data folder (database, autosaves); created on demand."""
    home = _home_override()
    if home is None:
        import platformdirs

        home = Path(platformdirs.user_data_dir(APP_NAME, ORG_NAME))
    home.mkdir(parents=True, exist_ok=True)
    return home


def config_dir() -> Path:
    """The user's settings folder; the same as data_dir() under GPUDESK_HOME."""
    home = _home_override()
    if home is None:
        import platformdirs

        home = Path(platformdirs.user_config_dir(APP_NAME, ORG_NAME))
    home.mkdir(parents=True, exist_ok=True)
    return home


def log_dir() -> Path:
    home = _home_override()
    if home is None:
        import platformdirs

        path = Path(platformdirs.user_log_dir(APP_NAME, ORG_NAME))
    else:
        path = home / "logs"
    path.mkdir(parents=True, exist_ok=True)
    return path


def autosave_dir() -> Path:
    path = data_dir() / "autosave"
    path.mkdir(parents=True, exist_ok=True)
    return path


def database_path() -> Path:
    return data_dir() / "gpudesk.sqlite3"


def is_frozen() -> bool:
    return bool(getattr(sys, "frozen", False)) and hasattr(sys, "_MEIPASS")


def _bundle_root() -> Path:
    """The folder holding data/ and resources/ for this way of running."""
    if is_frozen():
        return Path(sys._MEIPASS)  # type: ignore[attr-defined]
    package = Path(__file__).resolve().parent.parent
    installed = package / "_bundled"
    if (installed / "data").is_dir():
        return installed
    return package.parent


def bundled_data_dir() -> Path:
    """The read-only catalogue source files (data/)."""
    return _bundle_root() / "data"


def resources_dir() -> Path:
    """Icons, example scenarios, JSON schemas (resources/)."""
    return _bundle_root() / "resources"


def resource(*parts: str) -> Path:
    return resources_dir().joinpath(*parts)
