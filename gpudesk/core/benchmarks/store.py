"""Storing imported benchmark results in the catalogue's database.

`import_files` reads each file with the importer its content calls for, resolves the hardware
(the file's own words, the user's remembered answers, the CLI's --gpu/--count) and writes the new
measurements in one transaction per file: a file that fails changes nothing. The same file is
never imported twice (SHA-256 of its bytes), and the same figure is never stored twice (content
hash of each measurement). Files stream through in batches with bulk inserts, so a file of a
million records needs no more memory than one of ten. A dry run does all of it and rolls back.

What is stored holds no local paths (base names only), host names, environment variables or
generated texts: the importers keep only the keys they know.
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Connection, Text, cast, delete, exists, func, insert, select, update

from gpudesk.core.benchmarks import detect as detect_mod
from gpudesk.core.benchmarks import mlperf
from gpudesk.core.benchmarks.models import BenchAnswer, BenchImport, BenchMeasurement, BenchSetup
from gpudesk.core.benchmarks.reader import Source, SourceError, open_source
from gpudesk.core.benchmarks.types import Batch, Measurement, Problem, clean_text
from gpudesk.core.benchmarks.writer import HardwareResolver, RowWriter, merge_model, new_import_row

BULK_CACHE_KIB = 32 << 10  # SQLite page cache while a file is stored (see _bulk_settings)
MAX_PROBLEMS_PER_FILE = 200
MODEL_FIELDS = ("model", "params", "active_params", "weights_bytes", "precision", "quantisation", "layers",
                "d_model", "heads", "kv_heads", "vocab", "prompt_tokens", "gen_tokens", "concurrency", "seq_len")

IMPORTED, NOTHING_NEW, ALREADY, CONTEXT, FAILED = "imported", "nothing new", "already imported", "context", "failed"
CANCELLED = "cancelled"
PROGRESS_EVERY = 1 << 18  # characters read between two progress reports
HASH_BESIDE_BYTES = 4 << 20  # files this large are hashed on a thread beside their import (see _HashBeside)

# progress(file index, file name, characters read, file size in bytes) -> False to cancel
ProgressCallback = Callable[[int, str, int, int], bool]


class ImportCancelled(BaseException):  # noqa: N818 - not an error: the importers' guards must let it through
    """The user cancelled; the file being read is rolled back like a failed one. A BaseException
    (like KeyboardInterrupt) so that the importers' catch-all guards do not turn it into an error."""


# ----------------------------------------------------------------------------------- reports
@dataclass
class FileReport:
    """What happened to one file: what was read, stored and skipped, and why."""

    file: str  # as given
    name: str  # base name (what is stored)
    format: str | None = None
    detected_by: str = ""  # which tool the file was taken for, and why
    status: str = FAILED
    read: int = 0  # measurements read from the file
    stored: int = 0
    duplicates: int = 0  # read but already stored (same figure from an earlier file or this one)
    import_id: int | None = None
    previous_import: dict | None = None  # for "already imported": when and what
    imported_by: str = ""  # who imports it (the catalogue's user), stored with the import
    metrics: Counter = field(default_factory=Counter)
    hardware: Counter = field(default_factory=Counter)  # (text, id, count, confidence, reason, source) -> n
    problems: list[Problem] = field(default_factory=list)
    extra_problems: int = 0
    size_bytes: int = 0
    dry_run: bool = False

    @property
    def ok(self) -> bool:
        return self.status != FAILED

    @property
    def unresolved(self) -> int:
        return sum(n for key, n in self.hardware.items() if key[1] is None and key[3] != "exact")

    def add_problem(self, problem: Problem) -> None:
        if len(self.problems) < MAX_PROBLEMS_PER_FILE:
            self.problems.append(problem)
        else:
            self.extra_problems += 1

    def summary(self) -> str:
        if self.status == ALREADY:
            prev = self.previous_import or {}
            return (f"already imported on {prev.get('imported_at', '?')[:10]} (import #{prev.get('id')}, "
                    f"{prev.get('stored', 0)} measurements): nothing new stored")
        if self.status == CONTEXT:
            return "nothing to import (a description file, used for the results imported with it)"
        if self.status == FAILED:
            return "not imported: " + (self.errors[0].message if self.errors else "see the problems")
        if self.status == CANCELLED:
            return "cancelled: nothing from this file was stored"
        bits = [f"read {self.read} measurement(s)"]
        if self.stored:
            bits.append(f"{'would store' if self.dry_run else 'stored'} {self.stored}")
        if self.duplicates:
            bits.append(f"{self.duplicates} already stored (skipped)")
        if self.status == NOTHING_NEW:
            bits.append("nothing new")
        return ", ".join(bits)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    def hardware_list(self) -> list[dict]:
        out = []
        for (text, acc, count, confidence, reason, source), n in sorted(self.hardware.items(), key=lambda kv: -kv[1]):
            out.append({"hardware_text": text, "accelerator_id": acc, "count": count, "confidence": confidence,
                        "reason": reason, "source": source, "measurements": n})
        return out

    def to_json(self) -> dict:
        return {
            "file": self.file,
            "name": self.name,
            "format": self.format,
            "format_name": detect_mod.describe(self.format) if self.format else None,
            "detected_by": self.detected_by,
            "status": self.status,
            "ok": self.ok,
            "read": self.read,
            "stored": self.stored,
            "skipped_duplicates": self.duplicates,
            "summary": self.summary(),
            "dry_run": self.dry_run,
            "import_id": self.import_id,
            "previous_import": self.previous_import,
            "metrics": dict(sorted(self.metrics.items())),
            "hardware": self.hardware_list(),
            "problems": [p.to_json() for p in self.problems],
            "problems_not_listed": self.extra_problems,
        }


@dataclass
class ImportReport:
    files: list[FileReport] = field(default_factory=list)
    dry_run: bool = False
    problems: list[Problem] = field(default_factory=list)  # about the whole import (a bad --gpu)

    @property
    def ok(self) -> bool:
        """False when any file could not be imported (or the import as a whole was refused)."""
        return not any(p.severity == "error" for p in self.problems) and all(f.ok for f in self.files)

    @property
    def stored(self) -> int:
        return sum(f.stored for f in self.files)

    @property
    def read(self) -> int:
        return sum(f.read for f in self.files)

    def to_json(self) -> dict:
        return {
            "ok": self.ok,
            "dry_run": self.dry_run,
            "files": [f.to_json() for f in self.files],
            "read": self.read,
            "stored": self.stored,
            "failed": sum(1 for f in self.files if not f.ok),
            "problems": [p.to_json() for p in self.problems],
        }

    def format_text(self) -> str:
        lines = []
        failed = sum(1 for f in self.files if not f.ok)
        verb = "would store" if self.dry_run else "stored"
        head = f"{len(self.files)} file(s): {self.read} measurement(s) read, {verb} {self.stored}"
        if failed:
            head += f", {failed} file(s) not imported"
        if self.dry_run:
            head += " (dry run: nothing was written)"
        lines.append(head)
        for p in self.problems:
            lines.append(f"  ! {p.message}")
        for f in self.files:
            what = detect_mod.describe(f.format) if f.format else "unrecognised"
            lines.append(f"{f.name} [{what}]: {f.summary()}")
            if f.detected_by:
                lines.append(f"    taken for: {f.detected_by}")
            if f.metrics:
                lines.append("    metrics: " + ", ".join(f"{k} ×{v}" for k, v in sorted(f.metrics.items())))
            for hw in f.hardware_list():
                if hw["accelerator_id"]:
                    text = f"{hw['count'] or '?'} × {hw['accelerator_id']}"
                elif hw["confidence"] == "exact":
                    text = "no accelerator"
                else:
                    text = "unknown hardware"
                lines.append(f"    hardware: {text} ({hw['confidence']}; {hw['reason']})")
            for p in f.problems:
                mark = {"error": "!", "warning": "-", "question": "?", "info": "·"}.get(p.severity, "-")
                place = f"{p.place}: " if p.place else ""
                lines.append(f"    {mark} {place}{p.message}")
            if f.extra_problems:
                lines.append(f"    - {f.extra_problems} more problem(s) not listed")
        return "\n".join(lines)


# ----------------------------------------------------------------------------------- hardware answers
def _load_answers(conn: Connection) -> dict[str, tuple]:
    rows = conn.execute(select(BenchAnswer.key, BenchAnswer.accelerator_id, BenchAnswer.accelerator_count,
                               BenchAnswer.updated_at, BenchAnswer.model))
    return {r[0]: (r[1], r[2], r[3] or "", r[4] or {}) for r in rows}


def _remember(conn: Connection, key: str, accelerator_id: str | None, count: int | None,
              model: dict | None = None, by: str = "") -> None:
    now = _now()
    row = conn.execute(select(BenchAnswer.key, BenchAnswer.model).where(BenchAnswer.key == key)).first()
    if row is None:
        conn.execute(insert(BenchAnswer).values(key=key, accelerator_id=accelerator_id, accelerator_count=count,
                                                model=model or {}, updated_at=now, updated_by=by))
        return
    values: dict = {"updated_at": now, "updated_by": by}
    if accelerator_id is not None:
        values["accelerator_id"] = accelerator_id
        values["accelerator_count"] = count
    if model:
        values["model"] = {**(row[1] or {}), **model}
    conn.execute(update(BenchAnswer).where(BenchAnswer.key == key).values(**values))


# ----------------------------------------------------------------------------------- import
def import_files(catalogue, paths: Sequence, dry_run: bool = False, gpu: str | None = None, count: int | None = None,
                 *, max_bytes: int | None = None, progress: ProgressCallback | None = None) -> ImportReport:
    """Import result files into the catalogue's database (see the module docstring). `gpu`/`count`
    answer "which hardware?" for files that do not name it (or name it ambiguously); the answer
    is remembered for the next files of the same hardware or signature. `progress` is called as
    each file is read; when it returns False the file being read is rolled back and the files
    after it are left alone (their status is "cancelled")."""
    report = ImportReport(dry_run=dry_run)
    ids = {r["id"] for r in catalogue.items("accelerators")}
    if gpu is not None:
        gpu = gpu.strip()
        if gpu not in ids:
            close = sorted(i for i in ids if gpu.lower() in i or i in gpu.lower())[:5]
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            report.problems.append(Problem("", "--gpu", f"'{gpu}' is not an accelerator in the catalogue{hint}; "
                                           "nothing was imported", "error"))
    if count is not None and count < 0:
        report.problems.append(Problem("", "--count", f"{count} is not a device count; nothing was imported", "error"))
    if report.problems:
        for path in paths:
            report.files.append(FileReport(str(path), Path(str(path)).name, status=FAILED,
                                           problems=[Problem(Path(str(path)).name, "", "not imported: see the "
                                                             "problems with the command-line answers", "error")]))
        return report
    paths = list(paths)
    systems = _systems_among(paths)
    cancelled = False
    # a dry run rolls each file back, so remember what earlier files would have stored: the
    # preview then counts a figure that two files share once, as the import will
    seen: set[str] | None = set() if dry_run else None
    for index, path in enumerate(paths):
        if cancelled:
            name = Path(str(path)).name
            report.files.append(FileReport(str(path), name, status=CANCELLED, problems=[
                Problem(name, "", "not imported: the import was cancelled before this file", "info")]))
            continue
        # the last file's figures are looked up against the earlier files' but need not be kept
        fr = _import_one(catalogue, path, dry_run, ids, gpu, count, max_bytes, systems, progress, index, seen,
                         keep_seen=index < len(paths) - 1)
        report.files.append(fr)
        cancelled = fr.status == CANCELLED
    return report


def _systems_among(paths: list) -> list[dict]:
    """MLPerf system descriptions among the files being imported (they name the results' hardware)."""
    out = []
    for path in paths:
        try:
            p = Path(path)
            if not p.is_file() or p.stat().st_size > 1 << 20:
                continue
            head = p.read_text(encoding="utf-8", errors="replace")[:16384]
        except (OSError, TypeError, ValueError):
            continue
        if mlperf.looks_like_system(head):
            info, _ = mlperf.read_system(p)
            if info:
                out.append(info)
    return out


def _file_hash(src: Source) -> tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    if src.path is not None:
        with open(src.path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                h.update(chunk)
                size += len(chunk)
    else:
        data = (src.text or "").encode("utf-8", "surrogatepass")
        h.update(data)
        size = len(data)
    return h.hexdigest(), size


class _HashBeside(threading.Thread):
    """A file's SHA-256, worked out on a thread while the file is read and stored: hashlib lets go of
    the GIL, so with a second core the hash takes no time from the import. Only for a file no
    earlier import can be (none had its size), as the import row is written before the hash is
    known (under a stand-in, see _stand_in) and gets it before the transaction commits."""

    def __init__(self, src: Source):
        super().__init__(name="gpudesk-file-hash", daemon=True)
        self.src = src
        self.value: str | None = None
        self.error: OSError | None = None

    def run(self) -> None:
        try:
            self.value = _file_hash(self.src)[0]
        except OSError as exc:
            self.error = exc

    def result(self) -> str:
        self.join()
        if self.error is not None:
            raise self.error
        return self.value or ""


def _unreadable(src: Source, exc: OSError, more: str = "") -> Problem:
    return Problem(src.name, "", f"the file cannot be read ({exc.strerror or exc}){more}", "error")


def _stand_in() -> str:
    """The import row's file hash until the real one is known: unique, and never a SHA-256 (64 hex digits)."""
    return "hashing:" + uuid.uuid4().hex


def _may_be_imported(catalogue, size: int) -> bool:
    """Whether an earlier import could be this file: one of the same size."""
    with catalogue.engine.connect() as conn:
        return conn.execute(select(BenchImport.id).where(BenchImport.size_bytes == size).limit(1)).first() is not None


def _import_one(catalogue, path, dry_run: bool, ids: set[str], gpu, count, max_bytes, systems,
                progress: ProgressCallback | None = None, index: int = 0, seen: set[str] | None = None,
                keep_seen: bool = True) -> FileReport:
    shown = str(path)
    fr = FileReport(shown, Path(shown).name, dry_run=dry_run)
    try:
        src = open_source(path, None, max_bytes)
    except SourceError as exc:
        fr.add_problem(exc.problem)
        return fr
    fr.name = src.name
    if progress is not None and not _report_progress(src, fr, progress, index):
        return fr
    file_hash: str | _HashBeside
    try:
        size = src.size() if src.path is not None else 0
        if size >= HASH_BESIDE_BYTES and not _may_be_imported(catalogue, size):
            fr.size_bytes = size
            file_hash = _HashBeside(src)
            file_hash.start()
        else:
            file_hash, fr.size_bytes = _file_hash(src)
    except OSError as exc:
        fr.add_problem(_unreadable(src, exc))
        return fr
    if isinstance(file_hash, str) and _already_imported(catalogue, fr, src, file_hash):
        return fr
    try:
        detection = detect_mod.detect_source(src)
    except OSError as exc:
        fr.add_problem(_unreadable(src, exc))
        return fr
    fr.detected_by = detection.reason
    system = _system_for(fr, src, detection.format, systems)
    detection, items = detect_mod.iter_detected(None, src=src, system=system, detection=detection)
    fr.format = detection.format
    _store_file(catalogue, fr, src, file_hash, items, ids, gpu, count, dry_run, seen, keep_seen)
    if fr.status == FAILED:
        fr.stored = 0
        fr.import_id = None
    return fr


def _report_progress(src: Source, fr: FileReport, progress: ProgressCallback, index: int) -> bool:
    """Report the file's reading to `progress` as it goes; False when cancelled before it starts."""
    total = src.size()
    read = [0, 0]  # characters read, at the last report

    def on_read(n: int) -> None:
        read[0] += n
        if read[0] - read[1] >= PROGRESS_EVERY or n == 0:
            read[1] = read[0]
            if progress(index, src.name, min(read[0], total), total) is False:
                raise ImportCancelled

    src.on_read = on_read
    if progress(index, src.name, 0, total) is False:
        fr.status = CANCELLED
        fr.add_problem(Problem(src.name, "", "cancelled before it was read: nothing stored", "info"))
        return False
    return True


def _already_imported(catalogue, fr: FileReport, src: Source, file_hash: str) -> bool:
    with catalogue.engine.connect() as conn:
        prev = conn.execute(select(BenchImport.id, BenchImport.imported_at, BenchImport.stored, BenchImport.format)
                            .where(BenchImport.file_hash == file_hash)).first()
    if prev is None:
        return False
    fr.status = ALREADY
    fr.format = prev[3]
    fr.previous_import = {"id": prev[0], "imported_at": prev[1], "stored": prev[2]}
    fr.add_problem(Problem(src.name, "", f"this file was already imported on {prev[1][:10]} (import #{prev[0]}): "
                           "nothing new stored", "info"))
    return True


def _system_for(fr: FileReport, src: Source, fmt: str | None, systems) -> dict | None:
    """The system description imported with an MLPerf result: the only one, or the one its file
    name names; otherwise None (iter_any looks beside the file, else the importer asks)."""
    if fmt not in mlperf.RESULT_FORMATS or not systems:
        return None
    named = [s for s in systems if s.get("system_name") and s["system_name"] in src.name]
    system = systems[0] if len(systems) == 1 else (named[0] if len(named) == 1 else None)
    if system is not None:
        fr.add_problem(Problem(src.name, "", f"hardware taken from the system description "
                               f"{system.get('system_file', '')} imported with it", "info"))
    return system


def _store_file(catalogue, fr: FileReport, src: Source, file_hash: str | _HashBeside, items: Iterator, ids: set[str],
                gpu, count, dry_run: bool, seen: set[str] | None, keep_seen: bool = True) -> None:
    """Store the file's items in one transaction: committed, or rolled back for a dry run, a failure
    or a cancellation (reported in `fr`). A hash still being worked out is waited for before the
    commit, and replaces the import row's stand-in."""
    fr.imported_by = getattr(catalogue, "user", "")
    beside = file_hash if isinstance(file_hash, _HashBeside) else None
    conn = catalogue.engine.connect()
    settings = _bulk_settings(conn)
    trans = conn.begin()
    try:
        # a dry run adds this file's figures to `seen` for the files after it (when there are any)
        stored_here: set[str] | None = set() if seen is not None and keep_seen else None
        _store_stream(conn, fr, src, _stand_in() if beside else file_hash, fr.format, items, ids, gpu, count, dry_run,
                      seen=seen, stored_here=stored_here)
        if beside is not None:
            file_hash = beside.result()  # an OSError: the file cannot be read (below)
            if fr.import_id is not None and not dry_run and fr.status != FAILED:
                conn.execute(update(BenchImport).where(BenchImport.id == fr.import_id).values(file_hash=file_hash))
        if dry_run or fr.status == FAILED:
            trans.rollback()
            if seen is not None and stored_here and fr.status != FAILED:
                seen.update(stored_here)
        else:
            trans.commit()
    except ImportCancelled:
        trans.rollback()
        fr.status = CANCELLED
        fr.stored = 0
        fr.import_id = None
        fr.add_problem(Problem(src.name, "", "cancelled while reading: nothing from this file was stored", "info"))
    except Exception as exc:  # noqa: BLE001 - a failing file must change nothing and be reported, not crash
        trans.rollback()
        if _database_fault(exc):
            raise  # the database, not the file: locked, read-only, full or damaged (the caller says so)
        if isinstance(file_hash, str) and _imported_meanwhile(exc):
            _report_imported_meanwhile(catalogue, fr, src, file_hash)
            return
        fr.status = FAILED
        fr.stored = 0
        fr.import_id = None
        if beside is not None and exc is beside.error:
            fr.add_problem(_unreadable(src, exc, ": nothing from it was stored"))
        else:
            fr.add_problem(Problem(src.name, "", f"the import failed and was undone ({type(exc).__name__}: "
                                   f"{clean_text(str(exc), 300)})", "error"))
    finally:
        if beside is not None:
            beside.join()  # also after a failure or a cancellation: no thread outlives its file
        _restore_settings(conn, settings)
        conn.close()


def _bulk_settings(conn: Connection) -> dict[str, int]:
    """On SQLite, the import's connection set for a bulk load; returns the settings to restore
    (empty when nothing was changed, and on other databases).

    - A page cache of BULK_CACHE_KIB: the unique index of content hashes takes its inserts at
      random places, and once it outgrows the default cache (2 MiB, some 25,000 rows) each insert
      reads and writes back pages.
    - Foreign keys not checked: every row the import writes refers to a setup, and every setup to
      the import, that this transaction has just written (writer.RowWriter), so no check can
      fail; checking them made the multi-row inserts (writer.ROWS_PER_STATEMENT) slower than one
      row at a time (0.71 s against 0.53 s for 100,000 rows). SQLite takes this setting only
      outside a transaction, so it is made before the import's transaction begins."""
    if conn.dialect.name != "sqlite":
        return {}
    cursor = conn.connection.cursor()
    try:
        before = {key: cursor.execute(f"PRAGMA {key}").fetchone()[0] for key in ("cache_size", "foreign_keys")}
        wanted = {"foreign_keys": 0}
        if not -before["cache_size"] >= BULK_CACHE_KIB:  # a cache set at least as large (in KiB) is kept
            wanted["cache_size"] = -BULK_CACHE_KIB
        changed = {key: before[key] for key, value in wanted.items() if before[key] != value}
        for key in changed:
            cursor.execute(f"PRAGMA {key} = {int(wanted[key])}")
        return changed
    finally:
        cursor.close()


def _restore_settings(conn: Connection, settings: dict[str, int]) -> None:
    """Put back what _bulk_settings changed, after the transaction (foreign keys are checked again
    for whatever the pooled connection does next)."""
    if not settings or conn.closed or conn.invalidated:
        return
    import sqlite3

    try:
        cursor = conn.connection.cursor()
        for key, value in settings.items():
            cursor.execute(f"PRAGMA {key} = {int(value)}")
        cursor.close()
    except sqlite3.Error:  # a connection the failure broke: the pool replaces it, the settings go with it
        conn.invalidate()


def _report_imported_meanwhile(catalogue, fr: FileReport, src: Source, file_hash: str) -> None:
    with catalogue.engine.connect() as again:
        prev = again.execute(select(BenchImport.id, BenchImport.imported_at, BenchImport.stored)
                             .where(BenchImport.file_hash == file_hash)).first()
    fr.status = ALREADY
    fr.stored = 0
    fr.import_id = None
    if prev is not None:
        fr.previous_import = {"id": prev[0], "imported_at": prev[1], "stored": prev[2]}
    fr.add_problem(Problem(src.name, "", "another program imported this file at the same moment: "
                           "nothing new stored", "info"))


def _database_fault(exc: Exception) -> bool:
    """Whether an import failed for the database's sake (locked, read-only, full, damaged)."""
    import sqlite3

    orig = getattr(exc, "orig", None)
    if not isinstance(orig, sqlite3.DatabaseError) or isinstance(orig, sqlite3.IntegrityError):
        return False
    text = str(orig).lower()
    return any(w in text for w in ("locked", "busy", "readonly", "read-only", "disk is full", "disk i/o",
                                   "unable to open", "malformed", "not a database"))


def _imported_meanwhile(exc: Exception) -> bool:
    """Whether another process stored the same file between the duplicate check and the commit: the
    unique file hash refused this import's row (SQLite names the column, PostgreSQL the index)."""
    text = str(getattr(exc, "orig", ""))
    return "UNIQUE constraint failed: bench_imports.file_hash" in text or \
        ("unique constraint" in text and '"ix_bench_imports_file_hash"' in text)


def _store_stream(conn: Connection, fr: FileReport, src: Source, file_hash: str, fmt: str | None,
                  items: Iterator, ids: set[str], gpu, count, dry_run: bool, *, seen: set[str] | None = None,
                  stored_here: set[str] | None = None) -> None:
    answers = _load_answers(conn)
    hardware = HardwareResolver(ids, answers, gpu, count)

    def new_import() -> int:
        return new_import_row(conn, {"file_hash": file_hash, "source_file": src.name, "format": fmt or "",
                                     "imported_at": _now(), "imported_by": fr.imported_by, "size_bytes": fr.size_bytes,
                                     "records": 0, "stored": 0, "duplicates": 0, "problems": []})

    models = {key: a[3] for key, a in answers.items() if a[3]}  # remembered model answers, by hardware key
    writer = RowWriter(conn, fr, hardware, models, new_import, _JSON.encode, seen=seen, stored_here=stored_here)
    errors = 0
    context = False
    hardware_questions: list[Problem] = []
    for item in items:
        if isinstance(item, Batch):
            writer.add_batch(item)
        elif isinstance(item, Measurement):
            writer.add(item)
        elif isinstance(item, Problem):
            if item.severity == "error":
                errors += 1
            if item.severity == "question" and "--gpu" in item.message:
                hardware_questions.append(item)
                continue
            fr.add_problem(_clean_problem(item))
        elif isinstance(item, dict):
            context = context or bool(item.get("nothing_to_import"))
    if errors:
        fr.status = FAILED
        return
    writer.finish()
    _ask_hardware(fr, src, hardware, hardware_questions, gpu)
    for key, (acc, n) in hardware.new_answers.items():
        _remember(conn, key, acc, n, by=fr.imported_by)
    _finish_import(conn, fr, src, writer.import_id, dry_run, context)


def _ask_hardware(fr: FileReport, src: Source, hardware: HardwareResolver, hardware_questions: list[Problem], gpu) -> None:
    """The hardware questions still open, in words (answered ones are dropped), and the guesses and
    --gpu answers not applied."""
    open_keys = [key for key, n in fr.hardware.items() if key[1] is None and not (key[3] == "exact")]
    if open_keys:
        if hardware_questions:
            fr.add_problem(_clean_problem(hardware_questions[0]))
        else:
            for text, _acc, _n, _conf, reason, _source in open_keys[:5]:
                fr.add_problem(Problem(src.name, "", f"which accelerator is '{text or 'this'}'? {reason}. Answer with "
                                       "--gpu ID --count N (or in the Benchmarks view); the answer is remembered",
                                       "question"))
    for (text, acc, _n, conf, reason, source), _count in fr.hardware.items():
        if conf == "likely" and acc and source == "file":
            fr.add_problem(Problem(src.name, "", f"'{text}' taken as {acc}, which is a guess: {reason}. Answer with "
                                   "--gpu ID if it is another variant", "question"))
    for text, candidates in sorted(hardware.ignored):
        fr.add_problem(Problem(src.name, "", f"--gpu {gpu} was not applied to '{text}': the file names other hardware "
                               f"(one of {', '.join(candidates)})", "warning"))


def _finish_import(conn: Connection, fr: FileReport, src: Source, import_id: int | None, dry_run: bool,
                   context: bool) -> None:
    """The file's status, and its import row's counts and problems."""
    if fr.read == 0:
        fr.status = CONTEXT if context else FAILED
        if not context and not fr.errors:
            fr.add_problem(Problem(src.name, "", "no measurements in this file", "error"))
        return
    if import_id is not None:
        conn.execute(update(BenchImport).where(BenchImport.id == import_id).values(
            records=fr.read, stored=fr.stored, duplicates=fr.duplicates,
            problems=[p.to_json() for p in fr.problems]))
    fr.import_id = None if dry_run else import_id
    fr.status = IMPORTED if fr.stored else NOTHING_NEW
    if fr.status == NOTHING_NEW:
        fr.add_problem(Problem(src.name, "", f"all {fr.read} measurement(s) are already stored (from an earlier file "
                               "or earlier in this one): nothing new", "info"))


def _clean_problem(p: Problem) -> Problem:
    return Problem(p.file, clean_text(p.place, 120), clean_text(p.message, 600), p.severity)


_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=str)


# ----------------------------------------------------------------------------------- reading back
_M, _S, _I = BenchMeasurement.__table__, BenchSetup.__table__, BenchImport.__table__
_JOINED = _M.join(_S, _M.c.setup_id == _S.c.id).join(_I, _S.c.import_id == _I.c.id)
_SETUP_COLUMNS = (_S.c.id, _S.c.format, _S.c.hardware_text, _S.c.hardware_key, _S.c.accelerator_id,
                  _S.c.accelerator_count, _S.c.match_confidence, _S.c.match_reason, _S.c.cpu_only, _S.c.workload,
                  _S.c.conditions, _S.c.import_id, _I.c.source_file)


def _filters(ids=None, import_id=None, source_file=None, accelerator_id=None, format=None, metric=None,
             hardware_key=None) -> tuple[list, list]:
    """(conditions on the setup and its import, conditions on the measurement row)."""
    on_setup, on_row = [], []
    if ids is not None:
        on_row.append(_M.c.id.in_(list(ids)))
    if import_id is not None:
        on_setup.append(_S.c.import_id == import_id)
    if source_file is not None:
        on_setup.append(_I.c.source_file == Path(source_file).name)
    if accelerator_id is not None:
        on_setup.append(_S.c.accelerator_id == accelerator_id)
    if format is not None:
        on_setup.append(_S.c.format == format)
    if metric is not None:
        on_row.append(_M.c.metric.in_([metric] if isinstance(metric, str) else list(metric)))
    if hardware_key is not None:
        on_setup.append(_S.c.hardware_key == hardware_key)
    return on_setup, on_row


def stored_measurements(catalogue, *, ids: Iterable[int] | None = None, import_id: int | None = None,
                        source_file: str | None = None, accelerator_id: str | None = None, format: str | None = None,
                        metric: str | Iterable[str] | None = None, hardware_key: str | None = None,
                        limit: int | None = None, offset: int = 0) -> list[Measurement]:
    """Stored measurements matching every filter given, oldest first. Each row is read with its
    setup's workload and conditions merged under its own."""
    on_setup, on_row = _filters(ids, import_id, source_file, accelerator_id, format, metric, hardware_key)
    rows = (select(_M.c.id, _M.c.setup_id, _M.c.content_hash, _M.c.metric, _M.c.statistic, _M.c.value, _M.c.unit,
                   _M.c.stddev, _M.c.workload, _M.c.conditions, _M.c.record_index)
            .select_from(_JOINED).where(*on_setup, *on_row).order_by(_M.c.id))
    if limit is not None:
        rows = rows.limit(limit).offset(offset)
    elif offset:
        rows = rows.offset(offset)
    with catalogue.engine.connect() as conn:
        setups = {r[0]: r for r in conn.execute(select(*_SETUP_COLUMNS).select_from(_S.join(_I)).where(*on_setup))}
        return [_to_measurement(r, setups[r.setup_id]) for r in conn.execute(rows)]


def _to_measurement(row, setup) -> Measurement:
    (_id, fmt, text, key, acc, count, confidence, reason, cpu_only, workload, conditions, import_id,
     source_file) = setup
    return Measurement(
        format=fmt, metric=row.metric, value=row.value, unit=row.unit, source_file=source_file,
        record_index=row.record_index, hardware_text=text, accelerator_id=acc, accelerator_count=count,
        match_confidence=confidence, match_reason=reason, hardware_key=key, cpu_only=bool(cpu_only),
        statistic=row.statistic, stddev=row.stddev, workload={**(workload or {}), **(row.workload or {})},
        conditions={**(conditions or {}), **(row.conditions or {})}, content_hash=row.content_hash, id=row.id,
        import_id=import_id)


def count_measurements(catalogue, **filters) -> int:
    on_setup, on_row = _filters(**filters)
    with catalogue.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(_JOINED).where(*on_setup, *on_row)).scalar_one()


def delete_measurements(catalogue, *, ids: Iterable[int] | None = None, import_id: int | None = None,
                        source_file: str | None = None, accelerator_id: str | None = None, format: str | None = None,
                        metric: str | Iterable[str] | None = None, everything: bool = False) -> int:
    """Delete the stored measurements matching every filter given (at least one, unless
    `everything`); setups and imports left without measurements go too, so their files can be
    imported again. Returns the number of measurements deleted."""
    on_setup, on_row = _filters(ids, import_id, source_file, accelerator_id, format, metric)
    if not on_setup and not on_row and not everything:
        raise ValueError("name what to delete (ids, import_id, source_file, accelerator_id, format, metric) "
                         "or pass everything=True")
    with catalogue.engine.begin() as conn:
        chosen = select(_M.c.id).select_from(_JOINED).where(*on_setup, *on_row)
        deleted = conn.execute(delete(_M).where(_M.c.id.in_(chosen))).rowcount or 0
        conn.execute(delete(_S).where(~exists().where(_M.c.setup_id == _S.c.id)))
        conn.execute(delete(_I).where(~exists().where(_S.c.import_id == _I.c.id)))
    return deleted


def imports(catalogue) -> list[dict]:
    """Every import that stored something: id, file name, format, when, counts and problems."""
    with catalogue.engine.connect() as conn:
        rows = conn.execute(select(BenchImport).order_by(BenchImport.id)).all()
    return [{"id": r.id, "source_file": r.source_file, "format": r.format, "imported_at": r.imported_at,
             "imported_by": r.imported_by, "size_bytes": r.size_bytes, "read": r.records, "stored": r.stored, "duplicates": r.duplicates,
             "problems": list(r.problems or [])} for r in rows]


# ----------------------------------------------------------------------------------- answers
def open_questions(catalogue) -> list[dict]:
    """The hardware questions still open, one per hardware key: measurements whose accelerator is
    unknown ("ask") or a guessed variant ("likely"), with what the file says, why gpudesk is unsure,
    the catalogue ids it would suggest and how many measurements an answer would settle."""
    from gpudesk.core.benchmarks.matching import match_hardware

    s = _S.c
    query = (select(s.hardware_key, s.hardware_text, s.format, s.match_confidence, s.match_reason, s.accelerator_id,
                    func.count(), func.max(s.accelerator_count), func.min(_I.c.source_file),
                    func.max(_I.c.source_file))
             .select_from(_JOINED)
             .where(s.cpu_only.is_(False), s.match_confidence != "exact")
             .group_by(s.hardware_key, s.hardware_text, s.format, s.match_confidence, s.match_reason, s.accelerator_id)
             .order_by(s.hardware_key))
    ids = {r["id"] for r in catalogue.items("accelerators")}
    out: dict[str, dict] = {}
    with catalogue.engine.connect() as conn:
        for key, text, fmt, confidence, reason, acc, n, count, first, last in conn.execute(query):
            entry = out.setdefault(key, {"key": key, "hardware_text": text, "formats": [], "confidence": confidence,
                                         "reason": reason, "guess": acc, "measurements": 0, "candidates": [],
                                         "count": None, "files": []})
            entry["measurements"] += n
            if count and not entry["count"]:
                entry["count"] = int(count)  # what the file says (or implies), to confirm
            for name in (first, last):  # portable SQL: the first and last names (enough to recognise the files)
                if name and name not in entry["files"]:
                    entry["files"].append(name)
            if fmt not in entry["formats"]:
                entry["formats"].append(fmt)
            if text and not entry["candidates"]:
                entry["candidates"] = list(match_hardware(text, ids=ids).candidates)
    return list(out.values())


def answers(catalogue) -> list[dict]:
    """The remembered answers: key (hardware text 'hw:...' or file signature 'sig:...'), accelerator,
    count, model fields, when."""
    with catalogue.engine.connect() as conn:
        rows = conn.execute(select(BenchAnswer).order_by(BenchAnswer.key)).all()
    return [{"key": r.key, "accelerator_id": r.accelerator_id, "count": r.accelerator_count,
             "model": dict(r.model or {}), "updated_at": r.updated_at, "updated_by": r.updated_by} for r in rows]


def remembered_answer(catalogue, key: str) -> dict | None:
    for a in answers(catalogue):
        if a["key"] == key:
            return a
    return None


def answer_hardware(catalogue, key: str, accelerator_id: str, count: int | None = None,
                    *, overwrite_exact: bool = False) -> int:
    """The user's answer to "which hardware?" for measurements with this hardware key (the
    `hardware_key` of a Measurement): remembered for the next files, and applied to the stored
    measurements not matched exactly (or to all with `overwrite_exact`). Returns the number of
    measurements it changed."""
    if catalogue.get("accelerators", accelerator_id) is None:
        raise ValueError(f"'{accelerator_id}' is not an accelerator in the catalogue")
    if count is not None and count < 1:
        raise ValueError("the count must be at least 1")
    s = _S.c
    where = [s.hardware_key == key, s.cpu_only.is_(False)]
    if not overwrite_exact:
        where.append((s.match_confidence != "exact") | s.accelerator_id.is_(None))
    values = {"accelerator_id": accelerator_id, "match_confidence": "exact", "match_reason": "your answer"}
    if count is not None:
        values["accelerator_count"] = count
    with catalogue.engine.begin() as conn:
        _remember(conn, key, accelerator_id, count, by=getattr(catalogue, "user", ""))
        changed = conn.execute(select(func.count()).select_from(_M.join(_S)).where(*where)).scalar_one()
        conn.execute(update(_S).where(*where).values(**values))
        if count is None:
            conn.execute(update(_S).where(s.hardware_key == key, s.accelerator_count.is_(None))
                         .values(accelerator_count=1))
    return changed


def answer_model(catalogue, key: str, **fields) -> int:
    """The user's answer to "which model?" (model, params, precision, weights_bytes, prompt_tokens,
    ...) for measurements with this hardware key or, with key 'import:<id>', of one import: merged
    into their workload and remembered. Returns the number of measurements it changed."""
    unknown = set(fields) - set(MODEL_FIELDS)
    if unknown:
        raise ValueError(f"unknown model fields: {', '.join(sorted(unknown))} (known: {', '.join(MODEL_FIELDS)})")
    values = {k: v for k, v in fields.items() if v is not None}
    if "params" in values and not (isinstance(values["params"], int | float) and values["params"] > 0):
        raise ValueError("params must be a positive number")
    with catalogue.engine.begin() as conn:
        if key.startswith("import:"):
            where = _S.c.import_id == int(key.split(":", 1)[1])
        else:
            where = _S.c.hardware_key == key
            _remember(conn, key, None, None, values, by=getattr(catalogue, "user", ""))
        for setup_id, workload in conn.execute(select(_S.c.id, _S.c.workload).where(where)).all():
            conn.execute(update(_S).where(_S.c.id == setup_id).values(workload=merge_model(workload, values)))
        # a measurement's own fields are read over its setup's: drop those the answer now gives
        changed = 0
        for row_id, workload in conn.execute(select(_M.c.id, _M.c.workload).select_from(_M.join(_S))
                                             .where(where)).all():
            changed += 1
            if workload and any(k in workload for k in values):
                conn.execute(update(_M).where(_M.c.id == row_id).values(
                    workload={k: v for k, v in workload.items() if k not in values}))
    return changed


def forget_answer(catalogue, key: str) -> bool:
    with catalogue.engine.begin() as conn:
        return bool(conn.execute(delete(BenchAnswer).where(BenchAnswer.key == key)).rowcount)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")



def data_revision(catalogue) -> tuple:
    """A cheap fingerprint of what calibration reads (stored measurements and answers): it
    changes whenever an import, a deletion or an answer changes them, in this process or another."""
    m, s, a = _M.c, _S.c, BenchAnswer.__table__
    with catalogue.engine.connect() as conn:
        # sum() of nothing is NULL, and the JSON column is measured as text: the same on SQLite and PostgreSQL
        measured = conn.execute(select(func.count(), func.max(m.id),
                                       func.coalesce(func.sum(func.length(cast(m.workload, Text))), 0))).one()
        setups = conn.execute(select(func.count(), func.coalesce(func.sum(func.length(s.accelerator_id)), 0),
                                     func.coalesce(func.sum(s.accelerator_count), 0),
                                     func.coalesce(func.sum(func.length(cast(s.workload, Text))), 0))).one()
        answered = conn.execute(select(func.count(), func.max(a.c.updated_at))).one()
    return tuple(measured) + tuple(setups) + tuple(answered)
