"""Catalogue bundles: the catalogue as it is in one user's database (the bundled records and their
own entries and quotes) written to one versioned, checksummed file, and read back in another
user's database as a preview of what it would change, then applied in one transaction.

A bundle is a zip file, or a folder when its name does not end in .zip. It holds the catalogue in
data/'s layout (catalogue.toml, accelerators/, sources/, systems.toml, models.toml, the CSV files,
derived.toml, workloads.toml), so load_bundle reads it; field_sources.csv, which gives the
per-figure sources of CSV rows (data/'s CSV files have no column for them); and manifest.json: the
format version, the catalogue version and release date, when and by which gpudesk it was made, and
the SHA-256 of every other file. The checksums catch a file damaged or edited after export; they
are not a signature (whoever can edit the files can edit the manifest too).

What an import does: the bundle becomes the installed catalogue, as if gpudesk had shipped it. Its
records become catalogue records (origin "bundled"), whoever made them: it adds records, changes
them field by field, and removes the catalogue records it no longer carries. It never touches a
row whose origin is the user's (added or edited by them), even when it carries the same id: the
preview lists such rows as kept. A bundle older than the installed catalogue is refused, and so is
one that would remove a record the user's own rows refer to. The applied files are kept beside
the database, so that reverting an edit restores the imported figures; when a gpudesk upgrade
ships a newer catalogue than the imported one, the shipped one replaces it (the user's rows are
kept, as ever).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from gpudesk import APP_NAME, __version__
from gpudesk.core.catalogue import sync
from gpudesk.core.catalogue.bundle import CSV_FILES, TOML_KINDS, Bundle, BundleError, load_bundle, version_key
from gpudesk.core.catalogue.derived import DERIVED_KINDS, describe
from gpudesk.core.catalogue.fields import KIND_LABELS, KIND_NOUNS, KINDS, field_map
from gpudesk.core.catalogue.reading import ORIGIN_BUNDLED, USER_ORIGINS, CatalogueReader

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from sqlalchemy.orm import Session


log = logging.getLogger(__name__)

FORMAT = "gpudesk-catalogue-bundle"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
FIELD_SOURCES_FILE = "field_sources.csv"
FIELD_SOURCES_HEADER = ["kind", "id", "field", "source"]
IMPORTED_META = "imported_bundle"  # catalogue_meta key: the applied bundle (JSON), "" when none
PRESETS = "workloads"  # the workload presets, listed beside the kinds in a plan
CHANGES = ("added", "changed", "removed", "kept")
TOML_FILES = {
    "accelerators": "accelerators/accelerators.toml",
    "sources": "sources/sources.toml",
    "systems": "systems.toml",
    "models": "models.toml",
}
# What a bundle may hold: data/ is about 0.6 MB, so these only stop a hostile or broken file.
MAX_FILES = 2000
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_TOTAL_BYTES = 256 * 1024 * 1024
_NAME_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_VERSION = re.compile(r"^\d+(\.\d+)*$")
_BARE_KEY = re.compile(r"^[A-Za-z0-9_\-]+$")


class ExchangeError(ValueError):
    """A bundle that cannot be written or read, or an import that is refused; nothing was changed.

    `reason` says which: "invalid" (unreadable, malformed, tampered with, or problems in its
    files), "refused" (a sound bundle this database does not take) or "failed" (the export could
    not be written). `problems` lists each problem when there are several."""

    def __init__(self, message: str, reason: str = "invalid", problems: list[str] | None = None):
        super().__init__(message)
        self.reason = reason
        self.problems = list(problems or [message])


# ============================================================================ export
@dataclass(frozen=True)
class ExportResult:
    path: Path
    version: str
    released: str
    files: int
    records: int
    user_records: int

    def to_json(self) -> dict:
        return {"path": str(self.path), "format_version": FORMAT_VERSION, "catalogue_version": self.version,
                "released": self.released, "files": self.files, "records": self.records,
                "user_records": self.user_records}

    def format_text(self) -> str:
        return (f"Wrote {self.path}: catalogue {self.version} (released {self.released or 'undated'}), "
                f"{self.records:,} records ({self.user_records:,} of them your own) in {self.files} files and {MANIFEST}.")


def export_bundle(catalogue: CatalogueReader, path: str | os.PathLike[str]) -> ExportResult:
    """Write the catalogue in `catalogue`'s database as a bundle at `path` (a zip when it ends in
    .zip, else a folder). The bundle is checked by reading it back before anything is written, and
    written atomically: a failed export leaves `path` as it was."""
    from sqlalchemy.orm import Session

    target = Path(path)
    with Session(catalogue.engine) as session:
        current = _current_records(session)
        presets = _current_presets(session)
        version = sync.get_meta(session, "version") or ""
        released = sync.get_meta(session, "released") or ""
    created = datetime.now(UTC).replace(microsecond=0)
    files = _bundle_files(current, presets, version, released, created)
    try:
        _load_files(files, target)
    except ExchangeError as exc:
        raise ExchangeError(
            f"the catalogue cannot be exported: {len(exc.problems)} of its entries break the catalogue's rules "
            "(edit them in the catalogue, then export again):\n" + _shown(exc.problems), "failed", exc.problems,
        ) from None
    user_records = {kind: sorted(i for i, r in rows.items() if r["origin"] != ORIGIN_BUNDLED)
                    for kind, rows in current.items()}
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "catalogue_version": version,
        "released": released,
        "created": created.isoformat(),
        "app": APP_NAME,
        "app_version": __version__,
        "records": {kind: len(rows) for kind, rows in current.items()} | {PRESETS: len(presets)},
        "user_records": {kind: ids for kind, ids in user_records.items() if ids},
        "files": {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())},
    }
    everything = {MANIFEST: (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode()} | files
    try:
        if target.suffix.lower() == ".zip":
            _write_zip(target, everything, created)
        else:
            _write_folder(target, everything)
    except OSError as exc:
        raise ExchangeError(f"{target}: cannot be written ({exc.strerror or exc})", "failed") from exc
    return ExportResult(target, version, released, len(files),
                        sum(len(rows) for rows in current.values()),
                        sum(len(ids) for ids in user_records.values()))


def _bundle_files(current: dict[str, dict[str, dict]], presets: dict[str, dict], version: str, released: str,
                  created: datetime) -> dict[str, bytes]:
    """The bundle's catalogue files (every one but the manifest), by name."""
    stamp = f"# Exported by {APP_NAME} {__version__} on {created.isoformat()}; the layout of data/ (data/README.md).\n"
    files = {"catalogue.toml": stamp + "\n" + _toml_document("catalogue", [{"version": version, "released": released}],
                                                             array=False)}
    derived: list[dict] = []
    for kind, table in TOML_KINDS.items():
        entries, comments = [], []
        for rec in current[kind].values():
            entry = {}
            for spec in KINDS[kind]:
                value = rec.get(spec.name)
                if value is None or spec.name in (rec.get("derived") or {}):
                    continue  # a derived figure is computed again from derived.toml
                entry[spec.name] = value
            if rec.get("field_sources"):
                entry["field_sources"] = dict(sorted(rec["field_sources"].items()))
            for name, info in sorted((rec.get("derived") or {}).items()):
                derived.append({"item": rec["id"], "field": name, "expression": info.get("expression", ""),
                                "inputs": info.get("inputs", {}), "input_sources": info.get("input_sources", {}),
                                "notes": info.get("notes", "")})
            entries.append(entry)
            comments.append(f"origin: {rec['origin']}" if rec["origin"] != ORIGIN_BUNDLED else None)
        files[TOML_FILES[kind]] = stamp + _toml_document(table, entries, comments)
    side_rows = []
    for kind, name in CSV_FILES.items():
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([spec.name for spec in KINDS[kind]])
        for rec in current[kind].values():
            row = dict(rec)
            sources = rec.get("field_sources") or {}
            for spec in KINDS[kind]:
                # a figure of the user's own region is sourced in field_sources; its *_source column
                # says the same, so that the bundle passes the rule that every figure has a source
                if spec.source_field and row.get(spec.source_field) is None and sources.get(spec.name):
                    row[spec.source_field] = sources[spec.name]
            writer.writerow([_csv_cell(row.get(spec.name)) for spec in KINDS[kind]])
            side_rows += [[kind, rec["id"], figure, src] for figure, src in sorted(sources.items())]
        files[name] = out.getvalue()
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(FIELD_SOURCES_HEADER)
    writer.writerows(side_rows)
    files[FIELD_SOURCES_FILE] = out.getvalue()
    files["derived.toml"] = stamp + _toml_document("derived", derived)
    files["workloads.toml"] = stamp + _toml_document(
        "workload", [{"id": p["id"], "name": p["name"], "description": p["description"], **p["spec"]}
                     for p in presets.values()])
    return {name: text.encode("utf-8") for name, text in files.items()}


def _write_zip(target: Path, files: dict[str, bytes], created: datetime) -> None:
    import zipfile

    from gpudesk.core.fileio import atomic_write_bytes

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=created.timetuple()[:6])
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    atomic_write_bytes(target, buffer.getvalue())


def _write_folder(target: Path, files: dict[str, bytes]) -> None:
    """Write the files into a new folder beside `target`, then rename it into place (replacing an
    earlier bundle there, never another folder)."""
    from gpudesk.core.fileio import atomic_write_bytes

    if target.exists() and not (target.is_dir() and ((target / MANIFEST).is_file() or not any(target.iterdir()))):
        raise ExchangeError(f"{target}: exists and is not a {APP_NAME} catalogue bundle; choose another name "
                            "(a name ending in .zip writes a zip file)", "failed")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        for name, data in files.items():
            atomic_write_bytes(staging / name, data)
        _replace_folder(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _replace_folder(staging: Path, target: Path) -> None:
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(staging, 0o777 & ~mask)  # mkdtemp makes 0700
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.old")
        os.replace(target, old)
    os.replace(staging, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _csv_cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back as the same float
    return str(value)


# ---------------------------------------------------------------------------- a small TOML writer
def _toml_document(table: str, entries: list[dict], comments: list[str | None] | None = None,
                   array: bool = True) -> str:
    """`entries` as [[table]] blocks (or one [table] when not `array`); nested tables become
    [table.key] sub-tables, as in data/."""
    lines: list[str] = []
    for n, entry in enumerate(entries):
        lines.append("")
        if comments and comments[n]:
            lines.append(f"# {comments[n]}")
        lines.append(f"[[{table}]]" if array else f"[{table}]")
        _toml_body(table, entry, lines)
    return "\n".join(lines).lstrip("\n") + "\n"


def _toml_body(path: str, mapping: dict, lines: list[str]) -> None:
    subtables = []
    for key, value in mapping.items():
        if value is None:
            continue  # TOML has no null: an unknown value is a key left out
        if isinstance(value, dict) and value:
            subtables.append((key, value))
        else:
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    for key, value in subtables:
        sub = f"{path}.{_toml_key(key)}"
        lines.append(f"[{sub}]")
        _toml_body(sub, value, lines)


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _toml_string(key)


def _toml_string(text: str) -> str:
    # JSON's escapes (\" \\ \n \t \uXXXX ...) are all TOML basic-string escapes; TOML also wants DEL escaped
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # "80.0", "1e+16": TOML floats, read back exactly
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value if v is not None) + "]"
    if isinstance(value, dict):
        items = [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items() if v is not None]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


# ============================================================================ reading a bundle
@dataclass
class VerifiedBundle:
    """A bundle whose manifest is well formed, whose files match their checksums and whose
    catalogue load_bundle reads without a problem."""

    source: Path
    manifest: dict
    files: dict[str, bytes]
    bundle: Bundle


def read_bundle(path: str | os.PathLike[str]) -> VerifiedBundle:
    """Read and check the bundle at `path` (a zip, a bundle folder, or the manifest.json in one).
    Raises ExchangeError("invalid") naming the file and the problem."""
    source = Path(path)
    if source.name == MANIFEST and source.is_file():
        source = source.parent
    if not source.exists():
        raise ExchangeError(f"{source}: no such file or folder")
    raw = _read_folder(source) if source.is_dir() else _read_zip(source)
    if MANIFEST not in raw:
        raise ExchangeError(f"{source}: {MANIFEST} is missing, so this is not a {APP_NAME} catalogue bundle "
                            f"(`{APP_NAME} catalogue export` writes one)")
    manifest = _parse_manifest(raw.pop(MANIFEST), source)
    listed = manifest["files"]
    for name, digest in listed.items():
        if name not in raw:
            raise ExchangeError(f"{source}: {name} is listed in {MANIFEST} but missing from the bundle")
        if hashlib.sha256(raw[name]).hexdigest() != digest:
            raise ExchangeError(f"{source}: {name} does not match its SHA-256 checksum in {MANIFEST}: the file was "
                                "changed or damaged after the bundle was exported")
    unlisted = sorted(set(raw) - set(listed))
    if unlisted:
        raise ExchangeError(f"{source}: {', '.join(unlisted[:5])} {'is' if len(unlisted) == 1 else 'are'} in the "
                            f"bundle but not listed in {MANIFEST}")
    bundle = _load_files(raw, source)
    if bundle.version != manifest["catalogue_version"]:
        raise ExchangeError(f"{source}: {MANIFEST} says catalogue {manifest['catalogue_version']}, but its "
                            f"catalogue.toml says {bundle.version}")
    return VerifiedBundle(source, manifest, raw, bundle)


def _ignored(name: str) -> bool:
    """Files a file manager or an archiver adds beside a bundle's own (.DS_Store, __MACOSX/)."""
    parts = name.split("/")
    return parts[0] == "__MACOSX" or any(p.startswith(".") for p in parts)


def _check_name(name: str, where: Path) -> None:
    parts = name.split("/")
    if not all(_NAME_PART.match(p) and p not in (".", "..") for p in parts):
        raise ExchangeError(f"{where}: holds a file named {name!r}, which a catalogue bundle never has")


def _read_zip(source: Path) -> dict[str, bytes]:
    import zipfile
    import zlib

    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ExchangeError(f"{source}: not a zip file or a bundle folder ({exc})") from None
    files: dict[str, bytes] = {}
    total = 0
    with archive:
        members = [m for m in archive.infolist() if not m.is_dir() and not _ignored(m.filename)]
        if len(members) > MAX_FILES:
            raise ExchangeError(f"{source}: holds {len(members):,} files, more than a catalogue bundle has")
        for member in members:
            name = member.filename
            _check_name(name, source)
            if name in files:
                raise ExchangeError(f"{source}: holds {name} twice")
            total += member.file_size
            if member.file_size > MAX_FILE_BYTES or total > MAX_TOTAL_BYTES:
                raise ExchangeError(f"{source}: {name} is far larger than a catalogue file")
            try:
                files[name] = archive.read(member)
            except (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError) as exc:
                raise ExchangeError(f"{source}: {name} cannot be read from the zip ({exc})") from None
    return files


def _read_folder(source: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    total = 0
    for path in sorted(source.rglob("*")):
        name = path.relative_to(source).as_posix()
        if _ignored(name) or path.is_dir():
            continue
        _check_name(name, source)
        if path.is_symlink() or not path.is_file():
            raise ExchangeError(f"{source}: {name} is a link or a special file, not a catalogue file")
        if len(files) >= MAX_FILES:
            raise ExchangeError(f"{source}: holds more files than a catalogue bundle has")
        try:
            size = path.stat().st_size
            total += size
            if size > MAX_FILE_BYTES or total > MAX_TOTAL_BYTES:
                raise ExchangeError(f"{source}: {name} is far larger than a catalogue file")
            files[name] = path.read_bytes()
        except OSError as exc:
            raise ExchangeError(f"{source}: {name} cannot be read ({exc.strerror or exc})") from None
    return files


def _parse_manifest(data: bytes, source: Path) -> dict:
    where = f"{source}: {MANIFEST}"
    try:
        manifest = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ExchangeError(f"{where} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ExchangeError(f"{where} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    if not isinstance(manifest, dict):
        raise ExchangeError(f"{where} must be a JSON object, not {type(manifest).__name__}")
    if manifest.get("format") != FORMAT:
        raise ExchangeError(f"{where}: 'format' is {manifest.get('format')!r}, not {FORMAT!r}, so this is not a "
                            f"{APP_NAME} catalogue bundle")
    found = manifest.get("format_version")
    if isinstance(found, bool) or not isinstance(found, int):
        raise ExchangeError(f"{where}: 'format_version' must be a whole number, not {found!r}")
    if found > FORMAT_VERSION:
        raise ExchangeError(f"{where}: format version {found} is newer than this {APP_NAME} ({__version__}) reads "
                            f"(version {FORMAT_VERSION}); update {APP_NAME} to import it")
    if found < 1:
        raise ExchangeError(f"{where}: format version {found} is not one {APP_NAME} knows (it reads {FORMAT_VERSION})")
    version = manifest.get("catalogue_version")
    if not isinstance(version, str) or not _VERSION.match(version):
        raise ExchangeError(f"{where}: 'catalogue_version' must be a version like 2026.11.4, not {version!r}")
    for key in ("released", "created", "app_version"):
        if not isinstance(manifest.get(key), str):
            raise ExchangeError(f"{where}: {key!r} must be text, not {manifest.get(key)!r}")
    try:
        datetime.fromisoformat(manifest["created"])
    except ValueError:
        raise ExchangeError(f"{where}: 'created' {manifest['created']!r} is not a date and time "
                            "like 2026-11-26T10:00:00+00:00") from None
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        raise ExchangeError(f"{where}: 'files' must map each file of the bundle to its SHA-256 checksum")
    for name, digest in files.items():
        _check_name(name, source)
        if name == MANIFEST:
            raise ExchangeError(f"{where}: 'files' lists {MANIFEST} itself")
        if not isinstance(digest, str) or not _SHA256.match(digest):
            raise ExchangeError(f"{where}: the checksum of {name} is {digest!r}, not a SHA-256 (64 hexadecimal digits)")
    return manifest


def _load_files(files: dict[str, bytes], source: Path) -> Bundle:
    """load_bundle (and the CSV rows' field sources) on `files` written to a temporary folder;
    problems name `source` rather than the temporary folder."""
    with tempfile.TemporaryDirectory(prefix="gpudesk-bundle-") as tmp:
        for name, data in files.items():
            target = Path(tmp, name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        try:
            return load_catalogue_dir(Path(tmp))
        except BundleError as exc:
            problems = [p.replace(tmp, str(source)) for p in exc.problems]
            raise ExchangeError(f"{source}: {len(problems)} problem(s) in the bundle's catalogue:\n" + _shown(problems),
                                "invalid", problems) from None


def load_catalogue_dir(data_dir: Path) -> Bundle:
    """load_bundle, plus the per-figure sources of CSV rows when the folder has field_sources.csv
    (a bundle does; data/ needs none). Raises BundleError listing every problem."""
    bundle = load_bundle(data_dir)
    path = data_dir / FIELD_SOURCES_FILE
    if not path.exists():
        return bundle
    problems: list[str] = []
    indexes = {kind: bundle.index(kind) for kind in CSV_FILES}
    sources = bundle.index("sources")
    seen: set[tuple[str, str, str]] = set()
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            if reader.fieldnames != FIELD_SOURCES_HEADER:
                raise BundleError([f"{path.name}: the header must be {','.join(FIELD_SOURCES_HEADER)}"])
            for row in reader:
                where = f"{path.name}: line {reader.line_num}"
                kind, item, name, src = (row.get(k) or "" for k in FIELD_SOURCES_HEADER)
                spec = field_map(kind).get(name) if kind in indexes else None
                if kind not in indexes:
                    problems.append(f"{where}: '{kind}' is not a kind kept in a CSV file ({', '.join(CSV_FILES)})")
                elif item not in indexes[kind]:
                    problems.append(f"{where}: {KIND_NOUNS[kind]} '{item}' is not in {CSV_FILES[kind]}")
                elif spec is None or not spec.figure:
                    problems.append(f"{where}: '{name}' is not a figure of {KIND_NOUNS[kind]} '{item}'")
                elif src not in sources:
                    problems.append(f"{where}: names unknown source '{src}'")
                elif (kind, item, name) in seen:
                    problems.append(f"{where}: the source of {kind} '{item}' {name} is given twice")
                else:
                    seen.add((kind, item, name))
                    indexes[kind][item]["field_sources"][name] = src
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        problems.append(f"{path}: cannot be read as CSV ({exc})")
    if problems:
        raise BundleError(problems)
    return bundle


def _shown(problems: list[str], limit: int = 20) -> str:
    more = f"\n  ... and {len(problems) - limit} more" if len(problems) > limit else ""
    return "\n".join(f"  {p}" for p in problems[:limit]) + more


# ============================================================================ the plan
@dataclass(frozen=True)
class FieldChange:
    field: str  # a field name; "field_sources.<figure>", "derived.<figure>" for a figure's source or formula
    label: str
    old: object
    new: object

    def shown(self) -> tuple[str, str]:
        """The old and new values as a person reads them; exact where the rounded texts would agree."""
        old, new = _show(self.old, self.field), _show(self.new, self.field)
        if old == new and self.old != self.new:
            old, new = repr(self.old), repr(self.new)
        return old, new


@dataclass(frozen=True)
class RecordChange:
    kind: str  # a catalogue kind, or "workloads" for a workload preset
    id: str
    change: str  # added | changed | removed | kept (the user's row; the bundle's differs and is not applied)
    label: str
    fields: tuple[FieldChange, ...] = ()
    origin: str = ORIGIN_BUNDLED  # of the row in the database (kept: the user's)


@dataclass
class UpdatePlan:
    """What importing a bundle would change in one database, per kind, record by record."""

    verified: VerifiedBundle
    installed_version: str
    installed_released: str
    changes: list[RecordChange]

    @property
    def source(self) -> Path:
        return self.verified.source

    @property
    def manifest(self) -> dict:
        return self.verified.manifest

    @property
    def version(self) -> str:
        return self.verified.bundle.version

    @property
    def released(self) -> str:
        return self.verified.bundle.released

    @property
    def version_changes(self) -> bool:
        return (self.version, self.released) != (self.installed_version, self.installed_released)

    @property
    def empty(self) -> bool:
        """Nothing to apply: no record would change and the version stays (kept rows are not changes)."""
        return not self.version_changes and not any(c.change != "kept" for c in self.changes)

    def summary(self) -> dict[str, int]:
        return {change: sum(1 for c in self.changes if c.change == change) for change in CHANGES}

    def by_kind(self) -> dict[str, list[RecordChange]]:
        out: dict[str, list[RecordChange]] = {}
        for c in self.changes:
            out.setdefault(c.kind, []).append(c)
        return out

    def to_json(self) -> dict:
        kinds: dict[str, dict] = {}
        for kind, changes in self.by_kind().items():
            entry = kinds[kind] = {}
            for c in changes:
                item = {"id": c.id, "label": c.label}
                if c.change == "kept":
                    item["origin"] = c.origin
                if c.fields:
                    item["fields"] = [{"field": f.field, "label": f.label, "old": f.old, "new": f.new} for f in c.fields]
                entry.setdefault(c.change, []).append(item)
        m = self.manifest
        return {
            "bundle": {"path": str(self.source), "format_version": m["format_version"], "catalogue_version": self.version,
                       "released": self.released, "created": m["created"], "app_version": m["app_version"],
                       "files": len(m["files"])},
            "installed": {"catalogue_version": self.installed_version, "released": self.installed_released},
            "summary": self.summary(),
            "changes": kinds,
        }

    def describe_bundle(self) -> str:
        m = self.manifest
        return (f"catalogue {self.version} (released {self.released or 'undated'}), exported {_when(m['created'])} "
                f"by {APP_NAME} {m['app_version']}; {len(m['files'])} files match their checksums")

    def format_text(self) -> str:
        lines = [f"Catalogue bundle {self.source}", f"  {self.describe_bundle()}",
                 f"Installed: catalogue {self.installed_version} (released {self.installed_released or 'undated'})"]
        if self.version_changes:
            lines.append(f"Catalogue version: {self.installed_version} -> {self.version}")
        if self.empty:
            lines += ["", "No changes: your catalogue already matches this bundle."]
            return "\n".join(lines)
        marks = {"added": "+", "changed": "~", "removed": "-", "kept": "="}
        for kind, changes in self.by_kind().items():
            counts = ", ".join(f"{n} {change}" for change in CHANGES
                               if (n := sum(1 for c in changes if c.change == change)))
            lines += ["", f"{kind_label(kind)}: {counts}"]
            for c in changes:
                note = "   (yours: kept as it is)" if c.change == "kept" else ""
                lines.append(f"  {marks[c.change]} {c.id}   {c.label}{note}")
                for f in c.fields:
                    old, new = f.shown()
                    lines.append(f"      {f.label}: {old or '(none)'} -> {new or '(none)'}")
        s = self.summary()
        lines += ["", f"In all: {s['added']} added, {s['changed']} changed, {s['removed']} removed"
                      + (f"; {s['kept']} of your own entries kept as they are." if s["kept"] else ".")]
        return "\n".join(lines)


def kind_label(kind: str) -> str:
    return "Workload presets" if kind == PRESETS else KIND_LABELS[kind]


def plan_update(catalogue: CatalogueReader, path: str | os.PathLike[str]) -> UpdatePlan:
    """Check the bundle at `path` and work out what importing it would change in `catalogue`.
    Raises ExchangeError: "invalid" for a bad bundle, "refused" for one this database does not take."""
    from sqlalchemy.orm import Session

    verified = read_bundle(path)
    with Session(catalogue.engine) as session:
        return _plan(session, verified)


def apply_update(catalogue: CatalogueReader, plan: UpdatePlan) -> dict[str, int]:
    """Apply `plan` in one transaction, after checking that the database is still as it was when
    the plan was made; returns the counts of added, changed, removed and kept records."""
    from sqlalchemy.orm import Session

    catalogue.backup("before-catalogue-import")
    installed = installed_dir(catalogue.engine)
    installed.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{installed.name}.", suffix=".tmp", dir=installed.parent))
    try:
        for name, data in (plan.verified.files | {MANIFEST: _manifest_bytes(plan)}).items():
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        with Session(catalogue.engine) as session, session.begin():
            fresh = _plan(session, plan.verified)
            if fresh.changes != plan.changes or fresh.installed_version != plan.installed_version:
                raise ExchangeError(f"{plan.source}: the catalogue changed since this preview was made; "
                                    "check the bundle again to see what it would change now", "refused")
            sync.sync_bundle(session, staging, plan.verified.bundle)
            sync.set_meta(session, IMPORTED_META, json.dumps({
                "version": plan.version, "released": plan.released, "fingerprint": sync.fingerprint(staging),
                "file": str(plan.source), "created": plan.manifest["created"],
                "app_version": plan.manifest["app_version"],
                "applied_at": datetime.now(UTC).isoformat(timespec="seconds"),
            }))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    try:
        _replace_folder(staging, installed)
    except OSError as exc:  # the database has the update; only a later revert falls back (see sync_catalogue)
        log.warning("the imported catalogue's files could not be kept at %s: %s", installed, exc)
        shutil.rmtree(staging, ignore_errors=True)
    catalogue._cache.clear()  # the catalogue's record cache (this package's own)
    log.info("catalogue bundle %s applied: %s", plan.source, plan.summary())
    return plan.summary()


def _manifest_bytes(plan: UpdatePlan) -> bytes:
    return (json.dumps(plan.manifest, indent=2, ensure_ascii=False) + "\n").encode()


def _plan(session: Session, verified: VerifiedBundle) -> UpdatePlan:
    bundle = verified.bundle
    installed_version = sync.get_meta(session, "version") or ""
    installed_released = sync.get_meta(session, "released") or ""
    if version_key(bundle.version) < version_key(installed_version):
        raise ExchangeError(
            f"{verified.source}: the bundle holds catalogue {bundle.version} (released {bundle.released or 'undated'}), "
            f"older than the installed catalogue {installed_version} (released {installed_released or 'undated'}); "
            "an import never goes back to an older catalogue, so nothing was changed", "refused")
    current = _current_records(session)
    changes = _diff(current, _current_presets(session), bundle)
    stranded = _stranded(current, bundle)
    if stranded:
        raise ExchangeError(
            f"{verified.source}: the import is refused: it removes records your own entries refer to:\n"
            + _shown(stranded) + "\nEdit or delete those entries first; nothing was changed", "refused", stranded)
    return UpdatePlan(verified, installed_version, installed_released, changes)


def _current_records(session: Session) -> dict[str, dict[str, dict]]:
    from sqlalchemy import select

    from gpudesk.core.catalogue.models import MODELS

    out = {}
    for kind in KINDS:
        model = MODELS[kind]
        out[kind] = {row.id: _row_values(kind, row) for row in session.scalars(select(model).order_by(model.id))}
    return out


def _row_values(kind: str, row) -> dict:
    # "" is how some user rows store an empty text (a source's publisher); a bundle reads it as None
    values = {spec.name: _none_if_empty(getattr(row, spec.name)) for spec in KINDS[kind]}
    if kind != "sources":
        values["field_sources"] = dict(row.field_sources or {})
    if kind in DERIVED_KINDS:
        values["derived"] = dict(row.derived or {})
    values["origin"] = row.origin
    return values


def _none_if_empty(value: object) -> object:
    return None if isinstance(value, str) and not value.strip() else value


def _current_presets(session: Session) -> dict[str, dict]:
    from sqlalchemy import select

    from gpudesk.core.catalogue.models import WorkloadPreset

    rows = session.scalars(select(WorkloadPreset).order_by(WorkloadPreset.id))
    return {p.id: {"id": p.id, "name": p.name, "description": p.description or "", "spec": dict(p.spec or {}),
                   "origin": p.origin} for p in rows}


def _diff(current: dict[str, dict[str, dict]], presets: dict[str, dict], bundle: Bundle) -> list[RecordChange]:
    """The changes sync.sync_bundle makes when it loads `bundle`, in the same terms: the user's rows
    are kept, catalogue rows are added, updated or removed."""
    changes: list[RecordChange] = []
    for kind in KINDS:
        rows = current[kind]
        shipped = bundle.index(kind)
        for item_id in sorted(shipped):
            record, row = shipped[item_id], rows.get(item_id)
            if row is None:
                changes.append(RecordChange(kind, item_id, "added", _label(kind, record)))
                continue
            fields = _field_changes(kind, row, record)
            if fields:
                user = row["origin"] in USER_ORIGINS
                changes.append(RecordChange(kind, item_id, "kept" if user else "changed", _label(kind, row),
                                            fields, row["origin"]))
        for item_id, row in rows.items():
            if row["origin"] not in USER_ORIGINS and item_id not in shipped:
                changes.append(RecordChange(kind, item_id, "removed", _label(kind, row)))
    shipped_presets = {w["id"]: w for w in bundle.workloads if isinstance(w, dict) and w.get("id")}
    for preset_id in sorted(shipped_presets):
        spec = shipped_presets[preset_id]
        new = {"name": spec.get("name", preset_id), "description": spec.get("description", ""),
               "spec": {k: v for k, v in spec.items() if k not in ("id", "name", "description")}}
        preset = presets.get(preset_id)
        if preset is None:
            changes.append(RecordChange(PRESETS, preset_id, "added", new["name"]))
            continue
        fields = [FieldChange(key, key, preset[key], new[key]) for key in ("name", "description") if preset[key] != new[key]]
        for key in sorted(set(preset["spec"]) | set(new["spec"])):
            if preset["spec"].get(key) != new["spec"].get(key):
                fields.append(FieldChange(key, key, preset["spec"].get(key), new["spec"].get(key)))
        if fields:
            kept = preset["origin"] != ORIGIN_BUNDLED
            changes.append(RecordChange(PRESETS, preset_id, "kept" if kept else "changed", preset["name"],
                                        tuple(fields), preset["origin"]))
    for preset_id, preset in presets.items():
        if preset["origin"] == ORIGIN_BUNDLED and preset_id not in shipped_presets:
            changes.append(RecordChange(PRESETS, preset_id, "removed", preset["name"]))
    return changes


def _field_changes(kind: str, row: dict, record: dict) -> tuple[FieldChange, ...]:
    specs = field_map(kind)
    out = [FieldChange(spec.name, spec.header(), row.get(spec.name), record.get(spec.name))
           for spec in KINDS[kind] if row.get(spec.name) != record.get(spec.name)]
    nested = [("field_sources", "Source of")] if kind != "sources" else []
    if kind in DERIVED_KINDS:
        nested.append(("derived", "Formula of"))
    for key, what in nested:
        old, new = row.get(key) or {}, record.get(key) or {}
        for name in sorted(set(old) | set(new)):
            if old.get(name) != new.get(name):
                label = specs[name].label if name in specs else name
                out.append(FieldChange(f"{key}.{name}", f"{what} {label}", old.get(name), new.get(name)))
    return tuple(out)


def _references(kind: str, row: dict) -> Iterator[tuple[list[str], str]]:
    """(the kinds it may name, the id) for every record a row refers to."""
    for spec in KINDS[kind]:
        if spec.type == "ref" and row.get(spec.name):
            yield spec.ref.split("|"), row[spec.name]
    for src in (row.get("field_sources") or {}).values():
        yield ["sources"], src
    for info in (row.get("derived") or {}).values():
        for src in (info.get("input_sources") or {}).values():
            yield ["sources"], src


def _stranded(current: dict[str, dict[str, dict]], bundle: Bundle) -> list[str]:
    """The user's rows that would name a record the bundle removes."""
    before = {kind: set(rows) for kind, rows in current.items()}
    after = {kind: set(bundle.index(kind)) | {i for i, r in rows.items() if r["origin"] in USER_ORIGINS}
             for kind, rows in current.items()}
    problems = []
    for kind, rows in current.items():
        for item_id, row in rows.items():
            if row["origin"] not in USER_ORIGINS:
                continue
            for targets, ref in _references(kind, row):
                was = next((t for t in targets if ref in before[t]), None)
                if was is not None and not any(ref in after[t] for t in targets):
                    problems.append(f"your {KIND_NOUNS[kind]} '{item_id}' refers to {KIND_NOUNS[was]} '{ref}', "
                                    "which this bundle removes")
    return sorted(set(problems))


def _label(kind: str, record: dict) -> str:
    """A short description of a record for the preview: its name, else its first few columns."""
    from gpudesk.core.format import format_number

    for key in ("name", "title"):
        if record.get(key):
            return str(record[key])
    parts = [format_number(record.get(s.name), s.name) for s in KINDS[kind][1:]
             if s.column and record.get(s.name) not in (None, "")]
    return " · ".join(parts[:3])


def _show(value: object, name: str) -> str:
    from gpudesk.core.format import format_number

    if value is None:
        return ""
    if name.startswith("derived.") and isinstance(value, dict):
        return describe(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return format_number(value, name)


def _when(iso: str) -> str:
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M") + (" UTC" if moment.tzinfo is not None else "")


# ============================================================================ the installed catalogue
def installed_dir(engine: Engine) -> Path:
    """Where the files of the last applied bundle are kept: beside an SQLite database file, else in
    the user's data folder."""
    from gpudesk.core import paths

    url = engine.url
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        database = Path(url.database)
        return database.with_name(f"{database.stem}-imported-catalogue")
    return paths.data_dir() / "imported-catalogue"


def imported_bundle(session: Session) -> dict | None:
    """What catalogue_meta says of the applied bundle, or None when the shipped catalogue is installed."""
    raw = sync.get_meta(session, IMPORTED_META)
    if not raw:
        return None
    try:
        info = json.loads(raw)
    except ValueError:
        log.warning("ignoring an unreadable %s entry in catalogue_meta", IMPORTED_META)
        return None
    return info if isinstance(info, dict) else None


def sync_catalogue(session: Session, shipped_dir: Path, force: bool = False,
                   before_upgrade: Callable[[str], object] | None = None) -> dict[str, int] | None:
    """Load the installed catalogue into the database when it changed (or when `force`); the caller
    commits. The installed catalogue is the one gpudesk ships (`shipped_dir`), unless an imported
    bundle at least as new is applied: then its kept files, and when those are missing (another
    machine sharing the database) the database is left as it is. Returns sync_bundle's counts, or
    None when nothing was loaded."""
    source = _sync_source(session, shipped_dir)
    if source is None:
        return None
    if not force and not sync.needs_sync(session, source):
        return None
    if before_upgrade is not None and not force and sync.get_meta(session, "version"):
        before_upgrade("before-catalogue-update")  # a new catalogue over an existing one: back up first
    counts = sync.sync_bundle(session, source, load_catalogue_dir(source))
    if source == shipped_dir and sync.get_meta(session, IMPORTED_META):
        sync.set_meta(session, IMPORTED_META, "")
        log.info("the shipped catalogue %s replaced the imported one", counts)
    return counts


def _sync_source(session: Session, shipped_dir: Path) -> Path | None:
    info = imported_bundle(session)
    if info is None:
        return shipped_dir
    if version_key(sync.bundled_version(shipped_dir)) > version_key(str(info.get("version", ""))):
        return shipped_dir  # gpudesk now ships a newer catalogue than the imported one
    bind = session.get_bind()
    kept = installed_dir(getattr(bind, "engine", bind))
    if kept.is_dir() and sync.fingerprint(kept) == info.get("fingerprint"):
        return kept
    log.info("the imported catalogue %s stays as it is in the database (its files are not at %s)",
             info.get("version"), kept)
    return None
