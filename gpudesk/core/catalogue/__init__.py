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
    A server's password comes from the URL, GPUDESK_DB_PASSWORD, the keyring or PostgreSQL's own
    sources (team.resolve_password); a server that cannot be reached raises team.ServerUnreachable,
    one that refuses to sign in team.TeamError listing where passwords are looked for."""
    from gpudesk.core.catalogue.db import check_url
    from gpudesk.core.catalogue.service import Catalogue
    from gpudesk.core.settings import load_settings

    settings = load_settings()
    if url is None:
        url = settings.database_url or None
    check_url(url)
    if url is None or str(url).startswith("sqlite"):
        return Catalogue.open(url, data_dir)
    from sqlalchemy.exc import InterfaceError, OperationalError

    from gpudesk.core.catalogue import team

    connect, origin = team.resolve_password(url, settings.password_source)
    try:
        return Catalogue.open(connect, data_dir)
    except (OperationalError, InterfaceError) as exc:
        if "password" in str(getattr(exc, "orig", None) or exc).lower():  # reached, but signing in failed
            raise team.TeamError(team.connect_error(exc, origin, settings.password_source)) from exc
        raise team.ServerUnreachable(url, team.describe_error(exc)) from exc
    except ImportError as exc:  # gpudesk without its [team] extra
        raise team.driver_missing(url) from exc


def __getattr__(name: str):
    if name == "Catalogue":
        from gpudesk.core.catalogue.service import Catalogue

        return Catalogue
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Catalogue", "EditError", "open_catalogue"]
