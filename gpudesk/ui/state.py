"""Remembered UI state (window geometry, splitters, column choices, the last view): one QSettings
store, under GPUDESK_HOME when it is set. Its own module so that the application and the window
both use it without importing each other."""

from __future__ import annotations

import os

from PySide6.QtCore import QSettings

from gpudesk import APP_NAME, ORG_NAME
from gpudesk.core import paths


def settings_store() -> QSettings:
    """Remembered UI state (geometry, splitters, last view); under GPUDESK_HOME when it is set."""
    home = os.environ.get(paths.HOME_ENV)
    if home:
        return QSettings(os.path.join(home, "ui-state.ini"), QSettings.Format.IniFormat)
    return QSettings(ORG_NAME, APP_NAME)
