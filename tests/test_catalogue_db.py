"""The catalogue database: first build, WAL, migrations, user edits, and upgrades of the bundled
catalogue that keep every row the user added or edited."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from sqlalchemy import text

from gpudesk.core.catalogue import Catalogue, EditError
from gpudesk.core.catalogue.bundle import BundleError
from gpudesk.core.catalogue.db import HEAD_REVISION, MIGRATIONS_DIR, make_engine, migrate

from .conftest import DATA


def test_first_run_builds_the_database_in_gpudesk_home(gpudesk_home):
    cat = Catalogue.open(None, DATA)
    try:
        assert (gpudesk_home / "gpudesk.sqlite3").exists()
        assert len(cat.items("accelerators")) >= 45
        assert cat.version
        with cat.engine.connect() as conn:
            assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
    finally:
        cat.close()


def test_head_revision_constant_matches_alembic():
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    assert ScriptDirectory.from_config(config).get_current_head() == HEAD_REVISION


def test_migrations_produce_the_models_schema(tmp_path):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from gpudesk.core.catalogue.models import Base

    engine = make_engine(f"sqlite:///{tmp_path / 'm.sqlite3'}")
    migrate(engine)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []


def _copy_data(tmp_path):
    target = tmp_path / "data"
    shutil.copytree(DATA, target)
    return target


def _bump(data_dir, version):
    path = data_dir / "catalogue.toml"
    content = path.read_text()
    import re

    path.write_text(re.sub(r'version = "[^"]+"', f'version = "{version}"', content))


def test_upgrade_keeps_user_rows_and_updates_bundled_ones(tmp_path, gpudesk_home):
    data = _copy_data(tmp_path)
    cat = Catalogue.open(None, data)
    quote = cat.add_price_quote("h100-sxm5-80gb", "27500", when="2026-10-01", supplier="Acme GPUs")
    mine = cat.add_item("accelerators", {"id": "my-npu", "name": "My NPU", "vendor": "Lab", "memory_gb": "32",
                                         "bf16_tflops": "100"}, source={"title": "Lab measurement"})
    cat.update_item("accelerators", "rtx-4090", {"tdp_w": "400"}, source={"title": "Our power limit"})
    cat.close()

    # a newer bundled catalogue: one figure changes, the edited row's figure changes, one row goes
    acc = data / "accelerators" / "nvidia-client.toml"
    content = acc.read_text()
    assert "tdp_w = 450" in content
    acc.write_text(content.replace("tdp_w = 450", "tdp_w = 451"))
    dc = data / "accelerators" / "nvidia-datacenter.toml"
    dc.write_text(dc.read_text().replace('tdp_w = 70\n', 'tdp_w = 71\n'))
    _bump(data, "2099.1.1")

    cat = Catalogue.open(None, data)
    try:
        assert cat.version == "2099.1.1"
        assert cat.get("prices", quote["id"])["usd"] == 27500
        assert cat.get("prices", quote["id"])["origin"] == "user_added"
        assert cat.get("accelerators", mine["id"])["bf16_tflops"] == 100
        edited = cat.get("accelerators", "rtx-4090")
        assert edited["tdp_w"] == 400 and edited["origin"] == "user_edited"
        assert cat.get("accelerators", "t4")["tdp_w"] == 71
        src = cat.figure_source("accelerators", edited, "tdp_w")
        assert src["title"] == "Our power limit"
    finally:
        cat.close()


def test_bundled_rows_dropped_from_a_new_catalogue_are_removed(tmp_path, gpudesk_home):
    data = _copy_data(tmp_path)
    Catalogue.open(None, data).close()
    prices = data / "prices.csv"
    lines = prices.read_text().splitlines()
    dropped = lines[1].split(",")[0]
    prices.write_text("\n".join([lines[0]] + lines[2:]) + "\n")
    _bump(data, "2099.1.2")
    cat = Catalogue.open(None, data)
    try:
        assert cat.get("prices", dropped) is None
    finally:
        cat.close()


def test_a_broken_bundle_changes_nothing(tmp_path, gpudesk_home):
    data = _copy_data(tmp_path)
    cat = Catalogue.open(None, data)
    cat.add_price_quote("a100-sxm4-80gb", 9000)
    cat.close()
    db = gpudesk_home / "gpudesk.sqlite3"
    before = sqlite3.connect(db).execute("SELECT count(*), sum(usd) FROM price_observations").fetchone()
    cloud = data / "cloud.csv"
    cloud.write_text(cloud.read_text().replace("55.04", "-55.04", 1))
    _bump(data, "2099.1.3")
    with pytest.raises(BundleError) as err:
        Catalogue.open(None, data)
    assert "cloud.csv" in str(err.value) and "usd_per_hour" in str(err.value)
    after = sqlite3.connect(db).execute("SELECT count(*), sum(usd) FROM price_observations").fetchone()
    assert before == after


def test_bad_user_values_are_refused_with_a_message_and_nothing_is_written(catalogue):
    before = len(catalogue.items("accelerators"))
    with pytest.raises(EditError) as err:
        catalogue.add_item("accelerators", {"id": "bad one", "name": "X", "vendor": "Y", "memory_gb": "lots",
                                            "tdp_w": "-3"})
    problems = err.value.problems
    assert "memory_gb" in problems and "number" in problems["memory_gb"]
    assert "tdp_w" in problems and "at least" in problems["tdp_w"]
    assert "id" in problems
    assert len(catalogue.items("accelerators")) == before
    with pytest.raises(EditError):
        catalogue.add_price_quote("no-such-thing", 100)
    with pytest.raises(EditError):
        catalogue.delete_item("accelerators", "h100-sxm5-80gb")


def test_json_contract_of_an_accelerator(catalogue):
    data = catalogue.to_json("accelerators", catalogue.get("accelerators", "h100-sxm5-80gb"))
    for key in ("id", "name", "vendor", "architecture", "year", "form_factor", "memory_gb", "memory_type",
                "mem_bandwidth_gbs", "tdp_w", "fp32_tflops", "tf32_tflops", "fp16_tflops", "bf16_tflops",
                "fp8_tflops", "int8_tops", "fp4_tflops", "cuda_cores", "sources"):
        assert key in data, key
    assert data["bf16_tflops"] == pytest.approx(989.4)
    assert data["sources"]["bf16_tflops"]["url"].startswith("https://")
    assert data["sources"]["bf16_tflops"]["date"]


def test_price_history_by_kind_and_pricing(catalogue):
    h100 = catalogue.price_history("accelerators", "h100-sxm5-80gb")
    assert sum(len(v) for v in h100.values()) >= 3
    assert all(points == sorted(points) for points in h100.values())
    spot = catalogue.price_history("cloud", "gcp-a3-highgpu-8g")["spot"]
    assert spot[0] == ("2024-05-21", 62.547325) and len(spot) >= 10
    assert catalogue.price_history("regions", "us-avg") == {}


def test_the_fingerprint_covers_the_synced_files_and_not_the_kernel_tables(tmp_path, monkeypatch):
    """A start hashes what syncs into the database: a changed catalogue figure changes the fingerprint,
    a changed kernel table (read by the engine straight from data/kernels, three quarters of data/)
    does not, and is not even read."""
    from pathlib import Path

    from gpudesk.core.catalogue import sync

    data = _copy_data(tmp_path)
    before = sync.fingerprint(data)
    kernels = data / "kernels" / "moe.csv"
    kernels.write_text(kernels.read_text() + "extra,row\n")
    assert sync.fingerprint(data) == before
    acc = data / "accelerators" / "nvidia-client.toml"
    acc.write_text(acc.read_text().replace("tdp_w = 450", "tdp_w = 451"))
    assert sync.fingerprint(data) != before
    read, original = [], Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: read.append(self) or original(self))
    sync.fingerprint(data)
    assert acc in read and not [p for p in read if "kernels" in p.parts]


def test_the_start_up_snapshot_reads_an_older_schema_as_the_full_catalogue_does(catalogue, tmp_path):
    """The stdlib snapshot takes each record's fields, origin, sources, derived figures and audit
    columns in the full catalogue's order; booleans stay booleans; from a database older than a
    column (a field, the team schema's audit columns) the field reads None and the audit defaults."""
    from gpudesk.core import paths
    from gpudesk.core.catalogue.reading import AUDIT_DEFAULTS, read_kind

    full = catalogue.items("accelerators")
    with sqlite3.connect(paths.database_path()) as conn:
        now = read_kind(conn, "accelerators")
    assert now == full and [list(r) for r in now] == [list(r) for r in full]
    assert {type(r["memory_shared"]) for r in now if r["memory_shared"] is not None} == {bool}

    old = tmp_path / "old.sqlite3"
    shutil.copy(paths.database_path(), old)
    with sqlite3.connect(old) as conn:
        for column in ("memory_shared", "added_by", "added_at", "updated_by", "version"):
            conn.execute(f"ALTER TABLE accelerators DROP COLUMN {column}")
    with sqlite3.connect(old) as conn:
        then = read_kind(conn, "accelerators")
    assert [list(r) for r in then] == [list(r) for r in full]  # the same keys in the same order
    for was, row in zip(full, then):
        assert row["memory_shared"] is None
        assert {k: row[k] for k in AUDIT_DEFAULTS} == AUDIT_DEFAULTS
        assert {k: v for k, v in row.items() if k not in ("memory_shared", *AUDIT_DEFAULTS)} == \
            {k: v for k, v in was.items() if k not in ("memory_shared", *AUDIT_DEFAULTS)}


def test_the_start_up_snapshot_of_an_incomplete_or_odd_database(catalogue, tmp_path, caplog):
    """Empty JSON cells read as no sources and no derived figures, a preset with an empty spec as its name
    and description alone; a database without a version or without accelerators gives no snapshot
    (the full open creates, migrates or reports it), and a file that is no database says why in the log."""
    from gpudesk.core import paths
    from gpudesk.core.catalogue.reading import read_snapshot

    odd = tmp_path / "odd.sqlite3"
    shutil.copy(paths.database_path(), odd)
    with sqlite3.connect(odd) as conn:
        conn.execute("UPDATE accelerators SET field_sources = '', derived = '' WHERE id = 'h100-sxm5-80gb'")
        conn.execute("UPDATE workload_presets SET spec = '' WHERE id = (SELECT MIN(id) FROM workload_presets)")
    snapshot = read_snapshot(odd)
    row = next(r for r in snapshot.items("accelerators") if r["id"] == "h100-sxm5-80gb")
    assert row["field_sources"] == {} and row["derived"] == {}
    first = snapshot.presets()[0]
    assert set(first) == {"id", "name", "description"} and first["id"] == min(p["id"] for p in catalogue.presets())

    for damage in ("DELETE FROM accelerators", "DELETE FROM catalogue_meta WHERE key = 'version'"):
        shutil.copy(paths.database_path(), odd)
        with sqlite3.connect(odd) as conn:
            conn.execute(damage)
        assert read_snapshot(odd) is None, damage

    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"not a database")
    with caplog.at_level("INFO", logger="gpudesk.core.catalogue.reading"):
        assert read_snapshot(junk) is None
    assert [r.getMessage() for r in caplog.records] == [f"no start-up snapshot of {junk}: file is not a database"]
