"""A team catalogue: gpudesk's database on a PostgreSQL server that a team shares.

The URL lives in the settings without a password; the password comes from the system keyring
(the `keyring` library) or from the GPUDESK_DB_PASSWORD environment variable, never from a file.
This module turns the settings into a connectable URL, tests a connection and says what it found,
words a server's errors for people, and keeps a local copy of the team catalogue that opens
read-only when the server cannot be reached. The driver and keyring come with `gpudesk[team]`.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from gpudesk.core import paths

log = logging.getLogger(__name__)

ENV_PASSWORD = "GPUDESK_DB_PASSWORD"
KEYRING_SERVICE = "gpudesk"
COPY_BATCH = 2000  # rows per INSERT while writing the local copy
COPY_META = ("team_copy_of", "team_copy_at")  # catalogue_meta keys of a local copy


class TeamError(RuntimeError):
    """A team-catalogue setting that cannot be used; the message says which and what to do."""


class ServerUnreachable(TeamError):
    """The team catalogue's server cannot be reached now; `reason` says why in words."""

    def __init__(self, url: str, reason: str):
        self.url = url
        self.reason = reason
        super().__init__(f"The team catalogue at {display_url(url)} cannot be reached: {reason}.")


def driver_missing(url: str) -> TeamError:
    """The error for a server URL whose driver is not installed."""
    return TeamError(f"Cannot open {display_url(url)}: the PostgreSQL driver is not installed; install it with "
                     f"pip install \"gpudesk[team]\" (the installers include it).")


def is_server_url(url: str | None) -> bool:
    """Whether `url` names a database server (not the embedded SQLite file)."""
    return bool(url) and not str(url).startswith("sqlite")


def parse_url(url: str):
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url)
    except ArgumentError as exc:
        raise TeamError(f"'{url}' is not a database URL (expected postgresql+psycopg://user@host:5432/database)") \
            from exc


def display_url(url) -> str:
    """The URL as people may see it: never with a password."""
    if isinstance(url, str):  # (a sqlalchemy URL is used as it is: str() of it stands "***" in for the password)
        if not is_server_url(url):
            return url
        url = parse_url(url)
    return url._replace(password=None).render_as_string(hide_password=False)


def keyring_account(url) -> str:
    """The keyring entry of a server URL: one password per user, server and database."""
    u = parse_url(str(url))
    return f"{u.username or ''}@{u.host or 'localhost'}:{u.port or 5432}/{u.database or ''}"


# Where a server's password may come from, in the order they are tried, and how to set each.
PASSWORD_ORIGINS = (
    ("url", "the URL itself", "put it in the URL (postgresql+psycopg://user:password@host/db; not kept in settings)"),
    ("env", ENV_PASSWORD, f"set {ENV_PASSWORD} in the environment"),
    ("keyring", "the system keyring", "run gpudesk team set-password, or enter it in Preferences > Team catalogue"),
    ("driver", "PostgreSQL's own sources (PGPASSWORD, ~/.pgpass or PGPASSFILE, a PGSERVICE service file), or no "
               "password for trust, peer, certificate or GSS sign-in",
     "set PGPASSWORD, add a line host:port:database:user:password to ~/.pgpass (mode 0600), or name a service "
     "in PGSERVICE"),
)


def resolve_password(url: str | None, password_source: str = "keyring"):
    """The URL to connect with and where its password came from: the URL's own password, else
    GPUDESK_DB_PASSWORD whenever it is set, else the system keyring when there is one and it holds
    a password for this account (unless the settings say `none`), else nothing: the driver then
    reads PGPASSWORD, ~/.pgpass (PGPASSFILE) or a PGSERVICE service, or signs in without a
    password (trust, peer, certificates, GSS). SQLite URLs come back as they are."""
    if not is_server_url(url):
        return url, ""
    parsed = parse_url(url)
    if parsed.password:
        return parsed, "url"
    password = os.environ.get(ENV_PASSWORD)
    if password:
        return parsed.set(password=password), "env"
    if password_source == "keyring":
        ok, _why = keyring_status()
        if ok:
            import keyring

            stored = keyring.get_password(KEYRING_SERVICE, keyring_account(url))
            if stored:
                return parsed.set(password=stored), "keyring"
    return parsed, "driver"


def connect_url(url: str | None, password_source: str = "keyring"):
    """The URL to connect with (see `resolve_password`)."""
    return resolve_password(url, password_source)[0]


def origin_words(origin: str) -> str:
    return next((words for key, words, _how in PASSWORD_ORIGINS if key == origin), origin)


def no_password_help(password_source: str = "keyring") -> str:
    """What was tried, in order, and how to set each: for a server that asked for a password."""
    tried = [(words, how) for key, words, how in PASSWORD_ORIGINS if key != "keyring" or password_source == "keyring"]
    return "Tried, in this order: " + "; ".join(f"{i}. {words} ({how})" for i, (words, how) in enumerate(tried, 1))


def keyring_status() -> tuple[bool, str]:
    """Whether a usable system keyring is installed, and its name or why not."""
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        return False, "the keyring library is not installed (pip install \"gpudesk[team]\")"
    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring):
        return False, f"no system keyring is available on this computer; use {ENV_PASSWORD} instead"
    return True, type(backend).__name__


def keyring_password(url: str) -> str | None:
    ok, why = keyring_status()
    if not ok:
        raise TeamError(f"Cannot read the team catalogue's password: {why}.")
    import keyring

    return keyring.get_password(KEYRING_SERVICE, keyring_account(url))


def store_password(url: str, password: str) -> None:
    """Keep `password` for `url` in the system keyring (TeamError when there is none)."""
    ok, why = keyring_status()
    if not ok:
        raise TeamError(f"Cannot keep the password: {why}.")
    import keyring
    from keyring.errors import KeyringError

    try:
        keyring.set_password(KEYRING_SERVICE, keyring_account(url), password)
    except KeyringError as exc:
        raise TeamError(f"The system keyring refused the password: {exc}") from exc


def describe_error(exc: BaseException) -> str:
    """A database error in words: what is wrong and where, without a traceback."""
    text = str(getattr(exc, "orig", None) or exc)
    lowered = text.lower()
    rules = (
        ("no module named 'psycopg", "the PostgreSQL driver is not installed (pip install \"gpudesk[team]\")"),
        ("connection refused", "no server answers at {where} (connection refused)"),
        ("password authentication failed", "the server refused the password of {user}"),
        ("no password supplied", "the server asks for a password and none was given"),
        ("timeout expired", "the server at {where} did not answer in time"),
        ("could not translate host name", "the host name of {where} is unknown"),
        ("does not exist", "{first}"),
        ("server closed the connection", "the server closed the connection (it was stopped or restarted)"),
        ("terminating connection", "the server closed the connection (it was stopped or restarted)"),
        ("connection is closed", "the connection to the server was lost"),
        ("consuming input failed", "the connection to the server was lost"),
    )
    where = _where(text)
    user = _quoted_after(text, "for user") or "this user"
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    for needle, words in rules:
        if needle in lowered:
            return words.format(where=where, user=f"user '{user}'" if user != "this user" else user, first=first)
    return first


def connect_error(exc: BaseException, origin: str, password_source: str = "keyring") -> str:
    """A failed connection in words; a server that asked for a password and got none, or refused
    one from the driver's sources, also lists where passwords are looked for."""
    words = describe_error(exc)
    lowered = str(getattr(exc, "orig", None) or exc).lower()
    asked = "no password supplied" in lowered or ("password authentication failed" in lowered and origin == "driver")
    return f"Cannot connect: {words}." + (f" {no_password_help(password_source)}." if asked else "")


def _where(text: str) -> str:
    match = re.search(r'server at "([^"]+)"[^,]*, port (\d+)', text)
    if match:
        return f"{match.group(1)}:{match.group(2)}"
    return "the configured address"


def _quoted_after(text: str, marker: str) -> str | None:
    match = re.search(re.escape(marker) + r' "([^"]+)"', text)
    return match.group(1) if match else None


@dataclass
class Probe:
    """What a test connection found."""

    server: str = ""  # e.g. "PostgreSQL 15.18"
    user: str = ""
    role: str = ""  # in words: what this user may do with the catalogue
    schema: str | None = None  # the catalogue schema's revision, None when not set up yet
    catalogue: str | None = None  # the loaded catalogue's version
    rows: dict[str, int] = field(default_factory=dict)  # shared rows: quotes, user entries, measurements
    problems: list[str] = field(default_factory=list)
    password_from: str = ""  # where the password came from (or that the driver's own sources were used)

    def lines(self) -> list[str]:
        from gpudesk.core.catalogue.db import HEAD_REVISION

        out = [f"Server: {self.server}", f"Signed in as: {self.user} ({self.role})"]
        if self.password_from:
            out.append(f"Password from: {self.password_from}")
        if self.schema is None:
            out.append("Catalogue: not set up yet; the first gpudesk to open it creates it")
        else:
            state = "current" if self.schema == HEAD_REVISION else f"will be upgraded to {HEAD_REVISION}"
            out.append(f"Catalogue: {self.catalogue or 'not loaded'}, schema {self.schema} ({state})")
        if self.rows:
            out.append("Shared: " + ", ".join(f"{n} {what}" for what, n in self.rows.items()))
        return out + self.problems


def probe(url: str, password_source: str = "keyring") -> Probe:
    """Connect once and report the server, the user's rights and the catalogue found; raises
    TeamError with the problem in words when it cannot connect."""
    from sqlalchemy import inspect, text
    from sqlalchemy.exc import DBAPIError

    from gpudesk.core.catalogue.db import make_engine

    engine = None
    connect, origin = resolve_password(url, password_source)
    try:
        engine = make_engine(connect)
        with engine.connect() as conn:
            result = Probe(password_from=origin_words(origin) if origin else "")
            if conn.dialect.name == "postgresql":
                result.server = "PostgreSQL " + str(conn.exec_driver_sql("SHOW server_version").scalar()).split()[0]
                result.user = conn.exec_driver_sql("SELECT current_user").scalar()
                result.role = _role(conn)
            else:
                result.server, result.user, result.role = conn.dialect.name, "", "file on this computer"
            tables = set(inspect(conn).get_table_names())
            if "alembic_version" in tables:
                result.schema = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
            if "catalogue_meta" in tables:
                result.catalogue = conn.execute(text("SELECT value FROM catalogue_meta WHERE key = 'version'")).scalar()
            result.rows = _shared_rows(conn, tables)
            return result
    except DBAPIError as exc:
        raise TeamError(connect_error(exc, origin, password_source)) from exc
    except ImportError as exc:  # gpudesk without its [team] extra
        raise driver_missing(url) from exc
    finally:
        if engine is not None:
            engine.dispose()


def _role(conn) -> str:
    superuser, can_create = conn.exec_driver_sql(
        "SELECT rolsuper, has_schema_privilege(current_user, 'public', 'CREATE') FROM pg_roles "
        "WHERE rolname = current_user").one()
    if superuser:
        return "superuser: can set up, upgrade and edit the catalogue"
    if can_create:
        return "can set up, upgrade and edit the catalogue"
    writable = conn.exec_driver_sql(
        "SELECT to_regclass('public.price_observations') IS NOT NULL AND "
        "has_table_privilege(current_user, 'public.price_observations', 'INSERT')").scalar()
    return "can edit the catalogue, not upgrade it" if writable else "can read the catalogue only"


def _shared_rows(conn, tables: set[str]) -> dict[str, int]:
    from sqlalchemy import text

    out = {}
    if "price_observations" in tables:
        out["quotes"] = conn.execute(text("SELECT count(*) FROM price_observations WHERE kind = 'quote'")).scalar()
    if "accelerators" in tables:
        out["own entries"] = sum(conn.execute(text(f"SELECT count(*) FROM {t} WHERE origin <> 'bundled'")).scalar()
                                 for t in ("accelerators", "systems", "cloud_offerings"))  # noqa: S608 - fixed
    if "bench_measurements" in tables:
        out["measurements"] = conn.execute(text("SELECT count(*) FROM bench_measurements")).scalar()
    return out


# ------------------------------------------------------------------------------ local copy
def local_copy_path(url: str) -> Path:
    """Where the local copy of the team catalogue at `url` is kept (one per server and database)."""
    u = parse_url(url)
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{u.host or 'localhost'}_{u.port or 5432}_{u.database or ''}")
    return paths.data_dir() / "team-copies" / f"{name}.sqlite"


def save_local_copy(engine, url: str) -> Path:
    """Copy every table of the team catalogue into a local SQLite file, atomically (a reader sees the
    previous copy or the new one, never half of one). Returns the file."""
    from sqlalchemy import MetaData, select

    from gpudesk.core.catalogue import db, sync

    dest = local_copy_path(url)
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".partial")
    for leftover in (partial, Path(f"{partial}-wal"), Path(f"{partial}-shm")):
        leftover.unlink(missing_ok=True)
    local = db.make_engine(f"sqlite:///{partial}")
    try:
        db.migrate(local)
        tables = MetaData()
        tables.reflect(bind=local)  # every table the migrations made, the benchmarks' included
        with engine.connect() as src, local.begin() as dst:
            for table in tables.sorted_tables:
                if table.name == "alembic_version":
                    continue
                rows = src.execute(select(table)).mappings()
                while batch := rows.fetchmany(COPY_BATCH):
                    dst.execute(table.insert(), [dict(r) for r in batch])
            with _session(dst) as session:
                sync.set_meta(session, COPY_META[0], display_url(url))
                sync.set_meta(session, COPY_META[1], datetime.now(UTC).isoformat(timespec="seconds"))
                session.flush()
        with local.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        local.dispose()
    os.replace(partial, dest)
    for leftover in (Path(f"{partial}-wal"), Path(f"{partial}-shm")):
        leftover.unlink(missing_ok=True)
    log.info("local copy of the team catalogue %s written to %s", display_url(url), dest)
    return dest


def _session(connection):
    from sqlalchemy.orm import Session

    return Session(bind=connection)


def copy_time(path: Path) -> str | None:
    """When a local copy was taken (ISO time), or None when there is none."""
    import sqlite3

    if not path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT value FROM catalogue_meta WHERE key = ?", (COPY_META[1],)).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return row[0] if row else None
