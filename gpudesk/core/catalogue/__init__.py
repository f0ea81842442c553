"""The sourced hardware catalogue: bundled text files loaded into SQLite, plus the user's own rows.

`Catalogue` (SQLAlchemy) is imported on first use, so that code needing only the field registry,
`EditError` or the start-up snapshot (gpudesk.core.catalogue.reading) stays light."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudesk.core.catalogue.reading import EditError

if TYPE_CHECKING:
    from gpudesk.core.catalogue.service import Catalogue


def open_catalogue(url: str | None = None, data_dir=None) -> Catalogue:
    """Open the catalogue named by `url`, else the settings' database URL, else the embedded SQLite."""
    from gpudesk.core.catalogue.service import Catalogue

    if url is None:
        from gpudesk.core.settings import load_settings

        url = load_settings().database_url or None
    return Catalogue.open(url, data_dir)


def __getattr__(name: str):
    if name == "Catalogue":
        from gpudesk.core.catalogue.service import Catalogue

        return Catalogue
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Catalogue", "EditError", "open_catalogue"]
