"""Published measurements (measurements.toml, cited in SOURCES.md) as gpudesk scenarios, and the
engine's estimate of each. Used by the validation tests and by report.py."""

from __future__ import annotations

import statistics
import tomllib
from dataclasses import dataclass
from pathlib import Path

from gpudesk.core.estimate.model import shape_of, training_flops_per_token
from gpudesk.core.estimate.types import Range
from gpudesk.core.resolve import estimate_scenario, resolve_workload
from gpudesk.core.scenario import parse_scenario

HERE = Path(__file__).resolve().parent
MEASUREMENTS = HERE / "measurements.toml"

WORKLOAD_KEYS = ("kind", "params", "tokens", "seq_len", "layers", "d_model", "heads", "kv_heads", "vocab",
                 "precision", "global_batch_tokens", "tp", "pp", "checkpointing", "prompt_tokens", "output_tokens",
                 "concurrency", "weights_bytes", "micro_batch")


@dataclass
class Outcome:
    id: str
    category: str
    metric: str
    measured: float
    estimated: Range | None
    skipped: str = ""
    citation: str = ""

    @property
    def error(self) -> float | None:
        """Relative error of the likely estimate: (estimated - measured) / measured."""
        if self.estimated is None:
            return None
        return (self.estimated.likely - self.measured) / self.measured

    @property
    def inside(self) -> bool:
        if self.estimated is None:
            return False
        lo, hi = self.estimated.low, self.estimated.high
        return lo * (1 - 1e-9) <= self.measured <= hi * (1 + 1e-9)


def load_measurements() -> list[dict]:
    with MEASUREMENTS.open("rb") as handle:
        return tomllib.load(handle)["measurement"]


def scenario_for(m: dict, catalogue):
    """The measurement's setup as a scenario document."""
    raw = m["workload"]
    workload = {k: raw[k] for k in WORKLOAD_KEYS if k in raw}
    if workload.get("kind") == "infer":
        workload.pop("tokens", None)
        workload.setdefault("prompt_tokens", raw.get("prompt_tokens", 512))
        workload.setdefault("output_tokens", raw.get("output_tokens", 128))
        workload.setdefault("concurrency", raw.get("concurrency", 1))
        workload["output_tokens"] = max(1, workload["output_tokens"])  # prompt-only runs (llama-bench pp512)
    if "total_flops" in raw and "tokens" not in workload:
        # the source prints total FLOPs, not tokens: recover tokens from the model's FLOPs per token
        if "params" not in workload:
            workload["params"] = 12.0 * raw["layers"] * raw["d_model"] ** 2
        w = resolve_workload(workload, catalogue)
        workload["tokens"] = raw["total_flops"] / training_flops_per_token(w, shape_of(w))
    if m["category"] in ("time_to_train", "energy_kwh", "co2_kg") and "tokens" not in workload:
        raise ValueError("the source gives no token count")
    cluster = []
    for entry in m["cluster"]:
        cluster.append({k: entry[k] for k in ("item", "per_node", "nodes", "intra", "inter", "nic_count", "node_overhead_w")
                        if k in entry})
    site = dict(m.get("site", {}))
    doc = {"gpudesk_scenario": 1, "name": m["id"], "workload": workload, "cluster": cluster, "site": site}
    return parse_scenario(doc, m["id"])


def estimate_measurement(m: dict, catalogue) -> Outcome:
    outcome = Outcome(m["id"], m["category"], m["metric"], float(m["value"]), None, citation=m.get("citation", ""))
    if m.get("skip"):
        outcome.skipped = m["skip"]
        return outcome
    try:
        scenario = scenario_for(m, catalogue)
    except ValueError as exc:
        outcome.skipped = str(exc)
        return outcome
    result = estimate_scenario(scenario, catalogue)
    if not result.feasible:
        outcome.skipped = "estimate not feasible: " + "; ".join(result.reasons)
        return outcome
    metric = m["metric"]
    value = {
        "mfu": result.mfu,
        "hfu": result.hfu,
        "tokens_per_s": result.tokens_per_s,
        "tokens_per_s_per_device": result.tokens_per_s.scaled(1.0 / result.devices) if result.tokens_per_s else None,
        "time_s": result.time_s,
        "decode_tokens_per_s_per_user": result.decode_tokens_per_s_per_user,
        "decode_tokens_per_s_aggregate": result.tokens_per_s,
        "prefill_tokens_per_s": result.prefill_tokens_per_s,
        "energy_kwh": result.energy_kwh,
        "co2_kg": result.co2_kg,
    }.get(metric)
    if value is None:
        outcome.skipped = f"the estimate has no figure for {metric}"
    outcome.estimated = value
    return outcome


def run_all(catalogue) -> list[Outcome]:
    return [estimate_measurement(m, catalogue) for m in load_measurements()]


def median_errors(outcomes: list[Outcome]) -> dict[str, float]:
    by_category: dict[str, list[float]] = {}
    for o in outcomes:
        if o.error is not None:
            by_category.setdefault(o.category, []).append(abs(o.error))
    return {k: statistics.median(v) for k, v in sorted(by_category.items())}
