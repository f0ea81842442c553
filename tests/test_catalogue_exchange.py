"""Catalogue bundles: export from one user's database, check and preview in another's, apply in
one transaction; tampered, older and malformed bundles are refused and change nothing."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import tomllib
import zipfile
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudesk import __version__
from gpudesk.cli import EXIT_FAILED, EXIT_INVALID, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, main
from gpudesk.core.catalogue import Catalogue, exchange
from gpudesk.core.catalogue.bundle import load_bundle
from gpudesk.core.catalogue.reading import TABLE_NAMES

from .conftest import DATA

INSTALLED = "gpudesk-imported-catalogue"  # beside gpudesk.sqlite3


def run_cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def dump(db: Path) -> dict:
    """Everything a catalogue import may change, to compare before and after."""
    conn = sqlite3.connect(db)
    try:
        tables = [*TABLE_NAMES.values(), "catalogue_meta", "workload_presets"]
        return {t: sorted(map(repr, conn.execute(f"SELECT * FROM {t}").fetchall())) for t in tables}  # noqa: S608
    finally:
        conn.close()


def unzip(path: Path, folder: Path) -> Path:
    with zipfile.ZipFile(path) as archive:
        archive.extractall(folder)
    return folder


def rehash(folder: Path, **manifest_changes) -> None:
    """Make the manifest agree with the files again (what a careful forger would do)."""
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"] = {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in manifest["files"]}
    manifest.update(manifest_changes)
    (folder / "manifest.json").write_text(json.dumps(manifest))


@pytest.fixture
def team_bundle(catalogue, tmp_path, capsys):
    """Home A: the bundled catalogue plus a vendor quote, a corrected street price and a region of
    the user's own, exported with the command line."""
    quote = catalogue.add_price_quote("h100-sxm5-80gb", "27500", when="2026-10-01", supplier="Acme GPUs",
                                      url="https://acme.example/q-1")
    price = next(p for p in catalogue.items("prices") if p["origin"] == "bundled" and p["kind"] == "street")
    catalogue.update_item("prices", price["id"], {"usd": str(price["usd"] + 100)}, source={"title": "Street check"})
    region = catalogue.add_item("regions", {"id": "our-dc", "name": "Our data centre", "grid_gco2e_per_kwh": "123",
                                            "grid_year": "2025"}, source={"title": "Utility bill 2025"})
    path = tmp_path / "team.zip"
    code, out, err = run_cli(capsys, "catalogue", "export", path)
    assert code == EXIT_OK, err
    assert "team.zip" in out and "catalogue " + catalogue.version in out
    return SimpleNamespace(path=path, quote=quote, price=price, new_usd=price["usd"] + 100, region=region,
                           version=catalogue.version, released=catalogue.released)


@pytest.fixture
def other_home(tmp_path, monkeypatch, catalogue_template, team_bundle):
    """Home B: a fresh user with the bundled catalogue only."""
    home = tmp_path / "other-home"
    home.mkdir()
    shutil.copy(catalogue_template, home / "gpudesk.sqlite3")
    monkeypatch.setenv("GPUDESK_HOME", str(home))
    open_other(home).close()  # up to date with data/, so that only an import changes it from here
    return home


def open_other(home: Path, data_dir: Path = DATA) -> Catalogue:
    return Catalogue.open(None, data_dir)


# ---------------------------------------------------------------------------- export
def test_export_writes_a_zip_with_a_manifest_of_versions_and_checksums(team_bundle, tmp_path):
    with zipfile.ZipFile(team_bundle.path) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read("manifest.json"))
        for name, digest in manifest["files"].items():
            assert hashlib.sha256(archive.read(name)).hexdigest() == digest, name
    assert {"catalogue.toml", "accelerators/accelerators.toml", "sources/sources.toml", "systems.toml",
            "models.toml", "prices.csv", "cloud.csv", "regions.csv", "derived.toml", "workloads.toml"} <= names
    assert set(manifest["files"]) == names - {"manifest.json"}
    assert manifest["format"] == "gpudesk-catalogue-bundle" and manifest["format_version"] == 1
    assert manifest["catalogue_version"] == team_bundle.version and manifest["released"] == team_bundle.released
    assert manifest["app_version"] == __version__
    assert datetime.fromisoformat(manifest["created"]).tzinfo is not None
    mine = manifest["user_records"]
    assert {team_bundle.quote["id"], team_bundle.price["id"]} <= set(mine["prices"])
    assert team_bundle.quote["source"] in mine["sources"] and mine["regions"] == ["our-dc"]

    # data/'s layout: load_bundle reads it as it reads data/
    bundle = load_bundle(unzip(team_bundle.path, tmp_path / "unzipped"))
    assert bundle.version == team_bundle.version
    assert bundle.index("prices")[team_bundle.quote["id"]]["usd"] == 27500
    assert len(bundle.records["accelerators"]) == manifest["records"]["accelerators"]


def test_a_bundle_read_back_into_its_own_database_changes_nothing(catalogue, tmp_path):
    """The round trip is exact: every kind, derived figures, per-figure sources (CSV rows too),
    the user's added and edited rows, workload presets."""
    catalogue.add_price_quote("a100-sxm4-80gb", "9000", supplier="Lab reseller")
    catalogue.add_item("accelerators", {"id": "my-npu", "name": "My NPU", "vendor": "Lab", "memory_gb": "32",
                                        "bf16_tflops": "100.5"}, source={"title": "Lab measurement"})
    catalogue.update_item("accelerators", "rtx-4090", {"tdp_w": "400"}, source={"title": "Our power limit"})
    offer = catalogue.items("cloud")[0]
    catalogue.update_item("cloud", offer["id"], {"usd_per_hour": "1.2345"}, source={"title": "Our invoice"})
    result = exchange.export_bundle(catalogue, tmp_path / "bundle-folder")
    assert result.user_records >= 6 and (tmp_path / "bundle-folder" / "manifest.json").is_file()
    plan = exchange.plan_update(catalogue, tmp_path / "bundle-folder")
    assert plan.changes == [] and plan.empty
    assert "No changes" in plan.format_text()


def test_an_entry_that_breaks_the_catalogue_rules_stops_the_export_and_is_named(catalogue, tmp_path, capsys):
    catalogue.add_item("regions", {"id": "undated-dc", "name": "Undated", "grid_gco2e_per_kwh": "300"},
                       source={"title": "Somebody said"})
    code, _, err = run_cli(capsys, "catalogue", "export", tmp_path / "out.zip")
    assert code == EXIT_FAILED
    assert "undated-dc" in err and "grid_gco2e_per_kwh" in err and "has no date" in err
    assert not (tmp_path / "out.zip").exists() and list(tmp_path.glob(".out.zip*")) == []


def test_export_to_a_folder_replaces_an_earlier_bundle_but_never_another_folder(catalogue, tmp_path, capsys):
    target = tmp_path / "bundle"
    assert run_cli(capsys, "catalogue", "export", target)[0] == EXIT_OK
    catalogue.add_price_quote("a100-sxm4-80gb", "9100", supplier="Second quote")
    code, out, _ = run_cli(capsys, "catalogue", "export", target, "--json")
    assert code == EXIT_OK and json.loads(out)["user_records"] == 2
    assert "Second quote" in (target / "sources" / "sources.toml").read_text()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no staging left over

    other = tmp_path / "holiday-photos"
    other.mkdir()
    (other / "beach.jpg").write_bytes(b"jpeg")
    code, _, err = run_cli(capsys, "catalogue", "export", other)
    assert code == EXIT_FAILED and "not a gpudesk catalogue bundle" in err
    assert [p.name for p in other.iterdir()] == ["beach.jpg"]


# ---------------------------------------------------------------------------- preview and apply
def test_a_quote_added_in_one_home_is_previewed_as_added_in_another_then_applied(team_bundle, other_home, capsys):
    db = other_home / "gpudesk.sqlite3"
    before = dump(db)
    code, out, err = run_cli(capsys, "catalogue", "import", team_bundle.path, "--dry-run", "--json")
    assert code == EXIT_OK, err
    preview = json.loads(out)
    assert preview["dry_run"] is True and preview["applied"] is False
    assert preview["bundle"]["catalogue_version"] == team_bundle.version
    assert preview["installed"]["catalogue_version"] == team_bundle.version
    prices = preview["changes"]["prices"]
    assert [r["id"] for r in prices["added"]] == [team_bundle.quote["id"]]
    [changed] = prices["changed"]
    assert changed["id"] == team_bundle.price["id"]
    usd = next(f for f in changed["fields"] if f["field"] == "usd")
    assert (usd["old"], usd["new"]) == (team_bundle.price["usd"], team_bundle.new_usd)
    assert team_bundle.quote["source"] in [r["id"] for r in preview["changes"]["sources"]["added"]]
    assert [r["id"] for r in preview["changes"]["regions"]["added"]] == ["our-dc"]
    assert preview["summary"] == {"added": 5, "changed": 1, "removed": 0, "kept": 0}
    assert dump(db) == before and not (other_home / INSTALLED).exists()

    code, out, _ = run_cli(capsys, "catalogue", "import", team_bundle.path, "--dry-run")
    assert code == EXIT_OK
    assert f"+ {team_bundle.quote['id']}" in out and "Price ($): " in out and "Dry run: nothing was changed" in out
    # no --yes and nobody at a terminal to ask: nothing is applied
    code, _, err = run_cli(capsys, "catalogue", "import", team_bundle.path)
    assert code == EXIT_USAGE and "--yes" in err
    assert dump(db) == before

    code, out, err = run_cli(capsys, "catalogue", "import", team_bundle.path, "--yes")
    assert code == EXIT_OK, err
    assert "Applied: catalogue" in out and "5 added, 1 changed, 0 removed" in out
    for _start in range(2):  # and again after a restart: the import stays
        cat = open_other(other_home)
        try:
            quote = cat.get("prices", team_bundle.quote["id"])
            assert quote["usd"] == 27500 and quote["origin"] == "bundled"
            assert cat.figure_source("prices", quote, "usd")["title"] == "Quote from Acme GPUs"
            assert cat.get("prices", team_bundle.price["id"])["usd"] == team_bundle.new_usd
            region = cat.get("regions", "our-dc")
            assert cat.figure_source("regions", region, "grid_gco2e_per_kwh")["title"] == "Utility bill 2025"
            assert cat.version == team_bundle.version
        finally:
            cat.close()
    assert (other_home / INSTALLED / "manifest.json").is_file()
    code, out, _ = run_cli(capsys, "catalogue", "import", team_bundle.path, "--yes")
    assert code == EXIT_OK and "No changes" in out


@pytest.mark.parametrize("answer", ["n", "y"])
def test_at_a_terminal_the_import_asks_before_applying(team_bundle, other_home, capsys, monkeypatch, answer):
    import sys

    asked = []
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: asked.append(prompt) or answer)
    before = dump(other_home / "gpudesk.sqlite3")
    code, out, _ = run_cli(capsys, "catalogue", "import", team_bundle.path)
    assert asked and "Apply these changes" in asked[0] and f"+ {team_bundle.quote['id']}" in out
    if answer == "n":
        assert code == EXIT_FAILED and "Nothing was changed." in out
        assert dump(other_home / "gpudesk.sqlite3") == before
    else:
        assert code == EXIT_OK and "Applied: catalogue" in out
        assert dump(other_home / "gpudesk.sqlite3") != before


def test_the_importers_own_rows_and_quotes_are_kept(team_bundle, other_home, capsys):
    cat = open_other(other_home)
    mine = cat.add_price_quote("a100-sxm4-80gb", "8800", supplier="Our reseller")
    cat.update_item("prices", team_bundle.price["id"], {"usd": "1234"}, source={"title": "Our own check"})
    cat.close()
    code, out, _ = run_cli(capsys, "catalogue", "import", team_bundle.path, "--dry-run", "--json")
    prices = json.loads(out)["changes"]["prices"]
    assert [(r["id"], r["origin"]) for r in prices["kept"]] == [(team_bundle.price["id"], "user_edited")]
    assert "changed" not in prices and mine["id"] not in json.dumps(prices)

    assert run_cli(capsys, "catalogue", "import", team_bundle.path, "--yes")[0] == EXIT_OK
    cat = open_other(other_home)
    try:
        assert cat.get("prices", mine["id"])["origin"] == "user_added"
        edited = cat.get("prices", team_bundle.price["id"])
        assert edited["usd"] == 1234 and edited["origin"] == "user_edited"
        assert cat.get("prices", team_bundle.quote["id"]) is not None
    finally:
        cat.close()


def test_reverting_an_edit_restores_the_imported_figure_and_a_newer_shipped_catalogue_replaces_the_import(
        team_bundle, other_home, tmp_path):
    cat = open_other(other_home)
    exchange.apply_update(cat, exchange.plan_update(cat, team_bundle.path))
    price_id = team_bundle.price["id"]
    cat.update_item("prices", price_id, {"usd": "1"})
    assert cat.revert_item("prices", price_id)["usd"] == team_bundle.new_usd  # the imported figure, not data/'s
    cat.close()

    # gpudesk ships a changed data/ under the same version: the imported catalogue stays
    shipped = tmp_path / "shipped"
    shutil.copytree(DATA, shipped)
    (shipped / "prices.csv").write_text((shipped / "prices.csv").read_text() + "\n")
    cat = Catalogue.open(None, shipped)
    assert cat.get("prices", team_bundle.quote["id"]) is not None
    cat.close()

    # gpudesk ships a newer catalogue: it replaces the imported one
    toml = shipped / "catalogue.toml"
    toml.write_text(toml.read_text().replace(f'version = "{team_bundle.version}"', 'version = "2099.1.1"'))
    cat = Catalogue.open(None, shipped)
    try:
        assert cat.version == "2099.1.1"
        assert cat.get("prices", team_bundle.quote["id"]) is None
        assert cat.get("prices", price_id)["usd"] == team_bundle.price["usd"]
    finally:
        cat.close()


def test_the_catalogue_changing_after_the_preview_stops_the_apply(team_bundle, other_home):
    cat = open_other(other_home)
    try:
        plan = exchange.plan_update(cat, team_bundle.path)
        cat.update_item("prices", team_bundle.price["id"], {"usd": "4321"})
        with pytest.raises(exchange.ExchangeError) as err:
            exchange.apply_update(cat, plan)
        assert err.value.reason == "refused" and "changed since this preview" in str(err.value)
        assert cat.get("prices", team_bundle.quote["id"]) is None
        assert not (other_home / INSTALLED).exists()
    finally:
        cat.close()


def test_a_bundle_that_removes_what_the_users_rows_refer_to_is_refused(team_bundle, other_home, catalogue, tmp_path,
                                                                       capsys):
    assert run_cli(capsys, "catalogue", "import", team_bundle.path, "--yes")[0] == EXIT_OK
    source_id = team_bundle.quote["source"]  # a team member's source, now part of B's catalogue
    cat = open_other(other_home)
    mine = cat.add_item("prices", {"id": "our-h100-quote", "item": "h100-sxm5-80gb", "kind": "quote", "usd": "26000",
                                   "source": source_id})
    cat.close()
    # the team member drops their quote and its source, and shares the catalogue again
    catalogue.delete_item("prices", team_bundle.quote["id"])
    catalogue.delete_item("sources", source_id)
    exchange.export_bundle(catalogue, tmp_path / "team-2.zip")
    before = dump(other_home / "gpudesk.sqlite3")
    code, _, err = run_cli(capsys, "catalogue", "import", tmp_path / "team-2.zip", "--yes")
    assert code == EXIT_REFUSED
    assert f"your price '{mine['id']}' refers to source '{source_id}', which this bundle removes" in err
    assert dump(other_home / "gpudesk.sqlite3") == before


# ---------------------------------------------------------------------------- refused bundles
def test_a_tampered_zip_is_refused_naming_the_file_and_changes_nothing(team_bundle, other_home, tmp_path, capsys):
    tampered = tmp_path / "tampered.zip"
    with zipfile.ZipFile(team_bundle.path) as src, zipfile.ZipFile(tampered, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "prices.csv":
                at = data.index(b"\n") + 1 + data[data.index(b"\n") + 1:].index(b",1")  # a price digit
                data = data[:at + 1] + b"2" + data[at + 2:]
            dst.writestr(info, data)
    before = dump(other_home / "gpudesk.sqlite3")
    code, out, err = run_cli(capsys, "catalogue", "import", tampered, "--yes")
    assert code == EXIT_INVALID and out == ""
    assert "prices.csv does not match its SHA-256 checksum" in err and "tampered.zip" in err
    assert dump(other_home / "gpudesk.sqlite3") == before and not (other_home / INSTALLED).exists()


def test_a_tampered_folder_is_refused_naming_the_file(team_bundle, other_home, tmp_path, capsys):
    folder = unzip(team_bundle.path, tmp_path / "folder")
    acc = folder / "accelerators" / "accelerators.toml"
    content = acc.read_bytes()
    assert b"tdp_w = 700.0" in content
    acc.write_bytes(content.replace(b"tdp_w = 700.0", b"tdp_w = 701.0", 1))
    before = dump(other_home / "gpudesk.sqlite3")
    code, _, err = run_cli(capsys, "catalogue", "import", folder / "manifest.json", "--dry-run")
    assert code == EXIT_INVALID and "accelerators/accelerators.toml does not match its SHA-256 checksum" in err
    assert dump(other_home / "gpudesk.sqlite3") == before


def test_an_older_bundle_is_refused_naming_both_versions(team_bundle, other_home, tmp_path, capsys):
    folder = unzip(team_bundle.path, tmp_path / "older")
    toml = folder / "catalogue.toml"
    toml.write_text(toml.read_text().replace(f'version = "{team_bundle.version}"', 'version = "2020.1.1"'))
    rehash(folder, catalogue_version="2020.1.1")
    before = dump(other_home / "gpudesk.sqlite3")
    code, _, err = run_cli(capsys, "catalogue", "import", folder, "--yes")
    assert code == EXIT_REFUSED
    assert "catalogue 2020.1.1" in err and f"older than the installed catalogue {team_bundle.version}" in err
    assert dump(other_home / "gpudesk.sqlite3") == before


def _edit_manifest(folder: Path, change) -> None:
    """`change`: the manifest's new text, or a function that edits the manifest in place."""
    path = folder / "manifest.json"
    if isinstance(change, str):
        path.write_text(change)
        return
    manifest = json.loads(path.read_text())
    change(manifest)
    path.write_text(json.dumps(manifest))


MALFORMED = {
    "missing": (None, "manifest.json is missing"),
    "not JSON": ('{"format": "gpudesk-catalogue-bundle",', "manifest.json is not valid JSON (line 1"),
    "a list": ("[]", "manifest.json must be a JSON object"),
    "another format": (lambda m: m.update(format="zip-of-csv"), "not a gpudesk catalogue bundle"),
    "newer format": (lambda m: m.update(format_version=2), "format version 2 is newer than this gpudesk"),
    "format as text": (lambda m: m.update(format_version="1"), "'format_version' must be a whole number"),
    "no version": (lambda m: m.pop("catalogue_version"), "'catalogue_version' must be a version like"),
    "bad created": (lambda m: m.update(created="yesterday"), "'created' 'yesterday' is not a date and time"),
    "no files": (lambda m: m.update(files=[]), "'files' must map each file"),
    "bad checksum": (lambda m: m["files"].update({"prices.csv": "abc"}), "the checksum of prices.csv is 'abc'"),
    "unlisted file": (lambda m: m["files"].pop("regions.csv"), "regions.csv is in the bundle but not listed"),
    "missing file": (lambda m: m["files"].update({"extra.csv": "0" * 64}), "extra.csv is listed in manifest.json but missing"),
    "escaping name": (lambda m: m["files"].update({"../x.csv": "0" * 64}), "a file named '../x.csv'"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_manifest_names_the_problem_and_changes_nothing(team_bundle, other_home, tmp_path, capsys, case):
    change, expected = MALFORMED[case]
    folder = unzip(team_bundle.path, tmp_path / "bundle")
    if change is None:
        (folder / "manifest.json").unlink()
    else:
        _edit_manifest(folder, change)
    before = dump(other_home / "gpudesk.sqlite3")
    code, _, err = run_cli(capsys, "catalogue", "import", folder, "--yes")
    assert code == EXIT_INVALID
    assert expected in err and str(folder) in err
    assert dump(other_home / "gpudesk.sqlite3") == before


def test_a_bundle_whose_files_break_the_rules_is_refused_naming_file_and_line(team_bundle, other_home, tmp_path,
                                                                             capsys):
    folder = unzip(team_bundle.path, tmp_path / "bad")
    prices = folder / "prices.csv"
    lines = prices.read_text().splitlines()
    cells = lines[1].split(",")
    cells[3] = "-5"  # usd
    prices.write_text("\n".join([lines[0], ",".join(cells), *lines[2:]]) + "\n")
    rehash(folder)
    code, _, err = run_cli(capsys, "catalogue", "import", folder, "--dry-run")
    assert code == EXIT_INVALID
    assert f"{folder}" in err and "prices.csv: line 2" in err and "Price must be more than 0, not -5" in err


def test_a_file_that_is_not_a_bundle_is_refused(other_home, tmp_path, capsys):
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"PK\x03\x04 certainly not a zip")
    code, _, err = run_cli(capsys, "catalogue", "import", junk, "--dry-run")
    assert code == EXIT_INVALID and "junk.zip: not a zip file" in err
    code, _, err = run_cli(capsys, "catalogue", "import", tmp_path / "nowhere.zip", "--dry-run")
    assert code == EXIT_INVALID and "no such file or folder" in err


# ---------------------------------------------------------------------------- the TOML writer
@given(text=st.text())
def test_any_text_is_written_as_toml_that_reads_back_the_same(text):
    assert tomllib.loads(f"k = {exchange._toml_string(text)}\n")["k"] == text


@given(value=st.floats(allow_nan=False, allow_infinity=False) | st.integers(-2**63, 2**63 - 1) | st.booleans())
def test_numbers_are_written_as_toml_that_reads_back_the_same(value):
    read = tomllib.loads(f"k = {exchange._toml_value(value)}\n")["k"]
    assert read == value and type(read) is type(value)
