"""How figures are written for people: units scale, significant figures are kept, nothing in
scientific notation reaches a reader."""

from __future__ import annotations

import pytest

from gpudesk.core.format import co2, duration, duration_range, energy, flops, format_number, power, si, usd


@pytest.mark.parametrize(("fn", "value", "text"), [
    (power, 10_954_800, "11.0 MW"),
    (power, 250_000, "250 kW"),
    (power, 850, "850 W"),
    (energy, 1.96e7, "19.6 GWh"),
    (energy, 0.42, "420 Wh"),
    (energy, 70_445_117, "70.4 GWh"),
    (co2, 7.51e6, "7.51 kt CO2e"),
    (co2, 27_019_225, "27.0 kt CO2e"),
    (flops, 7920, "7.92 EFLOPS"),
    (flops, 0.989, "989 TFLOPS"),
    (usd, 163_523_320.4, "$163,523,320"),
    (duration, 74.5 * 86400, "74.5 days"),
    (si, 2_330_959, "2.33 M"),
])
def test_scaled_units(fn, value, text):
    assert fn(value) == text


def test_no_scientific_notation_for_large_figures():
    for fn in (power, energy, co2, flops):
        for exponent in range(-2, 14):
            assert "e+" not in fn(1.234 * 10 ** exponent) and "e-" not in fn(1.234 * 10 ** exponent)


def test_missing_figures_read_as_such():
    assert power(None) == energy(None) == co2(None) == flops(None) == "n/a"
    assert format_number(float("nan")) == "n/a"
    assert format_number(2024, "year") == "2024"


@pytest.mark.parametrize("low, high, like, text", [
    (63.7 * 3600, 5.12 * 86400, 4.2 * 86400, "2.65–5.12 days"),  # not "63.7 h–5.12 days"
    (30 * 60, 3 * 3600, 90 * 60, "30–180 min"),  # the likely value's unit, even where the high end reads in hours
    (50.0, 70.0, None, "50–70 s"),  # no likely value: the high end's unit
    (2 * 365 * 86400, 4 * 365 * 86400, 3 * 365 * 86400, "2–4 years"),
])
def test_a_range_of_durations_reads_in_one_unit(low, high, like, text):
    assert duration_range(low, high, like) == text


def test_a_range_of_durations_with_no_end_says_so():
    assert duration_range(None, 5.0) == "n/a"
    assert duration_range(10.0, float("inf")) == "10 s–never"
    assert duration(3 * 3600) == "3 h" and duration(1.5) == "1.5 s" and duration(0.25) == "250 ms"
    # each unit starts where the one below ends: 120 s is 2 min, 2 h is 2 h, not 120 min
    assert duration(119.0) == "119 s" and duration(120.0) == "2 min" and duration(7200.0) == "2 h"
    assert duration(None) == "n/a" and duration(float("nan")) == "never"
