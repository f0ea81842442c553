"""Replaying a comparison with the prices of a past date, and the embodied CO2 of owned hardware."""

from __future__ import annotations

import json

import pytest

from gpudesk.cli import main
from gpudesk.core.catalogue.reading import known_by
from gpudesk.core.compare import build_comparison
from gpudesk.core.estimate import constants as C
from gpudesk.core.report.content import comparison_report
from gpudesk.core.resolve import estimate_scenario
from gpudesk.core.scenario import parse_scenario

from .conftest import ROOT

EXAMPLES = ROOT / "resources" / "examples"


def scenario(cluster, **finance):
    return parse_scenario({"gpudesk_scenario": 1, "name": "t", "workload": {"preset": "nanochat-d20", "kind": "train"},
                           "cluster": cluster, "finance": finance, "site": {"region": "us-avg", "pue": 1.0}})


def test_known_by_reads_partial_dates():
    assert known_by("2025", None) and known_by(None, None)
    assert known_by("2024-03", "2024-03-01") and known_by("2024-03-01", "2024-03-01")
    assert not known_by("2024-03-02", "2024-03-01") and not known_by("", "2024-03-01")


def test_a_replay_uses_the_cloud_price_of_that_date(catalogue):
    # Google Cloud a3-highgpu-8g spot: $62.55/h in May 2024, $20.42/h from March 2025 (price history)
    cloud = [{"cloud": "gcp-a3-highgpu-8g", "instances": 1}]
    then = estimate_scenario(scenario(cloud, pricing="spot", as_of="2024-06-01"), catalogue)
    later = estimate_scenario(scenario(cloud, pricing="spot", as_of="2025-04-01"), catalogue)
    assert then.time_s.likely == pytest.approx(later.time_s.likely)
    ratio = then.cost.cloud_usd_per_run.likely / later.cost.cloud_usd_per_run.likely
    assert ratio == pytest.approx(62.547325 / 20.423034, rel=1e-6)
    assert any("as of 2024-06-01" in a for a in then.assumptions)


def test_hardware_not_yet_priced_on_the_date_has_no_capex(catalogue):
    spark = [{"item": "dgx-spark", "nodes": 1}]
    today = estimate_scenario(scenario(spark), catalogue)
    before_launch = estimate_scenario(scenario(spark, as_of="2024-01-15"), catalogue)
    assert today.cost.capex_usd and before_launch.cost.capex_usd is None
    assert any("no price known on 2024-01-15" in a for a in before_launch.assumptions)


def test_the_cli_replays_and_names_a_bad_date(catalogue, capsys):
    path = str(EXAMPLES / "nanochat-8xh100-rented-vs-dgx-spark.json")
    assert main(["compare", path, "--as-of", "2025-13-01"]) == 1
    assert "finance.as_of" in capsys.readouterr().err
    assert main(["compare", path, "--json", "--as-of", "2024-01-15"]) == 0
    rows = {r["key"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["capex"]["cells"][1]["text"] == "no price"  # the Spark was not on sale yet


def test_embodied_carbon_is_spread_over_the_lifetime_and_use(catalogue):
    dgx = [{"item": "dgx-h100", "nodes": 2}]
    est = estimate_scenario(scenario(dgx, lifetime_years=5, utilization=0.5), catalogue)
    # the HGX H100 baseboard's 1,312 kg (NVIDIA's product carbon footprint) stands for each DGX H100
    assert est.embodied_kg_per_year == pytest.approx(2 * 1312 / 5)
    per_run = est.time_s.likely / 3600 / (5 * C.HOURS_PER_YEAR * 0.5) * 2 * 1312
    assert est.embodied_kg_per_run.likely == pytest.approx(per_run, rel=1e-9)
    assert est.embodied_kg_per_run.low < est.embodied_kg_per_run.likely < est.embodied_kg_per_run.high
    assert any("baseboard" in a and "not counted" in a for a in est.assumptions)
    off = estimate_scenario(scenario(dgx, embodied=False), catalogue)
    assert off.embodied_kg_per_run is None and off.embodied_kg_per_year is None


def test_embodied_carbon_without_a_figure_stays_unknown(catalogue):
    est = estimate_scenario(scenario([{"item": "dgx-spark", "nodes": 1}]), catalogue)
    assert est.embodied_kg_per_run is None
    assert any(n.code == "no_embodied" and "DGX Spark" in str(n) for n in est.notes)


def test_compare_shows_embodied_co2_and_the_pdf_states_the_price_date(catalogue):
    doc = json.loads((EXAMPLES / "nanochat-8xh100-rented-vs-dgx-spark.json").read_text())
    doc["compare"].append({"name": "DGX H100 (owned)", "cluster": [{"item": "dgx-h100", "nodes": 1}]})
    doc["finance"] = {**doc.get("finance", {}), "as_of": "2025-11-01"}
    comp = build_comparison(parse_scenario(doc), catalogue)
    row = comp.row("embodied")
    assert [c.text for c in row.cells][:2] == ["rented: the provider's", "no figure"]
    assert row.cells[2].value > 0 and row.winners == []  # one known value wins nothing
    report = comparison_report(comp)
    assert report.prices_as_of == "2025-11-01" and "Prices as of 2025-11-01" in report.text()
