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
