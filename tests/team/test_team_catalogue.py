"""The team catalogue on a real PostgreSQL server (see conftest.py): set-up and upgrades, shared
quotes and measurements with who added them, concurrent edits, and a server that goes away."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import text

from gpudesk.core.catalogue import db, open_catalogue, team
from gpudesk.core.catalogue.reading import ConflictError, EditError
from gpudesk.core.catalogue.service import Catalogue, open_local_copy
from gpudesk.core.settings import Settings, save_settings
from tests.team.conftest import TEAM_PASSWORD, new_database

pytestmark = pytest.mark.team

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "tests" / "data" / "bench"


@pytest.fixture(autouse=True)
def _env_password(gpudesk_home):
    """Team members here keep the password in GPUDESK_DB_PASSWORD (no system keyring on CI)."""
    save_settings(Settings(password_source="env", author="alice"))


def _open_as(url: str, user: str) -> Catalogue:
    catalogue = open_catalogue(url)
    catalogue.user = user
    return catalogue


# ------------------------------------------------------------------ set-up and upgrades
def test_an_empty_server_database_is_set_up_to_the_models_schema_and_loaded(team_url):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    import gpudesk.core.benchmarks.models  # noqa: F401
    from gpudesk.core.storage import Base

    catalogue = open_catalogue(team_url)
    try:
        assert db.current_revision(catalogue.engine) == db.HEAD_REVISION
        assert catalogue.engine.dialect.name == "postgresql"
        with catalogue.engine.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []
        h100 = catalogue.get("accelerators", "h100-sxm5-80gb")
        assert h100 is not None and h100["memory_gb"] == 80
        assert h100["added_by"] == "" and h100["version"] >= 1  # the shipped catalogue: added by nobody
    finally:
        catalogue.close()


def test_a_database_of_the_previous_release_is_upgraded_keeping_its_rows(pg_server, team_url):
    engine = db.make_engine(team.connect_url(team_url, "env"))
    db.migrate(engine, "0003_models_and_catalogue")
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO price_observations (id, item, kind, usd, date, origin, updated_at, "
                          "field_sources) VALUES ('quote-old', 'h100-sxm5-80gb', 'quote', 25000, "
                          "'2026-01-05', 'user_added', '2026-01-05T10:00:00', '{}')"))
    engine.dispose()
    catalogue = open_catalogue(team_url)
    try:
        assert db.current_revision(catalogue.engine) == db.HEAD_REVISION
        old = catalogue.get("prices", "quote-old")
        assert old["usd"] == 25000 and old["version"] == 1 and old["added_by"] == ""
        assert catalogue.get("accelerators", "h100-sxm5-80gb") is not None  # loaded after the upgrade
    finally:
        catalogue.close()


_OPEN_SCRIPT = """
import logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s %(message)s")
from gpudesk.core.catalogue import open_catalogue
c = open_catalogue(sys.argv[1])
print(len(c.items("accelerators")))
c.close()
"""


def test_an_upgrade_racing_other_clients_runs_once_and_they_all_open(pg_server, team_url, gpudesk_home):
    engine = db.make_engine(team.connect_url(team_url, "env"))
    db.migrate(engine, "0003_models_and_catalogue")
    engine.dispose()
    env = {**os.environ, "GPUDESK_HOME": str(gpudesk_home), "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", _OPEN_SCRIPT, team_url], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    results = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [err[-2000:] for _, err in results]
    counts = {int(out.strip()) for out, _ in results}
    assert len(counts) == 1 and counts.pop() > 50  # every client sees the same, whole catalogue
    upgrades = sum(err.count("Running upgrade 0003_models_and_catalogue -> 0004_team_audit") for _, err in results)
    assert upgrades == 1
    loads = pg_server.query("SELECT count(*) FROM accelerators WHERE id = 'h100-sxm5-80gb'",
                            team_url.rsplit("/", 1)[1])
    assert loads == [(1,)]


def test_a_client_waiting_too_long_for_an_upgrade_is_told(pg_server, team_url, monkeypatch):
    import psycopg

    monkeypatch.setattr(db, "UPGRADE_WAIT_S", 1)
    name = team_url.rsplit("/", 1)[1]
    with psycopg.connect(host="127.0.0.1", port=pg_server.port, user="team", password=TEAM_PASSWORD,
                         dbname=name) as holder:
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (db.UPGRADE_LOCK_KEY,))  # another program upgrading
        with pytest.raises(db.SchemaError, match="upgrading the shared catalogue"):
            open_catalogue(team_url)
    assert pg_server.query("SELECT count(*) FROM pg_tables WHERE tablename = 'accelerators'", name) == [(0,)]


def test_a_schema_from_a_newer_gpudesk_is_refused_untouched(team_url):
    catalogue = open_catalogue(team_url)
    with catalogue.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '0099_future'"))
    catalogue.close()
    with pytest.raises(db.SchemaError, match="newer gpudesk"):
        open_catalogue(team_url)


# ------------------------------------------------------------------ sharing, attributed
def test_quotes_added_by_one_person_are_seen_by_another_with_who_and_when(team_url):
    alice, bob = _open_as(team_url, "alice"), _open_as(team_url, "bob")
    try:
        bob.items("prices")  # bob has read the prices before alice adds her quote
        quote = alice.add_price_quote("h100-sxm5-80gb", "24500", when="2026-11-20", supplier="Acme")
        assert quote["added_by"] == "alice" and quote["updated_by"] == "alice"
        bob.refresh()
        seen = bob.get("prices", quote["id"])
        assert seen["usd"] == 24500 and seen["added_by"] == "alice" and seen["added_at"][:4] == "2026"
        source = bob.get("sources", seen["source"])
        assert source["title"] == "Quote from Acme" and source["added_by"] == "alice"
    finally:
        alice.close()
        bob.close()


def test_two_people_editing_one_row_the_second_is_told_and_shown_both(team_url):
    alice, bob = _open_as(team_url, "alice"), _open_as(team_url, "bob")
    try:
        quote = alice.add_price_quote("h100-sxm5-80gb", "24500", when="2026-11-20", supplier="Acme")
        read_version = quote["version"]
        bobs_copy = bob.get("prices", quote["id"])  # both forms open on the same version
        alice.update_item("prices", quote["id"], {"usd": "23900"}, expected_version=read_version)
        with pytest.raises(ConflictError) as caught:
            bob.update_item("prices", quote["id"], {"usd": "25100"}, expected_version=bobs_copy["version"])
        conflict = caught.value
        assert conflict.theirs["usd"] == 23900 and conflict.theirs["updated_by"] == "alice"
        assert conflict.yours["usd"] == "25100" and conflict.fields == ["usd"]
        assert "alice saved" in str(conflict) and "nothing was saved" in str(conflict)
        bob.refresh()
        assert bob.get("prices", quote["id"])["usd"] == 23900  # alice's value stands
        kept = bob.update_item("prices", quote["id"], {"usd": "25100"}, expected_version=conflict.theirs["version"])
        assert kept["usd"] == 25100 and kept["updated_by"] == "bob" and kept["added_by"] == "alice"
        assert kept["version"] == conflict.theirs["version"] + 1
    finally:
        alice.close()
        bob.close()


def test_simultaneous_saves_of_one_row_never_both_win(team_url):
    """Many saves racing on threads from one starting version: exactly one is written."""
    people = [_open_as(team_url, f"user{i}") for i in range(4)]
    try:
        quote = people[0].add_price_quote("h100-sxm5-80gb", "20000", when="2026-11-20")
        start = threading.Barrier(len(people))
        outcomes: list[str] = []

        def save(i: int) -> None:
            start.wait()
            try:
                people[i].update_item("prices", quote["id"], {"usd": str(21000 + i)}, expected_version=quote["version"])
                outcomes.append("saved")
            except EditError:
                outcomes.append("refused")

        threads = [threading.Thread(target=save, args=(i,)) for i in range(len(people))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert sorted(outcomes) == ["refused"] * 3 + ["saved"]
        people[0].refresh()
        final = people[0].get("prices", quote["id"])
        assert final["version"] == quote["version"] + 1 and final["usd"] in {21000, 21001, 21002, 21003}
    finally:
        for p in people:
            p.close()


@pytest.mark.parametrize("hash_beside", [False, True], ids=["hashed-first", "hashed-beside"])
def test_imported_measurements_are_shared_with_who_imported_them(team_url, monkeypatch, hash_beside):
    """Also with the file hashed beside its import: its import row gets the SHA-256 on the server
    before the commit, and the same file from another desk is recognised by it."""
    from gpudesk.core.benchmarks import store
    from gpudesk.core.benchmarks.calibration import current_calibrations

    if hash_beside:
        monkeypatch.setattr(store, "HASH_BESIDE_BYTES", 1)
    alice, bob = _open_as(team_url, "alice"), _open_as(team_url, "bob")
    try:
        files = sorted((BENCH / "llama-bench").glob("*.jsonl"))[:1] or sorted((BENCH / "llama-bench").iterdir())[:1]
        empty = store.data_revision(bob)
        assert empty[0] == 0 and current_calibrations(bob) == ()  # calibration reads a server too
        report = store.import_files(alice, files)
        stored = sum(f.stored for f in report.files)
        assert stored > 0
        rows = store.stored_measurements(bob)
        assert len(rows) == stored
        assert {i["imported_by"] for i in store.imports(bob)} == {"alice"}
        assert store.data_revision(bob) != empty and store.data_revision(bob)[0] == stored
        again = store.import_files(bob, files)  # the same file from the other desk: recognised, not doubled
        assert sum(f.stored for f in again.files) == 0
        assert [f.status for f in again.files] == ["already imported"] * len(files)
        assert store.count_measurements(alice) == stored
    finally:
        alice.close()
        bob.close()


@pytest.mark.parametrize("hash_beside", [False, True], ids=["hashed-first", "hashed-beside"])
def test_the_same_file_imported_at_the_same_moment_from_two_desks_is_stored_once(team_url, monkeypatch,
                                                                                hash_beside):
    """Bob's import of a file commits after Alice's import looked for it and before hers commits:
    the server's unique file hash refuses hers, and she is told Bob imported it, not that it failed."""
    import hashlib

    from gpudesk.core.benchmarks import store

    path = sorted((BENCH / "llama-bench").glob("*.jsonl"))[0]
    alice, bob = _open_as(team_url, "alice"), _open_as(team_url, "bob")
    try:
        looked_for = "_may_be_imported" if hash_beside else "_already_imported"
        real = getattr(store, looked_for)

        def bob_imports_it(*_args):  # right after Alice's import looked: Bob's runs (the usual way), commits
            monkeypatch.setattr(store, looked_for, real)
            assert store.import_files(bob, [path]).files[0].stored > 0
            return False

        monkeypatch.setattr(store, "HASH_BESIDE_BYTES", 1 if hash_beside else 1 << 40)
        monkeypatch.setattr(store, looked_for, bob_imports_it)
        f = store.import_files(alice, [path]).files[0]
        assert (f.status, f.stored, f.import_id) == ("already imported", 0, None)
        assert "another program imported this file at the same moment" in f.problems[-1].message
        assert [(i["imported_by"], i["source_file"]) for i in store.imports(alice)] == [("bob", path.name)]
        with alice.engine.connect() as conn:
            assert conn.execute(text("SELECT file_hash FROM bench_imports")).scalars().all() == \
                [hashlib.sha256(path.read_bytes()).hexdigest()]
    finally:
        alice.close()
        bob.close()


def test_measurements_of_the_one_table_layout_move_to_setups_on_a_server(team_url):
    """Migration 0005 on PostgreSQL, with rows: down to the one-table layout and up again keeps every
    value and id, and the sequences go on after the ids it copied (the next import stores)."""
    from alembic import command
    from alembic.config import Config

    from gpudesk.core.benchmarks import store

    files = [BENCH / "llama-bench" / "jimliddle_AppleM5Max_metal.jsonl", BENCH / "sglang"]
    files = [f for path in files for f in ([path] if path.is_file() else sorted(path.iterdir()))]
    alice = _open_as(team_url, "alice")
    try:
        store.import_files(alice, files[:-1])
        before = store.stored_measurements(alice)
    finally:
        alice.close()
    engine = db.make_engine(team.connect_url(team_url, "env"))
    config = Config()
    config.set_main_option("script_location", str(db.MIGRATIONS_DIR))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0004_team_audit")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM bench_measurements")).scalar() == len(before)
    engine.dispose()
    alice = _open_as(team_url, "alice")  # upgrades
    try:
        assert [m.to_json() for m in store.stored_measurements(alice)] == [m.to_json() for m in before]
        report = store.import_files(alice, files[-1:])
        assert report.ok and report.files[0].stored > 0
        assert store.count_measurements(alice) == len(before) + report.files[0].stored
    finally:
        alice.close()


# ------------------------------------------------------------------ connection and rights
def test_test_connection_reports_server_user_role_and_catalogue(pg_server, team_url):
    before = team.probe(team_url, "env")
    assert before.server.startswith("PostgreSQL 1") and before.user == "team"
    assert before.schema is None and "can set up" in before.role
    assert any("not set up yet" in line for line in before.lines())
    open_catalogue(team_url).close()
    after = team.probe(team_url, "env")
    assert after.schema == db.HEAD_REVISION and after.catalogue
    assert after.rows["quotes"] == 0 and after.rows["measurements"] == 0
    reader_url = pg_server.url(team_url.rsplit("/", 1)[1], user="reader", password="reader-secret")
    assert team.probe(reader_url, "none").role == "can read the catalogue only"


def test_a_wrong_password_and_a_missing_server_are_said_in_words(pg_server, team_url, monkeypatch):
    monkeypatch.setenv("GPUDESK_DB_PASSWORD", "wrong")
    with pytest.raises(team.TeamError, match="refused the password of user 'team'"):
        team.probe(team_url, "env")
    with pytest.raises(team.TeamError, match="refused the password") as refused:  # reached: not "unreachable",
        open_catalogue(team_url)  # so no read-only local copy is offered for a wrong password
    assert not isinstance(refused.value, team.ServerUnreachable)
    monkeypatch.setenv("GPUDESK_DB_PASSWORD", TEAM_PASSWORD)
    nowhere = team_url.replace(f":{pg_server.port}/", ":9/")
    with pytest.raises(team.ServerUnreachable, match=r"no server answers at 127.0.0.1:9 \(connection refused\)"):
        open_catalogue(nowhere)


def test_a_read_only_role_can_read_but_not_write(pg_server, team_url):
    open_catalogue(team_url).close()
    name = team_url.rsplit("/", 1)[1]
    reader = Catalogue.open(pg_server.url(name, user="reader", password="reader-secret"))
    try:
        assert reader.get("accelerators", "h100-sxm5-80gb") is not None
        with pytest.raises(EditError, match=r"may not change the catalogue \(permission denied\)"):
            reader.add_price_quote("h100-sxm5-80gb", "1")
    finally:
        reader.close()


# ------------------------------------------------------------------ the server goes away
def test_an_edit_while_the_server_is_down_is_refused_in_words_and_kept_for_later(own_pg_server, gpudesk_home,
                                                                                   monkeypatch):
    monkeypatch.setenv("GPUDESK_DB_PASSWORD", TEAM_PASSWORD)
    url = own_pg_server.url(new_database(own_pg_server))
    catalogue = _open_as(url, "alice")
    try:
        copy = team.save_local_copy(catalogue.engine, url)
        assert copy.is_file() and team.copy_time(copy)
        own_pg_server.stop("immediate")
        with pytest.raises(EditError, match="Nothing was saved") as caught:
            catalogue.add_price_quote("h100-sxm5-80gb", "24000", supplier="Acme")
        assert "closed the connection" in str(caught.value) or "no server answers" in str(caught.value)
        with pytest.raises(team.ServerUnreachable, match="connection refused"):
            open_catalogue(url)
        offline = open_local_copy(url)
        assert offline.read_only and offline.offline_from.endswith(url.rsplit("/", 1)[1])
        assert offline.get("accelerators", "h100-sxm5-80gb")["memory_gb"] == 80
        offline.close()
        own_pg_server.start()
        again = catalogue.add_price_quote("h100-sxm5-80gb", "24000", supplier="Acme")  # pool reconnects
        assert again["added_by"] == "alice"
    finally:
        catalogue.close()


_IMPORT_SCRIPT = """
import sys
from pathlib import Path
from gpudesk.core.catalogue import open_catalogue
from gpudesk.core.benchmarks import store
c = open_catalogue(sys.argv[1])
report = store.import_files(c, [Path(sys.argv[2])])
print("STORED", sum(f.stored for f in report.files))
"""


def test_the_server_stopped_mid_import_leaves_nothing_half_written(own_pg_server, gpudesk_home, tmp_path,
                                                                     monkeypatch):
    monkeypatch.setenv("GPUDESK_DB_PASSWORD", TEAM_PASSWORD)
    name = new_database(own_pg_server)
    url = own_pg_server.url(name)
    open_catalogue(url).close()
    big = tmp_path / "llama-bench-big.jsonl"
    _write_llama_bench(big, 20000)
    env = {**os.environ, "GPUDESK_HOME": str(gpudesk_home), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", _IMPORT_SCRIPT, url, str(big)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not own_pg_server.query("SELECT count(*) FROM pg_stat_activity WHERE query ILIKE "
                                  "'INSERT INTO bench_measurements%'", name)[0][0]:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    own_pg_server.stop("immediate")  # mid-import: rows of the file have been sent, not committed
    out, err = proc.communicate(timeout=120)
    assert "STORED 20000" not in out
    own_pg_server.start()
    imports = own_pg_server.query("SELECT count(*) FROM bench_imports", name)[0][0]
    rows = own_pg_server.query("SELECT count(*) FROM bench_measurements", name)[0][0]
    assert (imports, rows) == (0, 0)
    catalogue = _open_as(url, "alice")  # and the file imports whole afterwards
    try:
        from gpudesk.core.benchmarks import store

        report = store.import_files(catalogue, [big])
        assert sum(f.stored for f in report.files) == 20000
    finally:
        catalogue.close()


def _write_llama_bench(path: Path, n: int) -> None:
    template = json.loads((BENCH / "llama-bench").glob("*.jsonl").__next__().read_text().splitlines()[0])
    with path.open("w") as out:
        for i in range(n):
            record = dict(template, n_prompt=512 + i, avg_ts=1000.0 + i, test_time=f"2025-04-24T11:{i % 60:02d}:00Z")
            out.write(json.dumps(record) + "\n")


# ------------------------------------------------------------------ two gpudesk processes
def _gpudesk(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "GPUDESK_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "gpudesk", *args], env=env, capture_output=True, text=True,
                          timeout=240)


def _person(tmp_path: Path, name: str) -> Path:
    home = tmp_path / name
    home.mkdir()
    env_home = os.environ["GPUDESK_HOME"]
    os.environ["GPUDESK_HOME"] = str(home)
    try:
        save_settings(Settings(password_source="env", author=name))
    finally:
        os.environ["GPUDESK_HOME"] = env_home
    return home


def test_two_gpudesk_processes_share_quotes_and_measurements_and_see_who_added_them(pg_server, team_url, tmp_path):
    alice, bob = _person(tmp_path, "alice"), _person(tmp_path, "bob")
    added = _gpudesk(alice, "--database-url", team_url, "catalogue", "quote", "h100-sxm5-80gb", "24500",
                     "--date", "2026-11-20", "--supplier", "Acme", "--json")
    assert added.returncode == 0, added.stderr
    quote_id = json.loads(added.stdout)["id"]
    shown = _gpudesk(bob, "--database-url", team_url, "catalogue", "show", quote_id, "--json")
    assert shown.returncode == 0, shown.stderr
    record = json.loads(shown.stdout)
    assert record["usd"] == 24500 and record["record"]["added_by"] == "alice"
    assert "Added by alice on 2026" in _gpudesk(bob, "--database-url", team_url, "catalogue", "show", quote_id).stdout
    files = [str(p) for p in sorted((BENCH / "nccl-tests").iterdir()) if p.suffix in (".txt", ".log")][:1]
    imported = _gpudesk(bob, "--database-url", team_url, "import", *files, "--gpu", "h100-sxm5-80gb", "--json")
    assert imported.returncode == 0, imported.stderr
    listed = _gpudesk(alice, "--database-url", team_url, "measurements", "list", "--json")
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) > 0
    checked = _gpudesk(alice, "--database-url", team_url, "team", "check")
    assert checked.returncode == 0, checked.stderr
    assert "PostgreSQL 1" in checked.stdout and "Shared: 1 quotes" in checked.stdout
    nowhere = team_url.replace(f":{pg_server.port}/", ":9/")
    offline = _gpudesk(alice, "--database-url", nowhere, "catalogue", "list", "--kind", "prices")
    assert offline.returncode == 11 and "connection refused" in offline.stderr and "Traceback" not in offline.stderr
