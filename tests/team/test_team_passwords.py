"""Where a team catalogue's password comes from, on the real server the suite starts (issue 31): a
server that trusts the loopback needs none, `.pgpass` (through PGPASSFILE) and PGPASSWORD work as
PostgreSQL users expect, `gpudesk team check` names the source it used, and a server that asks for
a password and gets none says which sources were tried."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpudesk.core.catalogue import open_catalogue, team
from gpudesk.core.settings import Settings, save_settings

from .conftest import new_database

ROOT = Path(__file__).resolve().parents[2]
MD5_PASSWORD = "pgpass-secret"


@pytest.fixture(scope="module")
def auth_server(pg_server):
    """The suite's server with two more roles: `trusty`, trusted on the loopback, and `hasher`,
    signing in with md5; their lines go first in pg_hba.conf, and the server reloads it."""
    pg_server.admin("CREATE ROLE trusty LOGIN")
    pg_server.admin(f"CREATE ROLE hasher LOGIN PASSWORD '{MD5_PASSWORD}'")
    hba = pg_server.data / "pg_hba.conf"
    before = hba.read_text()
    lines = "host all trusty 127.0.0.1/32 trust\nhost all hasher 127.0.0.1/32 md5\n"
    _as_owner(pg_server, ["sh", "-c", f"printf '{lines}' | cat - {hba} > {hba}.new && mv {hba}.new {hba}"])
    pg_server._ctl("reload")
    yield pg_server
    _as_owner(pg_server, ["sh", "-c", f"cat > {hba}"], before)
    pg_server._ctl("reload")


def _as_owner(server, argv, stdin: str | None = None) -> None:
    subprocess.run([*server.as_user, *argv], input=stdin, text=True, check=True, capture_output=True, timeout=30)


@pytest.fixture
def no_password_anywhere(monkeypatch, tmp_path):
    """No GPUDESK_DB_PASSWORD, no keyring, no PGPASSWORD, and a .pgpass that is empty."""
    import keyring
    from keyring.backends import fail

    for name in (team.ENV_PASSWORD, "PGPASSWORD", "PGSERVICE"):
        monkeypatch.delenv(name, raising=False)
    empty = tmp_path / "empty.pgpass"
    empty.write_text("")
    empty.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(empty))
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    save_settings(Settings(password_source="keyring"))
    yield
    keyring.set_keyring(previous)


def _database(server, owner: str) -> str:
    name = new_database(server)
    server.admin(f"ALTER DATABASE {name} OWNER TO {owner}")
    server.admin(f"GRANT ALL ON SCHEMA public TO {owner}", database=name)
    return name


def _check(url: str, home: Path, env: dict) -> subprocess.CompletedProcess:
    env = {**{k: v for k, v in os.environ.items() if k not in (team.ENV_PASSWORD, "PGPASSWORD")}, **env,
           "GPUDESK_HOME": str(home), "PYTHONPATH": str(ROOT), "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    return subprocess.run([sys.executable, "-m", "gpudesk", "--database-url", url, "team", "check"], env=env,
                          capture_output=True, text=True, timeout=240)


def test_a_server_that_trusts_the_loopback_needs_no_password(auth_server, no_password_anywhere, tmp_path):
    url = auth_server.url(_database(auth_server, "trusty"), user="trusty")
    assert team.resolve_password(url) == (team.parse_url(url), "driver")
    catalogue = open_catalogue(url)
    try:
        assert catalogue.get("accelerators", "h100-sxm5-80gb") is not None
    finally:
        catalogue.close()
    found = team.probe(url)
    assert found.user == "trusty" and found.password_from.startswith("PostgreSQL's own sources")
    checked = _check(url, tmp_path, {"PGPASSFILE": os.environ["PGPASSFILE"]})
    assert checked.returncode == 0, checked.stderr
    assert "Password from: PostgreSQL's own sources" in checked.stdout


def test_md5_through_pgpass_and_pgpassword(auth_server, no_password_anywhere, tmp_path, monkeypatch):
    name = _database(auth_server, "hasher")
    url = auth_server.url(name, user="hasher")
    with pytest.raises(team.TeamError) as err:  # asked for a password, none anywhere
        open_catalogue(url)
    message = str(err.value)
    assert "the server asks for a password and none was given" in message or "refused the password" in message
    assert "Tried, in this order: 1. the URL itself" in message and "PGPASSWORD, ~/.pgpass or PGPASSFILE" in message
    assert "Traceback" not in message
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"127.0.0.1:{auth_server.port}:{name}:hasher:{MD5_PASSWORD}\n")
    pgpass.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    assert team.probe(url).user == "hasher"
    checked = _check(url, tmp_path, {"PGPASSFILE": str(pgpass)})
    assert checked.returncode == 0, checked.stderr
    assert "Password from: PostgreSQL's own sources" in checked.stdout
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "none"))
    monkeypatch.setenv("PGPASSWORD", MD5_PASSWORD)
    catalogue = open_catalogue(url)
    try:
        assert catalogue.engine.dialect.name == "postgresql"
    finally:
        catalogue.close()


def test_gpudesk_db_password_counts_whenever_it_is_set_and_check_says_so(auth_server, no_password_anywhere, tmp_path):
    from .conftest import TEAM_PASSWORD

    url = auth_server.url(new_database(auth_server))  # the scram-sha-256 role of the other team tests
    checked = _check(url, tmp_path, {team.ENV_PASSWORD: TEAM_PASSWORD})
    assert checked.returncode == 0, checked.stderr
    assert "Password from: GPUDESK_DB_PASSWORD" in checked.stdout
    wrong = _check(url, tmp_path, {team.ENV_PASSWORD: "wrong"})
    assert wrong.returncode != 0 and "refused the password of user 'team'" in wrong.stderr
    assert "Traceback" not in wrong.stderr
