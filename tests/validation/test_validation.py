"""The engine against published measurements (python tests/validation/report.py prints the table).

What is asserted is what the engine promises a reader: the likely estimate's median error per
family (the targets of issue 10: 12% for training, 20% for inference), ranges that hold about 85% of
measurements without being wider than the evidence says, the engine's stated error (MODEL_ERROR)
equal to what the validation shows, and coverage of every device class and regime people ask about.
Energy and CO2 are reported but held to a looser bound: the published figures are GPU-hours of whole
projects times nameplate power, see SOURCES.md.
"""

from __future__ import annotations

import math
import statistics

import pytest

from gpudesk.core.estimate import constants as C

from .cases import family, load_measurements, median_errors, run_all


@pytest.fixture(scope="module")
def outcomes(catalogue_template, tmp_path_factory):
    from gpudesk.core.catalogue import Catalogue

    from ..conftest import DATA

    cat = Catalogue.open(f"sqlite:///{catalogue_template}", DATA)
    yield run_all(cat)
    cat.close()


def checked(outcomes, fam=None):
    return [o for o in outcomes if not o.skipped and o.estimated is not None and (fam is None or family(o) == fam)]


def test_at_least_120_cited_measurements():
    measurements = load_measurements()
    assert len(measurements) >= 120
    assert len({m["id"] for m in measurements}) == len(measurements)
    for m in measurements:
        assert m["citation"] and m["url"].startswith("http"), m["id"]


def test_every_device_class_and_regime_is_covered(outcomes):
    counts_class: dict[str, int] = {}
    counts_regime: dict[str, int] = {}
    for o in checked(outcomes):
        counts_class[o.device_class] = counts_class.get(o.device_class, 0) + 1
        counts_regime[o.regime] = counts_regime.get(o.regime, 0) + 1
    for cls in ("apple", "edge", "desktop_ai", "laptop", "consumer_nvidia", "consumer_amd", "datacenter_nvidia",
                "datacenter_amd", "tpu", "gaudi"):
        assert counts_class.get(cls, 0) >= 2, (cls, counts_class)
    for regime in ("one_node", "multi_node", "frontier_1000plus", "single_user_decode", "quantized_decode",
                   "serving_high_concurrency", "prefill", "energy_carbon"):
        assert counts_regime.get(regime, 0) >= 3, (regime, counts_regime)


def test_skips_are_explained(outcomes):
    for o in outcomes:
        if o.skipped:
            assert len(o.skipped) > 20, o.id
    assert len([o for o in outcomes if o.skipped]) <= 0.1 * len(outcomes)


def test_median_error_meets_the_targets(outcomes):
    training = [abs(o.error) for o in checked(outcomes, "training")]
    inference = [abs(o.error) for o in checked(outcomes, "inference")]
    assert len(training) >= 35 and len(inference) >= 60
    # the targets are 12% and 20%; the bounds are ratcheted to what the engine reaches
    # (10.4% and 14.0% on 2026-11-25) plus a small margin, so a regression fails
    assert statistics.median(training) <= 0.115
    assert statistics.median(inference) <= 0.155
    # the held-out half (never looked at while fitting) is as good as the half that was
    # (10.0% and 15.4% on 2026-11-25)
    for fam, bound in (("training", 0.115), ("inference", 0.17)):
        held = [abs(o.error) for o in checked(outcomes, fam) if o.split == "holdout"]
        assert statistics.median(held) <= bound, fam
    errors = median_errors(checked(outcomes))
    assert errors["training_mfu"] < 0.15 and errors["decode_tokens_per_s"] < 0.20
    assert errors["prefill_tokens_per_s"] < 0.25


def test_no_feasible_estimate_is_more_than_twice_off(outcomes):
    rows = checked(outcomes, "training") + checked(outcomes, "inference")
    off = [(o.id, round(o.ratio, 2)) for o in rows if not 0.5 <= o.ratio <= 2.0]
    assert not off, off


def test_ranges_hold_most_measurements_and_are_no_wider_than_the_evidence(outcomes):
    rows = checked(outcomes, "training") + checked(outcomes, "inference")
    inside = sum(o.inside for o in rows) / len(rows)
    assert inside >= 0.85, inside
    widths = [o.width for o in rows if o.width]
    assert statistics.median(widths) <= 2.2


def test_the_engines_stated_error_is_what_the_validation_shows(outcomes):
    # MODEL_ERROR is the 85th percentile of |ln(measured / likely)| on the fitting half; when the
    # engine changes, this test says the ranges no longer describe its error
    for fam in ("training", "inference"):
        logs = sorted(abs(math.log(o.ratio)) for o in checked(outcomes, fam) if o.split == "fit")
        p85 = logs[min(len(logs) - 1, int(0.85 * len(logs)))]
        assert C.MODEL_ERROR[fam] == pytest.approx(p85, abs=0.05), (fam, p85)


def test_energy_and_co2_stay_within_a_factor_of_two_and_a_half(outcomes):
    rows = checked(outcomes, "energy")
    assert len(rows) >= 10
    assert statistics.median(abs(o.error) for o in rows) < 0.5
    assert all(0.4 < o.ratio < 2.5 for o in rows), [(o.id, round(o.ratio, 2)) for o in rows]
