"""The scenario document: what is estimated, compared or built, as versioned JSON.

One format serves the CLI, the compare view, the cluster canvas and the tests. Loading checks
every field and reports each problem with its path (`workload.params: ...`); unknown keys, wrong
types, impossible values and files from a newer gpudesk are refused with a message, never
half-read. Saving writes atomically.
"""

from __future__ import annotations

import difflib
import json
import math
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from gpudesk.core.fileio import atomic_write_text
from gpudesk.core.servers import server_ids
from gpudesk.core.workload import workload_problems

FORMAT_KEY = "gpudesk_scenario"
FORMAT_VERSION = 1
MAX_FILE_BYTES = 20 * 1024 * 1024

KINDS = ("train", "finetune", "infer")
PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4", "q8", "q4", "fp4")
SHARDINGS = ("auto", "none", "zero1", "zero2", "zero3", "fsdp", "hsdp")
RECOMPUTE = ("none", "selective", "full")
ATTENTIONS = ("mha", "gqa", "mqa", "mla")
RUNTIMES = ("graphs", "eager")
METHODS = ("full", "lora", "qlora")
# "reserved" is the older name of a 1-year commitment, still read
PRICING = ("on_demand", "spot", "reserved_1y", "reserved_3y", "reserved")
OVERRIDABLE = ("memory_gb", "mem_bandwidth_gbs", "tdp_w", "idle_w", "fp32_tflops", "tf32_tflops", "fp16_tflops",
               "bf16_tflops", "fp8_tflops", "int8_tops", "fp4_tflops", "intra_link_gbs")


class ScenarioError(ValueError):
    """A scenario that cannot be used; `problems` lists each one with the field's path."""

    def __init__(self, problems: list[str], source: str = ""):
        self.problems = problems
        self.source = source
        where = f"{source}: " if source else ""
        if len(problems) == 1:
            super().__init__(f"{where}{problems[0]}")
        else:
            super().__init__(f"{where}{len(problems)} problems:\n  " + "\n  ".join(problems))


# ----------------------------------------------------------------------------- a tiny schema
@dataclass(frozen=True)
class F:
    type: str  # int | number | str | bool | choice | list | object
    required: bool = False
    minimum: float | None = None
    maximum: float | None = None
    exclusive_min: bool = False
    choices: tuple = ()
    default: Any = None
    nullable: bool = True


WORKLOAD = {
    "kind": F("choice", required=True, choices=KINDS),
    "preset": F("str"),
    "name": F("str"),
    "params": F("number", minimum=0, exclusive_min=True, maximum=1e15),
    "tokens": F("number", minimum=0, exclusive_min=True, maximum=1e17),
    "seq_len": F("int", minimum=1, maximum=10_000_000),
    "precision": F("choice", choices=PRECISIONS),
    "layers": F("int", minimum=1, maximum=100_000),
    "d_model": F("int", minimum=1, maximum=1_000_000),
    "heads": F("int", minimum=1, maximum=100_000),
    "kv_heads": F("int", minimum=1, maximum=100_000),
    "vocab": F("int", minimum=1, maximum=100_000_000),
    "global_batch_tokens": F("number", minimum=0, exclusive_min=True, maximum=1e12),
    "micro_batch": F("int", minimum=1, maximum=100_000),
    "sharding": F("choice", choices=SHARDINGS),
    "checkpointing": F("bool"),
    "tp": F("int", minimum=1, maximum=1024),
    "pp": F("int", minimum=1, maximum=4096),
    "method": F("choice", choices=METHODS),
    "lora_fraction": F("number", minimum=0, exclusive_min=True, maximum=1),
    "prompt_tokens": F("int", minimum=0, maximum=100_000_000),
    "output_tokens": F("int", minimum=1, maximum=100_000_000),
    "concurrency": F("int", minimum=1, maximum=10_000_000),
    "weights_bytes": F("number", minimum=0, exclusive_min=True, maximum=1e16),
    "flops_per_token": F("number", minimum=0, exclusive_min=True, maximum=1e20),
    "mfu": F("number", minimum=0, exclusive_min=True, maximum=1),
    # the model's architecture: a catalogue model id, or any of its fields by hand
    "model": F("str"),
    "active_params": F("number", minimum=0, exclusive_min=True, maximum=1e15),
    "ffn_dim": F("int", minimum=1, maximum=10_000_000),
    "gated_ffn": F("bool"),
    "head_dim": F("int", minimum=1, maximum=100_000),
    "attention": F("choice", choices=ATTENTIONS),
    "experts": F("int", minimum=1, maximum=100_000),
    "experts_active": F("int", minimum=1, maximum=100_000),
    "shared_experts": F("int", minimum=0, maximum=100_000),
    "expert_ffn_dim": F("int", minimum=1, maximum=10_000_000),
    "dense_layers": F("int", minimum=0, maximum=100_000),
    "kv_lora_rank": F("int", minimum=1, maximum=1_000_000),
    "qk_rope_head_dim": F("int", minimum=0, maximum=100_000),
    "sliding_window": F("int", minimum=1, maximum=100_000_000),
    "sliding_share": F("number", minimum=0, maximum=1),
    "tied_embeddings": F("bool"),
    "kv_bytes_per_element": F("number", minimum=0, exclusive_min=True, maximum=8),
    # the parallel plan, when the scenario pins part of it
    "dp": F("int", minimum=1, maximum=10_000_000),
    "cp": F("int", minimum=1, maximum=4096),
    "ep": F("int", minimum=1, maximum=100_000),
    "vpp": F("int", minimum=1, maximum=1024),
    "recompute": F("choice", choices=RECOMPUTE),
    # serving
    "max_batch": F("int", minimum=1, maximum=10_000_000),
    "attention_dp": F("bool"),  # a mixture of experts served with data-parallel attention (unset: the planner tries both)
    "runtime": F("choice", choices=RUNTIMES),
    "server": F("choice", choices=server_ids()),
    "ttft_s_max": F("number", minimum=0, exclusive_min=True, maximum=3600),
    "tokens_per_s_per_user_min": F("number", minimum=0, exclusive_min=True, maximum=1_000_000),
}
CLUSTER_ENTRY = {
    "item": F("str"),
    "cloud": F("str"),
    "label": F("str"),
    "per_node": F("int", minimum=1, maximum=100_000),
    "nodes": F("int", minimum=1, maximum=10_000_000),
    "instances": F("int", minimum=1, maximum=10_000_000),
    "intra": F("str"),
    "inter": F("str"),
    "nic_count": F("int", minimum=0, maximum=1024),
    "capex_usd_per_node": F("number", minimum=0, maximum=1e12),
    "usd_per_hour": F("number", minimum=0, maximum=1e7),
    "node_overhead_w": F("number", minimum=0, maximum=1e7),
    "system_power_w": F("number", minimum=0, exclusive_min=True, maximum=1e8),
    "overrides": F("object"),
}
SITE = {
    "region": F("str"),
    "pue": F("number", minimum=1.0, maximum=3.0),
    "electricity_usd_per_kwh": F("number", minimum=0, maximum=5),
    "grid_gco2e_per_kwh": F("number", minimum=0, maximum=2000),
}
FINANCE = {
    "rent": F("str"),
    "rent_instances": F("int", minimum=1, maximum=1_000_000),
    "lifetime_years": F("number", minimum=0, exclusive_min=True, maximum=30),
    "utilization": F("number", minimum=0, exclusive_min=True, maximum=1),
    "maintenance_fraction_per_year": F("number", minimum=0, maximum=1),
    "pricing": F("choice", choices=PRICING),
    # replay with the prices known on this date (YYYY-MM-DD): quotes, list and street prices, and
    # cloud prices from the price history
    "as_of": F("date"),
    # count the embodied (manufacturing) CO2 of owned hardware, spread over its lifetime
    "embodied": F("bool"),
    # cost of ownership: replace the catalogue's cost factors (data/cost_factors.csv)
    "host_usd_per_node": F("number", minimum=0, maximum=1e9),
    "nic_usd": F("number", minimum=0, maximum=1e7),
    "switch_usd": F("number", minimum=0, maximum=1e8),
    "switch_ports": F("int", minimum=2, maximum=100_000),
    "link_usd": F("number", minimum=0, maximum=1e7),
    "facility_usd_per_kw": F("number", minimum=0, maximum=1e7),
    "facility": F("bool"),  # count the facility's capex (false: colocation or a room already paid for)
}
REPORT = {"question": F("str"), "author": F("str"), "organisation": F("str")}
OPTION = {"name": F("str", required=True), "cluster": F("list", required=True), "finance": F("object"),
          "notes": F("str")}
TOP = {
    FORMAT_KEY: F("int", required=True),
    "name": F("str"),
    "description": F("str"),
    "workload": F("object", required=True),
    "cluster": F("list"),
    "compare": F("list"),
    "site": F("object"),
    "finance": F("object"),
    "report": F("object"),
    "canvas": F("object"),
    # what the recommendation rests on: the ranges of uncertain inputs and the deciding outcome
    # (gpudesk.core.defend; checked there)
    "uncertainty": F("object"),
    "notes": F("str"),
}


def _check(obj: Any, schema: dict[str, F], path: str, problems: list[str]) -> dict:
    """Validate one object against a schema; returns the known, typed values."""
    if not isinstance(obj, dict):
        problems.append(f"{path or 'the document'}: must be an object, not {_kind(obj)}")
        return {}
    out = {}
    for key, value in obj.items():
        where = f"{path}.{key}" if path else key
        spec = schema.get(key)
        if spec is None:
            hint = difflib.get_close_matches(key, list(schema), n=1)
            problems.append(f"{where}: unknown key" + (f" (did you mean '{hint[0]}'?)" if hint else
                                                       f" (known: {', '.join(schema)})"))
            continue
        checked = _value(value, spec, where, problems)
        if checked is not _BAD:
            out[key] = checked
    for key, spec in schema.items():
        if spec.required and key not in obj:
            problems.append(f"{path + '.' if path else ''}{key}: missing (required)")
    return out


_BAD = object()


def _is_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return len(text) == 10


def _value(value: Any, spec: F, where: str, problems: list[str]):
    if value is None:
        if spec.required or not spec.nullable:
            problems.append(f"{where}: must not be null")
            return _BAD
        return None
    t = spec.type
    if t in ("int", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            problems.append(f"{where}: must be a number, not {_kind(value)} {json.dumps(value)[:40]}")
            return _BAD
        if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
            problems.append(f"{where}: must be a finite number")
            return _BAD
        if t == "int":
            if isinstance(value, float) and value != int(value):
                problems.append(f"{where}: must be a whole number, not {value}")
                return _BAD
            value = int(value)
        if spec.minimum is not None and (value < spec.minimum or (spec.exclusive_min and value == spec.minimum)):
            rel = "greater than" if spec.exclusive_min else "at least"
            problems.append(f"{where}: must be {rel} {spec.minimum:g}, not {value:g}")
            return _BAD
        if spec.maximum is not None and value > spec.maximum:
            problems.append(f"{where}: must be at most {spec.maximum:g}, not {value:g} (impossible value)")
            return _BAD
        return value
    if t == "bool":
        if not isinstance(value, bool):
            problems.append(f"{where}: must be true or false, not {json.dumps(value)[:40]}")
            return _BAD
        return value
    if t == "date":
        if not isinstance(value, str) or not _is_date(value):
            problems.append(f"{where}: must be a date written YYYY-MM-DD, not {json.dumps(value)[:40]}")
            return _BAD
        return value
    if t in ("str", "choice"):
        if not isinstance(value, str):
            problems.append(f"{where}: must be a text, not {_kind(value)}")
            return _BAD
        if t == "choice" and value not in spec.choices:
            problems.append(f"{where}: '{value}' is not one of {', '.join(spec.choices)}")
            return _BAD
        if len(value) > 10_000:
            problems.append(f"{where}: text longer than 10,000 characters")
            return _BAD
        return value
    if t == "list":
        if not isinstance(value, list):
            problems.append(f"{where}: must be a list, not {_kind(value)}")
            return _BAD
        return value
    if t == "object":
        if not isinstance(value, dict):
            problems.append(f"{where}: must be an object, not {_kind(value)}")
            return _BAD
        return value
    return value


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a text", bool: "true/false", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__)


# ----------------------------------------------------------------------------- the document
@dataclass
class ClusterEntry:
    item: str | None = None
    cloud: str | None = None
    label: str = ""
    per_node: int | None = None
    nodes: int = 1
    instances: int = 1
    intra: str | None = None
    inter: str | None = None
    nic_count: int | None = None
    capex_usd_per_node: float | None = None
    usd_per_hour: float | None = None
    node_overhead_w: float | None = None
    system_power_w: float | None = None
    overrides: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        out: dict[str, Any] = {}
        if self.cloud:
            out["cloud"] = self.cloud
            out["instances"] = self.instances
        else:
            out["item"] = self.item
            if self.per_node is not None:
                out["per_node"] = self.per_node
            out["nodes"] = self.nodes
        for key in ("label", "intra", "inter", "nic_count", "capex_usd_per_node", "usd_per_hour", "node_overhead_w",
                    "system_power_w"):
            value = getattr(self, key)
            if value not in (None, ""):
                out[key] = value
        if self.overrides:
            out["overrides"] = dict(self.overrides)
        return out


@dataclass
class Option:
    name: str
    cluster: list[ClusterEntry]
    finance: dict = field(default_factory=dict)
    notes: str = ""

    def to_dict(self) -> dict:
        out = {"name": self.name, "cluster": [c.to_dict() for c in self.cluster]}
        if self.finance:
            out["finance"] = dict(self.finance)
        if self.notes:
            out["notes"] = self.notes
        return out


@dataclass
class Scenario:
    workload: dict
    cluster: list[ClusterEntry] = field(default_factory=list)
    compare: list[Option] = field(default_factory=list)
    name: str = ""
    description: str = ""
    site: dict = field(default_factory=dict)
    finance: dict = field(default_factory=dict)
    report: dict = field(default_factory=dict)
    canvas: dict | None = None
    notes: str = ""
    source: str = ""
    uncertainty: dict = field(default_factory=dict)

    def options(self) -> list[Option]:
        """The configurations to estimate: the compare list, else the one cluster."""
        if self.compare:
            return list(self.compare)
        return [Option(self.name or "Configuration", list(self.cluster), {})]

    def to_dict(self) -> dict:
        out: dict[str, Any] = {FORMAT_KEY: FORMAT_VERSION}
        if self.name:
            out["name"] = self.name
        if self.description:
            out["description"] = self.description
        out["workload"] = dict(self.workload)
        if self.cluster:
            out["cluster"] = [c.to_dict() for c in self.cluster]
        if self.compare:
            out["compare"] = [o.to_dict() for o in self.compare]
        for key in ("site", "finance", "report", "uncertainty"):
            if getattr(self, key):
                out[key] = dict(getattr(self, key))
        if self.canvas:
            out["canvas"] = self.canvas
        if self.notes:
            out["notes"] = self.notes
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def parse_scenario(data: Any, source: str = "") -> Scenario:
    """Validate a decoded JSON document and build a Scenario; raises ScenarioError listing every problem."""
    problems: list[str] = []
    if not isinstance(data, dict):
        raise ScenarioError([f"the document must be a JSON object, not {_kind(data)}"], source)
    if FORMAT_KEY not in data:
        raise ScenarioError([f"not a gpudesk scenario: the '{FORMAT_KEY}' key is missing"], source)
    version = data.get(FORMAT_KEY)
    if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION:
        raise ScenarioError([f"{FORMAT_KEY}: this file is version {version}, newer than this gpudesk understands "
                             f"({FORMAT_VERSION}); update gpudesk to open it"], source)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ScenarioError([f"{FORMAT_KEY}: must be the format version {FORMAT_VERSION}, not {json.dumps(version)}"], source)
    top = _check(data, TOP, "", problems)
    workload = _check(top.get("workload", {}), WORKLOAD, "workload", problems) if "workload" in top else {}
    raw_workload = top.get("workload")
    _check_workload(workload, problems, set(raw_workload) if isinstance(raw_workload, dict) else None)
    cluster = _entries(top.get("cluster") or [], "cluster", problems)
    compare = []
    options = top.get("compare") or []
    if options:
        if not 1 <= len(options) <= 6:
            problems.append(f"compare: must list one to six configurations, not {len(options)}")
        for i, raw in enumerate(options[:6]):
            where = f"compare[{i}]"
            opt = _check(raw, OPTION, where, problems)
            entries = _entries(opt.get("cluster") or [], f"{where}.cluster", problems)
            if "cluster" in opt and not opt["cluster"]:
                problems.append(f"{where}.cluster: must list at least one accelerator, system or cloud offering")
            finance = _check(opt.get("finance") or {}, FINANCE, f"{where}.finance", problems)
            compare.append(Option(opt.get("name", f"Option {i + 1}"), entries, finance, opt.get("notes", "")))
        names = [o.name for o in compare]
        if len(set(names)) != len(names):
            problems.append("compare: configuration names must differ")
    if not cluster and not compare and "canvas" not in top:
        problems.append("cluster: missing (name at least one accelerator, system or cloud offering, or a 'compare' list)")
    site = _check(top.get("site") or {}, SITE, "site", problems)
    finance = _check(top.get("finance") or {}, FINANCE, "finance", problems)
    report = _check(top.get("report") or {}, REPORT, "report", problems)
    from gpudesk.core.defend import check_uncertainty  # its ranges are defined where they are used

    problems.extend(check_uncertainty(top.get("uncertainty")))
    if problems:
        raise ScenarioError(once_per_field(problems), source)
    return Scenario(workload=workload, cluster=cluster, compare=compare, name=top.get("name", ""),
                    description=top.get("description", ""), site=site, finance=finance, report=report,
                    canvas=top.get("canvas"), notes=top.get("notes", ""), source=source,
                    uncertainty=dict(top.get("uncertainty") or {}))


def once_per_field(problems: list[str]) -> list[str]:
    """Each field's first problem only: a value refused is not also reported by the rules that
    needed it ("workload.params: must be greater than 0" and then "workload.params: missing")."""
    seen, out = set(), []
    for p in problems:
        field_name = p.split(": ", 1)[0] if ": " in p else p
        if field_name in seen:
            continue
        seen.add(field_name)
        out.append(p)
    return out


def _check_workload(w: dict, problems: list[str], given: set | None = None) -> None:
    """The rules between workload fields; `given`: the fields the file named, valid or not (a field
    already refused is not also called missing)."""
    if not w:
        return
    named = set(w) | (given or set())
    if "params" not in named and "preset" not in named and "model" not in named:
        problems.append("workload.params: missing (the model's parameter count, a catalogue 'model', or a 'preset')")
    if w.get("heads") and w.get("d_model") and w["d_model"] % w["heads"]:
        problems.append(f"workload.heads: {w['heads']} does not divide d_model {w['d_model']}")
    if w.get("kv_heads") and w.get("heads") and (w["kv_heads"] > w["heads"] or w["heads"] % w["kv_heads"]):
        problems.append(f"workload.kv_heads: {w['kv_heads']} must divide heads {w['heads']}")
    problems.extend(workload_problems(w))  # the shared workload rules, read strictly for a file


def _entries(raw: list, path: str, problems: list[str]) -> list[ClusterEntry]:
    out = []
    for i, item in enumerate(raw):
        where = f"{path}[{i}]"
        entry = _check(item, CLUSTER_ENTRY, where, problems)
        if not isinstance(item, dict):
            continue
        has_item, has_cloud = bool(entry.get("item")), bool(entry.get("cloud"))
        if has_item == has_cloud:
            problems.append(f"{where}: name exactly one of 'item' (an accelerator or system id) or 'cloud' (an offering id)")
            continue
        if has_cloud and ("per_node" in entry or "nodes" in entry):
            problems.append(f"{where}: a cloud offering takes 'instances', not 'per_node' or 'nodes'")
        if has_item and "instances" in entry:
            problems.append(f"{where}: 'instances' is for cloud offerings; use 'nodes' and 'per_node'")
        overrides = entry.get("overrides") or {}
        clean = {}
        for key, value in overrides.items():
            if key not in OVERRIDABLE:
                hint = difflib.get_close_matches(key, OVERRIDABLE, n=1)
                problems.append(f"{where}.overrides.{key}: not a figure that can be overridden"
                                + (f" (did you mean '{hint[0]}'?)" if hint else ""))
                continue
            checked = _value(value, F("number", minimum=0, exclusive_min=True, maximum=1e9), f"{where}.overrides.{key}", problems)
            if checked is not _BAD and checked is not None:
                clean[key] = float(checked)
        out.append(ClusterEntry(
            item=entry.get("item"), cloud=entry.get("cloud"), label=entry.get("label", ""),
            per_node=entry.get("per_node"), nodes=entry.get("nodes", 1), instances=entry.get("instances", 1),
            intra=entry.get("intra"), inter=entry.get("inter"), nic_count=entry.get("nic_count"),
            capex_usd_per_node=entry.get("capex_usd_per_node"), usd_per_hour=entry.get("usd_per_hour"),
            node_overhead_w=entry.get("node_overhead_w"), system_power_w=entry.get("system_power_w"),
            overrides=clean,
        ))
    return out


def loads_scenario(text: str, source: str = "") -> Scenario:
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ScenarioError([f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"], source) from None
    except ValueError as exc:
        raise ScenarioError([str(exc)], source) from None
    return parse_scenario(data, source)


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a number a scenario may contain")


def load_scenario(path: str | Path) -> Scenario:
    from gpudesk.core.fileio import not_regular

    path = Path(path)
    odd = not_regular(path)
    if odd:
        raise ScenarioError([f"{odd}; name a scenario file"], str(path))
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ScenarioError([f"cannot be read ({exc.strerror or exc})"], str(path)) from None
    if size > MAX_FILE_BYTES:
        raise ScenarioError([f"is {size / 1e6:.0f} MB; a scenario is at most {MAX_FILE_BYTES // 1_000_000} MB"], str(path))
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ScenarioError([f"cannot be read ({exc.strerror or exc})"], str(path)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ScenarioError(["is not UTF-8 text (is it a scenario file?)"], str(path)) from None
    return loads_scenario(text, str(path))


def save_scenario(scenario: Scenario, path: str | Path) -> None:
    """Validate what is about to be written, then write it atomically."""
    text = scenario.to_json()
    parse_scenario(json.loads(text), str(path))
    atomic_write_text(path, text)
