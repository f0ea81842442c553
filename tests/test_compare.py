"""The comparison: table values and winners agree with `gpudesk estimate`, the CLI writes JSON,
CSV and a PDF whose text holds names, recommendation, figures and sources; markup in names stays text."""

from __future__ import annotations

import csv
import io
import json

import pytest

from gpudesk.cli import main
from gpudesk.core.compare import build_comparison, comparison_csv, comparison_json
from gpudesk.core.resolve import estimate_option
from gpudesk.core.scenario import load_scenario, parse_scenario

from .conftest import ROOT

EXAMPLES = ROOT / "resources" / "examples"


def test_table_values_agree_with_estimate_for_each_configuration(catalogue):
    scenario = load_scenario(EXAMPLES / "nanochat-8xh100-rented-vs-dgx-spark.json")
    comp = build_comparison(scenario, catalogue)
    time_row = comp.row("time")
    for i, option in enumerate(scenario.options()):
        est = estimate_option(scenario, option, catalogue, "compare")
        assert time_row.cells[i].value == pytest.approx(est.time_s.likely)
        assert time_row.cells[i].low == pytest.approx(est.time_s.low)
        assert comp.row("energy").cells[i].value == pytest.approx(est.energy_kwh.likely)
    # the winner of a lower-is-better row has the smallest value
    values = [c.value for c in time_row.cells]
    assert time_row.winners == [values.index(min(values))]
    assert comp.row("time").better == "lower" and comp.row("throughput").better == "higher"


def test_infeasible_options_cannot_win_estimates(catalogue):
    doc = json.loads((EXAMPLES / "a100-vs-jetson-nanos.json").read_text())
    doc["workload"].update(sharding="none", tp=1, pp=1)  # plain data parallelism: a Nano cannot hold the model
    comp = build_comparison(parse_scenario(doc), catalogue)
    assert [r.ok for r in comp.results] == [True, False, False]
    assert comp.row("fits").winners == [0]
    assert comp.row("capex").winners == [0]  # the Nanos are cheaper but cannot run the workload
    assert comp.row("memory_device").winners == [0]  # specs still compare everything
    # explanations are not outcomes: 400 GB of separate 4 GB boards is not one pool, a low TDP or
    # power draw for a run many times longer is no win
    for key in ("memory_total", "tdp", "power", "mfu"):
        row = comp.row(key)
        assert row is None or (row.better is None and row.winners == []), key
    assert "cannot run" in comp.recommendation and "Jetson Nano" in comp.recommendation


def test_recommendation_says_who_wins_by_how_much_and_on_what(catalogue):
    comp = build_comparison(load_scenario(EXAMPLES / "nanochat-8xh100-rented-vs-dgx-spark.json"), catalogue)
    text = comp.recommendation
    assert "finishes a run fastest" in text and "× longer" in text
    assert "costs least per run" in text and "% less" in text
    assert "pays for itself" in text and "runs" in text
    assert "rests on" in text


def test_compare_cli_json_csv_pdf(catalogue, capsys, tmp_path):
    path = EXAMPLES / "nanochat-8xh100-rented-vs-dgx-spark.json"
    assert main(["compare", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["name"] for c in data["configurations"]] == ["8 × H100 rented (Lambda)", "DGX Spark (owned)"]
    assert data["recommendation"] and data["sources"]
    time_row = next(r for r in data["rows"] if r["key"] == "time")
    assert time_row["winners"] == ["8 × H100 rented (Lambda)"]

    out_csv, out_pdf = tmp_path / "t.csv", tmp_path / "r.pdf"
    assert main(["compare", str(path), "--csv", str(out_csv), "--pdf", str(out_pdf), "--author", "A. Buyer"]) == 0
    rows = list(csv.reader(io.StringIO(out_csv.read_text())))
    assert rows[0][:4] == ["section", "metric", "unit", "better"]
    assert any(r[1] == "Time to train" and r[-1] == "8 × H100 rented (Lambda)" for r in rows)
    assert out_pdf.read_bytes().startswith(b"%PDF")


def _pdf_text(path) -> str:
    from pypdf import PdfReader

    return "\n".join(page.extract_text() for page in PdfReader(str(path)).pages)


def _norm(text: str) -> str:
    return " ".join(text.split())


def test_pdf_holds_names_recommendation_figures_sources_and_page_numbers(catalogue, tmp_path, qapp):
    from gpudesk.ui.render.pdf import render_comparison_pdf

    comp = build_comparison(load_scenario(EXAMPLES / "nanochat-8xh100-rented-vs-dgx-spark.json"), catalogue)
    out = render_comparison_pdf(comp, tmp_path / "report.pdf", author="Dana", organisation="Acme", page_size="Letter")
    from pypdf import PdfReader

    reader = PdfReader(str(out))
    box = reader.pages[0].mediabox
    assert (round(float(box.width)), round(float(box.height))) == (612, 792)  # Letter
    text = _norm(_pdf_text(out))
    for name in comp.names:
        assert name in text
    assert _norm(comp.recommendation)[:120] in text
    assert comp.row("time").cells[0].text.split("\n")[0] in text
    assert comp.row("cost_run").cells[1].text.split("\n")[0] in text
    for src in comp.sources:
        assert f"[{src['number']}]" in text
    assert "Page 1 of" in text and "Dana" in text and "Acme" in text and comp.catalogue_version in text


def test_markup_in_names_comes_out_as_text(catalogue, tmp_path, qapp):
    from gpudesk.ui.render.pdf import render_comparison_pdf

    doc = {
        "gpudesk_scenario": 1,
        "name": "<b>bold</b> & <script>x</script>",
        "workload": {"kind": "train", "params": 1e9, "tokens": 1e10},
        "compare": [
            {"name": "<i>one</i> & \"two\"", "cluster": [{"item": "h100-sxm5-80gb", "per_node": 8}]},
            {"name": "<table>", "cluster": [{"item": "a100-sxm4-80gb", "per_node": 8}]},
        ],
        "report": {"question": "<h1>Which?</h1>"},
    }
    comp = build_comparison(parse_scenario(doc), catalogue)
    out = render_comparison_pdf(comp, tmp_path / "x.pdf", author="<u>me</u>")
    text = _norm(_pdf_text(out))
    assert "<i>one</i> & \"two\"" in text
    assert "<table>" in text and "<h1>Which?</h1>" in text and "<u>me</u>" in text
    assert comparison_json(comp)["configurations"][0]["name"] == "<i>one</i> & \"two\""
    assert "<table>" in comparison_csv(comp)


def test_the_laptop_trains_a_561m_model_several_times_slower_and_the_reader_is_told_why(catalogue):
    doc = json.loads((EXAMPLES / "a100-vs-rtx4090-laptop.json").read_text())
    doc["workload"] = {"preset": "nanochat-d20", "kind": "train", "precision": "bf16"}
    comp = build_comparison(parse_scenario(doc), catalogue)
    a100, laptop = (r.estimate for r in comp.results)
    assert 2.5 < laptop.time_s.likely / a100.time_s.likely < 8
    # the catalogue's derived figures, no overrides: 9,728 cores at 2.04 GHz, 256 bits of 18 Gbps GDDR6
    assert comp.results[1].inputs.groups[0].device.peak_tflops["bf16"] == pytest.approx(79.38, rel=1e-3)
    text = comp.recommendation
    assert "× longer" in text and "dense peak is 3.9× as high" in text
    assert "micro-batches of only" in text and "16 GB" not in text  # usable memory, not the label
    # the laptop's peak is derived: the sources say how, and cite each input's document
    cited = [f for src in comp.sources for f in src["figures"] if "RTX 4090 Laptop" in f and "bf16_tflops" in f]
    assert cited and all("derived (sms 76" in f for f in cited)
    assert any("Ada GPU Architecture" in src["title"] for src in comp.sources)


def test_plan_and_step_rows_explain_without_stars(catalogue):
    comp = build_comparison(load_scenario(EXAMPLES / "a100-vs-jetson-nanos.json"), catalogue)
    plan, step = comp.row("plan"), comp.row("step")
    assert plan.better is None and plan.winners == [] and step.winners == []
    # a Nano cannot hold the model's training state: the chosen plan shards it or splits the layers
    first = plan.cells[2].text.splitlines()[0]
    assert ("ZeRO-3" in first or first.startswith("PP")) and "next best" in plan.cells[2].text
    # the Nanos' step: mostly compute, then waiting on the Gigabit Ethernet or the pipeline
    assert step.cells[2].text.splitlines()[0].startswith("compute")
    assert "data-parallel" in step.cells[2].text or "pipeline bubble" in step.cells[2].text
    # why the Nanos are slower, in the recommendation: peak, utilisation and its cause
    assert "no tensor cores" in comp.recommendation and "dense peak is" in comp.recommendation
