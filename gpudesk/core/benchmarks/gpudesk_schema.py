"""gpudesk's own benchmark format, for anything the other importers do not read: one JSON object
described by resources/schema/benchmark.schema.json (JSON Schema 2020-12), with a documented
example beside it. `export_measurements` writes the same format, so that stored measurements can be
moved between installations; re-importing an export stores nothing twice.

The file is checked against the schema itself (a small validator for the subset of JSON Schema the
schema uses), so the schema and the importer cannot drift apart.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

from gpudesk.core.benchmarks import matching
from gpudesk.core.benchmarks._common import Item, has_keys, run_json
from gpudesk.core.benchmarks.reader import Record
from gpudesk.core.benchmarks.types import (
    METRICS,
    Measurement,
    ParseResult,
    Problem,
    canonical_unit,
    clean_scalar,
    clean_text,
    collect,
    content_hash,
    to_seconds,
)

FORMAT = "gpudesk"
VERSION = 1
SCHEMA_FILE = ("schema", "benchmark.schema.json")
EXAMPLE_FILE = ("schema", "benchmark.example.json")


def schema_path() -> Path:
    from gpudesk.core import paths

    return paths.resource(*SCHEMA_FILE)


def example_path() -> Path:
    from gpudesk.core import paths

    return paths.resource(*EXAMPLE_FILE)


@lru_cache(maxsize=1)
def schema() -> dict:
    with schema_path().open(encoding="utf-8") as handle:
        return json.load(handle)


def looks_like(head: str) -> bool:
    return has_keys(head, "gpudesk_benchmark")


def is_record(value: dict) -> bool:
    return "gpudesk_benchmark" in value


def parse(source, source_name: str | None = None, **_ignored) -> ParseResult:
    return collect(iter_parse(source, source_name), FORMAT)


def iter_parse(source, source_name: str | None = None, **_ignored) -> Iterator[Item]:
    return run_json(source, source_name, FORMAT, "gpudesk benchmark", is_record, convert)


# ----------------------------------------------------------------------------------- validation
_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate(value, node: dict | None = None, path: str = "", root: dict | None = None) -> list[str]:
    """Errors of `value` against the schema (or `node` of it), each naming the JSON path. Supports
    the keywords the schema uses: $ref (local), type, const, enum, required, properties,
    additionalProperties, items, minItems, minimum, exclusiveMinimum, pattern."""
    root = root or schema()
    node = root if node is None else node
    where = path or "(top level)"
    if "$ref" in node:
        target = root
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        return validate(value, target, path, root)
    errors: list[str] = []
    if "type" in node:
        types = node["type"] if isinstance(node["type"], list) else [node["type"]]
        if not any(_TYPES[t](value) for t in types):
            return [f"{where}: should be {' or '.join(types)}, not {_kind(value)}"]
    if "const" in node and value != node["const"]:
        return [f"{where}: should be {json.dumps(node['const'])}"]
    if "enum" in node and value not in node["enum"]:
        return [f"{where}: {json.dumps(value, default=str)[:40]} is not one of {', '.join(map(str, node['enum']))}"]
    if isinstance(value, float) and not math.isfinite(value):
        return [f"{where}: {value} is not a finite number"]
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in node and value < node["minimum"]:
            errors.append(f"{where}: {value} is below the minimum {node['minimum']}")
        if "exclusiveMinimum" in node and value <= node["exclusiveMinimum"]:
            errors.append(f"{where}: {value} must be more than {node['exclusiveMinimum']}")
    if isinstance(value, str) and "pattern" in node and not re.search(node["pattern"], value):
        errors.append(f"{where}: {value[:40]!r} does not match {node['pattern']}")
    if isinstance(value, dict):
        for key in node.get("required", []):
            if key not in value:
                errors.append(f"{where}: '{key}' is required")
        props = node.get("properties", {})
        extra = node.get("additionalProperties", True)
        for key, item in value.items():
            sub = f"{path}.{key}" if path else str(key)
            if key in props:
                errors.extend(validate(item, props[key], sub, root))
            elif extra is False:
                errors.append(f"{sub}: unknown key (allowed: {', '.join(props)})")
            elif isinstance(extra, dict):
                errors.extend(validate(item, extra, sub, root))
    if isinstance(value, list):
        if "minItems" in node and len(value) < node["minItems"]:
            errors.append(f"{where}: needs at least {node['minItems']} item(s)")
        if "items" in node:
            for i, item in enumerate(value):
                errors.extend(validate(item, node["items"], f"{path}[{i}]", root))
    return errors


def _kind(value) -> str:
    for name, check in _TYPES.items():
        if name not in ("integer",) and check(value):
            return name
    return type(value).__name__


# ----------------------------------------------------------------------------------- import
def convert(rec: dict, item: Record, name: str) -> Iterator[Item]:
    measurements = rec.get("measurements")
    top_errors = validate({k: v for k, v in rec.items() if k != "measurements"} | {"measurements": [{}]})
    top_errors = [e for e in top_errors if not e.startswith("measurements[0]")]
    if top_errors:
        for error in top_errors[:20]:
            yield Problem(name, item.place, error, "error")
        return
    if not isinstance(measurements, list):
        yield Problem(name, item.place, "measurements: should be an array", "error")
        return
    shown = 0
    for i, entry in enumerate(measurements):
        where = f"{item.place}, measurements[{i}]"
        errors = validate(entry, schema()["$defs"]["measurement"], f"measurements[{i}]")
        if errors:
            shown += 1
            if shown <= 50:
                yield Problem(name, where, "; ".join(errors[:5]) + "; skipped", "warning")
            continue
        yield from _convert_entry(entry, rec, where, name)
    if shown > 50:
        yield Problem(name, item.place, f"{shown - 50} more invalid measurements not listed", "warning")


def _to_stored_unit(entry: dict, where: str, name: str) -> tuple[float, str, float | None] | Problem:
    """The entry's value, unit and stddev in the unit gpudesk stores (times in s), or why it is skipped."""
    metric, unit = entry["metric"], entry["unit"]
    value = float(entry["value"])
    stddev = entry.get("stddev")
    known_unit = METRICS.get(metric, (None, ""))[0]
    seconds = to_seconds(1.0, unit)
    if seconds is not None:
        if known_unit not in (None, "s"):
            return Problem(name, where, f"{metric} is in {known_unit}, but the unit given is {unit!r} (a time); "
                           "skipped", "warning")
        return value * seconds, "s", stddev * seconds if stddev is not None else None
    unit = canonical_unit(unit) or unit
    if known_unit is not None and known_unit != unit:
        return Problem(name, where, f"{metric} is in {known_unit}, not {unit}; skipped", "warning")
    return value, unit, stddev


def _match(hw: dict, hardware_text: str) -> matching.Match:
    if hw.get("cpu_only"):
        return matching.cpu_only(hardware_text)
    if hw.get("accelerator"):
        ids = matching.bundled_ids()
        acc = hw["accelerator"]
        confidence = hw.get("confidence") or "exact"
        return matching.Match(acc, hw.get("count") or 1, confidence if acc in ids else "ask",
                              ("named by catalogue id in the file" if confidence == "exact" else
                               "a variant guessed when first imported (confidence kept from the file)")
                              if acc in ids else f"'{acc}' is not in the bundled catalogue")
    if hardware_text:
        return matching.match_hardware(hardware_text, hw.get("count"))
    return matching.Match(None, hw.get("count"), "ask", "the file does not name the hardware")


def _convert_entry(entry: dict, rec: dict, where: str, name: str) -> Iterator[Item]:
    """One schema-valid measurement, with the file's defaults for hardware, workload and conditions."""
    metric = entry["metric"]
    stored = _to_stored_unit(entry, where, name)
    if isinstance(stored, Problem):
        yield stored
        return
    value, unit, stddev = stored
    if metric not in METRICS:
        yield Problem(name, where, f"'{metric}' is not one of gpudesk's metrics: stored as given, but not compared "
                      "with estimates", "info")
    hw = {**(rec.get("hardware") or {}), **(entry.get("hardware") or {})}
    workload = {k: clean_scalar(v) for k, v in {**(rec.get("workload") or {}), **(entry.get("workload") or {})}.items()
                if v is not None}
    conditions = {k: clean_scalar(v)
                  for k, v in {**(rec.get("conditions") or {}), **(entry.get("conditions") or {})}.items()}
    file_date = rec.get("date")
    if entry.get("date") or file_date:
        conditions.setdefault("date", clean_text(entry.get("date") or file_date, 40))
    hardware_text = clean_text(hw.get("name") or "", 200)
    match = _match(hw, hardware_text)
    source = entry.get("source") or {}
    m = Measurement(format=FORMAT, metric=metric, value=value, unit=unit, hardware_text=hardware_text,
                    accelerator_id=match.accelerator_id, accelerator_count=match.count,
                    match_confidence=match.confidence, match_reason=match.reason,
                    hardware_key=("hw:" + hardware_text) if hardware_text else f"sig:{FORMAT}:{hw.get('accelerator')}",
                    cpu_only=match.cpu_only, statistic=entry.get("statistic") or "mean", stddev=stddev,
                    workload=workload, conditions=conditions)
    # an export re-imported keeps the original's fingerprint: nothing is stored twice
    m.content_hash = source.get("content_hash") or content_hash(FORMAT, m.metric, m.statistic,
                                                                 repr(float(m.value)), m.unit, m.workload,
                                                                 m.conditions, m.hardware_text)
    yield m


# ----------------------------------------------------------------------------------- export
def export_measurements(measurements, tool: str = "gpudesk", description: str = "") -> dict:
    """Measurements (stored or freshly read) as a gpudesk benchmark document that validates against
    the schema."""
    from gpudesk import __version__

    out = []
    for m in measurements:
        hardware: dict = {}
        if m.accelerator_id:
            hardware["accelerator"] = m.accelerator_id
        if m.hardware_text:
            hardware["name"] = m.hardware_text
        if m.accelerator_count is not None:
            hardware["count"] = int(m.accelerator_count)
        if m.cpu_only:
            hardware["cpu_only"] = True
        if m.accelerator_id and m.match_confidence != "exact":
            hardware["confidence"] = m.match_confidence
        entry = {"metric": m.metric, "value": float(m.value), "unit": m.unit, "statistic": m.statistic}
        if m.stddev is not None and math.isfinite(m.stddev):
            entry["stddev"] = float(m.stddev)
        if hardware:
            entry["hardware"] = hardware
        entry["workload"] = {k: v for k, v in (m.workload or {}).items() if v is not None and _flat(v)}
        entry["conditions"] = {k: v for k, v in (m.conditions or {}).items() if _flat(v)}
        source = {"format": m.format, "file": m.source_file, "record": int(m.record_index or 0),
                  "content_hash": m.content_hash}
        entry["source"] = {k: v for k, v in source.items() if v not in ("", None)}
        out.append(entry)
    doc = {"gpudesk_benchmark": VERSION, "tool": f"{tool} {__version__}".strip(),
           "exported": datetime.now(UTC).isoformat(timespec="seconds"), "measurements": out}
    if description:
        doc["description"] = description
    return doc


def _flat(value) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, str | int | bool)
