"""Fuzzing the importers with Hypothesis: random bytes, random JSON, and mutations of the real files.
Whatever comes in, an importer returns measurements and problems - it never raises - every problem
names the file, every measurement is a finite, non-negative figure of a known metric, and a file
that fails leaves the database as it was. Inputs that once broke an importer are kept below as
explicit tests."""

from __future__ import annotations

import json
import math
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpudesk.core.benchmarks import gpudesk_schema, llama_bench, sglang, trtllm_bench, vllm
from gpudesk.core.benchmarks.detect import IMPORTERS, INTERNAL, parse_any
from gpudesk.core.benchmarks.reader import Source, iter_json
from gpudesk.core.benchmarks.store import import_files
from gpudesk.core.benchmarks.types import METRICS

from .test_benchmarks_importers import ALL_FILES, LLAMA_4080, LLAMA_M5, TRTLLM, VLLM_RUN0

SETTINGS = settings(max_examples=int(__import__("os").environ.get("FUZZ_EXAMPLES", "150")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
# every reader detection can pick, each once: a new format is fuzzed as soon as it is registered
MODULES = list({id(reader): reader for reader, _words in IMPORTERS.values()}.values())
REAL_TEXTS = [(p.name, p.read_text(encoding="utf-8")) for p in ALL_FILES]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=12), children, max_size=6),
    max_leaves=30,
)
# records with the keys the importers look for, and random values
KEYS = ["build_commit", "model_type", "n_prompt", "n_gen", "n_depth", "avg_ts", "stddev_ts", "samples_ts", "gpu_info",
        "backends", "model_size", "model_n_params", "request_throughput", "mean_ttft_ms", "p99_tpot_ms", "backend",
        "completed", "failed", "total_input_tokens", "total_output_tokens", "output_throughput", "request_rate",
        "total_output_tokens_retokenized", "engine", "world_info", "performance", "machine", "streaming_metrics",
        "gpudesk_benchmark", "measurements", "hardware", "workload", "devices", "split_mode", "n_gpu_layers",
        "requests_per_second", "tokens_per_second", "elapsed_time", "avg_latency", "percentiles", "cpu_info"]
shaped = st.dictionaries(st.sampled_from(KEYS), json_values, min_size=3, max_size=14)


def check(result, name: str) -> None:
    for m in result.measurements:
        assert m.metric in METRICS, m.metric
        assert isinstance(m.value, float) and math.isfinite(m.value) and m.value >= 0, (m.metric, m.value)
        assert m.stddev is None or (math.isfinite(m.stddev) and m.stddev >= 0)
        assert m.unit == METRICS[m.metric][0] or m.format == "gpudesk"
        json.dumps(m.to_json(), allow_nan=False)
    for p in result.problems:
        assert p.file == name and p.message and p.severity in ("error", "warning", "question", "info")
        # the safety nets never catch anything: no record lost to an exception in gpudesk
        assert "could not be read (" not in p.message and INTERNAL not in p.message, str(p)


@SETTINGS
@given(data=st.binary(max_size=3000))
def test_random_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "random.bin"
    path.write_bytes(data)
    result = parse_any(path)
    check(result, "random.bin")
    if not data:
        assert result.errors


@SETTINGS
@given(text=st.text(max_size=2000), module=st.sampled_from(MODULES))
def test_random_text(text, module):
    check(module.parse(text + "\n", "random.txt"), "random.txt")


@SETTINGS
@given(value=json_values | shaped | st.lists(shaped, max_size=4), module=st.sampled_from(MODULES),
       lines=st.booleans())
def test_random_json(value, module, lines):
    if lines and isinstance(value, list):
        text = "\n".join(json.dumps(v) for v in value) + "\n"
    else:
        text = json.dumps(value)
    check(module.parse(text + "\n", "random.json"), "random.json")


def mutate(text: str, data) -> str:
    for _ in range(data.draw(st.integers(1, 4))):
        if not text:
            break
        i = data.draw(st.integers(0, len(text) - 1))
        j = data.draw(st.integers(i, min(len(text), i + 200)))
        op = data.draw(st.sampled_from(["cut", "delete", "insert", "duplicate", "nan", "string", "swap"]))
        if op == "cut":
            text = text[:i]
        elif op == "delete":
            text = text[:i] + text[j:]
        elif op == "insert":
            text = text[:i] + data.draw(st.text(alphabet='{}[],:"\\ \n0123456789.-eNaIfinty', max_size=12)) + text[i:]
        elif op == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        elif op == "nan":
            text = text.replace(": 0", ": NaN", 1).replace(": 1", ": -Infinity", 1)
        elif op == "string":
            text = text.replace(": 7", ': "7', 1)
        else:
            text = text[j:] + text[:i]
    return text


@SETTINGS
@given(data=st.data())
def test_mutated_real_files(tmp_path_factory, data):
    name, text = data.draw(st.sampled_from(REAL_TEXTS))
    mutated = mutate(text, data)
    path = tmp_path_factory.mktemp("mutated") / name
    path.write_text(mutated, encoding="utf-8")
    check(parse_any(path), name)


def rows(home) -> tuple:
    with sqlite3.connect(home / "gpudesk.sqlite3") as conn:
        return tuple(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                     for t in ("bench_imports", "bench_measurements", "bench_answers"))


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_imports_are_atomic(catalogue, gpudesk_home, tmp_path_factory, data):
    name, text = data.draw(st.sampled_from(REAL_TEXTS))
    path = tmp_path_factory.mktemp("mutated") / name
    path.write_text(mutate(text, data), encoding="utf-8")
    before = rows(gpudesk_home)
    report = import_files(catalogue, [path])
    f = report.files[0]
    if not f.ok:
        assert rows(gpudesk_home) == before and f.errors
    else:
        assert rows(gpudesk_home)[1] == before[1] + f.stored
    json.dumps(report.to_json(), allow_nan=False)
    report.format_text()


REAL_RECORDS = []
for _path in ALL_FILES:
    if _path.suffix in (".json", ".jsonl") and "systems" not in _path.name and "scaling" not in _path.name:
        for _item in iter_json(Source(_path.name, path=_path)):
            if hasattr(_item, "value") and isinstance(_item.value, dict):
                REAL_RECORDS.append((_path.name, _item.value))
small_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3), max_leaves=8)


@SETTINGS
@given(data=st.data())
def test_real_records_with_random_values(data):
    """A real record with a few of its values (top level or one level down) replaced by random JSON:
    the other records' worth of information must still come through, and nothing may raise."""
    name, record = data.draw(st.sampled_from(REAL_RECORDS))
    rec = json.loads(json.dumps(record))
    for _ in range(data.draw(st.integers(1, 4))):
        key = data.draw(st.sampled_from(sorted(rec)))
        if isinstance(rec[key], dict) and rec[key] and data.draw(st.booleans()):
            rec[key] = dict(rec[key], **{data.draw(st.sampled_from(sorted(rec[key]))): data.draw(small_json)})
        else:
            rec[key] = data.draw(small_json)
    text = json.dumps(rec)
    for module in (llama_bench, vllm, sglang, trtllm_bench, gpudesk_schema):
        check(module.parse(text, "record.json"), "record.json")


pieces = st.lists(
    st.one_of(
        st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3).map(json.dumps),
        st.lists(st.dictionaries(st.text(max_size=3), st.integers(), max_size=2), max_size=3).map(
            lambda v: json.dumps(v, indent=1)),
        st.sampled_from(["[INFO] start", "ggml_cuda_init: x", "```json", "```", "]", "{", "[", ",", "", "  ", "{bad}",
                         '{"cut": "', "[1, 2]", "NaN", '{"a": Infinity}'])),
    max_size=8)


@SETTINGS
@given(parts=pieces, sep=st.sampled_from(["\n", "\r\n", " ", ""]))
def test_reader_results_do_not_depend_on_where_chunks_end(parts, sep):
    """The sliding-window JSON reader gives the same records and problems whatever its chunk size."""
    text = sep.join(parts)

    def read(chunk):
        return [(type(i).__name__, getattr(i, "value", None) if not isinstance(getattr(i, "value", None), float)
                 else "float", getattr(i, "index", None), getattr(i, "line", None), str(i) if not hasattr(i, "value")
                 else None) for i in iter_json(Source("t.json", text=text), chunk=chunk)]

    reference = read(1 << 16)
    for chunk in (1, 3, 17):
        assert read(chunk) == reference, chunk


# ----------------------------------------------------------------------------------- kept cases
# Found by fuzzing (test_real_records_with_random_values): an integer beyond 2**63 in a field the
# importers keep as a condition (n_threads, burstiness, max_num_tokens ...) raised OverflowError
# in clean_scalar, and the whole record was lost. Such values are now dropped; the record stays.
@pytest.mark.parametrize("module, path, place", [
    (llama_bench, LLAMA_4080, ("n_threads",)),
    (vllm, VLLM_RUN0, ("burstiness",)),
    (trtllm_bench, TRTLLM, ("world_info", "max_num_tokens")),
])
def test_found_by_fuzzing_huge_integer_in_a_kept_field(module, path, place):
    data = json.loads(path.read_text())
    rec = data[0] if isinstance(data, list) else data
    target = rec
    for key in place[:-1]:
        target = target[key]
    target[place[-1]] = 10 ** 400
    result = module.parse(json.dumps(rec), "big-int.json")
    check(result, "big-int.json")
    assert result.measurements and not result.errors
    assert all(place[-1] not in m.conditions or m.conditions[place[-1]] is None for m in result.measurements)


# Found by fuzzing (test_reader_results_do_not_depend_on_where_chunks_end): the column of a JSON
# error was counted from the start of the reader's window, not of the line, once the window had
# slid past the line's start - '{} { {}' said column 3 or column 6 depending on the chunk size.
@pytest.mark.parametrize("chunk", [1, 2, 5, 1 << 16])
def test_found_by_fuzzing_error_column_after_the_window_slid(chunk):
    items = list(iter_json(Source("t.json", text="{} { {}"), chunk=chunk))
    problem = next(i for i in items if not hasattr(i, "value"))
    assert "line 1, column 6" in problem.message  # the '{' after '{ '


# Found while testing the JSON reader by hand: a broken record close to the end of the file was taken
# for a cut-off one ("the file ends inside it") instead of being reported as invalid JSON.
def test_found_in_testing_broken_record_near_the_end_is_invalid_not_cut():
    items = list(iter_json(Source("t.jsonl", text='{"a": 1}\n{"a": 2, bad}\n{"a": 3}\n')))
    problems = [i for i in items if not hasattr(i, "value")]
    assert [i.value for i in items if hasattr(i, "value")] == [{"a": 1}, {"a": 3}]
    assert len(problems) == 1 and "not valid JSON" in problems[0].message and problems[0].place == "record 1 (line 2)"


# Edge cases written by hand (they have not failed, but the formats make them likely in the wild)
def test_edge_a_setup_field_holding_a_list():
    rec = json.loads(LLAMA_4080.read_text())[0]
    rec["tensor_split"] = [0.5, 0.5]  # unhashable: the setup cache steps aside
    r = llama_bench.parse(json.dumps([rec, dict(rec, test_time="later")]), "lists.json")
    assert len(r.measurements) == 2


def test_edge_nan_average_and_string_counts():
    rec = json.loads(LLAMA_4080.read_text())[0]
    rec.update(avg_ts=float("nan"), samples_ts=["x", None, 7000.0], n_prompt="512")
    r = llama_bench.parse(json.dumps([rec]), "nan.json")
    assert [m.value for m in r.measurements] == [7000.0]
    assert any("not a finite number" in p.message for p in r.problems)


def test_edge_deep_nesting_after_a_good_record():
    deep = "[" * 100_000 + "]" * 100_000
    r = llama_bench.parse(LLAMA_4080.read_text() + "\n" + deep, "deep.json")
    assert len(r.measurements) == 2


def test_edge_an_array_closed_twice_and_stray_brackets():
    r = llama_bench.parse(LLAMA_4080.read_text() + "]\n]\n{\n", "twice.json")
    assert len(r.measurements) == 2


def test_edge_sglang_and_vllm_with_wrong_types():
    line = json.dumps({"backend": "sglang", "dataset_name": 3, "output_throughput": "12", "completed": "x",
                       "total_output_tokens_retokenized": [], "request_rate": {"a": 1}, "mean_ttft_ms": True})
    r = sglang.parse(line, "types.jsonl")
    assert [m.metric for m in r.measurements] == ["output_tokens_per_s"]
    record = {"request_throughput": 1.0, "mean_ttft_ms": "NaN", "completed": 1, "backend": ["x"],
              "model_id": {"nested": True}, "percentiles": 5}
    r = vllm.parse(json.dumps(record), "types.json")
    assert [m.metric for m in r.measurements] == ["request_throughput"]


def test_edge_gpudesk_file_with_non_object_parts():
    doc = {"gpudesk_benchmark": 1, "hardware": [], "measurements": [1, {"metric": "ttft_s"}]}
    r = gpudesk_schema.parse(json.dumps(doc), "parts.json")
    assert r.measurements == [] and r.errors and r.errors[0].place.startswith("record 0")


@pytest.mark.parametrize("cut", [10, 100, 500, 1000])
def test_edge_jsonl_cut_anywhere(cut):
    r = llama_bench.parse(LLAMA_M5.read_text()[:cut], "cut.jsonl")
    check(r, "cut.jsonl")
    assert r.errors or r.measurements


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=60), st.from_regex(r"[a-z+]{1,12}://[^ ]{0,30}", fullmatch=True),
                 st.builds(lambda p: f"sqlite:///{p}", st.text(max_size=40))))
def test_any_database_url_is_taken_or_refused_in_words(url):
    """An odd --database-url or settings URL: either one gpudesk can open, or a UrlError that says
    which URLs it takes; never another exception (the CLI turns those into 'unexpected error')."""
    from gpudesk.core.catalogue.db import UrlError, check_url

    try:
        check_url(url)
    except UrlError as exc:
        assert str(exc) and exc.kind in ("usage", "missing", "not_writable")
        assert "\n" not in str(exc)
