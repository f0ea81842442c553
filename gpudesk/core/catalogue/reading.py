"""Reading the catalogue without SQLAlchemy: the record lookups every catalogue offers, and a
read-only snapshot of the embedded database taken with the standard library's sqlite3.

Start-up uses the snapshot: the window shows the stored catalogue in the time a bare Qt window
takes, while the full catalogue (SQLAlchemy, migrations, bundle sync) opens in the background and
replaces it. Nothing here imports SQLAlchemy or Qt."""

from __future__ import annotations

import copy
import json
import logging
import sqlite3
import threading
from contextlib import closing
from operator import itemgetter
from pathlib import Path

from gpudesk.core.catalogue.derived import describe as describe_derived
from gpudesk.core.catalogue.fields import KINDS, field_map

log = logging.getLogger(__name__)

ORIGIN_BUNDLED = "bundled"
ORIGIN_USER_ADDED = "user_added"
ORIGIN_USER_EDITED = "user_edited"
USER_ORIGINS = (ORIGIN_USER_ADDED, ORIGIN_USER_EDITED)

TABLE_NAMES = {
    "accelerators": "accelerators",
    "systems": "systems",
    "cloud": "cloud_offerings",
    "prices": "price_observations",
    "regions": "grid_regions",
    "interconnects": "interconnects",
    "cloud_prices": "cloud_price_history",
    "embodied": "embodied_carbon",
    "cost_factors": "cost_factors",
    "models": "models",
    "sources": "sources",
}


# who added and changed a row, and its version (see migrations 0004_team_audit)
AUDIT_COLUMNS = ("added_by", "added_at", "updated_by", "version")
AUDIT_DEFAULTS = {"added_by": "", "added_at": "", "updated_by": "", "version": 1}


class EditError(ValueError):
    """A user edit that was refused; `problems` maps each bad field ('' for the record) to a message."""

    def __init__(self, problems: dict[str, str]):
        self.problems = problems
        super().__init__("; ".join(f"{k}: {v}" if k else v for k, v in problems.items()))


def provenance(record: dict) -> str:
    """Who added and changed a row and when, in words ("" for the shipped catalogue's own rows)."""
    added_by, changed_by = record.get("added_by") or "", record.get("updated_by") or ""
    parts = []
    if added_by:
        parts.append(f"added by {added_by} on {_when(record.get('added_at'))}")
    if changed_by and (changed_by != added_by or (record.get("version") or 1) > 1):
        parts.append(f"changed by {changed_by} on {_when(record.get('updated_at'))}")
    if not parts:
        return ""
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + (f" (version {record['version']})" if (record.get("version") or 1) > 1 else "")


def _when(stamp: str | None) -> str:
    """An ISO time stamp as 'YYYY-MM-DD HH:MM UTC'."""
    if not stamp:
        return "an unknown date"
    return stamp[:16].replace("T", " ") + (" UTC" if len(stamp) > 10 else "")


class ConflictError(EditError):
    """Someone else saved the record after this edit began: nothing was written. `theirs` is the
    record as it is stored now, `yours` the values of the refused edit, `fields` the fields where
    the two differ, so that a view can show both and let the person choose."""

    def __init__(self, kind: str, theirs: dict, yours: dict, read_version: int):
        self.kind = kind
        self.theirs = theirs
        self.yours = yours
        self.read_version = read_version
        self.fields = sorted(name for name, value in yours.items()
                             if name in theirs and _differs(value, theirs[name]))
        who = theirs.get("updated_by") or "someone else"
        when = (theirs.get("updated_at") or "")[:16].replace("T", " ")
        super().__init__({"": f"{who} saved '{theirs.get('id')}' at {when or 'an unknown time'} UTC after you "
                              f"opened it (version {theirs.get('version')}, yours was {read_version}); nothing "
                              f"was saved. Their values and yours are shown: save again to keep yours."})


def _differs(yours: object, theirs: object) -> bool:
    """Whether an edited value (often text from a form) differs from a stored one."""
    if yours is None or yours == "":
        return theirs not in (None, "")
    if isinstance(theirs, (int, float)) and not isinstance(theirs, bool):
        try:
            return float(str(yours)) != float(theirs)
        except ValueError:
            return True
    return str(yours) != str(theirs if theirs is not None else "")


class CatalogueReader:
    """Lookups shared by the full catalogue and the start-up snapshot. Subclasses provide
    `_load(kind)` (the records of a kind, as dicts), `_meta(key)` and `presets()`."""

    read_only = True

    def _reader_init(self) -> None:
        self._cache: dict[str, list[dict]] = {}
        self._indexes: dict[str, tuple[list[dict], dict[str, dict]]] = {}

    def _load(self, kind: str) -> list[dict]:
        raise NotImplementedError

    def _meta(self, key: str) -> str | None:
        raise NotImplementedError

    def presets(self) -> list[dict]:
        raise NotImplementedError

    @property
    def version(self) -> str:
        return self._meta("version") or ""

    @property
    def released(self) -> str:
        return self._meta("released") or ""

    def items(self, kind: str) -> list[dict]:
        """Every record of a kind as a dict of its fields plus `origin` and `field_sources`."""
        if kind not in KINDS:
            raise KeyError(f"unknown catalogue kind '{kind}' (one of: {', '.join(KINDS)})")
        if kind not in self._cache:
            self._cache[kind] = self._load(kind)
        return self._cache[kind]

    def count(self, kind: str) -> int:
        """How many records of a kind there are."""
        return len(self.items(kind))

    def index(self, kind: str) -> dict[str, dict]:
        records = self.items(kind)
        cached = self._indexes.get(kind)
        if cached is None or cached[0] is not records:
            cached = (records, {r["id"]: r for r in records})
            self._indexes[kind] = cached
        return cached[1]

    def get(self, kind: str, item_id: str) -> dict | None:
        return self.index(kind).get(item_id)

    def find(self, item_id: str) -> tuple[str, dict] | None:
        """The first record with this id, searching every kind but sources."""
        for kind in KINDS:
            if kind == "sources":
                continue
            rec = self.get(kind, item_id)
            if rec is not None:
                return kind, rec
        rec = self.get("sources", item_id)
        return ("sources", rec) if rec else None

    def sources(self) -> dict[str, dict]:
        return self.index("sources")

    def figure_source(self, kind: str, record: dict, name: str) -> dict | None:
        """The source of one figure of a record, with the figure's date: {id,title,url,publisher,date};
        a derived figure names the sources of its inputs and says how it was derived."""
        spec = field_map(kind)[name]
        derived = (record.get("derived") or {}).get(name)
        if derived is not None:
            return self._derived_source(record, derived)
        src_id = (record.get("field_sources") or {}).get(name) or record.get(spec.source_field or "source")
        if not src_id:
            return None
        src = self.sources().get(src_id, {"id": src_id, "title": src_id, "url": ""})
        when = record.get(spec.date_field or "date") if not (record.get("field_sources") or {}).get(name) else None
        return {
            "id": src_id,
            "title": src.get("title") or src_id,
            "publisher": src.get("publisher") or "",
            "url": src.get("url") or "",
            "kind": src.get("kind") or "",
            "date": str(when or src.get("published") or record.get("date") or src.get("accessed") or ""),
            # a figure someone entered (a quote, an own entry, an edit): who and when, for the report
            "entered": provenance(record) if record.get("origin", ORIGIN_BUNDLED) != ORIGIN_BUNDLED else "",
        }

    def _derived_source(self, record: dict, info: dict) -> dict:
        inputs = []
        for input_name, src_id in info.get("input_sources", {}).items():
            src = self.sources().get(src_id, {"title": src_id, "url": ""})
            inputs.append({"input": input_name, "value": info["inputs"].get(input_name), "id": src_id,
                           "title": src.get("title") or src_id, "url": src.get("url") or "",
                           "publisher": src.get("publisher") or "",
                           "date": str(src.get("published") or src.get("accessed") or "")})
        first = inputs[0] if inputs else {"id": "", "title": "", "url": "", "publisher": ""}
        return {
            "id": first["id"], "title": first["title"], "publisher": first["publisher"], "url": first["url"],
            "kind": "derived", "date": str(record.get("date") or ""),
            "derived": {"expression": info.get("expression", ""), "inputs": dict(info.get("inputs", {})),
                        "formula": describe_derived(info), "notes": info.get("notes", ""), "input_sources": inputs},
        }

    def to_json(self, kind: str, record: dict) -> dict:
        """The stable JSON contract: fields (snake_case, unit in the name), origin and per-figure sources."""
        out: dict = {"catalogue": kind}
        for spec in KINDS[kind]:
            out[spec.name] = record.get(spec.name)
        out["origin"] = record.get("origin", ORIGIN_BUNDLED)
        out["record"] = {name: record.get(name, AUDIT_DEFAULTS.get(name, ""))
                         for name in ("added_by", "added_at", "updated_by", "updated_at", "version")}
        if kind != "sources":
            out["sources"] = {
                spec.name: self.figure_source(kind, record, spec.name)
                for spec in KINDS[kind]
                if spec.figure and record.get(spec.name) is not None
            }
        return out

    def latest_price(self, item_id: str, kinds: tuple[str, ...] = ("quote", "list", "msrp", "street", "reported_deal"),
                     as_of: str | None = None) -> dict | None:
        """The price to use for an item: the newest user quote, else the newest list/MSRP, else street,
        else a reported deal (the dearer end of a range reported on one date);
        with `as_of` (YYYY-MM-DD), only what was known on that date."""
        prices = [p for p in self.items("prices") if p["item"] == item_id and p["kind"] in kinds
                  and known_by(p.get("date"), as_of)]
        if not prices:
            return None
        rank = {k: i for i, k in enumerate(kinds)}
        # on the same kind and date (the two ends of a reported range), the dearer figure: capex is
        # never understated by the choice of an end
        prices.sort(key=lambda p: (rank.get(p["kind"], 99), neg_date(p.get("date") or ""), -float(p.get("usd") or 0)))
        return prices[0]


    def cloud_price(self, offering_id: str, pricing: str = "on_demand", as_of: str | None = None) -> dict | None:
        """The newest price of a cloud offering for a pricing model (on_demand, spot, reserved_1y,
        reserved_3y) known on `as_of`: the price history, and the offering's own dated price."""
        rows = [r for r in self.items("cloud_prices") if r["offering"] == offering_id and r["pricing"] == pricing
                and known_by(r.get("date"), as_of)]
        offer = self.get("cloud", offering_id)
        column = {"on_demand": "usd_per_hour", "spot": "usd_per_hour_spot"}.get(pricing)
        if offer is not None and column and offer.get(column) is not None and known_by(offer.get("date"), as_of):
            rows.append({"id": offering_id, "offering": offering_id, "pricing": pricing,
                         "usd_per_hour": offer[column], "date": offer.get("date"), "source": offer.get("source")})
        if not rows:
            return None
        rows.sort(key=lambda r: neg_date(str(r.get("date") or "")))
        return rows[0]

    def price_history(self, kind: str, item_id: str) -> dict[str, list[tuple[str, float]]]:
        """Dated prices of an item, by series, oldest first: for an accelerator or system one series
        per price kind (list, msrp, street, quote, reported_deal) in USD; for a cloud offering one per
        pricing model (on_demand, spot, reserved_1y, reserved_3y) in USD per hour. Undated figures are
        left out (they cannot be placed on a time axis)."""
        series: dict[str, list[tuple[str, float]]] = {}
        if kind in ("accelerators", "systems"):
            for p in self.items("prices"):
                if p["item"] == item_id and p.get("date") and p.get("usd") is not None:
                    series.setdefault(p["kind"], []).append((str(p["date"]), float(p["usd"])))
        elif kind == "cloud":
            offer = self.get("cloud", item_id)
            for r in self.items("cloud_prices"):
                if r["offering"] == item_id and r.get("date") and r.get("usd_per_hour") is not None:
                    series.setdefault(r["pricing"], []).append((str(r["date"]), float(r["usd_per_hour"])))
            if offer is not None and offer.get("date"):
                for column, pricing in (("usd_per_hour", "on_demand"), ("usd_per_hour_spot", "spot")):
                    if offer.get(column) is not None:
                        points = series.setdefault(pricing, [])
                        if (str(offer["date"]), float(offer[column])) not in points:
                            points.append((str(offer["date"]), float(offer[column])))
        for points in series.values():
            points.sort()
        return series

    def embodied(self, item_id: str) -> dict | None:
        """The newest embodied-carbon figure of an accelerator or system."""
        rows = [r for r in self.items("embodied") if r["item"] == item_id]
        rows.sort(key=lambda r: neg_date(str(r.get("date") or "")))
        return rows[0] if rows else None


def known_by(when, as_of: str | None) -> bool:
    """Whether a figure dated `when` (YYYY, YYYY-MM or YYYY-MM-DD) was known on `as_of`; undated
    figures count as known only without a date to replay."""
    if not as_of:
        return True
    if not when:
        return False
    return str(when)[:10] <= as_of


def neg_date(text: str) -> str:
    """A key that sorts ISO dates newest first."""
    return "".join(chr(255 - ord(c)) for c in text)


class Snapshot(CatalogueReader):
    """The catalogue as stored on disk, read with sqlite3 (read-only) a kind at a time, when first
    asked for: the window's first screen needs four kinds of eleven (the accelerators, their prices,
    the sources and the selected row's cloud offers). `read_all()` reads the rest (the start-up
    loader calls it once that screen is painted, before the full catalogue opens)."""

    read_only = True

    def __init__(self, path: Path, records: dict[str, list[dict]], meta: dict[str, str], presets: list[dict],
                 counts: dict[str, int]):
        self._reader_init()
        self._path = path
        self._records = records
        self._meta_values = meta
        self._presets = presets
        self._counts = counts
        self._lock = threading.Lock()  # the loader's thread and the window's may ask at once

    def _load(self, kind: str) -> list[dict]:
        with self._lock:
            if kind not in self._records:
                try:
                    with closing(_connect(self._path)) as conn:
                        self._records[kind] = read_kind(conn, kind)
                except sqlite3.Error as exc:  # the full catalogue, opening meanwhile, reports real problems
                    log.warning("the start-up snapshot could not read %s from %s: %s", kind, self._path, exc)
                    return []
            return self._records[kind]

    def read_all(self) -> None:
        for kind in KINDS:
            self.items(kind)

    @property
    def kinds_read(self) -> set[str]:
        """The kinds read from the file so far."""
        with self._lock:
            return set(self._records)

    def count(self, kind: str) -> int:
        if kind not in self._counts:
            return super().count(kind)  # an unknown kind: refused as items() refuses it
        with self._lock:
            return len(self._records[kind]) if kind in self._records else self._counts[kind]

    def _meta(self, key: str) -> str | None:
        return self._meta_values.get(key)

    def presets(self) -> list[dict]:
        return copy.deepcopy(self._presets)


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)


def read_kind(conn: sqlite3.Connection, kind: str) -> list[dict]:
    """Every stored record of a kind, as the full catalogue gives them: each field of the kind (None
    where the table predates it), origin, field_sources, derived, updated_at and the audit columns."""
    cursor = conn.execute(f"SELECT * FROM {TABLE_NAMES[kind]} ORDER BY id")  # noqa: S608 - fixed names
    at = {column[0]: i for i, column in enumerate(cursor.description)}
    absent = len(at)  # a column the table lacks reads the None appended to each row
    # the keys in the full catalogue's order: the fields, origin, field_sources, derived, then when and by whom
    head = [spec.name for spec in KINDS[kind]] + ["origin"]
    tail = ["updated_at", *AUDIT_COLUMNS]
    pick_head = itemgetter(*(at.get(name, absent) for name in head))
    pick_tail = itemgetter(*(at.get(name, absent) for name in tail))
    bools = [spec.name for spec in KINDS[kind] if spec.type == "bool"]
    defaults = {column: AUDIT_DEFAULTS[column] for column in AUDIT_COLUMNS if column not in at}  # before the team schema
    sources = at.get("field_sources")  # every table but the sources' own
    derived = at.get("derived")
    out = []
    for row in cursor.fetchall():
        row += (None,)
        record = dict(zip(head, pick_head(row)))
        for name in bools:
            if record[name] is not None:
                record[name] = bool(record[name])
        raw = row[sources] if sources is not None else None
        record["field_sources"] = dict(json.loads(raw)) if raw else {}
        if derived is not None:
            record["derived"] = dict(json.loads(row[derived])) if row[derived] else {}
        record.update(zip(tail, pick_tail(row)))
        record.update(defaults)
        out.append(record)
    return out


def read_snapshot(path: Path) -> Snapshot | None:
    """The catalogue stored in the SQLite file at `path` (its version, presets, counts and
    accelerators; the other kinds when first asked for), or None when there is none yet or it cannot
    be read as expected (the full open then creates, migrates or reports it)."""
    if not path.is_file():
        return None
    try:
        conn = _connect(path)
    except sqlite3.Error:
        return None
    try:
        counts = {kind: conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]  # noqa: S608 - fixed names
                  for kind, table in TABLE_NAMES.items()}
        records = {"accelerators": read_kind(conn, "accelerators")}
        meta = {key: value for key, value in conn.execute("SELECT key, value FROM catalogue_meta")}
        presets = [{"id": id_, "name": name, "description": description, **(json.loads(spec or "{}"))}
                   for id_, name, description, spec in
                   conn.execute("SELECT id, name, description, spec FROM workload_presets ORDER BY id")]
    except (sqlite3.Error, ValueError, IndexError, KeyError) as exc:
        log.info("no start-up snapshot of %s: %s", path, exc)
        return None
    finally:
        conn.close()
    if not meta.get("version") or not records["accelerators"]:
        return None
    return Snapshot(path, records, meta, presets, counts)
