"""Storing imports: hardware answers remembered, one transaction per file (a failing file changes
nothing), deduplication of files and of figures, privacy, bounded memory on huge files."""

from __future__ import annotations

import json
import sqlite3
import tracemalloc

import pytest

from gpudesk.core.benchmarks import _common, reader, writer
from gpudesk.core.benchmarks.store import (
    IMPORTED,
    answer_hardware,
    answer_model,
    answers,
    count_measurements,
    delete_measurements,
    import_files,
    imports,
    stored_measurements,
)

from .conftest import ROOT
from .test_benchmarks_importers import (
    BENCH,
    LLAMA_4080,
    LLAMA_CPU,
    LLAMA_M5,
    MLPERF_DETAIL,
    MLPERF_SUMMARY,
    MLPERF_SYSTEM,
    NCCL,
    SGLANG,
    TRAINING_LOG,
    TRAINING_SCALING,
    TRAINING_SYSTEM,
    TRTLLM,
    VLLM_FAILED,
    VLLM_LAMBDA,
    VLLM_RUN0,
    VLLM_SUMMARY,
)

TABLES = ("bench_imports", "bench_setups", "bench_measurements", "bench_answers")


def db_rows(gpudesk_home) -> dict[str, int]:
    with sqlite3.connect(gpudesk_home / "gpudesk.sqlite3") as conn:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def db_dump(gpudesk_home) -> str:
    with sqlite3.connect(gpudesk_home / "gpudesk.sqlite3") as conn:
        return "\n".join(repr(row) for t in TABLES for row in conn.execute(f"SELECT * FROM {t}"))


def test_every_real_file_imports_with_its_hardware(catalogue, gpudesk_home):
    files = sorted(p for p in BENCH.rglob("*") if p.is_file() and p.suffix != ".md")
    report = import_files(catalogue, files)
    by_name = {f.name: f for f in report.files}
    assert not report.ok  # the all-failed vLLM run cannot be imported...
    assert [f.name for f in report.files if not f.ok] == [VLLM_FAILED.name]
    assert by_name[VLLM_FAILED.name].errors[0].file == VLLM_FAILED.name
    expected = {
        LLAMA_4080.name: ("rtx-4080", 1), LLAMA_M5.name: ("apple-m5-max", 1), LLAMA_CPU.name: (None, 0),
        TRTLLM.name: ("rtx-4070-ti", 1), MLPERF_DETAIL.name: ("mi300x", 8), TRAINING_LOG.name: ("l40s", 4),
        NCCL.name: ("h100-sxm5-80gb", 16), SGLANG.name: (None, None), VLLM_LAMBDA.name: (None, None),
    }
    for name, (acc, count) in expected.items():
        hw = by_name[name].hardware_list()
        assert [(h["accelerator_id"], h["count"]) for h in hw] == [(acc, count)], name
    # the MLPerf summary repeats the detail log's figures, the sweep summary the run file's
    assert by_name[MLPERF_SUMMARY.name].status == "nothing new" and by_name[MLPERF_SUMMARY.name].duplicates == 11
    assert by_name[VLLM_SUMMARY.name].stored == 16 and by_name[VLLM_SUMMARY.name].duplicates == 16
    for context in (MLPERF_SYSTEM, TRAINING_SYSTEM, TRAINING_SCALING):
        assert by_name[context.name].status == "context" and by_name[context.name].ok
    # the files that do not name their hardware say what to ask
    for name in (SGLANG.name, VLLM_LAMBDA.name, VLLM_RUN0.name):
        assert any(p.severity == "question" and "--gpu" in p.message for p in by_name[name].problems)
    # the guessed H100 variant is flagged
    assert any(p.severity == "question" and "guess" in p.message for p in by_name[NCCL.name].problems)
    assert count_measurements(catalogue) == report.stored == db_rows(gpudesk_home)["bench_measurements"]
    cpu = stored_measurements(catalogue, source_file=LLAMA_CPU.name)
    assert len(cpu) == 2 and all(m.cpu_only and m.accelerator_id is None for m in cpu)
    got = stored_measurements(catalogue, accelerator_id="rtx-4080", metric="decode_tokens_per_s_per_user",
                              source_file=LLAMA_4080.name)
    assert [m.value for m in got] == [pytest.approx(118.881588)] and got[0].id and got[0].import_id


def test_reimporting_the_same_file_stores_nothing_and_says_so(catalogue, gpudesk_home):
    first = import_files(catalogue, [LLAMA_M5])
    assert first.ok and first.stored == 5
    before = db_rows(gpudesk_home)
    again = import_files(catalogue, [LLAMA_M5])
    assert again.ok and again.stored == 0
    f = again.files[0]
    assert f.status == "already imported" and "already imported" in f.summary()
    assert f.previous_import["stored"] == 5
    assert db_rows(gpudesk_home) == before
    # the same records in another file (renamed, one line more): only the new one is stored
    text = LLAMA_M5.read_text()
    extra = json.loads(text.splitlines()[0])
    extra["test_time"] = "2026-06-04T18:00:00Z"
    copy = gpudesk_home / "m5-again.jsonl"
    copy.write_text(text + json.dumps(extra) + "\n")
    third = import_files(catalogue, [copy])
    assert third.files[0].stored == 1 and third.files[0].duplicates == 5
    assert "already stored" in third.format_text()


def test_a_file_that_fails_changes_nothing(catalogue, gpudesk_home, tmp_path, monkeypatch):
    import_files(catalogue, [LLAMA_4080])
    before = db_rows(gpudesk_home)
    # a failure in the middle of the inserts (after the first batch went in) is undone
    big = tmp_path / "big.jsonl"
    rec = json.loads(LLAMA_M5.read_text().splitlines()[0])
    with big.open("w") as handle:
        for i in range(50):
            handle.write(json.dumps(dict(rec, test_time=f"t{i}")) + "\n")
    monkeypatch.setattr(writer, "BATCH", 10)
    monkeypatch.setattr(_common, "BATCH_ROWS", 10)
    calls = {"n": 0}
    real = writer.RowWriter.flush

    def failing(self):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("disk full")
        return real(self)

    monkeypatch.setattr(writer.RowWriter, "flush", failing)
    report = import_files(catalogue, [big, LLAMA_CPU])
    assert calls["n"] >= 3
    assert not report.files[0].ok and report.files[0].stored == 0
    assert "disk full" in report.files[0].errors[0].message and "undone" in report.files[0].errors[0].message
    assert report.files[1].ok and report.files[1].stored == 2  # the next file is its own transaction
    after = db_rows(gpudesk_home)
    assert after["bench_measurements"] == before["bench_measurements"] + 2
    assert after["bench_imports"] == before["bench_imports"] + 1


@pytest.mark.parametrize("content, words", [
    (b"", "empty"),
    (bytes(range(256)) * 64, "binary"),
    (b"\x1f\x8b\x08\x00" + b"\x00" * 100, "gzip"),
    (b"PK\x03\x04" + b"\x00" * 100, "zip"),
    (b"just text, no results\n", "not recognised"),
    (b'{"gpudesk_benchmark": 2, "measurements": []}', "gpudesk_benchmark"),
    (b'[{"build_commit": "x", "model_type": "llama 7B F16", "n_prompt": 512, "n_gen": 0, "avg_ts": 0}]',
     "no measurement"),
    (b'{"backend": "sglang", "dataset_name": "random", "output_throughput": ', "incomplete"),
    (b'{"engine": {}, "world_info": {}, "performance": {"request_throughput_req_s": "fast"}}', "not a number"),
    (b"MLPerf Results Summary\nScenario : Offline\nSamples per second: lots\n", "not a number"),
    (b"# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20\n"
     b"#  out-of-place busbw\n# Avg bus bandwidth    : nan\n", "nccl-tests"),
], ids=["empty", "binary", "gzip", "zip", "unknown", "schema-version", "zero-speed", "truncated", "string-number",
        "mlperf-garbage", "nccl-empty"])
def test_bad_files_are_refused_with_file_place_and_problem(catalogue, gpudesk_home, tmp_path, content, words):
    import_files(catalogue, [LLAMA_4080])
    before = db_rows(gpudesk_home)
    path = tmp_path / "bad-input.json"
    path.write_bytes(content)
    report = import_files(catalogue, [path])
    assert not report.ok
    f = report.files[0]
    assert f.status == "failed" and f.stored == 0
    text = " | ".join(f"{p.place}: {p.message}" for p in f.problems)
    assert words in text, text
    assert all(p.file == "bad-input.json" for p in f.problems)
    assert db_rows(gpudesk_home) == before
    assert "bad-input.json" in report.format_text() and json.dumps(report.to_json())


def test_size_limit_and_missing_files(catalogue, gpudesk_home, tmp_path, monkeypatch):
    before = db_rows(gpudesk_home)
    monkeypatch.setattr(reader, "MAX_FILE_BYTES", 1000)
    report = import_files(catalogue, [LLAMA_4080, tmp_path / "gone.json", tmp_path])
    messages = [f.errors[0].message for f in report.files]
    assert "more than the" in messages[0] and "split it" in messages[0]
    assert "does not exist" in messages[1] and "folder" in messages[2]
    assert not report.ok and db_rows(gpudesk_home) == before
    report = import_files(catalogue, [LLAMA_4080], max_bytes=100)
    assert "more than the 100 bytes" in report.files[0].errors[0].message


def test_dry_run_reads_everything_and_stores_nothing(catalogue, gpudesk_home):
    before = db_rows(gpudesk_home)
    report = import_files(catalogue, [LLAMA_4080, VLLM_RUN0], dry_run=True, gpu="h100-sxm5-80gb", count=2)
    assert report.ok and report.dry_run and report.stored == 18
    assert "dry run" in report.format_text() and "would store" in report.format_text()
    assert db_rows(gpudesk_home) == before  # no measurements, imports or remembered answers
    assert report.to_json()["files"][1]["hardware"][0]["accelerator_id"] == "h100-sxm5-80gb"


def test_hardware_answers_are_remembered_for_the_next_file(catalogue, gpudesk_home):
    first = import_files(catalogue, [VLLM_RUN0], gpu="h100-pcie-80gb", count=2)
    assert first.ok
    assert {(m.accelerator_id, m.accelerator_count, m.match_confidence) for m in stored_measurements(catalogue)} == {
        ("h100-pcie-80gb", 2, "exact")}
    assert [a["key"] for a in answers(catalogue)] == ["sig:vllm:facebook/opt-125m"]
    # the next file of the same signature gets the answer without asking
    second = import_files(catalogue, [VLLM_SUMMARY])
    hw = second.files[0].hardware_list()
    assert [(h["accelerator_id"], h["count"], h["source"]) for h in hw] == [("h100-pcie-80gb", 2, "answer")]
    assert not any(p.severity == "question" for p in second.files[0].problems)
    # a file that names its hardware keeps its own
    third = import_files(catalogue, [LLAMA_4080], gpu="h100-pcie-80gb")
    assert third.files[0].hardware_list()[0]["accelerator_id"] == "rtx-4080"


def test_answering_later_updates_stored_measurements(catalogue):
    import_files(catalogue, [SGLANG, NCCL])
    key = stored_measurements(catalogue, source_file=SGLANG.name, limit=1)[0].hardware_key
    updated = answer_hardware(catalogue, key, "h200-sxm-141gb", 8)
    assert updated == 35
    assert {m.accelerator_id for m in stored_measurements(catalogue, source_file=SGLANG.name)} == {"h200-sxm-141gb"}
    answer_model(catalogue, key, model="Llama 3.1 70B", params=70.6e9, precision="bf16")
    m = stored_measurements(catalogue, source_file=SGLANG.name, limit=1)[0]
    assert m.workload["params"] == 70.6e9 and m.workload["params_from"] == "your answer"
    # the guessed H100 variant of the nccl log, corrected by the user
    nccl_key = stored_measurements(catalogue, source_file=NCCL.name, limit=1)[0].hardware_key
    assert nccl_key == "hw:NVIDIA H100 80GB HBM3"
    answer_hardware(catalogue, nccl_key, "h100-sxm5-80gb")
    assert {m.match_confidence for m in stored_measurements(catalogue, source_file=NCCL.name)} == {"exact"}
    with pytest.raises(ValueError):
        answer_hardware(catalogue, key, "no-such-gpu")


def test_bad_cli_answers_refuse_the_import(catalogue, gpudesk_home):
    before = db_rows(gpudesk_home)
    report = import_files(catalogue, [VLLM_RUN0], gpu="h100")
    assert not report.ok and "not an accelerator" in report.problems[0].message
    assert "h100-sxm5-80gb" in report.problems[0].message  # did you mean
    assert db_rows(gpudesk_home) == before


def test_private_details_are_not_stored(catalogue, gpudesk_home, tmp_path):
    rec = json.loads(LLAMA_M5.read_text().splitlines()[0])
    rec["model_filename"] = "/home/alice/secret-project/models/llama.gguf"
    rec["cpu_info"] = "Apple M5 Max"
    vllm_rec = json.loads(VLLM_LAMBDA.read_text())
    vllm_rec["HF_TOKEN"] = "hf_abcdefSECRET"
    vllm_rec["env"] = {"AWS_SECRET_ACCESS_KEY": "xyzSECRET"}
    vllm_rec["hostname"] = "alice-workstation.corp"
    a = tmp_path / "llama.jsonl"
    a.write_text(json.dumps(rec) + "\n")
    b = tmp_path / "serve.json"
    b.write_text(json.dumps(vllm_rec))
    report = import_files(catalogue, [a, b, NCCL, TRTLLM])
    assert report.ok
    dump = db_dump(gpudesk_home)
    for secret in ("/home/alice", "secret-project", "SECRET", "alice-workstation", "ztan-mig", "/media/masa",
                   "Gino Wickman", str(tmp_path)):
        assert secret not in dump, secret
    assert "llama.gguf" in dump  # the base name stays


def test_delete_measurements_and_reimport(catalogue, gpudesk_home):
    import_files(catalogue, [LLAMA_4080, LLAMA_M5])
    assert len(imports(catalogue)) == 2
    with pytest.raises(ValueError):
        delete_measurements(catalogue)
    assert delete_measurements(catalogue, source_file=LLAMA_4080.name) == 2
    assert [i["source_file"] for i in imports(catalogue)] == [LLAMA_M5.name]
    assert import_files(catalogue, [LLAMA_4080]).stored == 2  # its import went with its measurements
    assert delete_measurements(catalogue, everything=True) == 7 and imports(catalogue) == []


def test_huge_jsonl_streams_in_bounded_memory(catalogue, gpudesk_home, tmp_path):
    """~55 MB of llama-bench JSONL: imported in batches; Python's peak allocations stay a small
    fraction of the file. (Records carry a long tensor-override list, as `-ot` runs write them, so
    that the file is big without the test spending minutes under tracemalloc.)"""
    template = json.loads(LLAMA_4080.read_text())[0]
    overrides = ";".join(f"blk\\.{i}\\.ffn_(up|down|gate)_exps=CPU" for i in range(330))
    path = tmp_path / "huge.jsonl"
    with path.open("w") as handle:
        for i in range(4_200):
            rec = dict(template, avg_ts=7000 + i * 1e-3, test_time=f"2025-04-24#{i}",
                       tensor_buft_overrides=overrides + str(i % 7))
            handle.write(json.dumps(rec) + "\n")
    size = path.stat().st_size
    assert size > 50e6
    tracemalloc.start()
    try:
        report = import_files(catalogue, [path])
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.ok and report.files[0].read == 4_200 and report.files[0].stored == 4_200
    assert peak < 16e6, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.0f} MB file"
    assert db_rows(gpudesk_home)["bench_measurements"] == 4_200
    stored = stored_measurements(catalogue, limit=1)[0]
    assert len(stored.conditions["tensor_buft_overrides"]) <= 200  # long texts are cut


def test_one_huge_json_value_is_refused_with_a_message(catalogue, gpudesk_home, tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "MAX_RECORD_CHARS", 200_000)
    rec = json.loads(VLLM_LAMBDA.read_text())
    rec["generated_texts"] = ["x" * 1000] * 500
    path = tmp_path / "detailed.json"
    path.write_text(json.dumps(rec))
    report = import_files(catalogue, [path])
    f = report.files[0]
    assert not f.ok and "larger than" in f.errors[0].message and f.errors[0].place == "record 0 (line 1)"
    assert db_rows(gpudesk_home)["bench_measurements"] == 0


def test_open_questions_list_what_to_ask_until_answered(catalogue):
    from gpudesk.core.benchmarks.store import open_questions

    import_files(catalogue, [SGLANG, NCCL, LLAMA_4080, LLAMA_CPU])
    questions = {q["key"]: q for q in open_questions(catalogue)}
    assert set(questions) == {"hw:NVIDIA H100 80GB HBM3", "sig:sglang:sglang"}
    nccl = questions["hw:NVIDIA H100 80GB HBM3"]
    assert nccl["confidence"] == "likely" and nccl["guess"] == "h100-sxm5-80gb" and nccl["measurements"] == 187
    assert set(nccl["candidates"]) == {"h100-sxm5-80gb", "h100-pcie-80gb", "h100-nvl-94gb"}
    assert questions["sig:sglang:sglang"]["confidence"] == "ask" and questions["sig:sglang:sglang"]["formats"] == [
        "sglang"]
    answer_hardware(catalogue, "sig:sglang:sglang", "h200-sxm-141gb", 8)
    assert [q["key"] for q in open_questions(catalogue)] == ["hw:NVIDIA H100 80GB HBM3"]


def test_a_cli_answer_only_replaces_a_guess_with_one_of_its_variants(catalogue):
    report = import_files(catalogue, [NCCL, VLLM_RUN0], gpu="a100-sxm4-80gb", count=1)
    nccl, serve = report.files
    assert nccl.hardware_list()[0]["accelerator_id"] == "h100-sxm5-80gb"  # still the file's (guessed) H100
    assert any("was not applied" in p.message for p in nccl.problems)
    assert serve.hardware_list()[0]["accelerator_id"] == "a100-sxm4-80gb"
    delete_measurements(catalogue, everything=True)
    report = import_files(catalogue, [NCCL], gpu="h100-pcie-80gb")
    hw = report.files[0].hardware_list()[0]
    assert (hw["accelerator_id"], hw["count"], hw["confidence"], hw["source"]) == ("h100-pcie-80gb", 16, "exact", "cli")


def test_progress_is_reported_and_cancel_rolls_back_the_file(catalogue, tmp_path):
    """The import view's progress bar and Cancel: a cancelled file stores nothing, the files
    after it are not read, and the files before it stay imported."""
    from gpudesk.core.benchmarks.store import CANCELLED, IMPORTED, count_measurements, import_files

    first = tmp_path / "first.jsonl"
    first.write_text(_llama_lines(3, seed=1), encoding="utf-8")
    big = tmp_path / "big.jsonl"
    big.write_text(_llama_lines(3000, seed=2), encoding="utf-8")
    last = tmp_path / "last.jsonl"
    last.write_text(_llama_lines(3, seed=3), encoding="utf-8")
    seen = []

    def progress(index, name, done, total):
        seen.append((index, name, done, total))
        return not (name == "big.jsonl" and done > total // 3)

    report = import_files(catalogue, [first, big, last], progress=progress)
    statuses = [f.status for f in report.files]
    assert statuses == [IMPORTED, CANCELLED, CANCELLED]
    assert count_measurements(catalogue) == report.files[0].stored > 0
    big_reports = [s for s in seen if s[1] == "big.jsonl"]
    assert big_reports[0][2] == 0 and big_reports[-1][2] > 0 and all(s[3] == big.stat().st_size for s in big_reports)
    assert not any(s[1] == "last.jsonl" for s in seen)
    # nothing half-stored: importing again without cancel stores the big file whole
    again = import_files(catalogue, [big, last])
    assert [f.status for f in again.files] == [IMPORTED, IMPORTED]


def _llama_lines(n: int, seed: int) -> str:
    import json as _json

    lines = []
    for i in range(n):
        lines.append(_json.dumps({
            "build_commit": "abc", "build_number": 5163 + seed, "cpu_info": "AMD", "gpu_info": "NVIDIA GeForce RTX 4090",
            "backends": "CUDA", "model_filename": "m.gguf", "model_type": "llama 8B Q4_K - Medium",
            "model_size": 4920000000, "model_n_params": 8030000000, "n_batch": 2048, "n_ubatch": 512,
            "n_threads": 16, "type_k": "f16", "type_v": "f16", "n_gpu_layers": 99, "flash_attn": False,
            "n_prompt": 512, "n_gen": 0, "n_depth": i, "test_time": "2025-01-01T00:00:00Z",
            "avg_ns": 100000000 + i + seed * 7, "stddev_ns": 1000, "avg_ts": 5000.0 + i + seed, "stddev_ts": 10.0,
            "samples_ns": [1, 2], "samples_ts": [1.0, 2.0]}))
    return "\n".join(lines) + "\n"


def test_a_dry_run_counts_a_figure_shared_by_two_files_once(catalogue, tmp_path):
    """The preview must promise what the import will store: the same run in two files (an MLPerf
    summary and its detail log) is counted once, as the import stores it once."""
    from gpudesk.core.benchmarks.store import import_files

    mlperf = sorted((ROOT / "tests" / "data" / "bench" / "mlperf-inference").iterdir())
    files = [p for p in mlperf if p.suffix == ".txt"]
    assert len(files) == 2
    preview = import_files(catalogue, files, dry_run=True)
    real = import_files(catalogue, files)
    assert [f.stored for f in preview.files] == [f.stored for f in real.files]
    assert sum(f.stored for f in real.files) == real.files[0].stored > 0


def _llama_file(path, n: int, hour: int = 10):
    rec = json.loads(LLAMA_M5.read_text().splitlines()[0])
    path.write_text("".join(json.dumps(dict(rec, test_time=f"2026-06-01T{hour:02d}:{i // 60:02d}:{i % 60:02d}Z")) + "\n"
                            for i in range(n)))
    return path


def _import_rows(gpudesk_home) -> list[tuple]:
    with sqlite3.connect(gpudesk_home / "gpudesk.sqlite3") as conn:
        return conn.execute("SELECT source_file, file_hash, size_bytes, stored FROM bench_imports ORDER BY id").fetchall()


@pytest.fixture
def hashed_beside(monkeypatch):
    """Every file is large enough to be hashed beside its import; the threads started are listed."""
    from gpudesk.core.benchmarks import store

    monkeypatch.setattr(store, "HASH_BESIDE_BYTES", 1)
    started = []
    real_start = store._HashBeside.start
    monkeypatch.setattr(store._HashBeside, "start", lambda self: started.append(self.src.name) or real_start(self))
    return started


def test_a_file_no_earlier_import_can_be_is_hashed_beside_its_import(catalogue, gpudesk_home, tmp_path,
                                                                     hashed_beside):
    import hashlib

    path = _llama_file(tmp_path / "run.jsonl", 30)
    assert import_files(catalogue, [path]).files[0].stored == 30
    assert hashed_beside == ["run.jsonl"]
    # the committed import row holds the file's SHA-256 and size, not the stand-in
    assert _import_rows(gpudesk_home) == [("run.jsonl", hashlib.sha256(path.read_bytes()).hexdigest(),
                                           path.stat().st_size, 30)]
    # an import of its size exists now: a copy is hashed first, and recognised without being read
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(path.read_bytes())
    assert import_files(catalogue, [copy]).files[0].status == "already imported"
    assert hashed_beside == ["run.jsonl"]
    # the same size, other bytes (another hour in every time stamp): hashed first, then imported
    other = _llama_file(tmp_path / "other.jsonl", 30, hour=11)
    assert other.stat().st_size == path.stat().st_size
    assert import_files(catalogue, [other]).files[0].stored == 30
    assert hashed_beside == ["run.jsonl"] and len(_import_rows(gpudesk_home)) == 2


def test_a_file_given_twice_in_one_import_is_stored_once(catalogue, gpudesk_home, tmp_path, hashed_beside):
    path = _llama_file(tmp_path / "run.jsonl", 12)
    report = import_files(catalogue, [path, path])
    assert [(f.status, f.stored) for f in report.files] == [("imported", 12), ("already imported", 0)]
    assert hashed_beside == ["run.jsonl"] and len(_import_rows(gpudesk_home)) == 1


def test_a_file_the_hash_cannot_read_changes_nothing(catalogue, gpudesk_home, tmp_path, hashed_beside, monkeypatch):
    from gpudesk.core.benchmarks import store

    import_files(catalogue, [LLAMA_4080])
    before = db_rows(gpudesk_home)

    def unreadable(_src):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(store, "_file_hash", unreadable)
    f = import_files(catalogue, [_llama_file(tmp_path / "run.jsonl", 12)]).files[0]
    assert (f.status, f.stored, f.import_id) == ("failed", 0, None)
    assert f.errors[0].message == "the file cannot be read (Input/output error): nothing from it was stored"
    assert db_rows(gpudesk_home) == before


@pytest.mark.parametrize("beside", [True, False], ids=["hashed-beside", "hashed-first"])
def test_a_file_another_program_imports_at_the_same_moment_is_stored_once(catalogue, gpudesk_home, tmp_path,
                                                                         monkeypatch, beside):
    """Another program stores the same file after this one looked for it and before it commits:
    the unique file hash refuses the second, which is reported as already imported."""
    import hashlib

    from gpudesk.core.benchmarks import store

    path = _llama_file(tmp_path / "run.jsonl", 12)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()

    def other_program_imports_it(*_args):
        with catalogue.engine.begin() as conn:
            writer.new_import_row(conn, {"file_hash": digest, "source_file": "run.jsonl", "format": "llama-bench",
                                         "imported_at": "2026-11-27T10:00:00", "imported_by": "someone else",
                                         "size_bytes": 0, "records": 12, "stored": 12, "duplicates": 0,
                                         "problems": []})
        return False

    monkeypatch.setattr(store, "HASH_BESIDE_BYTES", 1 if beside else 1 << 40)
    monkeypatch.setattr(store, "_may_be_imported" if beside else "_already_imported", other_program_imports_it)
    f = import_files(catalogue, [path]).files[0]
    assert (f.status, f.stored, f.import_id) == ("already imported", 0, None)
    assert "another program imported this file at the same moment" in f.problems[-1].message
    assert f.previous_import is not None and f.previous_import["stored"] == 12
    assert [row[:2] for row in _import_rows(gpudesk_home)] == [("run.jsonl", digest)]
    assert db_rows(gpudesk_home)["bench_measurements"] == 0


def test_a_cancelled_import_leaves_no_hash_thread_behind(catalogue, gpudesk_home, tmp_path, hashed_beside,
                                                         monkeypatch):
    import threading
    import time

    from gpudesk.core.benchmarks import store

    real = store._file_hash

    def slow(src):
        time.sleep(0.3)
        return real(src)

    monkeypatch.setattr(store, "_file_hash", slow)
    path = _llama_file(tmp_path / "run.jsonl", 400)
    report = import_files(catalogue, [path], progress=lambda _i, _name, read, _total: read == 0)
    assert report.files[0].status == "cancelled" and hashed_beside == ["run.jsonl"]
    assert not [t for t in threading.enumerate() if t.name == "gpudesk-file-hash"]
    assert db_rows(gpudesk_home)["bench_imports"] == 0


def _stored_rows(gpudesk_home) -> list[tuple]:
    """Every stored figure in the order it was written, with its import."""
    with sqlite3.connect(gpudesk_home / "gpudesk.sqlite3") as conn:
        return conn.execute("SELECT s.import_id, m.content_hash, m.metric, m.value, m.stddev, m.record_index, "
                            "m.workload, m.conditions FROM bench_measurements m JOIN bench_setups s "
                            "ON s.id = m.setup_id ORDER BY m.id").fetchall()


def _two_overlapping_files(tmp_path):
    """A file of 7 records, and one of 13 that repeats those 7 and one of its own records."""
    first = _llama_lines(7, 0).splitlines(keepends=True)
    more = _llama_lines(12, 0).splitlines(keepends=True)[7:]
    a = tmp_path / "a.jsonl"
    a.write_text("".join(first))
    b = tmp_path / "b.jsonl"
    b.write_text("".join(more[:2] + first + more[2:3] + more[2:]))
    return a, b


def _import_two(catalogue, tmp_path, monkeypatch, per_statement: int) -> list:
    monkeypatch.setattr(writer, "ROWS_PER_STATEMENT", per_statement)
    monkeypatch.setattr(writer, "BATCH", 5)  # several flushes, each with whole statements and a rest
    monkeypatch.setattr(_common, "BATCH_ROWS", 5)
    a, b = _two_overlapping_files(tmp_path)
    return [(f.status, f.read, f.stored, f.duplicates) for f in import_files(catalogue, [a, b]).files]


@pytest.mark.parametrize("per_statement", [1, 2, 3, 500])
def test_rows_written_several_to_a_statement_are_stored_as_one_at_a_time(catalogue, gpudesk_home, tmp_path,
                                                                         monkeypatch, per_statement):
    """However many rows one INSERT writes, the same figures are stored in file order, and figures
    stored before or earlier in the same statement are counted as duplicates, not stored again."""
    counts = _import_two(catalogue, tmp_path, monkeypatch, per_statement)
    assert counts == [(IMPORTED, 7, 7, 0), (IMPORTED, 13, 5, 8)]
    rows = _stored_rows(gpudesk_home)
    assert len(rows) == 12 == len({r[1] for r in rows})
    first, second = rows[0][0], rows[-1][0]
    assert [r[0] for r in rows] == [first] * 7 + [second] * 5
    assert [r[5] for r in rows] == [0, 1, 2, 3, 4, 5, 6] + [0, 1, 9, 11, 12]  # record indexes, in file order
    assert [json.loads(r[6])["depth"] for r in rows] == list(range(12))[:7] + [7, 8, 9, 10, 11]
    with sqlite3.connect(gpudesk_home / "gpudesk.sqlite3") as conn:
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_an_import_writes_rows_in_statements_of_rows_per_statement(catalogue, gpudesk_home, tmp_path):
    """1,200 figures of one setup go in two statements of 500 rows and 200 single-row steps (the
    rest of the batch), not 1,200 steps."""
    statements: list[str] = []
    with catalogue.engine.connect() as conn:
        conn.connection.dbapi_connection.set_trace_callback(statements.append)
    path = tmp_path / "many.jsonl"
    path.write_text(_llama_lines(1200, 0))
    try:
        assert import_files(catalogue, [path]).files[0].stored == 1200
    finally:
        with catalogue.engine.connect() as conn:
            conn.connection.dbapi_connection.set_trace_callback(None)
    inserts = [s for s in statements if s.startswith("INSERT OR IGNORE INTO bench_measurements")]
    assert len(inserts) == 202
    assert [s.count("),(") + 1 for s in inserts[:2]] == [500, 500]


def test_an_sqlite_build_with_few_parameters_gets_statements_it_can_take(catalogue, gpudesk_home, tmp_path,
                                                                        monkeypatch):
    """SQLite before 3.32 takes at most 999 parameters in one statement (and a build may set fewer):
    the rows per statement follow the connection's limit, so no import fails on 'too many SQL
    variables'."""
    from sqlalchemy import event

    monkeypatch.setattr(writer, "ROWS_PER_STATEMENT", 5)  # 45 parameters, more than the 20 allowed
    catalogue.engine.dispose()

    @event.listens_for(catalogue.engine, "connect")
    def _few(dbapi_connection, _record):
        dbapi_connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 20)  # two rows of nine

    path = tmp_path / "many.jsonl"
    path.write_text(_llama_lines(25, 0))
    report = import_files(catalogue, [path]).files[0]
    assert (report.status, report.stored, report.problems) == (IMPORTED, 25, [])
    assert len(_stored_rows(gpudesk_home)) == 25


def test_an_import_checks_no_foreign_keys_and_leaves_them_checked(catalogue, gpudesk_home, tmp_path, monkeypatch):
    """The bulk load runs without foreign-key checks (its rows refer to setups it has just written)
    and a page cache of BULK_CACHE_KIB; both are put back for whatever the connection does next."""
    from gpudesk.core.benchmarks import store

    with catalogue.engine.connect() as conn:
        before = [conn.exec_driver_sql(f"PRAGMA {p}").scalar() for p in ("foreign_keys", "cache_size")]
    seen = []
    real = writer.RowWriter.flush

    def flush(self):
        seen.append([self.conn.exec_driver_sql(f"PRAGMA {p}").scalar() for p in ("foreign_keys", "cache_size")])
        return real(self)

    monkeypatch.setattr(writer.RowWriter, "flush", flush)
    path = tmp_path / "a.jsonl"
    path.write_text(_llama_lines(3, 0))
    assert import_files(catalogue, [path]).files[0].stored == 3
    assert before == [1, -2000]
    assert seen and all(s == [0, -store.BULK_CACHE_KIB] for s in seen)
    with catalogue.engine.connect() as conn:
        assert [conn.exec_driver_sql(f"PRAGMA {p}").scalar() for p in ("foreign_keys", "cache_size")] == before


def test_rows_of_setups_that_take_turns_are_stored_under_their_own_setup(catalogue, gpudesk_home, tmp_path,
                                                                          monkeypatch):
    """A statement of several rows names its setup: when a file's setups take turns, every row
    still goes under the setup of its record."""
    monkeypatch.setattr(writer, "ROWS_PER_STATEMENT", 2)
    one, other = _llama_lines(15, 0).splitlines(keepends=True), _llama_lines(15, 1).splitlines(keepends=True)
    path = tmp_path / "turns.jsonl"  # runs of five records: two statements of two rows and one row alone
    path.write_text("".join(line for i in range(0, 15, 5) for line in one[i:i + 5] + other[i:i + 5]))
    report = import_files(catalogue, [path]).files[0]
    assert (report.status, report.stored) == (IMPORTED, 30)
    with sqlite3.connect(gpudesk_home / "gpudesk.sqlite3") as conn:
        builds = [json.loads(c)["build"] for c, in conn.execute(
            "SELECT s.conditions FROM bench_measurements m JOIN bench_setups s ON s.id = m.setup_id "
            "ORDER BY m.record_index")]
    assert builds == (["abc (5163)"] * 5 + ["abc (5164)"] * 5) * 3


def test_a_dry_run_keeps_the_figures_of_every_file_but_the_last_for_the_files_after_it(catalogue, tmp_path,
                                                                                         monkeypatch):
    """A preview counts a figure two files share once, so it keeps what each file would store for
    the files after it; the last file's figures (100,000 hashes for a big llama-bench file) are not
    kept, as no file comes after it."""
    kept: list[bool] = []
    real = writer.RowWriter.__init__

    def init(self, *args, **kwargs):
        kept.append(kwargs.get("stored_here") is not None)
        real(self, *args, **kwargs)

    monkeypatch.setattr(writer.RowWriter, "__init__", init)
    a, b = _two_overlapping_files(tmp_path)
    assert import_files(catalogue, [a], dry_run=True).files[0].stored == 7
    assert kept == [False]
    kept.clear()
    preview = import_files(catalogue, [a, b], dry_run=True)
    assert [(f.stored, f.duplicates) for f in preview.files] == [(7, 0), (5, 8)]
    assert kept == [True, False]
