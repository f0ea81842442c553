"""The sourced hardware catalogue: bundled text files loaded into SQLite, plus the user's own rows.

`Catalogue` (SQLAlchemy) is imported on first use, so that code needing only the field registry,
`EditError` or the start-up snapshot (gpudesk.core.catalogue.reading) stays light."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudesk.core.catalogue.reading import EditError

if TYPE_CHECKING:
    from gpudesk.core.catalogue.service import Catalogue


def open_catalogue(url: str | None = None, data_dir=None) -> Catalogue:
    """Open the catalogue named by `url`, else the settings' database URL, else the embedded SQLite.
    A server's password comes from where the settings say (see team.py); a server that cannot be
    reached raises team.ServerUnreachable, which says why in words."""
    from gpudesk.core.catalogue.service import Catalogue
    from gpudesk.core.settings import load_settings

    settings = load_settings()
    if url is None:
        url = settings.database_url or None
    if url is None or str(url).startswith("sqlite"):
        return Catalogue.open(url, data_dir)
    from sqlalchemy.exc import InterfaceError, OperationalError

    from gpudesk.core.catalogue import team

    try:
        return Catalogue.open(team.connect_url(url, settings.password_source), data_dir)
    except (OperationalError, InterfaceError) as exc:
        raise team.ServerUnreachable(url, team.describe_error(exc)) from exc
    except ImportError as exc:  # gpudesk without its [team] extra
        raise team.driver_missing(url) from exc


def __getattr__(name: str):
    if name == "Catalogue":
        from gpudesk.core.catalogue.service import Catalogue

        return Catalogue
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Catalogue", "EditError", "open_catalogue"]
