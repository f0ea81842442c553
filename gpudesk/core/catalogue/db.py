"""The catalogue database: engine, WAL pragmas, and migrations to the newest schema.

Alembic is imported only when the database is not at the newest revision, so a normal start
pays for one small query, not for Alembic.
"""

from __future__ import annotations

import logging
from pathlib import Path

from sqlalchemy import Engine, create_engine, event, inspect, text

from gpudesk.core import paths
from gpudesk.core.catalogue import backup

log = logging.getLogger(__name__)

# The newest migration in migrations/versions; tests check that it is Alembic's head.
HEAD_REVISION = "0003_models_and_catalogue"
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"


def default_url() -> str:
    return f"sqlite:///{paths.database_path()}"


def make_engine(url: str | None = None) -> Engine:
    url = url or default_url()
    is_sqlite = url.startswith("sqlite")
    kwargs = {"connect_args": {"timeout": backup.lock_timeout_s()}} if is_sqlite else {}
    engine = create_engine(url, **kwargs)
    if is_sqlite:

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection, _record):  # pragma: no cover - trivial
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

    return engine


def sqlite_file(engine: Engine) -> Path | None:
    """The file of an SQLite database, or None (another server, or in memory)."""
    url = engine.url
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:" \
            and not url.database.startswith("file:"):
        return Path(url.database)
    return None


def needs_migration(engine: Engine) -> bool:
    """Whether an existing schema is older than the newest (a new, empty database is not)."""
    revision = current_revision(engine)
    return revision is not None and revision != HEAD_REVISION


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to `revision` (default: the newest)."""
    if revision == "head" and current_revision(engine) == HEAD_REVISION:
        return
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    with engine.begin() as connection:
        if connection.dialect.name == "sqlite":
            # the write lock first: a second program creating or migrating the same file waits here
            # and then finds the schema done; and a kill mid-way leaves the old schema whole
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        config.attributes["connection"] = connection
        log.info("migrating the catalogue database to %s", revision)
        command.upgrade(config, revision)
