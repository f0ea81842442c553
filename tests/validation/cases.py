"""Published measurements (measurements*.toml, cited in SOURCES.md) as gpudesk scenarios, and the
engine's estimate of each. Used by the validation tests and by report.py.

Each measurement belongs to the "fit" half (the engine's fitted constants were set looking at
these) or the "holdout" half (never looked at while fitting), by a stable hash of its id unless it
says `split` itself; the report gives the error of each half.
"""

from __future__ import annotations

import hashlib
import statistics
import tomllib
from dataclasses import dataclass
from pathlib import Path

from gpudesk.core.estimate.model import shape_of, training_flops_per_token
from gpudesk.core.estimate.types import Range
from gpudesk.core.resolve import estimate_scenario, resolve_workload
from gpudesk.core.scenario import WORKLOAD, parse_scenario

HERE = Path(__file__).resolve().parent
MEASUREMENT_FILES = sorted(HERE.glob("measurements*.toml"))

# every workload field a scenario takes (the scenario's own schema, so a new field reaches the rows)
WORKLOAD_KEYS = tuple(WORKLOAD)
METRICS = {
    "mfu": "mfu", "hfu": "hfu", "tokens_per_s": "tokens_per_s", "time_s": "time_s",
    "decode_tokens_per_s_per_user": "decode_tokens_per_s_per_user",
    "decode_tokens_per_s_aggregate": "decode_tokens_per_s_aggregate", "output_tokens_per_s": "tokens_per_s",
    "prefill_tokens_per_s": "prefill_tokens_per_s", "ttft_s": "ttft_s", "tpot_s": "tpot_s",
    "energy_kwh": "energy_kwh", "co2_kg": "co2_kg",
}


@dataclass
class Outcome:
    id: str
    category: str
    metric: str
    measured: float
    estimated: Range | None
    skipped: str = ""
    citation: str = ""
    device_class: str = ""
    regime: str = ""
    split: str = ""
    source_family: str = ""
    table: str = ""

    @property
    def error(self) -> float | None:
        """Relative error of the likely estimate: (estimated - measured) / measured."""
        if self.estimated is None:
            return None
        return (self.estimated.likely - self.measured) / self.measured

    @property
    def ratio(self) -> float | None:
        """estimated / measured: 2.0 means twice the measurement, 0.5 half of it."""
        if self.estimated is None or not self.measured:
            return None
        return self.estimated.likely / self.measured

    @property
    def inside(self) -> bool:
        if self.estimated is None:
            return False
        lo, hi = self.estimated.low, self.estimated.high
        return lo * (1 - 1e-9) <= self.measured <= hi * (1 + 1e-9)

    @property
    def width(self) -> float | None:
        """high / low of the estimate's range."""
        if self.estimated is None or self.estimated.low <= 0:
            return None
        return self.estimated.high / self.estimated.low


def load_measurements() -> list[dict]:
    out = []
    for path in MEASUREMENT_FILES:
        with path.open("rb") as handle:
            for m in tomllib.load(handle)["measurement"]:
                m.setdefault("_file", path.name)
                out.append(m)
    return out


def split_of(m: dict) -> str:
    if m.get("split"):
        return m["split"]
    return "fit" if hashlib.sha1(m["id"].encode()).digest()[0] % 2 == 0 else "holdout"


def source_family_of(m: dict) -> str:
    """The family of sources a measurement belongs to, for leave-one-source-out validation: its
    `source_family` where it says, else the publisher read off its URL (a GitHub repository, an
    arXiv paper, or a web site), so that every row of one document, and every document of one
    repository, is judged together."""
    if m.get("source_family"):
        return m["source_family"]
    url = m.get("url", "").split("//", 1)[-1].lower()
    parts = [p for p in url.split("/") if p]
    if not parts:
        return m["id"]
    host = parts[0].removeprefix("www.")
    if host == "github.com" and len(parts) >= 3:
        return f"{parts[1]}/{parts[2]}"
    if host == "arxiv.org" and len(parts) >= 3:
        return f"arxiv:{parts[2]}"
    return host


def device_class_of(m: dict, catalogue) -> str:
    """The report's device classes: data-centre NVIDIA/AMD, TPU, Gaudi, Trainium, consumer NVIDIA
    and AMD, laptops, Apple silicon, desktop AI boxes, edge boards."""
    if m.get("report_class"):
        return m["report_class"]
    item = m["cluster"][0]["item"]
    acc = catalogue.get("accelerators", item)
    if acc is None and catalogue.get("systems", item):
        acc = catalogue.get("accelerators", catalogue.get("systems", item)["accelerator"])
    if acc is None:
        return "unknown"
    vendor, cls = (acc.get("vendor") or "").lower(), acc.get("device_class") or ""
    if vendor == "apple":
        return "apple"
    if cls in ("edge", "laptop", "desktop_ai"):
        return cls
    if cls in ("consumer", "workstation"):
        return f"consumer_{vendor}"
    return {"google": "tpu", "intel": "gaudi", "aws": "trainium"}.get(vendor, f"datacenter_{vendor}")


def regime_of(m: dict, catalogue) -> str:
    if m.get("regime_override"):
        return m["regime_override"]
    w, cluster = m["workload"], m["cluster"]
    devices = sum(e.get("per_node", 1) * e.get("nodes", 1) for e in cluster)
    if w.get("kind") == "infer":
        if m["metric"] == "prefill_tokens_per_s":
            return "prefill"
        if w.get("concurrency", 1) > 1 or m["metric"] in ("output_tokens_per_s", "decode_tokens_per_s_aggregate",
                                                          "ttft_s", "tpot_s"):
            return "serving_high_concurrency"
        return "quantized_decode" if w.get("precision") in ("int4", "q4", "int8", "fp4") else "single_user_decode"
    if m["category"] in ("energy_kwh", "co2_kg"):
        return "energy_carbon"
    inter = cluster[0].get("inter", "")
    cls = device_class_of(m, catalogue)
    if devices > 1 and inter.startswith("eth") and cls in ("edge", "consumer_nvidia", "laptop", "apple", "desktop_ai"):
        return "edge_cluster_ethernet"
    if devices >= 1000:
        return "frontier_1000plus"
    if devices == 1:
        return "single_device"
    return "one_node" if cluster[0].get("nodes", 1) == 1 else "multi_node"


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
        if "params" not in workload and "model" not in workload:
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
    outcome = Outcome(m["id"], m["category"], m["metric"], float(m["value"]), None, citation=m.get("citation", ""),
                      split=split_of(m), source_family=source_family_of(m), table=m.get("table", m["id"]))
    if m.get("skip"):
        outcome.skipped = m["skip"]
        return outcome
    try:
        outcome.device_class = device_class_of(m, catalogue)
        outcome.regime = regime_of(m, catalogue)
        scenario = scenario_for(m, catalogue)
        result = estimate_scenario(scenario, catalogue)
    except ValueError as exc:
        outcome.skipped = str(exc)
        return outcome
    if not result.feasible:
        outcome.skipped = "estimate not feasible: " + "; ".join(result.reason_texts())
        return outcome
    metric = m["metric"]
    if metric == "tokens_per_s_per_device":
        value = result.tokens_per_s.scaled(1.0 / result.devices)
    else:
        value = getattr(result, METRICS.get(metric, "-"), None)
    if value is None:
        outcome.skipped = f"the estimate has no figure for {metric}"
    outcome.estimated = value
    return outcome


def run_all(catalogue) -> list[Outcome]:
    return [estimate_measurement(m, catalogue) for m in load_measurements()]


def median_errors(outcomes: list[Outcome], by: str = "category") -> dict[str, float]:
    groups: dict[str, list[float]] = {}
    for o in outcomes:
        if o.error is not None:
            groups.setdefault(getattr(o, by), []).append(abs(o.error))
    return {k: statistics.median(v) for k, v in sorted(groups.items())}


def family(o: Outcome) -> str:
    """training | inference | energy, for the issue's thresholds."""
    if o.category in ("energy_kwh", "co2_kg"):
        return "energy"
    if o.category in ("training_mfu", "training_throughput", "time_to_train"):
        return "training"
    return "inference"
