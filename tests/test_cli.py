"""The command line and its JSON contract."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gpudesk import __version__
from gpudesk.cli import main


def run_cli(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert __version__ in capsys.readouterr().out


@pytest.mark.parametrize("argv, window", [
    ([], None), (["--quit-after-startup"], None), (["--quit-after-first-frame"], None),
    (["--database-url", "sqlite:///x.db"], "sqlite:///x.db"),
    (["--database-url=sqlite:///y.db", "--quit-after-startup"], "sqlite:///y.db"),
])
def test_the_window_starts_without_building_the_commands_parsers(argv, window, monkeypatch):
    import gpudesk.cli as cli
    import gpudesk.ui.app as app

    built, started = [], []
    real = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda commands=True: built.append(commands) or real(commands))
    monkeypatch.setattr(app, "run_app", lambda **kw: started.append(kw) or 0)
    assert cli.main(argv) == 0
    assert built == [False]
    assert started == [{"quit_after_startup": "--quit-after-startup" in argv, "database_url": window,
                        "quit_after_first_frame": "--quit-after-first-frame" in argv}]


@pytest.mark.parametrize("argv", [["catalog"], ["--database-url", "x", "catalog"], ["--help"], ["--quit-after-startup",
                                                                                                  "--verbose"]])
def test_anything_but_the_windows_options_is_read_by_the_whole_parser(argv, monkeypatch, capsys):
    import gpudesk.cli as cli

    built = []
    real = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda commands=True: built.append(commands) or real(commands))
    with pytest.raises(SystemExit):
        cli.main(argv)
    assert built == [True]
    out, err = capsys.readouterr()
    if argv == ["--help"]:
        assert "catalogue" in out and "import" in out  # the commands are listed
    elif "catalog" in argv:
        assert "invalid choice: 'catalog'" in err  # a mistyped command is named as one


def test_list_accelerators_json_contract(catalogue, capsys):
    code, out, _ = run_cli(capsys, "catalogue", "list", "--kind", "accelerators", "--json")
    assert code == 0
    rows = json.loads(out)
    assert len(rows) >= 45
    required = {"id", "name", "vendor", "architecture", "year", "form_factor", "memory_gb", "memory_type",
                "mem_bandwidth_gbs", "tdp_w", "fp32_tflops", "tf32_tflops", "fp16_tflops", "bf16_tflops",
                "fp8_tflops", "int8_tops", "fp4_tflops", "cuda_cores", "sources"}
    for row in rows:
        assert required <= set(row), row["id"]
        for name, value in row.items():
            if name.endswith(("_tflops", "_tops", "_gb", "_gbs", "_w")) and value is not None:
                assert name in row["sources"], (row["id"], name)
                assert row["sources"][name]["url"].startswith("http")
                assert row["sources"][name]["date"]
    ids = {r["id"] for r in rows}
    assert {"a100-sxm4-80gb", "h100-sxm5-80gb", "rtx-4090-laptop", "jetson-nano"} <= ids


@pytest.mark.parametrize("kind", ["systems", "cloud", "regions", "interconnects", "prices", "sources"])
def test_list_other_kinds(catalogue, capsys, kind):
    code, out, _ = run_cli(capsys, "catalogue", "list", "--kind", kind, "--json")
    assert code == 0
    rows = json.loads(out)
    assert rows and all(r["catalogue"] == kind for r in rows)


def test_list_all_kinds_as_text(catalogue, capsys):
    code, out, _ = run_cli(capsys, "catalogue", "list")
    assert code == 0
    assert "Accelerators (" in out and "H100 SXM5 80GB" in out and "Grid regions (" in out


def test_show_json_and_text(catalogue, capsys):
    code, out, _ = run_cli(capsys, "catalogue", "show", "jetson-nano", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["id"] == "jetson-nano" and data["memory_type"] == "LPDDR4"
    code, out, _ = run_cli(capsys, "catalogue", "show", "dgx-spark")
    assert code == 0 and "DGX Spark" in out and "http" in out


def test_show_unknown_id_fails_with_a_message(catalogue, capsys):
    code, _, err = run_cli(capsys, "catalogue", "show", "h100-sxm")
    assert code == 1
    assert "h100-sxm" in err and "no catalogue entry" in err


def test_python_dash_m_entry_point(gpudesk_home):
    result = subprocess.run([sys.executable, "-m", "gpudesk", "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and __version__ in result.stdout


def test_catalogue_show_marks_derived_figures(catalogue, capsys):
    code, out, _ = run_cli(capsys, "catalogue", "show", "rtx-4090-laptop")
    assert code == 0
    fp16 = next(line for line in out.splitlines() if line.strip().startswith("FP16"))
    assert "79.38" in fp16 and "derived: sms 76" in fp16 and "inputs from" in fp16
    code, out, _ = run_cli(capsys, "catalogue", "show", "rtx-4090-laptop", "--json")
    src = json.loads(out)["sources"]["fp16_tflops"]
    assert src["kind"] == "derived" and src["derived"]["inputs"] == {
        "sms": 76, "fp16_fp32acc_flop_per_sm_clk": 512, "boost_clock_mhz": 2040}
    assert all(i["url"].startswith("https://") for i in src["derived"]["input_sources"])


@pytest.mark.parametrize(("url", "code", "words"), [
    ("garbage://x", 2, "'garbage://…' is not a database gpudesk takes; it takes sqlite:///"),
    ("not a url", 2, "'not a url' is not a database URL; gpudesk takes sqlite:///"),
    ("sqlite:////no/such/dir/x.db", 9, "/no/such/dir/x.db: its folder /no/such/dir does not exist"),
])
def test_an_odd_database_url_gets_one_line_naming_it_and_its_exit_status(capsys, catalogue, url, code, words):
    got, out, err = run_cli(capsys, "--database-url", url, "catalogue", "list", "--kind", "regions")
    assert got == code and out == ""
    assert err.count("\n") == 1 and words in err and "Traceback" not in err and "unexpected" not in err


def test_a_pipe_device_or_folder_is_refused_at_once_as_not_a_regular_file(capsys, catalogue, tmp_path):
    import os
    import time

    pipe = tmp_path / "scenario.json"
    os.mkfifo(pipe)
    for argv, what in ((["estimate", str(pipe)], "a named pipe"), (["compare", "/dev/zero"], "a device"),
                       (["estimate", str(tmp_path)], "a folder")):
        start = time.monotonic()
        got, _out, err = run_cli(capsys, *argv)
        assert time.monotonic() - start < 1.0, argv  # no wait on the pipe's writer
        assert got == 1 and f"not a regular file ({what})" in err and err.count("\n") == 1, err
    start = time.monotonic()
    got, out, err = run_cli(capsys, "import", str(pipe))
    assert time.monotonic() - start < 5.0 and got == 1
    assert "not a regular file (a named pipe)" in out + err


def test_a_refused_field_is_not_also_called_missing(capsys, catalogue, tmp_path):
    doc = {"gpudesk_scenario": 1, "workload": {"kind": "train", "params": -5, "tokens": 1e9},
           "cluster": [{"item": "h100-sxm5-80gb"}]}
    path = tmp_path / "negative.json"
    path.write_text(json.dumps(doc))
    got, _out, err = run_cli(capsys, "estimate", str(path))
    assert got == 1 and err.strip() == f"gpudesk: {path}: workload.params: must be greater than 0, not -5"


def test_the_readme_gives_every_exit_status():
    from pathlib import Path

    from gpudesk.cli import EXIT_CODES

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    table = readme.split("<!-- exit-codes -->")[1].split("<!-- /exit-codes -->")[0]
    listed = {int(line.split("|")[1]) for line in table.splitlines() if line.startswith("| ") and
              line.split("|")[1].strip().isdigit()}
    assert listed == {code for code, _meaning in EXIT_CODES}
