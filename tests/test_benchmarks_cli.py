"""`gpudesk import FILE... [--json] [--dry-run] [--gpu ID --count N]`: the contract gpudesk/cli.py
relies on (import_files, report.to_json, report.format_text, report.ok -> exit status)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest

from gpudesk.cli import main

from .test_benchmarks_importers import LLAMA_4080, LLAMA_M5, SGLANG, VLLM_FAILED, VLLM_RUN0


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def measurements(gpudesk_home) -> int:
    with sqlite3.connect(gpudesk_home / "gpudesk.sqlite3") as conn:
        return conn.execute("SELECT count(*) FROM bench_measurements").fetchone()[0]


def test_import_json(catalogue, gpudesk_home, capsys):
    code, out, _ = run(capsys, "import", str(LLAMA_4080), str(LLAMA_M5), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["ok"] is True and data["dry_run"] is False and data["stored"] == 7
    first = data["files"][0]
    assert first["name"] == LLAMA_4080.name and first["format"] == "llama-bench" and first["status"] == "imported"
    assert first["stored"] == 2 and first["metrics"] == {"decode_tokens_per_s_per_user": 1, "prefill_tokens_per_s": 1}
    assert first["hardware"][0]["accelerator_id"] == "rtx-4080" and first["hardware"][0]["confidence"] == "exact"
    assert measurements(gpudesk_home) == 7
    # again: nothing new, still success
    code, out, _ = run(capsys, "import", str(LLAMA_4080), "--json")
    assert code == 0 and json.loads(out)["files"][0]["status"] == "already imported"


def test_import_dry_run_text(catalogue, gpudesk_home, capsys):
    code, out, _ = run(capsys, "import", str(VLLM_RUN0), "--dry-run", "--gpu", "a100-sxm4-80gb", "--count", "4")
    assert code == 0
    assert "dry run" in out and "would store 16" in out and "4 × a100-sxm4-80gb" in out
    assert measurements(gpudesk_home) == 0


def test_import_failure_exits_1_and_names_the_problem(catalogue, gpudesk_home, capsys, tmp_path):
    binary = tmp_path / "model.gguf"
    binary.write_bytes(b"GGUF" + bytes(range(256)) * 4)
    code, out, _ = run(capsys, "import", str(VLLM_FAILED), str(binary), str(LLAMA_4080), "--json")
    assert code == 1
    data = json.loads(out)
    assert data["ok"] is False and data["failed"] == 2 and data["stored"] == 2
    failed = {f["name"]: f for f in data["files"] if not f["ok"]}
    assert "every request failed" in json.dumps(failed[VLLM_FAILED.name]["problems"])
    assert "GGUF model file" in failed["model.gguf"]["problems"][0]["message"]
    code, out, _ = run(capsys, "import", str(SGLANG), "--gpu", "not-a-gpu")
    assert code == 1 and "not-a-gpu" in out and "not an accelerator" in out


def test_import_subprocess_entry_point(catalogue, gpudesk_home):
    result = subprocess.run([sys.executable, "-m", "gpudesk", "import", str(LLAMA_4080), "--json", "--dry-run"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["files"][0]["stored"] == 2


def test_estimates_use_the_calibration_unless_switched_off(catalogue, tmp_path, capsys):
    """After an import, `gpudesk estimate` applies the user's calibration and says on how many
    measurements it rests; --no-calibration and the Preferences switch turn it off."""
    from gpudesk.core.settings import load_settings, save_settings

    assert main(["import", str(LLAMA_4080)]) == 0
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({
        "gpudesk_scenario": 1, "name": "4080 chat",
        "workload": {"preset": "llama3-8b-serve", "kind": "infer", "concurrency": 1, "precision": "int4"},
        "cluster": [{"item": "rtx-4080"}]}))
    capsys.readouterr()

    def decode(*extra) -> tuple[float, list[dict]]:
        assert main(["estimate", str(scenario), "--json", *extra]) == 0
        doc = json.loads(capsys.readouterr().out)
        return doc["decode_tokens_per_s_per_user"]["likely"], [f for f in doc["findings"] if f["code"] == "calibrated"]

    calibrated, notes = decode()
    default, none = decode("--no-calibration")
    assert notes and "1 of your measurements" in notes[0]["text"] and not none
    # the finding carries the factor the measurement implies; the decode speed moves by exactly that much
    factor = notes[0]["values"]["factor"]
    assert factor != 1.0 and calibrated / default == pytest.approx(factor, rel=0.01)
    settings = load_settings()
    settings.calibration_enabled = False
    save_settings(settings)
    assert decode()[0] == default


# ----------------------------------------------------------------------------------- gpudesk measurements
def _imported(capsys) -> None:
    assert main(["import", str(LLAMA_4080), str(LLAMA_M5)]) == 0
    capsys.readouterr()


def test_measurements_list_json_has_the_views_csv_columns_and_the_estimates(catalogue, capsys):
    from gpudesk.core.benchmarks.summary import COLUMNS

    _imported(capsys)
    code, out, _ = run(capsys, "measurements", "list", "--json")
    assert code == 0
    rows = json.loads(out)
    assert len(rows) == 7 and all(list(r) == COLUMNS for r in rows)
    decode = [r for r in rows if r["accelerator_id"] == "rtx-4080" and r["metric"] == "decode_tokens_per_s_per_user"]
    assert len(decode) == 1
    row = decode[0]
    assert row["measured"] == pytest.approx(118.881588) and row["unit"] == "tokens/s"
    assert row["accelerator_count"] == 1 and row["source_file"] == LLAMA_4080.name and row["format"] == "llama-bench"
    assert row["compared"] is True and row["why_not_compared"] == ""
    assert row["estimated_low"] <= row["estimated_likely"] <= row["estimated_high"]
    assert row["error"] == pytest.approx((row["estimated_likely"] - row["measured"]) / row["measured"])
    # the same numbers as the Benchmarks view's comparison (compare() with no calibration)
    from gpudesk.core.benchmarks.store import stored_measurements
    from gpudesk.core.benchmarks.versus import compare

    stored = stored_measurements(catalogue, ids=[row["id"]])[0]
    assert compare(catalogue, stored).estimated.likely == pytest.approx(row["estimated_likely"])


def test_measurements_list_filters_by_accelerator_and_prints_csv_and_a_table(catalogue, capsys):
    import csv
    import io

    from gpudesk.core.benchmarks.summary import COLUMNS

    _imported(capsys)
    code, out, _ = run(capsys, "measurements", "list", "--csv", "--accelerator", "apple-m5-max")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 5 and list(rows[0]) == COLUMNS
    assert {r["accelerator_id"] for r in rows} == {"apple-m5-max"} and {r["source_file"] for r in rows} == {LLAMA_M5.name}
    code, out, _ = run(capsys, "measurements", "list", "--accelerator", "rtx-4080")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["id", "accelerator", "metric", "statistic"]
    assert sum("1 × rtx-4080" in line for line in lines) == 2 and "apple-m5-max" not in out
    assert "2 measurement(s)" in lines[-1]


def test_measurements_export_csv_and_json(catalogue, capsys, tmp_path):
    import csv

    from gpudesk.core.benchmarks.gpudesk_schema import parse as parse_gpudesk

    _imported(capsys)
    target = tmp_path / "out.csv"
    code, _, err = run(capsys, "measurements", "export", str(target), "--accelerator", "rtx-4080")
    assert code == 0 and "wrote 2 measurement(s)" in err
    with target.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert sorted(r["metric"] for r in rows) == ["decode_tokens_per_s_per_user", "prefill_tokens_per_s"]
    assert all(r["estimated_likely"] for r in rows)
    doc_path = tmp_path / "all.json"
    code, _, err = run(capsys, "measurements", "export", str(doc_path))
    assert code == 0 and "wrote 7 measurement(s)" in err
    again = parse_gpudesk(doc_path)  # gpudesk's own format: it imports again
    assert len(again.measurements) == 7 and not again.errors
    assert {m.accelerator_id for m in again.measurements} == {"rtx-4080", "apple-m5-max"}


def test_measurements_refuses_bad_arguments_and_changes_nothing(catalogue, capsys, tmp_path):
    _imported(capsys)
    code, out, err = run(capsys, "measurements", "list", "--accelerator", "no-such-gpu")
    assert code == 2 and out == "" and "--accelerator no-such-gpu: not an accelerator in the catalogue" in err
    target = tmp_path / "out.txt"
    code, _, err = run(capsys, "measurements", "export", str(target))
    assert code == 2 and "say --csv or --json" in err and not target.exists()
    code, out, _ = run(capsys, "measurements", "list", "--accelerator", "h100-sxm5-80gb")
    assert code == 0 and "No measurements stored for h100-sxm5-80gb" in out
    code, out, _ = run(capsys, "measurements", "list", "--json", "--accelerator", "h100-sxm5-80gb")
    assert code == 0 and json.loads(out) == []
