"""The comparison: table values and winners agree with `gpudesk estimate`, the CLI writes JSON,
CSV and a PDF whose text holds names, recommendation, figures and sources; markup in names stays text."""

from __future__ import annotations

import csv
import io
import json

import pytest

from gpudesk.cli import main
from gpudesk.core.compare import build_comparison, comparison_csv, comparison_json, format_comparison
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
    assert comp.row("memory_device").winners == []  # a specification earns no star
    # explanations are not outcomes: 400 GB of separate 4 GB boards is not one pool, a low TDP or
    # power draw for a run many times longer is no win
    for key in ("memory_total", "tdp", "power", "mfu"):
        row = comp.row(key)
        assert row is None or (row.better is None and row.winners == []), key
    assert "cannot run" in comp.recommendation and "Jetson Nano" in comp.recommendation


def test_stars_only_on_outcomes_and_the_seed_nanos_win_nothing_but_capex(catalogue):
    comp = build_comparison(load_scenario(EXAMPLES / "a100-vs-jetson-nanos.json"), catalogue)
    for row in comp.rows:
        if row.key not in ("fits", "decode_user", "decode_total", "ttft", "time", "throughput", "energy", "co2",
                           "embodied", "cost_run", "cost_mtok", "capex", "tco", "break_even_runs", "break_even_months",
                           "break_even_on_demand", "break_even_spot", "break_even_reserved_1y",
                           "break_even_reserved_3y"):
            assert row.winners == [], (row.key, row.winners)  # specifications and explanations
    nanos = {i for i, r in enumerate(comp.results) if "Jetson Nano" in r.name}
    assert len(nanos) == 2
    won = {row.key for row in comp.rows for i in row.winners if i in nanos}
    assert won == {"capex", "tco"}, won  # cheapest to buy and to own, at any speed
    a100 = next(i for i, r in enumerate(comp.results) if "A100" in r.name)
    assert comp.row("time").winners == [a100]  # many times faster: the ranges do not overlap
    assert "* marks the winner of a row: only outcomes" in format_comparison(comp)


def test_a_lead_within_the_ranges_earns_no_star_and_the_row_says_so(catalogue):
    doc = json.loads((EXAMPLES / "nanochat-d20-8xh100.json").read_text())
    # the same 8-GPU server against itself with one GPU fewer: about 12% apart, well inside the ranges
    base = doc["cluster"][0]
    doc["compare"] = [{"name": "eight", "cluster": [dict(base, per_node=8)]},
                      {"name": "seven", "cluster": [dict(base, per_node=7)]}]
    comp = build_comparison(parse_scenario(doc), catalogue)
    time_row = comp.row("time")
    assert time_row.cells[0].value < time_row.cells[1].value
    assert time_row.winners == [] and "within the estimates' low–high ranges" in time_row.remark
    assert comparison_json(comp)["rows"][[r.key for r in comp.rows].index("time")]["remark"] == time_row.remark


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


def test_a_comparison_without_a_title_is_titled_from_its_workload_and_configurations(catalogue):
    """The Qt-free path the PDF takes: a scenario with no question gets one written from what it
    compares, and the report's title is it."""
    from gpudesk.core.compare import generated_question, workload_model_name
    from gpudesk.core.report.content import comparison_report

    doc = json.loads((EXAMPLES / "a100-vs-rtx4090-laptop.json").read_text())
    doc.pop("report")
    doc.pop("name")
    doc["workload"] = {"preset": "nanochat-d20", "kind": "train"}
    comp = build_comparison(parse_scenario(doc), catalogue)
    title = ("1 × A100 PCIe 80GB or RTX 4090 Laptop GPU for training nanochat d20 (561M) from scratch on 11.2B tokens "
             "(BF16)?")
    assert comp.question == comparison_report(comp).question == title
    # the model is named only while the workload is that model's size
    assert workload_model_name({"params": 8.03e9, "layers": 32, "d_model": 4096}, catalogue) == "Llama 3 8B"
    assert workload_model_name({"params": 1.5e9}, catalogue) == ""
    w = {"kind": "infer", "params": 70.6e9, "precision": "fp8", "concurrency": 16}
    assert generated_question(w, ["A", "B", "C"], "Llama 3 70B") == "A, B or C for serving Llama 3 70B in FP8 to 16 users?"
    assert generated_question(dict(w, concurrency=1), list("ABCD")) == \
        "Which of 4 configurations for serving a 70.6B-parameter model in FP8 to 1 user?"
    assert generated_question({"kind": "finetune", "params": 8e9, "method": "qlora", "tokens": 1e8}, ["X"]) == \
        "X for fine-tuning a 8B-parameter model with QLoRA on 100M tokens (BF16)?"


def test_charts_with_nothing_to_compare_say_why(catalogue):
    from gpudesk.core.report.content import BarChart, Paragraph, ScatterChart, comparison_report

    one = build_comparison(load_scenario(EXAMPLES / "llama3-70b-fp16-one-or-two-gpus.json"), catalogue)
    assert one.chart_messages["scores"] == ("Only one configuration can run this workload (2 × H100 SXM 80GB): "
                                            "nothing to compare.")
    charts = next(s for s in comparison_report(one).sections if s.title == "Charts").blocks
    assert not any(isinstance(b, (BarChart, ScatterChart)) for b in charts)
    assert [b.text.split(": ", 1)[0] for b in charts if isinstance(b, Paragraph)][:2] == [
        "Each metric, relative to the best configuration", "Performance per dollar against performance per watt"]
    both = build_comparison(load_scenario(EXAMPLES / "nanochat-8xh100-rented-vs-dgx-spark.json"), catalogue)
    assert both.chart_messages == {"scores": "", "value": "", "cost": ""}
    one_price = build_comparison(load_scenario(EXAMPLES / "a100-vs-rtx4090-laptop.json"), catalogue)
    assert one_price.chart_messages["value"] == ("Only 1 × A100 PCIe 80GB has both a cost and a power figure (RTX 4090 "
                                                 "Laptop GPU has no price): nothing to compare.")
    doc = json.loads((EXAMPLES / "a100-vs-rtx4090-laptop.json").read_text())
    doc["compare"][0]["cluster"][0]["item"] = "rtx-pro-5000-blackwell"  # no price found for it in any document read
    no_price = build_comparison(parse_scenario(doc), catalogue)
    assert no_price.chart_messages["value"].startswith("No configuration has both a cost and a power figure")
    assert "RTX 4090 Laptop GPU has no price" in no_price.chart_messages["value"]


def test_a_quote_someone_entered_is_cited_with_who_entered_it_in_the_report(catalogue, tmp_path, qapp):
    from gpudesk.ui.render.pdf import render_comparison_pdf

    catalogue.user = "Dana Ortiz"
    catalogue.add_price_quote("dgx-spark", "3700", when="2026-11-20", supplier="Acme Systems")
    comp = build_comparison(load_scenario(EXAMPLES / "nanochat-8xh100-rented-vs-dgx-spark.json"), catalogue)
    cited = [s for s in comp.sources if s["title"] == "Quote from Acme Systems"]
    assert len(cited) == 1 and cited[0]["entered"].startswith("Added by Dana Ortiz on ")
    assert all(s["entered"] == "" for s in comp.sources if s is not cited[0])  # shipped figures: nobody
    assert "Quote from Acme Systems" in format_comparison(comp) and "(Added by Dana Ortiz on" in format_comparison(comp)
    assert comparison_json(comp)["sources"][comp.sources.index(cited[0])]["entered"] == cited[0]["entered"]
    out = render_comparison_pdf(comp, tmp_path / "report.pdf")
    assert "Added by Dana Ortiz on" in _norm(_pdf_text(out))


def test_chart_axes_reach_past_the_largest_value():
    from gpudesk.ui.render.charts import nice_ticks

    # the 70B question's B200 curve peaks at 6.6k tokens/s per GPU: drawn to 1.05 × that, an axis of
    # 0, 2k, 4k, 6k would cut its top off; the ticks go on to 8k
    assert nice_ticks(0.0, 6930.0) == [0.0, 2000.0, 4000.0, 6000.0, 8000.0]
    assert nice_ticks(0.0, 162.0) == [0.0, 50.0, 100.0, 150.0, 200.0]
    # a value on a tick ends the axis there
    assert nice_ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(0.0, 0.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]  # nothing to scale by: 0 to 1
    for lo, hi in ((0.0, 7.3), (3.0, 97.0), (-12.0, 40.0), (0.0, 123456.0)):
        ticks = nice_ticks(lo, hi)
        assert ticks[0] <= lo and ticks[-1] >= hi and len(ticks) <= 8


def test_the_cost_chart_names_the_runs_a_month_it_repeats_in_three_figures(catalogue):
    comp = build_comparison(load_scenario(EXAMPLES / "llama-70b-fp8-8xh100-mi300x-b200.json"), catalogue)
    basis = comp.cost_curves["basis"]
    runs = comp.cost_curves["runs_per_month"]
    assert runs > 1000 and basis.startswith(f"{runs:,.0f} runs a month: what ")  # not 61,614.98
    assert "." not in basis.split(" runs")[0]


def test_the_links_row_says_when_ici_joins_chips_rented_one_per_node(catalogue):
    doc = {"gpudesk_scenario": 1, "name": "t",
           "workload": {"kind": "train", "params": 8e9, "tokens": 1e10, "seq_len": 2048, "precision": "bf16"},
           "compare": [{"name": "slice", "cluster": [{"item": "tpu-v5e", "per_node": 256, "nodes": 1}]},
                       {"name": "rented", "cluster": [{"cloud": "gcp-tpu-v5e-chip", "instances": 256}]},
                       {"name": "two slices", "cluster": [{"item": "tpu-v5e", "per_node": 256, "nodes": 2,
                                                           "inter": "eth-100g", "nic_count": 64}]},
                       {"name": "one H100", "cluster": [{"item": "h100-sxm5-80gb", "per_node": 1, "nodes": 2,
                                                         "inter": "eth-100g"}]}]}
    comp = build_comparison(parse_scenario(doc, "t"), catalogue)
    cells = [c.text for c in comp.row("links").cells]
    ici = "Google TPU v5e inter-chip interconnect (ICI)"
    assert cells[0] == f"{ici} / —"
    assert cells[1].startswith(f"{ici}, joining every node / ")
    assert cells[2] == f"{ici} / 64 × 100 Gigabit Ethernet (100GbE)"
    assert cells[3].startswith("— / ")  # NVLink-less single GPUs are not joined by anything inside a node
    # the rented chips plan as the slice does: one ICI domain
    plans = [r.estimate.breakdown.get("plan") for r in comp.results]
    assert plans[0] == plans[1]
