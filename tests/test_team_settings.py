"""Team-catalogue settings without a server: where the password comes from, what is refused, and
how faults and provenance read (the server tests are in tests/team)."""

from __future__ import annotations

import json

import pytest

from gpudesk.core.catalogue import team
from gpudesk.core.catalogue.reading import ConflictError, provenance
from gpudesk.core.settings import Settings, SettingsError, load_settings, save_settings, settings_path

URL = "postgresql+psycopg://alice@db.example.org:6543/procurement"


class MemoryKeyring:
    """A keyring backend kept in memory (this test machine has no system keyring)."""

    priority = 1

    def __init__(self):
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service, username):
        return self.store.get((service, username))

    def set_password(self, service, username, password):
        self.store[(service, username)] = password

    def delete_password(self, service, username):
        self.store.pop((service, username), None)


@pytest.fixture
def memory_keyring(monkeypatch):
    import keyring
    from keyring.backend import KeyringBackend

    backend_class = type("MemoryBackend", (MemoryKeyring, KeyringBackend), {})
    backend = backend_class()
    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


def test_a_url_holding_a_password_is_never_saved_in_the_settings_file():
    with pytest.raises(SettingsError, match="database_url: holds a password in plain text"):
        save_settings(Settings(database_url="postgresql+psycopg://alice:s3cret@db/x"))
    assert not settings_path().exists()
    save_settings(Settings(database_url=URL, password_source="keyring"))  # without one: fine
    assert json.loads(settings_path().read_text())["database_url"] == URL


def test_a_settings_file_with_a_password_or_a_bad_source_is_reported_and_not_used():
    settings_path().parent.mkdir(parents=True, exist_ok=True)
    settings_path().write_text(json.dumps({"database_url": "postgresql://bob:pw@db/x", "password_source": "file"}))
    settings = load_settings()
    assert settings.database_url == "" and settings.password_source == "keyring"
    assert any("holds a password" in p for p in settings.problems)
    assert any("'file' is not one of keyring, env, none" in p for p in settings.problems)


def test_the_password_sources_in_the_order_postgresql_users_expect(monkeypatch, memory_keyring):
    monkeypatch.delenv(team.ENV_PASSWORD, raising=False)
    # nothing anywhere: no password, so the driver reads PGPASSWORD, ~/.pgpass or a service, or signs in without
    url, origin = team.resolve_password(URL, "keyring")
    assert url.password is None and origin == "driver"
    # the keyring when it holds one for this user, server and database
    team.store_password(URL, "from-keyring")
    assert memory_keyring.store == {("gpudesk", "alice@db.example.org:6543/procurement"): "from-keyring"}
    assert team.resolve_password(URL, "keyring")[0].password == "from-keyring"
    assert team.resolve_password(URL.replace("/procurement", "/lab"), "keyring")[1] == "driver"
    assert team.resolve_password(URL, "none") == (team.parse_url(URL), "driver")  # settings: skip the keyring
    # GPUDESK_DB_PASSWORD whenever it is set, whatever the settings say
    monkeypatch.setenv(team.ENV_PASSWORD, "from-env")
    for source in ("keyring", "env", "none"):
        url, origin = team.resolve_password(URL, source)
        assert (url.password, origin) == ("from-env", "env") and url.host == "db.example.org" and url.port == 6543
    # the URL's own password first of all
    own = URL.replace("alice@", "alice:in-url@")
    assert team.resolve_password(own, "keyring")[0].password == "in-url"
    assert team.resolve_password(own, "keyring")[1] == "url"
    assert team.connect_url("sqlite:///x.db", "env") == "sqlite:///x.db"  # a file needs none


def test_a_server_that_asks_for_a_password_lists_where_gpudesk_looked():
    error = RuntimeError('connection failed: FATAL:  password authentication failed for user "alice"')
    text = team.connect_error(error, "driver")
    assert text.startswith("Cannot connect: the server refused the password of user 'alice'. Tried, in this order: "
                           "1. the URL itself")
    assert "2. GPUDESK_DB_PASSWORD (set GPUDESK_DB_PASSWORD" in text and "3. the system keyring" in text
    assert "PGPASSWORD, ~/.pgpass or PGPASSFILE" in text
    none = team.connect_error(RuntimeError("fe_sendauth: no password supplied"), "driver", "none")
    assert "the server asks for a password and none was given" in none and "system keyring" not in none
    # a wrong password from a source gpudesk chose is only that
    assert team.connect_error(error, "env") == "Cannot connect: the server refused the password of user 'alice'."


def test_without_a_system_keyring_the_message_points_to_the_environment_variable(monkeypatch):
    import keyring
    from keyring.backends import fail

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        assert team.keyring_status() == (False, "no system keyring is available on this computer; use "
                                                "GPUDESK_DB_PASSWORD instead")
        with pytest.raises(team.TeamError, match="use GPUDESK_DB_PASSWORD instead"):
            team.store_password(URL, "x")
    finally:
        keyring.set_keyring(previous)


def test_urls_are_shown_without_their_password_and_bad_ones_are_named():
    assert team.display_url("postgresql+psycopg://alice:pw@db/x") == "postgresql+psycopg://alice@db/x"
    with pytest.raises(team.TeamError, match="'not a url' is not a database URL"):
        team.connect_url("not a url", "none")


@pytest.mark.parametrize(("message", "words"), [
    ('connection failed: connection to server at "10.0.0.5", port 5432 failed: Connection refused',
     "no server answers at 10.0.0.5:5432 (connection refused)"),
    ('connection failed: connection to server at "10.0.0.5", port 5432 failed: FATAL:  password authentication '
     'failed for user "alice"', "the server refused the password of user 'alice'"),
    ("connection timeout expired", "the server at the configured address did not answer in time"),
    ('FATAL:  database "lab" does not exist', 'FATAL:  database "lab" does not exist'),
    ("server closed the connection unexpectedly", "the server closed the connection (it was stopped or restarted)"),
])
def test_server_faults_are_said_in_words(message, words):
    assert team.describe_error(RuntimeError(message)) == words


def test_provenance_says_who_added_and_changed_a_row():
    shipped = {"added_by": "", "updated_by": "", "version": 3}
    assert provenance(shipped) == ""
    added = {"added_by": "alice", "added_at": "2026-11-20T09:15:00+00:00", "updated_by": "alice",
             "updated_at": "2026-11-20T09:15:00+00:00", "version": 1}
    assert provenance(added) == "Added by alice on 2026-11-20 09:15 UTC"
    changed = {**added, "updated_by": "bob", "updated_at": "2026-11-21T10:00:00+00:00", "version": 2}
    assert provenance(changed) == ("Added by alice on 2026-11-20 09:15 UTC; changed by bob on 2026-11-21 10:00 UTC "
                                   "(version 2)")


def test_a_conflict_lists_only_the_fields_where_the_two_differ():
    theirs = {"id": "q1", "usd": 23900.0, "date": "2026-11-20", "notes": None, "updated_by": "alice",
              "updated_at": "2026-11-21T10:00:00+00:00", "version": 3}
    conflict = ConflictError("prices", theirs, {"id": "q1", "usd": "25100", "date": "2026-11-20", "notes": ""}, 2)
    assert conflict.fields == ["usd"]
    assert str(conflict).startswith("alice saved 'q1' at 2026-11-21 10:00 UTC after you opened it (version 3, "
                                    "yours was 2); nothing was saved")
    assert ConflictError("prices", theirs, {"id": "q1", "usd": "23900"}, 2).fields == []


def test_the_name_recorded_with_edits_is_the_settings_author_else_the_login(monkeypatch):
    from gpudesk.core.settings import current_user

    monkeypatch.setattr("getpass.getuser", lambda: "jdoe")
    assert current_user(Settings(author="")) == "jdoe"
    assert current_user(Settings(author="  Dana Ortiz ")) == "Dana Ortiz"
    assert len(current_user(Settings(author="x" * 300))) == 120

    def no_login():
        raise OSError("no login name")

    monkeypatch.setattr("getpass.getuser", no_login)
    assert current_user(Settings(author="")) == "unknown"


def test_without_the_team_extra_a_server_url_says_what_to_install(monkeypatch):
    import sys

    from gpudesk.core.catalogue import open_catalogue

    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if gpudesk[team] were not installed
    monkeypatch.setenv(team.ENV_PASSWORD, "x")
    save_settings(Settings(password_source="env"))
    with pytest.raises(team.TeamError, match=r'driver is not installed; install it with pip install "gpudesk\[team\]"'):
        open_catalogue("postgresql+psycopg://alice@127.0.0.1:9/db")
    with pytest.raises(team.TeamError, match="PostgreSQL driver is not installed"):
        team.probe(URL, "env")
