"""A real PostgreSQL server for the team-catalogue tests, started by the suite itself.

The server runs from Debian's `postgresql` package (installed by .ci/run), in a temporary folder,
on a free loopback port, with password (SCRAM) authentication, and is stopped at the end. When the
suite runs as root (CI containers), the server runs as the `postgres` account the package made,
since PostgreSQL refuses to run as root. Missing binaries fail the tests with what to install:
these tests never skip.

Roles: `admin` (superuser, used only by these fixtures), `team` (the people's role: owns the
team databases) and `reader` (may only read). Each test gets a database of its own.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ADMIN_PASSWORD = "admin-secret"
TEAM_PASSWORD = "team-secret"
READER_PASSWORD = "reader-secret"


def _binaries() -> Path:
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda p: int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0)
    if candidates:
        return Path(candidates[-1]).parent
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    pytest.fail("PostgreSQL's server programs (initdb, pg_ctl) are not installed: install Debian's "
                "`postgresql` package (`apt-get install postgresql`; .ci/run does) to run the team tests")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PgServer:
    bindir: Path
    folder: Path
    port: int
    as_user: list[str]  # the command prefix that runs a server program as its owner

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def url(self, database: str, user: str = "team", password: str | None = None) -> str:
        secret = f":{password}" if password is not None else ""
        return f"postgresql+psycopg://{user}{secret}@127.0.0.1:{self.port}/{database}"

    def _ctl(self, *args: str) -> None:
        subprocess.run([*self.as_user, str(self.bindir / "pg_ctl"), "-D", str(self.data), *args],
                       check=True, capture_output=True, timeout=60)

    def start(self) -> None:
        options = (f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off "
                   f"-c full_page_writes=off -c max_connections=60")
        self._ctl("-l", str(self.folder / "server.log"), "-o", options, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        self._ctl("-m", mode, "-w", "stop")

    def admin(self, sql: str, database: str = "postgres") -> None:
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=self.port, user="admin", password=ADMIN_PASSWORD,
                             dbname=database, autocommit=True) as conn:
            conn.execute(sql)

    def query(self, sql: str, database: str):
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=self.port, user="admin", password=ADMIN_PASSWORD,
                             dbname=database, autocommit=True) as conn:
            return conn.execute(sql).fetchall()


def _make_server() -> PgServer:
    bindir = _binaries()
    folder = Path(tempfile.mkdtemp(prefix="gpudesk-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(folder, "postgres")
    pwfile = folder / "pw"
    pwfile.write_text(ADMIN_PASSWORD + "\n")
    if as_user:
        shutil.chown(pwfile, "postgres")
    subprocess.run([*as_user, str(bindir / "initdb"), "-D", str(folder / "data"), "-U", "admin",
                    f"--pwfile={pwfile}", "--auth-local=scram-sha-256", "--auth-host=scram-sha-256",
                    "-E", "UTF8", "--no-sync"], check=True, capture_output=True, timeout=120)
    server = PgServer(bindir, folder, _free_port(), as_user)
    server.start()
    server.admin(f"CREATE ROLE team LOGIN PASSWORD '{TEAM_PASSWORD}'")
    server.admin(f"CREATE ROLE reader LOGIN PASSWORD '{READER_PASSWORD}'")
    return server


@pytest.fixture(scope="session")
def pg_server():
    server = _make_server()
    yield server
    try:
        server.stop()
    finally:
        shutil.rmtree(server.folder, ignore_errors=True)


@pytest.fixture
def own_pg_server():
    """A server of the test's own, for tests that stop it."""
    server = _make_server()
    yield server
    try:
        server.stop("immediate")
    except subprocess.CalledProcessError:
        pass  # already stopped by the test
    finally:
        shutil.rmtree(server.folder, ignore_errors=True)


_numbers = itertools.count(1)


def new_database(server: PgServer) -> str:
    name = f"team_{os.getpid()}_{next(_numbers)}"
    server.admin(f"CREATE DATABASE {name} OWNER team")
    server.admin("GRANT USAGE ON SCHEMA public TO reader", database=name)
    server.admin("ALTER DEFAULT PRIVILEGES FOR ROLE team IN SCHEMA public GRANT SELECT ON TABLES TO reader",
                 database=name)
    return name


@pytest.fixture
def team_url(pg_server, monkeypatch):
    """A fresh team database; the password comes from GPUDESK_DB_PASSWORD, as a team member's would."""
    name = new_database(pg_server)
    monkeypatch.setenv("GPUDESK_DB_PASSWORD", TEAM_PASSWORD)
    yield pg_server.url(name)
    deadline = time.monotonic() + 10
    while True:  # a client of the test may still be closing its connections
        try:
            pg_server.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
