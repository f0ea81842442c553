"""Calibrating the estimates with the user's measurements.

For each accelerator and kind of work ("train", "infer_decode", "infer_prefill") the factor is the
median, over the stored measurements of that accelerator and kind, of measured speed / estimated
speed, the estimates computed with calibration off. The engine applies the factors
(gpudesk.core.estimate.engine): "train" scales the training utilisation, "infer_decode" the share
of memory bandwidth reached while decoding, "infer_prefill" the share of the dense peak reached
while processing prompts.

Only measurements that can stand for the hardware count: hardware confirmed ("exact" match),
not CPU-only, a typical value (mean or median), physically plausible, and comparable with an
estimate. `error_before_after` gives, per measurement, the estimate without and with calibration,
so a view can show what calibration changed.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from gpudesk.core.benchmarks.types import Measurement
from gpudesk.core.benchmarks.versus import EstimateCache, Versus, compare
from gpudesk.core.estimate.types import Calibration, Range

KINDS = ("train", "infer_decode", "infer_prefill")
FACTOR_LIMITS = (0.05, 20.0)  # a factor outside this says more about the measurement than the estimate


def _stored(catalogue, measurements, filters) -> list[Measurement]:
    if measurements is not None:
        return list(measurements)
    from gpudesk.core.benchmarks.store import stored_measurements

    return stored_measurements(catalogue, **filters)


def usable(v: Versus) -> bool:
    """Whether a comparison may calibrate its accelerator."""
    m = v.measurement
    r = v.ratio
    return (v.comparable and v.kind in KINDS and v.plausible and not m.cpu_only and m.match_confidence == "exact"
            and m.accelerator_id is not None and r is not None and math.isfinite(r) and r > 0)


def calibration_points(catalogue, measurements: Iterable[Measurement] | None = None,
                       cache: EstimateCache | None = None, **filters) -> list[Versus]:
    """The comparisons (calibration off) that calibrations are computed from."""
    cache = cache or EstimateCache()
    out = []
    for m in _stored(catalogue, measurements, filters):
        v = compare(catalogue, m, (), cache)
        if usable(v):
            out.append(v)
    return out


def calibrations(catalogue, measurements: Iterable[Measurement] | None = None,
                 **filters) -> tuple[Calibration, ...]:
    """One Calibration per (accelerator, kind) with usable measurements: factor = median of
    measured / estimated speed (estimated with calibration off), and how many measurements."""
    groups: dict[tuple[str, str], list[float]] = {}
    for v in calibration_points(catalogue, measurements, **filters):
        groups.setdefault((v.measurement.accelerator_id, v.kind), []).append(v.ratio)
    out = []
    for (device_id, kind), ratios in sorted(groups.items()):
        factor = statistics.median(ratios)
        factor = min(FACTOR_LIMITS[1], max(FACTOR_LIMITS[0], factor))
        out.append(Calibration(device_id=device_id, kind=kind, factor=factor, measurements=len(ratios)))
    return tuple(out)


_CURRENT: dict[int, tuple[tuple, tuple[Calibration, ...]]] = {}


def current_calibrations(catalogue) -> tuple[Calibration, ...]:
    """calibrations() of everything stored, recomputed only when the stored measurements or the
    user's answers changed (gpudesk.core.benchmarks.store.data_revision): cheap enough to call
    on every estimate of the compare view and the cluster canvas."""
    from gpudesk.core.benchmarks.store import data_revision

    revision = data_revision(catalogue)
    cached = _CURRENT.get(id(catalogue))
    if cached is not None and cached[0] == revision:
        return cached[1]
    result = calibrations(catalogue)
    _CURRENT[id(catalogue)] = (revision, result)
    return result


def active_calibrations(catalogue, settings=None) -> tuple[Calibration, ...]:
    """The calibrations the estimates use: none when the user switched calibration off
    (settings.calibration_enabled), and none, logged, if they cannot be computed: calibration
    never stops an estimate."""
    import logging

    if settings is None:
        from gpudesk.core.settings import load_settings

        settings = load_settings()
    if not getattr(settings, "calibration_enabled", False) or getattr(catalogue, "read_only", False):
        return ()
    try:
        return current_calibrations(catalogue)
    except Exception:  # noqa: BLE001 - an estimate without calibration beats no estimate
        logging.getLogger(__name__).exception("calibration unavailable")
        return ()


@dataclass(frozen=True)
class BeforeAfter:
    """One measurement with its estimate before (calibration off) and after calibration."""

    measurement: Measurement
    kind: str
    before: Range
    after: Range
    calibration: Calibration | None

    @property
    def measured(self) -> float:
        return self.measurement.value

    @property
    def error_before(self) -> float:
        return (self.before.likely - self.measured) / self.measured

    @property
    def error_after(self) -> float:
        return (self.after.likely - self.measured) / self.measured

    def to_json(self) -> dict:
        return {
            "measurement_id": self.measurement.id,
            "accelerator_id": self.measurement.accelerator_id,
            "metric": self.measurement.metric,
            "kind": self.kind,
            "measured": self.measured,
            "unit": self.measurement.unit,
            "before": self.before.to_json(),
            "after": self.after.to_json(),
            "error_before": self.error_before,
            "error_after": self.error_after,
            "factor": self.calibration.factor if self.calibration else None,
            "calibrated_on": self.calibration.measurements if self.calibration else 0,
        }


def error_before_after(catalogue, measurements: Iterable[Measurement] | None = None,
                       cals: tuple[Calibration, ...] | None = None, **filters) -> list[BeforeAfter]:
    """Per usable measurement: the estimate without and with the calibrations (computed from the
    same measurements unless `cals` is given)."""
    ms = _stored(catalogue, measurements, filters)
    cache = EstimateCache()
    points = calibration_points(catalogue, ms, cache)
    if cals is None:
        cals = calibrations(catalogue, [v.measurement for v in points])
    by_key = {(c.device_id, c.kind): c for c in cals}
    out = []
    for v in points:
        after = compare(catalogue, v.measurement, tuple(cals), cache)
        if after.estimated is None:
            continue
        out.append(BeforeAfter(v.measurement, v.kind, v.estimated, after.estimated,
                               by_key.get((v.measurement.accelerator_id, v.kind))))
    return out


def median_abs_errors(rows: Iterable[BeforeAfter]) -> dict[str, float | int]:
    rows = list(rows)
    if not rows:
        return {"measurements": 0, "before": math.nan, "after": math.nan}
    return {"measurements": len(rows),
            "before": statistics.median(abs(r.error_before) for r in rows),
            "after": statistics.median(abs(r.error_after) for r in rows)}
