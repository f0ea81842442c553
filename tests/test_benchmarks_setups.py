"""Measurements stored by setup: a setup written once for all its figures, read back the same as
the importers read them; the upgrade of databases of the one-table layout (and back), a repair of
one; and the fast ways of reading (orjson per line, the usual llama-bench record) giving exactly
what the standard ways give."""

from __future__ import annotations

import json
import sqlite3

import pytest
from sqlalchemy import text

from gpudesk.core.benchmarks import llama_bench, reader
from gpudesk.core.benchmarks.detect import parse_any
from gpudesk.core.benchmarks.reader import Record, Source, iter_json
from gpudesk.core.benchmarks.store import (
    answer_hardware,
    answer_model,
    count_measurements,
    delete_measurements,
    import_files,
    stored_measurements,
)
from gpudesk.core.benchmarks.types import Measurement
from gpudesk.core.catalogue import db
from gpudesk.core.catalogue.repair import rebuild

from .conftest import DATA
from .test_benchmarks_importers import BENCH, LLAMA_4080, LLAMA_CPU, LLAMA_M5, MLPERF_SUMMARY, NCCL, SGLANG, VLLM_RUN0

LLAMA_FILES = sorted((BENCH / "llama-bench").iterdir())
REAL_FILES = [LLAMA_4080, LLAMA_M5, LLAMA_CPU, VLLM_RUN0, SGLANG, NCCL, MLPERF_SUMMARY]


def _count(home, table: str, where: str = "") -> int:
    with sqlite3.connect(home / "gpudesk.sqlite3") as conn:
        return conn.execute(f"SELECT count(*) FROM {table} {where}").fetchone()[0]  # noqa: S608


def _as_read(m: Measurement) -> dict:
    """What an importer says of a figure, without what the database adds (ids) or resolves later."""
    out = m.to_json()
    for key in ("id", "import_id", "accelerator_id", "accelerator_count", "match_confidence", "match_reason",
                "source_file", "record_index"):
        out.pop(key)
    return out


def _jsonl(tmp_path, records: list[dict], name: str = "run.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _record(**changes) -> dict:
    return dict(json.loads(LLAMA_M5.read_text().splitlines()[0]), **changes)


# --------------------------------------------------------------------------- one setup, many rows
def test_a_file_of_one_setup_stores_it_once_and_reads_back_what_the_importer_read(catalogue, gpudesk_home,
                                                                                   tmp_path):
    records = [_record(n_prompt=0, n_gen=128, n_depth=512 * (i % 4), avg_ts=40.0 + i, test_time=f"2025-06-01T{i:06d}Z")
               for i in range(300)]
    path = _jsonl(tmp_path, records)
    report = import_files(catalogue, [path])
    assert report.ok and report.files[0].stored == 300
    assert _count(gpudesk_home, "bench_setups") == 1 and _count(gpudesk_home, "bench_measurements") == 300
    with sqlite3.connect(gpudesk_home / "gpudesk.sqlite3") as conn:
        own = json.loads(conn.execute("SELECT workload FROM bench_measurements ORDER BY id LIMIT 1 OFFSET 1")
                         .fetchone()[0])
    assert own == {"prompt_tokens": 0, "gen_tokens": 128, "depth": 512, "test": "tg128 @ d512"}
    read = parse_any(path).measurements
    stored = stored_measurements(catalogue)
    assert [_as_read(m) for m in stored] == [_as_read(m) for m in read]
    assert stored[1].workload["depth"] == 512 and stored[1].workload["model_type"] == read[0].workload["model_type"]
    assert stored[1].conditions["test_time"] == "2025-06-01T000001Z" and stored[1].source_file == "run.jsonl"
    assert [m.record_index for m in stored] == list(range(300))


def test_every_real_file_reads_back_as_its_importer_read_it(catalogue):
    report = import_files(catalogue, REAL_FILES)
    assert all(f.ok for f in report.files)
    stored = {m.content_hash: m for m in stored_measurements(catalogue)}
    for path in REAL_FILES:
        for m in parse_any(path).measurements:
            assert _as_read(stored[m.content_hash]) == _as_read(m), (path.name, m.metric)
    assert len(stored) == report.stored


def test_a_setup_all_of_whose_figures_were_stored_before_is_not_kept(catalogue, gpudesk_home, tmp_path):
    first = _jsonl(tmp_path, [_record(avg_ts=40.0 + i, test_time=f"t{i}") for i in range(5)], "a.jsonl")
    again = _jsonl(tmp_path, [_record(avg_ts=40.0 + i, test_time=f"t{i}") for i in range(5)] + [
        _record(n_threads=99, avg_ts=41.0, test_time="t1")], "b.jsonl")  # the same five, and one new setup
    import_files(catalogue, [first])
    report = import_files(catalogue, [again])
    assert report.files[0].stored == 1 and report.files[0].duplicates == 5
    assert _count(gpudesk_home, "bench_setups") == 2  # the first file's, and the new one; none left empty


def test_deleting_an_imports_measurements_takes_its_setups_and_import_too(catalogue, gpudesk_home):
    report = import_files(catalogue, [LLAMA_4080, NCCL])
    llama = report.files[0].import_id
    assert delete_measurements(catalogue, import_id=llama) == report.files[0].stored
    assert _count(gpudesk_home, "bench_setups", f"WHERE import_id = {llama}") == 0
    assert _count(gpudesk_home, "bench_imports") == 1
    assert count_measurements(catalogue) == report.files[1].stored == count_measurements(catalogue, format="nccl-tests")
    assert delete_measurements(catalogue, metric="avg_busbw_gbs") == 1
    assert count_measurements(catalogue) == report.files[1].stored - 1 and _count(gpudesk_home, "bench_imports") == 1


def test_answers_change_the_setup_and_count_the_measurements_they_settle(catalogue, gpudesk_home, tmp_path):
    path = _jsonl(tmp_path, [_record(gpu_info="", backends="Vulkan", n_prompt=0, n_gen=128, avg_ts=10.0 + i, test_time=f"t{i}")
                             for i in range(7)])
    import_files(catalogue, [path])
    (m, *_rest) = stored_measurements(catalogue)
    assert m.accelerator_id is None and m.match_confidence == "ask"
    assert answer_hardware(catalogue, m.hardware_key, "rtx-4090", 2) == 7
    assert {(x.accelerator_id, x.accelerator_count, x.match_confidence) for x in stored_measurements(catalogue)} == {
        ("rtx-4090", 2, "exact")}
    # a measurement's own fields are read over its setup's: an answer for one of them wins
    assert answer_model(catalogue, m.hardware_key, prompt_tokens=1024, params=8e9) == 7
    after = stored_measurements(catalogue)
    assert {x.workload["prompt_tokens"] for x in after} == {1024}
    assert {x.workload["params"] for x in after} == {8e9} and after[0].workload["params_from"] == "your answer"
    assert {x.workload["gen_tokens"] for x in after} == {128}  # not answered: each row keeps its own


# --------------------------------------------------------------------------- the schema before 0005
def _alembic(engine, command_name: str, revision: str) -> None:
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(db.MIGRATIONS_DIR))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        getattr(command, command_name)(config, revision)


def test_the_one_table_layout_upgrades_to_setups_and_back_keeping_every_value(catalogue, gpudesk_home):
    import_files(catalogue, REAL_FILES)
    before = stored_measurements(catalogue)
    setups = _count(gpudesk_home, "bench_setups")
    catalogue.close()
    engine = db.make_engine()
    _alembic(engine, "downgrade", "0004_team_audit")
    with engine.connect() as conn:
        columns = [r[1] for r in conn.execute(text("PRAGMA table_info(bench_measurements)"))]
        assert "hardware_text" in columns and "setup_id" not in columns
        assert not conn.execute(text("SELECT name FROM sqlite_master WHERE name = 'bench_setups'")).all()
        workload = json.loads(conn.execute(text("SELECT workload FROM bench_measurements WHERE format = "
                                                "'llama-bench' ORDER BY id LIMIT 1")).scalar())
        assert "model_type" in workload and "prompt_tokens" in workload  # the setup's and the row's, in one
    db.migrate(engine)
    engine.dispose()
    from gpudesk.core.catalogue import Catalogue

    again = Catalogue.open(None, DATA)
    try:
        after = stored_measurements(again)
    finally:
        again.close()
    assert [m.to_json() for m in after] == [m.to_json() for m in before]  # ids and imports kept too
    assert _count(gpudesk_home, "bench_setups") == setups  # llama-bench rows share their setup again


def test_a_damaged_database_of_the_one_table_layout_is_repaired_keeping_its_measurements(catalogue, gpudesk_home):
    import_files(catalogue, [LLAMA_4080, SGLANG])
    before = stored_measurements(catalogue)
    catalogue.close()
    engine = db.make_engine()
    _alembic(engine, "downgrade", "0004_team_audit")
    engine.dispose()
    report = rebuild(gpudesk_home / "gpudesk.sqlite3")
    assert report.salvaged["bench_measurements"] == len(before) and report.lost.get("bench_measurements", 0) == 0
    from gpudesk.core.catalogue import Catalogue

    again = Catalogue.open(None, DATA)
    try:
        after = stored_measurements(again)
    finally:
        again.close()
    assert [_as_read(m) | {"id": m.id} for m in after] == [_as_read(m) | {"id": m.id} for m in before]


# --------------------------------------------------------------------------- fast reading, same values
TRICKY_JSONL = (
    '{"a": 1, "b": [1, 2.5, "x"]}\n'
    '{"nan": NaN, "inf": Infinity}\n'  # the standard library reads these; orjson does not
    '{"a": 1} {"b": 2}\n'  # two objects on one line
    '{"dup": 1, "dup": 2}\n'
    '   {"indented": true}   \n'
    '\n'
    '[INFO] a log line\n'
    '{"surrogate": "\\ud800"}\n'
    '{"cut": \n'
    ' "over lines"}\n'
    '{"last": "no newline"}'
)
TRICKY_ARRAY = '[\n{"a": 1},\n  {"b": 2} ,\n{"c": [1,\n2]},\n{"d": 1e400},\n{"e": "x"}]\n'


@pytest.mark.parametrize("content", [TRICKY_JSONL, TRICKY_ARRAY, TRICKY_JSONL.replace("\n", "\r\n")],
                         ids=["jsonl", "array", "crlf"])
def test_reading_lines_with_orjson_gives_what_the_standard_reading_gives(content, monkeypatch):
    def read(chunk: int) -> list:
        out = []
        for item in iter_json(Source("t.json", text=content), chunk=chunk):
            if isinstance(item, Record):
                out.append(("record", json.dumps(item.value, sort_keys=True), item.index, item.line, item.in_array))
            else:
                out.append(("problem", item.place, item.message, item.severity))
        return out

    fast = [read(chunk) for chunk in (8, 64, 1 << 16)]  # windows ending inside records and lines too

    def refuse(_text):
        raise ValueError("standard way only")

    monkeypatch.setattr(reader, "_line_loads", refuse)
    standard = read(1 << 16)
    assert fast == [standard] * 3
    assert sum(1 for x in standard if x[0] == "record") >= 5


def test_a_whole_number_beyond_64_bits_is_read_exactly_on_a_line_of_its_own(monkeypatch):
    """orjson would read it as the nearest float (and the result would depend on where a chunk
    ended, which the fuzz tests found): a line with 19 or more digits in a row goes the standard way."""
    calls = []
    real = reader._line_loads
    monkeypatch.setattr(reader, "_line_loads", lambda text: calls.append(text) or real(text))
    text = ('{"n": 1}\n{"big": 123456789012345678901234567890, "fits": 18446744073709551615}\n'
            '{"neg": -9223372036854775809}\n{"n": 2}\n')
    values = [r.value for r in iter_json(Source("t", text=text))]
    assert values == [{"n": 1}, {"big": 123456789012345678901234567890, "fits": 18446744073709551615},
                      {"neg": -9223372036854775809}, {"n": 2}]
    assert all(type(v) is int for record in values for v in record.values())
    assert calls == ['{"n": 1}', '{"n": 2}']  # the long numbers' lines were not given to orjson


def test_the_fast_way_is_taken_for_json_lines(monkeypatch):
    calls = []
    real = reader._line_loads
    monkeypatch.setattr(reader, "_line_loads", lambda text: calls.append(text) or real(text))
    records = [r for r in iter_json(Source("t", text='{"a": 1}\n{"a": 2}\n{"a": 3}\n')) if isinstance(r, Record)]
    assert [r.value["a"] for r in records] == [1, 2, 3] and [r.line for r in records] == [1, 2, 3]
    assert len(calls) == 3


def _rows(path) -> list:
    """What a llama-bench file of any output format gives, as comparable values."""
    result = parse_any(path)
    assert result.format.startswith("llama-bench"), result.format
    return [m.to_json() for m in result.measurements] + [p.to_json() for p in result.problems]


ODD_RECORDS = [
    {"avg_ts": 118},  # a whole number: read as a float, the slow way
    {"stddev_ts": None}, {"samples_ts": []}, {"samples_ts": "5"}, {"test_time": 1714000000},
    {"test_time": 'a "quoted" time'}, {"test_time": "x" * 60}, {"n_depth": -1}, {"n_depth": "512"},
    {"avg_ts": 0.0}, {"avg_ts": None, "samples_ts": [10.0, 20.0]}, {"n_prompt": 512, "n_gen": 128},
    {"test": "tg256"}, {"n_gen": True}, {"avg_ts": float("inf")}, {"stddev_ts": -1.0},
    {"test_time": ""}, {"test_time": "2025-04-24 11:58:50"}, {"test_time": "24/04/2025"},
    {"test_time": "2025-04-24T11:58:50+02:00"}, {"test_time": "24 avril 2025 à 11:58"}, {"test_time": "2025年4月24日"},
    {"test_time": "tab\there"}, {"test_time": "a\\b"},
]


@pytest.mark.parametrize("path", LLAMA_FILES + ["odd"], ids=lambda p: getattr(p, "name", p))
def test_the_usual_llama_bench_record_read_fast_gives_what_the_full_checks_give(path, tmp_path, monkeypatch):
    if path == "odd":
        path = _jsonl(tmp_path, [_record(**changes) for changes in ODD_RECORDS] + [_record()])
    fast = _rows(path)

    def no_fast_way(_rec):
        raise KeyError("every record the full way")

    monkeypatch.setattr(llama_bench, "_FIGURES", no_fast_way)
    assert fast == _rows(path)
    assert any("metric" in x for x in fast)


@pytest.mark.parametrize("test_time", ["2025-04-24T11:58:50Z", "2025-04-24T11:58:50+02:00", "2025-04-24T11:58:50.123456",
                                       "run_7", ""])
def test_the_usual_llama_bench_record_is_read_without_the_full_checks(tmp_path, monkeypatch, test_time):
    """Timestamps as llama-bench writes them (and other texts JSON takes as they are) keep a record
    on the fast way; the full checks are for the odd ones (see the test above)."""
    path = _jsonl(tmp_path, [_record(test_time=test_time), _record(test_time=test_time + " local time")])
    full = []
    real = llama_bench._figures
    monkeypatch.setattr(llama_bench, "_figures", lambda rec, *a: full.append(rec["test_time"]) or real(rec, *a))
    rows = [row for item in llama_bench.iter_batches(path) for row in getattr(item, "rows", ())]
    assert len(rows) == 2 and full == [test_time + " local time"]
