"""The engine against published measurements: every checked measurement inside the estimate's
low-high range, and the median error per category within bounds (python tests/validation/report.py
prints the table)."""

from __future__ import annotations

import pytest

from .cases import load_measurements, median_errors, run_all


@pytest.fixture(scope="module")
def outcomes(catalogue_template, tmp_path_factory):
    from gpudesk.core.catalogue import Catalogue

    from ..conftest import DATA

    cat = Catalogue.open(f"sqlite:///{catalogue_template}", DATA)
    yield run_all(cat)
    cat.close()


def test_at_least_thirty_cited_measurements():
    measurements = load_measurements()
    assert len(measurements) >= 30
    for m in measurements:
        assert m["citation"] and m["url"].startswith("http"), m["id"]


def test_every_checked_measurement_falls_inside_the_range(outcomes):
    checked = [o for o in outcomes if not o.skipped]
    assert len(checked) >= 30
    outside = [f"{o.id}: measured {o.measured:g}, range {o.estimated.low:.4g}-{o.estimated.high:.4g}"
               for o in checked if not o.inside]
    assert not outside, outside


def test_skips_are_explained(outcomes):
    for o in outcomes:
        if o.skipped:
            assert len(o.skipped) > 20, o.id


def test_median_errors_per_category(outcomes):
    errors = median_errors([o for o in outcomes if not o.skipped])
    assert set(errors) >= {"training_mfu", "decode_tokens_per_s", "time_to_train", "co2_kg"}
    assert errors["training_mfu"] < 0.25
    assert errors["decode_tokens_per_s"] < 0.25
    assert max(errors.values()) < 0.5
