"""Read the bundled catalogue (data/) into validated records, without a database.

Every problem is reported with the file, the entry and the field, and a bundle with any problem
is refused as a whole: a broken data/ must never reach a user's database half-loaded.
"""

from __future__ import annotations

import csv
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from gpudesk.core.catalogue.derived import DERIVED_KINDS, DerivedError, check_entry, evaluate, rounded
from gpudesk.core.catalogue.fields import KINDS, FieldError, field_map, parse_value

# Keys of a TOML entry read by gpudesk.core.benchmarks.matching from the bundled files (the names
# tools give a device), checked here but not loaded into the database.
MATCH_KEYS = {"accelerators": ("aliases", "likely_aliases")}
TOML_KINDS = {"accelerators": "accelerator", "systems": "system", "models": "model", "sources": "source"}
# Fields that describe the record itself rather than state a fact from a document.
UNSOURCED_FIELDS = ("id", "source", "date", "notes", "grid_source", "electricity_source")
CSV_FILES = {
    "cloud": "cloud.csv",
    "prices": "prices.csv",
    "regions": "regions.csv",
    "interconnects": "interconnects.csv",
    "cloud_prices": "cloud_prices.csv",
    "embodied": "embodied.csv",
    "cost_factors": "cost_factors.csv",
}


class BundleError(ValueError):
    """The bundled catalogue has problems; `problems` lists each one, naming file, entry and field."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        shown = "\n".join(problems[:20])
        more = f"\n... and {len(problems) - 20} more" if len(problems) > 20 else ""
        super().__init__(f"{len(problems)} problem(s) in the bundled catalogue:\n{shown}{more}")


@dataclass
class Bundle:
    version: str
    released: str
    records: dict[str, list[dict]] = field(default_factory=dict)
    workloads: list[dict] = field(default_factory=list)

    def index(self, kind: str) -> dict[str, dict]:
        return {r["id"]: r for r in self.records.get(kind, [])}


def version_key(version: str) -> tuple[int, ...]:
    """'2026.11.2' -> (2026, 11, 2); compares catalogue versions numerically."""
    parts = []
    for part in str(version).split("."):
        try:
            parts.append(int(part))
        except ValueError:
            parts.append(0)
    return tuple(parts)


def load_bundle(data_dir: Path) -> Bundle:
    problems: list[str] = []
    meta = _read_toml(data_dir / "catalogue.toml", problems)
    cat = meta.get("catalogue", {}) if isinstance(meta, dict) else {}
    version = str(cat.get("version", ""))
    if not version:
        problems.append(f"{data_dir / 'catalogue.toml'}: [catalogue] version is missing")
    bundle = Bundle(version=version, released=str(cat.get("released", "")))

    raw: dict[str, list[tuple[str, dict]]] = {kind: [] for kind in KINDS}
    for kind, table in TOML_KINDS.items():
        folder = data_dir / kind
        files = sorted(folder.glob("*.toml")) if folder.is_dir() else []
        single = data_dir / f"{kind}.toml"
        if single.exists():
            files.append(single)
        for path in files:
            doc = _read_toml(path, problems)
            entries = doc.get(table, []) if isinstance(doc, dict) else []
            if not isinstance(entries, list):
                problems.append(f"{path}: [[{table}]] must be a list of tables")
                continue
            for n, entry in enumerate(entries, 1):
                where = f"{path.name}: {table} #{n}" + (f" ({entry.get('id')})" if isinstance(entry, dict) and entry.get("id") else "")
                raw[kind].append((where, entry))
    for kind, name in CSV_FILES.items():
        path = data_dir / name
        if not path.exists():
            problems.append(f"{path}: missing")
            continue
        for where, entry in _read_csv(path, kind, problems):
            raw[kind].append((where, entry))

    for kind, entries in raw.items():
        bundle.records[kind] = [rec for rec in (_record(kind, where, e, problems) for where, e in entries) if rec]

    _attach_derived(bundle, data_dir / "derived.toml", problems)

    workloads_path = data_dir / "workloads.toml"
    if workloads_path.exists():
        doc = _read_toml(workloads_path, problems)
        bundle.workloads = list(doc.get("workload", [])) if isinstance(doc, dict) else []

    _check_references(bundle, problems)
    if problems:
        raise BundleError(problems)
    return bundle


def _attach_derived(bundle: Bundle, path: Path, problems: list[str]) -> None:
    """Compute each [[derived]] figure and put it on its record, marked as derived."""
    for kind in DERIVED_KINDS:
        for rec in bundle.records.get(kind, []):
            rec.setdefault("derived", {})
    if not path.exists():
        return
    doc = _read_toml(path, problems)
    entries = doc.get("derived", []) if isinstance(doc, dict) else []
    indexes = {kind: bundle.index(kind) for kind in DERIVED_KINDS}
    for n, entry in enumerate(entries if isinstance(entries, list) else [], 1):
        where = f"{path.name}: derived #{n}" + (f" ({entry.get('item')}.{entry.get('field')})" if isinstance(entry, dict) else "")
        try:
            item, name, expression, inputs, sources, notes = check_entry(entry)
            kind = next((k for k in DERIVED_KINDS if item in indexes[k]), None)
            if kind is None:
                raise DerivedError(f"'{item}' is not an accelerator or system")
            spec = field_map(kind).get(name)
            if spec is None or not spec.figure or not spec.numeric:
                raise DerivedError(f"'{name}' is not a numeric figure of {kind}")
            record = indexes[kind][item]
            if record.get(name) is not None and name not in record["derived"]:
                raise DerivedError(f"{item} already has a published {name}; a derived figure may only fill a gap")
            if name in record["derived"]:
                raise DerivedError(f"{item}.{name} is derived twice")
            value = parse_value(spec, rounded(evaluate(expression, inputs)) if spec.type == "float"
                                else round(evaluate(expression, inputs)))
        except (DerivedError, FieldError) as exc:
            problems.append(f"{where}: {exc}")
            continue
        record[name] = value
        record["derived"][name] = {"expression": expression, "inputs": inputs, "input_sources": sources,
                                   "notes": notes}


def _read_toml(path: Path, problems: list[str]) -> dict:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        problems.append(f"{path}: missing")
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: not valid TOML ({exc})")
    return {}


def _read_csv(path: Path, kind: str, problems: list[str]):
    expected = [f.name for f in KINDS[kind]]
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            header = reader.fieldnames or []
            missing = [c for c in expected if c not in header and c != "notes"]
            unknown = [c for c in header if c not in expected]
            if missing or unknown:
                problems.append(f"{path.name}: header mismatch (missing: {missing or 'none'}; unknown: {unknown or 'none'})")
                return
            for row in reader:
                yield f"{path.name}: line {reader.line_num}" + (f" ({row.get('id')})" if row.get("id") else ""), row
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        problems.append(f"{path}: cannot be read as CSV ({exc})")


def _record(kind: str, where: str, entry: object, problems: list[str]) -> dict | None:
    if not isinstance(entry, dict):
        problems.append(f"{where}: must be a table of fields")
        return None
    fields = field_map(kind)
    record: dict = {}
    ok = True
    for key in entry:
        if key in MATCH_KEYS.get(kind, ()):  # hardware names for the benchmark matcher, not stored in the database
            value = entry[key]
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                problems.append(f"{where}: {key} must be a list of names (non-empty strings)")
                ok = False
        elif key not in fields and key != "field_sources":
            problems.append(f"{where}: unknown field '{key}'")
            ok = False
    for name, spec in fields.items():
        try:
            record[name] = parse_value(spec, entry.get(name))
        except FieldError as exc:
            problems.append(f"{where}: field '{name}': {exc}")
            ok = False
    field_sources = entry.get("field_sources", {})
    if not isinstance(field_sources, dict):
        problems.append(f"{where}: field_sources must be a table of field = source id")
        field_sources = {}
    for name, src in field_sources.items():
        spec = fields.get(name)
        if spec is None or name in UNSOURCED_FIELDS:
            problems.append(f"{where}: field_sources names '{name}', which is not a field that takes a source")
            ok = False
        elif not isinstance(src, str) or not src:
            problems.append(f"{where}: field_sources.{name} must be a source id")
            ok = False
    record["field_sources"] = {k: v for k, v in field_sources.items() if isinstance(v, str)}
    return record if ok else None


def _check_references(bundle: Bundle, problems: list[str]) -> None:
    ids = {kind: set() for kind in KINDS}
    for kind, records in bundle.records.items():
        for rec in records:
            if rec["id"] in ids[kind]:
                problems.append(f"{kind}: id '{rec['id']}' appears more than once")
            ids[kind].add(rec["id"])
    for kind, records in bundle.records.items():
        fields = field_map(kind)
        for rec in records:
            where = f"{kind} '{rec['id']}'"
            for name, spec in fields.items():
                value = rec.get(name)
                if spec.type == "ref" and value:
                    targets = spec.ref.split("|")
                    if not any(value in ids[t] for t in targets):
                        problems.append(f"{where}: field '{name}' names '{value}', which is not in {' or '.join(targets)}")
            for name, src in rec["field_sources"].items():
                if src not in ids["sources"]:
                    problems.append(f"{where}: field_sources.{name} names unknown source '{src}'")
            for name, info in (rec.get("derived") or {}).items():
                for src in info["input_sources"].values():
                    if src not in ids["sources"]:
                        problems.append(f"{where}: derived {name} names unknown source '{src}'")
            # every figure present has a source and a date
            for spec in fields.values():
                if not spec.figure or rec.get(spec.name) is None:
                    continue
                src = rec["field_sources"].get(spec.name) or rec.get(spec.source_field or "source") or \
                    (rec.get("derived") or {}).get(spec.name)
                when = rec.get(spec.date_field or "date")
                if not src:
                    problems.append(f"{where}: figure '{spec.name}' has no source")
                if not when:
                    problems.append(f"{where}: figure '{spec.name}' has no date")
