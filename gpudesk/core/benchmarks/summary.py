"""How far the estimates are from the user's measurements, as tables (pandas): one row per
measurement with its estimate, and a summary per accelerator and metric. pandas is imported here,
where the tables are made, never at start-up."""

from __future__ import annotations

from collections.abc import Iterable

from gpudesk.core.benchmarks.versus import Versus

COLUMNS = ["id", "source_file", "format", "accelerator_id", "accelerator_count", "hardware_text", "model", "metric",
           "statistic", "unit", "measured", "estimated_low", "estimated_likely", "estimated_high", "error",
           "inside_range", "compared", "why_not_compared", "implausible"]


def versus_frame(versus: Iterable[Versus]):
    """A pandas DataFrame, one row per measurement: what was measured, the estimate's range, the
    signed error ((estimate - measured) / measured), and why a row was not compared or is flagged."""
    import pandas as pd

    rows = []
    for v in versus:
        m, est = v.measurement, v.estimated
        wl = m.workload or {}
        rows.append({
            "id": m.id, "source_file": m.source_file, "format": m.format, "accelerator_id": m.accelerator_id,
            "accelerator_count": m.accelerator_count, "hardware_text": m.hardware_text,
            "model": wl.get("model") or wl.get("model_type"), "metric": m.metric, "statistic": m.statistic,
            "unit": m.unit, "measured": m.value,
            "estimated_low": est.low if (v.comparable and est) else None,
            "estimated_likely": est.likely if (v.comparable and est) else None,
            "estimated_high": est.high if (v.comparable and est) else None,
            "error": v.error if v.comparable else None, "inside_range": v.inside if v.comparable else None,
            "compared": v.comparable, "why_not_compared": "" if v.comparable else v.reason,
            "implausible": "; ".join(v.implausible),
        })
    frame = pd.DataFrame(rows, columns=COLUMNS)
    return frame.astype({"accelerator_count": "Int64", "id": "Int64"})


def error_summary(versus: Iterable[Versus]) -> list[dict]:
    """Per accelerator and metric, over the measurements compared with an estimate: how many, the
    median and the 10th-90th percentile of the signed error, the median absolute error, and the
    share inside the estimate's low-high range; worst median absolute error first."""
    frame = versus_frame(versus)
    compared = frame[frame["compared"] & frame["implausible"].eq("")]
    if compared.empty:
        return []
    compared = compared.assign(abs_error=compared["error"].abs(), inside=compared["inside_range"].astype(float))
    grouped = compared.groupby(["accelerator_id", "metric"], dropna=False)
    table = grouped.agg(measurements=("error", "size"), median_error=("error", "median"),
                        p10_error=("error", lambda s: s.quantile(0.1)), p90_error=("error", lambda s: s.quantile(0.9)),
                        median_abs_error=("abs_error", "median"), inside_share=("inside", "mean")).reset_index()
    table = table.sort_values(["median_abs_error", "measurements"], ascending=[False, False])
    out = []
    for row in table.itertuples(index=False):
        out.append({"accelerator_id": row.accelerator_id, "metric": row.metric, "measurements": int(row.measurements),
                    "median_error": float(row.median_error), "p10_error": float(row.p10_error),
                    "p90_error": float(row.p90_error), "median_abs_error": float(row.median_abs_error),
                    "inside_share": float(row.inside_share)})
    return out


def write_csv(versus: Iterable[Versus], path) -> int:
    """The per-measurement table as CSV (atomically); returns the number of rows."""
    from gpudesk.core.fileio import atomic_write_text

    frame = versus_frame(versus)
    atomic_write_text(path, frame.to_csv(index=False, float_format="%.6g"))
    return len(frame)
