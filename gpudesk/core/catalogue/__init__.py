"""The sourced hardware catalogue: bundled text files loaded into SQLite, plus the user's own rows."""

from __future__ import annotations

from gpudesk.core.catalogue.service import Catalogue, EditError


def open_catalogue(url: str | None = None, data_dir=None) -> Catalogue:
    """Open the catalogue named by `url`, else the settings' database URL, else the embedded SQLite."""
    if url is None:
        from gpudesk.core.settings import load_settings

        url = load_settings().database_url or None
    return Catalogue.open(url, data_dir)


__all__ = ["Catalogue", "EditError", "open_catalogue"]
