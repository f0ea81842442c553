"""The user's preferences: a typed, validated JSON file in the config folder.

Remembered UI state (window geometry, splitters) is not here: the UI keeps it in QSettings.
A settings file with a bad value is reported field by field and the defaults are used for those
fields; the file itself is only rewritten when the user saves preferences.
"""

from __future__ import annotations

import getpass
import json
import logging
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from gpudesk.core import paths
from gpudesk.core.fileio import atomic_write_text

log = logging.getLogger(__name__)

SETTINGS_FILE = "settings.json"
PAGE_SIZES = ("A4", "Letter")
# where the password of a team catalogue (a PostgreSQL database_url) comes from; never this file
PASSWORD_SOURCES = ("keyring", "env", "none")


class SettingsError(ValueError):
    """A settings value that cannot be used; the message names the field and the problem."""


@dataclass
class Settings:
    database_url: str = ""  # empty: the embedded SQLite database in the data folder
    password_source: str = "keyring"  # for a server URL: the system keyring, GPUDESK_DB_PASSWORD, or none
    region: str = "us-avg"
    pue: float = 1.2
    electricity_usd_per_kwh: float | None = None  # None: the region's price, else a default
    utilization: float = 0.6
    lifetime_years: float = 4.0
    author: str = ""
    organisation: str = ""
    page_size: str = "A4"
    calibration_enabled: bool = True
    # the user's own cost-of-ownership figures, replacing the catalogue's (gpudesk.core.prices):
    # host_usd_per_node, nic_usd, switch_usd, switch_ports, link_usd, facility_usd_per_kw
    # (numbers) and facility (whether to count the facility at all)
    tco: dict = field(default_factory=dict)
    problems: list[str] = field(default_factory=list, repr=False, compare=False)

    def validate(self) -> list[str]:
        """Messages for every bad field (empty when all are fine)."""
        out = []
        if not isinstance(self.database_url, str):
            out.append("database_url: must be a text (an SQLAlchemy URL) or empty")
        elif _url_password(self.database_url):
            out.append("database_url: holds a password in plain text; remove it from the URL and keep it in the "
                       "system keyring (Preferences > Team catalogue) or in GPUDESK_DB_PASSWORD")
        if self.password_source not in PASSWORD_SOURCES:
            out.append(f"password_source: {self.password_source!r} is not one of {', '.join(PASSWORD_SOURCES)}")
        if not isinstance(self.region, str) or not self.region:
            out.append("region: must name a grid region id, e.g. 'us-avg'")
        if not _is_number(self.pue) or not 1.0 <= float(self.pue) <= 3.0:
            out.append(f"pue: {self.pue!r} is not a power usage effectiveness between 1.0 and 3.0")
        if self.electricity_usd_per_kwh is not None and (
            not _is_number(self.electricity_usd_per_kwh) or not 0 <= float(self.electricity_usd_per_kwh) <= 5
        ):
            out.append(f"electricity_usd_per_kwh: {self.electricity_usd_per_kwh!r} is not a price between 0 and 5 $/kWh")
        if not _is_number(self.utilization) or not 0 < float(self.utilization) <= 1:
            out.append(f"utilization: {self.utilization!r} is not a fraction in (0, 1]")
        if not _is_number(self.lifetime_years) or not 0 < float(self.lifetime_years) <= 20:
            out.append(f"lifetime_years: {self.lifetime_years!r} is not a number of years in (0, 20]")
        if not isinstance(self.author, str):
            out.append("author: must be a text")
        if not isinstance(self.organisation, str):
            out.append("organisation: must be a text")
        if self.page_size not in PAGE_SIZES:
            out.append(f"page_size: {self.page_size!r} is not one of {', '.join(PAGE_SIZES)}")
        if not isinstance(self.calibration_enabled, bool):
            out.append("calibration_enabled: must be true or false")
        out.extend(_tco_problems(self.tco))
        return out


TCO_NUMBERS = ("host_usd_per_node", "nic_usd", "switch_usd", "switch_ports", "link_usd", "facility_usd_per_kw")


def _tco_problems(tco: object) -> list[str]:
    if not isinstance(tco, dict):
        return ["tco: must be an object of cost figures"]
    out = []
    for key, value in tco.items():
        if key == "facility":
            if value is not None and not isinstance(value, bool):
                out.append("tco: facility must be true or false")
        elif key not in TCO_NUMBERS:
            out.append(f"tco: unknown cost figure {key!r} (known: {', '.join(TCO_NUMBERS)}, facility)")
        elif value is not None and (not _is_number(value) or not 0 < float(value) <= 1e9):
            out.append(f"tco: {key} {value!r} is not a number more than 0")
    return out


def _url_password(url: str) -> bool:
    """Whether a database URL carries a password (scheme://user:password@host/...)."""
    head, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return False
    credentials = rest.rsplit("@", 1)[0]
    return ":" in credentials


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def settings_path() -> Path:
    return paths.config_dir() / SETTINGS_FILE


def load_settings(path: Path | None = None) -> Settings:
    """Read the settings file; unknown keys and bad values are reported in `.problems`."""
    path = path or settings_path()
    settings = Settings()
    if not path.exists():
        return settings
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        settings.problems.append(f"{path}: cannot be read as JSON ({exc}); using defaults")
        log.warning(settings.problems[-1])
        return settings
    if not isinstance(raw, dict):
        settings.problems.append(f"{path}: the top level must be an object; using defaults")
        return settings
    known = {f.name for f in fields(Settings) if f.name != "problems"}
    for key, value in raw.items():
        if key not in known:
            settings.problems.append(f"{path}: unknown setting '{key}' ignored")
            continue
        default = getattr(settings, key)
        setattr(settings, key, value)
        bad = [msg for msg in settings.validate() if msg.startswith(f"{key}:")]
        if bad:
            settings.problems.append(f"{path}: {bad[0]}; using the default {default!r}")
            setattr(settings, key, default)
    for message in settings.problems:
        log.warning(message)
    return settings


def save_settings(settings: Settings, path: Path | None = None) -> None:
    """Validate, then write atomically; raises SettingsError and writes nothing when a field is bad."""
    problems = settings.validate()
    if problems:
        raise SettingsError("; ".join(problems))
    data = asdict(settings)
    data.pop("problems", None)
    atomic_write_text(path or settings_path(), json.dumps(data, indent=2, sort_keys=True) + "\n")


USER_NAME_LENGTH = 120  # the width of the added_by/updated_by/imported_by columns


def current_user(settings: Settings | None = None) -> str:
    """Who is writing: the name recorded with each row a person adds or changes and each file they
    import. The author in Preferences when set, else the computer's login, else 'unknown'."""
    name = ((settings or load_settings()).author or "").strip()
    if not name:
        try:
            name = getpass.getuser()
        except (OSError, KeyError, ImportError):  # no login name (some containers): still a value
            name = ""
    return (name or "unknown")[:USER_NAME_LENGTH]
