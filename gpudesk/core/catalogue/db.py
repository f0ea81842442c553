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
HEAD_REVISION = "0006_cost_factors"
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"


def default_url() -> str:
    return f"sqlite:///{paths.database_path()}"


# PostgreSQL: one advisory lock serialises schema migrations and catalogue loads between all the
# programs sharing a server ("gpud" in ASCII); a program waits this long for another's upgrade
UPGRADE_LOCK_KEY = 0x67707564
UPGRADE_WAIT_S = 120
CONNECT_TIMEOUT_S = 8  # a server that does not answer is reported, not waited for


class SchemaError(RuntimeError):
    """The database's schema cannot be used by this gpudesk; the message says why and what to do."""


class UrlError(ValueError):
    """A database URL gpudesk cannot use, said in one line; `kind` is what went wrong: `usage` (not a
    URL gpudesk takes), `missing` (the file's folder does not exist) or `not_writable`."""

    def __init__(self, message: str, kind: str = "usage"):
        super().__init__(message)
        self.kind = kind


# the database URLs gpudesk takes (SQLAlchemy driver names)
DRIVERS = ("sqlite", "sqlite+pysqlite", "postgresql", "postgresql+psycopg")
URL_FORMS = "sqlite:///path/to/catalogue.sqlite3 or postgresql+psycopg://user@host:5432/database"


def check_url(url) -> None:
    """Refuse, in words, a URL that names no database gpudesk can open: an unknown scheme, or an
    SQLite file whose folder does not exist."""
    if url is None:
        return
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(str(url))
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        raise UrlError(f"'{_shown(str(url)).strip(chr(39))}' is not a database URL; gpudesk takes {URL_FORMS}") \
            from None
    if parsed.drivername not in DRIVERS:
        raise UrlError(f"{parsed.drivername + '://…'!r} is not a database gpudesk takes; it takes {URL_FORMS}")
    if parsed.get_backend_name() == "sqlite" and parsed.database and parsed.database != ":memory:" \
            and not parsed.database.startswith("file:"):
        try:
            path = Path(parsed.database).expanduser()
            folder = path.parent.resolve()
            missing = not folder.is_dir()
        except (OSError, ValueError, RuntimeError) as exc:  # a NUL byte, a name too long, a loop of links
            raise UrlError(f"{parsed.database!r} cannot be a database file ({exc})".replace("\n", " ")) from None
        if missing:
            raise UrlError(f"{_shown(str(path))}: its folder {_shown(str(folder))} does not exist", "missing")


def _shown(text: str) -> str:
    """A path or URL as a message shows it: as it is, or quoted with escapes when it holds a line
    break or another control character."""
    return text if text.isprintable() else repr(text)


def read_only_reason(path: Path) -> str:
    """Why an SQLite database cannot be written here ('' when it can): the file or its folder is
    read-only (a read-only mount, a locked-down home); SQLite needs the folder for its journal."""
    import os

    if path.exists() and not os.access(path, os.W_OK):
        return "the file is read-only"
    folder = path.parent if str(path.parent) else Path(".")
    if folder.is_dir() and not os.access(folder, os.W_OK):
        return "its folder is read-only"
    return ""


def read_only_engine(path: Path) -> Engine:
    """An engine that reads `path` without writing anything next to it: SQLite's read-only mode,
    or `immutable` where even the write-ahead log cannot be opened (its folder is read-only)."""
    from sqlalchemy.exc import OperationalError

    for query in ("mode=ro", "immutable=1"):
        engine = create_engine(f"sqlite:///file:{path}?{query}&uri=true")

        @event.listens_for(engine, "connect")
        def _query_only(dbapi_connection, _record):  # pragma: no cover - trivial
            dbapi_connection.execute("PRAGMA query_only=ON")

        try:
            with engine.connect() as conn:
                conn.exec_driver_sql("SELECT count(*) FROM sqlite_master").scalar()
            return engine
        except OperationalError:
            engine.dispose()
    raise UrlError(f"{path}: cannot be read (read-only, and SQLite cannot open it even as immutable)",
                   "not_writable")


def make_engine(url=None) -> Engine:
    """An engine for `url` (text or sqlalchemy URL; default the embedded SQLite file)."""
    url = url or default_url()
    is_sqlite = str(url).startswith("sqlite")
    if is_sqlite:
        kwargs = {"connect_args": {"timeout": backup.lock_timeout_s()}}
    elif str(url).startswith("postgresql"):
        # pre-ping: a connection the server dropped (restart, network) is replaced, not failed on
        kwargs = {"connect_args": {"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "gpudesk"},
                  "pool_pre_ping": True}
    else:
        kwargs = {}
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
    """Bring the schema to `revision` (default: the newest), once, whoever else is starting: the
    whole migration is one transaction under the upgrade lock, and a program that waited for it
    finds the schema done (Alembic reads the revision again inside the lock)."""
    found = current_revision(engine)
    if revision == "head" and found == HEAD_REVISION:
        return
    from alembic import command
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if found is not None and found not in {s.revision for s in ScriptDirectory.from_config(config).walk_revisions()}:
        raise SchemaError(f"The database was set up by a newer gpudesk (schema '{found}'; this one knows up to "
                          f"'{HEAD_REVISION}'). Install the newer gpudesk to use it; nothing was changed.")
    with engine.begin() as connection:
        if connection.dialect.name == "sqlite":
            # the write lock first: a second program creating or migrating the same file waits here
            # and then finds the schema done; and a kill mid-way leaves the old schema whole
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        hold_upgrade_lock(connection)
        config.attributes["connection"] = connection
        log.info("migrating the catalogue database to %s", revision)
        command.upgrade(config, revision)


def hold_upgrade_lock(connection) -> None:
    """On PostgreSQL, take the upgrade lock for the rest of `connection`'s transaction, waiting up to
    UPGRADE_WAIT_S for another program's migration or catalogue load; SchemaError when it takes
    longer. SQLite needs none: its write lock serialises writers (see migrate)."""
    if connection.dialect.name != "postgresql":
        return
    from sqlalchemy.exc import OperationalError

    connection.exec_driver_sql(f"SET LOCAL lock_timeout = '{int(UPGRADE_WAIT_S * 1000)}ms'")
    try:
        got = connection.execute(text("SELECT pg_try_advisory_xact_lock(:key)"), {"key": UPGRADE_LOCK_KEY}).scalar()
        if not got:
            log.info("another program is upgrading the shared catalogue; waiting up to %d s", UPGRADE_WAIT_S)
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": UPGRADE_LOCK_KEY})
    except OperationalError as exc:
        raise SchemaError(f"Another gpudesk has been upgrading the shared catalogue for over {UPGRADE_WAIT_S} s; "
                          f"try again in a few minutes. Nothing was changed.") from exc
    connection.exec_driver_sql("SET LOCAL lock_timeout = 0")
