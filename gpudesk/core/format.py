"""How figures are written for people: one formatter for the CLI, the UI and the reports."""

from __future__ import annotations

YEAR_FIELDS = frozenset({"year", "grid_year", "electricity_year", "pcie_gen", "generation"})


def format_number(value, field: str = "") -> str:
    """12,345 for counts; 989.4 or 0.472 for figures; years and generations without separators."""
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if field in YEAR_FIELDS:
        return str(int(value)) if isinstance(value, (int, float)) else str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != value:  # NaN never reaches a person
            return "n/a"
        if value == int(value) and abs(value) < 1e15:
            return f"{int(value):,}"
        if abs(value) >= 100:
            return f"{value:,.1f}".rstrip("0").rstrip(".")
        if abs(value) >= 1:
            return f"{value:,.2f}".rstrip("0").rstrip(".")
        return f"{value:.3g}"
    return str(value)


def si(value: float, unit: str = "", digits: int = 3) -> str:
    """1.23 k, 45.6 M, 7.8 G ... for throughputs and counts."""
    if value is None:
        return "n/a"
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.{digits}g} {prefix}{unit}".rstrip()
    return f"{value:.{digits}g} {unit}".rstrip()


# (seconds below which the unit is used, seconds per unit, unit): the unit a duration is read in
DURATION_UNITS = ((1.0, 1e-3, "ms"), (120.0, 1.0, "s"), (2 * 3600.0, 60.0, "min"), (3 * 86400.0, 3600.0, "h"),
                  (2 * 365 * 86400.0, 86400.0, "days"), (float("inf"), 365 * 86400.0, "years"))


def _duration_unit(seconds: float) -> tuple[float, str]:
    return next((per, unit) for below, per, unit in DURATION_UNITS if seconds < below)


def duration(seconds: float | None) -> str:
    """A duration a person reads at a glance: 42 s, 3.5 min, 7.2 h, 12 days, 3.4 years."""
    if seconds is None:
        return "n/a"
    if seconds != seconds or seconds == float("inf"):
        return "never"
    per, unit = _duration_unit(seconds)
    return f"{seconds / per:.3g} {unit}"


def duration_range(low: float | None, high: float | None, like: float | None = None) -> str:
    """A range of durations in one unit, the one `like` (the likely value, else the high end) is read
    in: "2.65–5.12 days", not "63.7 h–5.12 days"."""
    if low is None or high is None:
        return "n/a"
    if any(v != v or v == float("inf") for v in (low, high)):
        return f"{duration(low)}–{duration(high)}"
    per, unit = _duration_unit(like if like is not None and like == like and like != float("inf") else high)
    return f"{low / per:.3g}–{high / per:.3g} {unit}"


def span(fmt, low: float, high: float, like: float | None = None) -> str:
    """The two ends of a range written with `fmt`: durations in one unit (`duration_range`), every
    other figure end by end."""
    if fmt is duration:
        return duration_range(low, high, like)
    return f"{fmt(low)}–{fmt(high)}"


def usd(value: float | None) -> str:
    if value is None:
        return "n/a"
    if abs(value) >= 100:
        return f"${value:,.0f}"
    if abs(value) >= 1:
        return f"${value:,.2f}"
    return f"${value:.3g}"


def _scaled(value: float, steps: tuple[tuple[float, str], ...], digits: int) -> str:
    """`value` in the largest unit it reaches, to `digits` significant figures (11.0 MW, 250 kW)."""
    factor, unit = next(((f, u) for f, u in steps if abs(value) >= f), steps[-1])
    scaled = value / factor
    if abs(scaled) >= 10 ** digits:
        return f"{scaled:,.0f} {unit}"
    return f"{scaled:#.{digits}g}".rstrip(".") + f" {unit}"


def power(watts: float | None, digits: int = 3) -> str:
    """850 W, 10.9 kW, 11 MW."""
    if watts is None:
        return "n/a"
    return _scaled(watts, ((1e9, "GW"), (1e6, "MW"), (1e3, "kW"), (1.0, "W")), digits)


def energy(kwh: float | None, digits: int = 3) -> str:
    """0.42 kWh, 315 kWh, 19.6 GWh."""
    if kwh is None:
        return "n/a"
    return _scaled(kwh, ((1e9, "TWh"), (1e6, "GWh"), (1e3, "MWh"), (1.0, "kWh"), (1e-3, "Wh")), digits)


def co2(kg: float | None, digits: int = 3) -> str:
    """12 g, 3.4 kg, 7.5 kt of CO2e."""
    if kg is None:
        return "n/a"
    return _scaled(kg, ((1e6, "kt"), (1e3, "t"), (1.0, "kg"), (1e-3, "g")), digits) + " CO2e"


def flops(pflops: float | None, digits: int = 3) -> str:
    """Dense peak compute from PFLOPS: 989 TFLOPS, 7.92 EFLOPS."""
    if pflops is None:
        return "n/a"
    return _scaled(pflops, ((1e3, "EFLOPS"), (1.0, "PFLOPS"), (1e-3, "TFLOPS"), (1e-6, "GFLOPS")), digits)
