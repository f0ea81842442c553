"""Writing one file's measurements: the hardware of each setup resolved against the catalogue and
the user's answers, each setup written once (bench_setups), the figures in bulk
(bench_measurements), and figures already stored counted and skipped."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import replace
from itertools import chain
from operator import itemgetter

from sqlalchemy import Connection, delete, exists, insert, select

from gpudesk.core.benchmarks.models import BenchImport, BenchMeasurement, BenchSetup
from gpudesk.core.benchmarks.types import Batch, Measurement, Setup

BATCH = 2000  # rows per bulk insert
# rows one INSERT statement writes on SQLite (fewer where the SQLite build allows fewer parameters):
# one statement of many rows is a step of the engine per 500 rows instead of one per row
ROWS_PER_STATEMENT = 500
HASH_CHUNK = 900  # content hashes per IN (...) query
MAX_HARDWARE_PER_FILE = 100  # distinct hardware entries listed in a file's report
SETUP_COLUMNS = ("import_id", "format", "hardware_text", "hardware_key", "accelerator_id", "accelerator_count",
                 "match_confidence", "match_reason", "cpu_only", "workload", "conditions")
ROW_COLUMNS = ("content_hash", "metric", "statistic", "value", "unit", "stddev", "record_index", "workload",
               "conditions", "setup_id")  # types.ROW_FIELDS, then the setup
_INSERT_ROWS = (f"INSERT OR IGNORE INTO bench_measurements ({', '.join(ROW_COLUMNS)}) "
                f"VALUES ({', '.join('?' for _ in ROW_COLUMNS)})")
# the same for the rows of one setup, whose id is written into the statement (the rows are the
# readers' tuples as they are, without a copy per row to append the id), one row or several
_INSERT_MANY = f"INSERT OR IGNORE INTO bench_measurements ({', '.join(ROW_COLUMNS)}) VALUES {{values}}"
_ROW_VALUES = f"({', '.join('?' for _ in ROW_COLUMNS[:-1])}, {{setup_id:d}})"
_INSERT_SETUP_ROWS = _INSERT_MANY.format(values=_ROW_VALUES)
_INSERT_SETUP = (f"INSERT INTO bench_setups ({', '.join(SETUP_COLUMNS)}) "
                 f"VALUES ({', '.join('?' for _ in SETUP_COLUMNS)})")
_METRIC = itemgetter(1)


class HardwareResolver:
    """Resolves a setup's hardware against the catalogue, remembered answers and the CLI's
    --gpu/--count, and remembers the answers the CLI gave."""

    def __init__(self, ids: set[str], answers: dict[str, tuple], gpu: str | None, count: int | None):
        self.ids = ids
        self.answers = answers
        self.gpu = gpu
        self.count = count
        self.cache: dict[tuple, tuple] = {}
        self.new_answers: dict[str, tuple[str, int | None]] = {}
        self.ignored: set[tuple] = set()  # (hardware text, its variants) the --gpu answer did not fit

    def apply(self, m: Setup | Measurement) -> str:
        """Resolve `m`'s accelerator, count, confidence and reason in place; returns where the answer
        came from: "file", "cli" or "answer"."""
        key = (m.hardware_key, m.accelerator_id, m.accelerator_count, m.match_confidence, m.cpu_only)
        hit = self.cache.get(key)
        if hit is None:
            hit = self._resolve(m)
            if len(self.cache) > 10_000:
                self.cache.clear()
            self.cache[key] = hit
        m.accelerator_id, m.accelerator_count, m.match_confidence, m.match_reason, source = hit[0], hit[1], hit[2], \
            hit[3] or m.match_reason, hit[4]
        return source

    def _resolve(self, m: Setup | Measurement) -> tuple:
        if m.cpu_only:
            return m.accelerator_id, m.accelerator_count, m.match_confidence, None, "file"
        acc, count, conf = m.accelerator_id, m.accelerator_count, m.match_confidence
        if conf == "exact" and acc in self.ids:
            if count is None and self.count:
                return acc, self.count, conf, None, "file"
            return acc, count, conf, None, "file"
        if self.gpu:
            from gpudesk.core.benchmarks.matching import match_hardware

            candidates = match_hardware(m.hardware_text, ids=self.ids).candidates if m.hardware_text else ()
            if not candidates or self.gpu in candidates:
                n = self.count or count or 1
                reason = f"given on the command line (--gpu {self.gpu}" + (
                    f" --count {self.count})" if self.count else ")")
                if m.hardware_key:
                    self.new_answers[m.hardware_key] = (self.gpu, n)
                return self.gpu, n, "exact", reason, "cli"
            self.ignored.add((m.hardware_text, candidates))
        answer = self.answers.get(m.hardware_key)
        if answer is not None and answer[0] and answer[0] in self.ids:
            n = answer[1] or count or 1
            return answer[0], n, "exact", f"your earlier answer for this hardware ({answer[2][:10] or 'undated'})", \
                "answer"
        if acc is not None and acc not in self.ids:
            return None, count, "ask", f"'{acc}' is not in your catalogue", "file"
        if self.count and count is None:
            return acc, self.count, conf, None, "file"
        return acc, count, conf, None, "file"


def merge_model(workload: dict | None, values: dict) -> dict:
    """A workload with the user's model answer merged in, each answered size or precision marked so."""
    merged = {**(workload or {}), **values}
    for key in ("params", "precision"):
        if key in values:
            merged[f"{key}_from"] = "your answer"
    return merged


class RowWriter:
    """Writes one file's measurements inside the caller's transaction and counts them in its
    report (`fr`: read, stored, duplicates, metrics, hardware). `new_import()` makes the file's
    bench_imports row when the first setup needs it. For a dry run, `seen` holds the figures
    earlier files would have stored and `stored_here` collects this file's."""

    def __init__(self, conn: Connection, fr, hardware: HardwareResolver, models: dict[str, dict],
                 new_import: Callable[[], int], encode: Callable[[object], str], *,
                 seen: set[str] | None = None, stored_here: set[str] | None = None):
        self.conn = conn
        self.fr = fr
        self.hardware = hardware
        self.models = models  # remembered model answers, by hardware key
        self.new_import = new_import
        self.encode = encode
        self.seen = seen
        self.stored_here = stored_here
        self.import_id: int | None = None
        # SQLite counts what it skips by itself; only figures that earlier files of a dry run would
        # have stored (rolled back, so not in the database) need looking up one batch at a time
        self.bulk = conn.dialect.name == "sqlite" and not seen
        self.pending: list[tuple[int, list[tuple]]] = []  # (setup id, its rows in ROW_FIELDS order)
        self.pending_rows = 0
        self._batch_setups: dict[int, tuple] = {}  # id(reader's Setup) -> (that Setup, setup id, hardware key)
        self._setups: dict[tuple, int] = {}  # (format, hardware, workload, conditions) -> setup id
        self._texts: dict[tuple, str] = {}
        self._per_statement = 0  # rows to one INSERT on SQLite (see _insert), once known
        self._many: tuple[int, str] | None = None  # (setup id, its INSERT of _per_statement rows), the last one used

    # ------------------------------------------------------------------------------- input
    def add_batch(self, batch: Batch) -> None:
        entry = self._batch_setups.get(id(batch.setup))
        if entry is None:
            setup = replace(batch.setup)  # resolved on a copy: the reader's setup stays as it read it
            source = self.hardware.apply(setup)
            setup_id = self._setup_row(setup, self.encode(self._with_model(setup)), self.encode(setup.conditions))
            entry = self._batch_setups[id(batch.setup)] = (batch.setup, setup_id, self._hardware_key(setup, source))
        _, setup_id, hw = entry
        rows = batch.rows
        self._count(rows, hw)
        self._pend(setup_id, rows)

    def add(self, m: Measurement) -> None:
        setup = Setup(m.format, m.hardware_text, m.accelerator_id, m.accelerator_count, m.match_confidence,
                      m.match_reason, m.hardware_key, m.cpu_only, m.workload, m.conditions)
        source = self.hardware.apply(setup)
        workload = self._text(self._with_model(setup))
        conditions = self.encode(setup.conditions)  # most often the row's own (a time, a request rate): not kept
        hw = self._hardware_key(setup, source)
        key = (setup.format, hw, setup.hardware_key, setup.cpu_only, workload, conditions)
        setup_id = self._setups.get(key)
        if setup_id is None:
            setup_id = self._setups[key] = self._setup_row(setup, workload, conditions)
        self._count([(m.content_hash, m.metric)], hw)
        self._pend(setup_id, [(m.content_hash, m.metric, m.statistic[:40], float(m.value), m.unit, m.stddev,
                               int(m.record_index or 0), "{}", "{}")])

    def _pend(self, setup_id: int, rows: list[tuple]) -> None:
        pending = self.pending
        if pending and pending[-1][0] == setup_id:
            pending[-1][1].extend(rows)
        else:
            pending.append((setup_id, list(rows)))
        self.pending_rows += len(rows)
        if self.pending_rows >= BATCH:
            self.flush()

    def _with_model(self, setup: Setup) -> dict:
        model = self.models.get(setup.hardware_key) if self.models else None
        if model:
            setup.workload = merge_model(setup.workload, model)
        return setup.workload

    def _count(self, rows: list[tuple], hw: tuple) -> None:
        fr = self.fr
        fr.read += len(rows)
        fr.metrics.update(map(_METRIC, rows))
        fr.hardware[hw] += len(rows)

    def _hardware_key(self, setup: Setup, source: str) -> tuple:
        """The entry of the file's hardware list a setup counts under."""
        hw = (setup.hardware_text, setup.accelerator_id, setup.accelerator_count, setup.match_confidence,
              setup.match_reason, source)
        if hw not in self.fr.hardware and len(self.fr.hardware) >= MAX_HARDWARE_PER_FILE:
            hw = ("(more devices than listed)", None, None, "ask", "too many different devices to list", "file")
        return hw

    def _text(self, value: dict) -> str:
        """JSON text of a workload or conditions dict, each distinct one encoded once."""
        try:
            # the types too: True and 1, 1 and 1.0 are equal keys but different JSON
            key = (tuple(value.items()), tuple(map(type, value.values())))
            text = self._texts.get(key)
        except TypeError:  # a list or dict among the values: not hashable, encoded each time
            return self.encode(value)
        if text is None:
            text = self.encode(value)
            if len(self._texts) >= 4096:
                self._texts.clear()
            self._texts[key] = text
        return text

    # ------------------------------------------------------------------------------- output
    def _setup_row(self, setup: Setup, workload: str, conditions: str) -> int:
        if self.import_id is None:
            self.import_id = self.new_import()
        values = (self.import_id, setup.format, setup.hardware_text, setup.hardware_key, setup.accelerator_id,
                  setup.accelerator_count, setup.match_confidence, setup.match_reason, bool(setup.cpu_only), workload,
                  conditions)
        if self.conn.dialect.name == "sqlite":
            cursor = self.conn.connection.cursor()
            try:
                cursor.execute(_INSERT_SETUP, values)
                return cursor.lastrowid
            finally:
                cursor.close()
        row = dict(zip(SETUP_COLUMNS, values, strict=True))
        row["workload"], row["conditions"] = _decoded(workload), _decoded(conditions)
        return self.conn.execute(insert(BenchSetup).values(**row).returning(BenchSetup.id)).scalar_one()

    def flush(self) -> None:
        groups, self.pending, self.pending_rows = self.pending, [], 0
        if not groups:
            return
        fr = self.fr
        if self.bulk:
            # SQLite skips the figures already stored (unique content hash) and counts the rest
            cursor = self.conn.connection.cursor()
            try:
                for setup_id, setup_rows in groups:
                    added = self._insert(cursor, setup_id, setup_rows)
                    fr.duplicates += len(setup_rows) - added
                    fr.stored += added
            finally:
                cursor.close()
            return
        rows = [row + (setup_id,) for setup_id, setup_rows in groups for row in setup_rows]
        fresh = self._fresh(rows)
        if self.stored_here is not None:
            self.stored_here.update(r[0] for r in fresh)
        if not fresh:
            return
        if self.conn.dialect.name == "sqlite":
            self.conn.exec_driver_sql(_INSERT_ROWS, fresh)
        else:
            self.conn.execute(insert(BenchMeasurement), [
                {**dict(zip(ROW_COLUMNS, r, strict=True)), "workload": _decoded(r[7]), "conditions": _decoded(r[8])}
                for r in fresh])
        fr.stored += len(fresh)

    def _insert(self, cursor, setup_id: int, rows: list[tuple]) -> int:
        """Write one setup's rows on SQLite, ROWS_PER_STATEMENT to a statement and the rest one by
        one; returns how many were new (SQLite ignores a content hash already stored)."""
        count = self._per_statement
        if not count:
            limit = cursor.connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
            count = self._per_statement = max(1, min(ROWS_PER_STATEMENT, limit // (len(ROW_COLUMNS) - 1)))
        added = 0
        whole = len(rows) - len(rows) % count
        if whole and (self._many is None or self._many[0] != setup_id):
            values = _ROW_VALUES.format(setup_id=setup_id)
            self._many = (setup_id, _INSERT_MANY.format(values=",".join([values] * count)))
        for start in range(0, whole, count):
            cursor.execute(self._many[1], list(chain.from_iterable(rows[start:start + count])))
            added += cursor.rowcount
        if whole < len(rows):
            cursor.executemany(_INSERT_SETUP_ROWS.format(setup_id=setup_id), rows[whole:])
            added += cursor.rowcount
        return added

    def _fresh(self, rows: list[tuple]) -> list[tuple]:
        """The rows whose figures are neither stored already nor earlier in this file (nor, in a dry
        run, in an earlier file); the others are counted as duplicates."""
        unique: dict[str, tuple] = {}
        for row in rows:
            unique.setdefault(row[0], row)
        hashes = list(unique)
        table = BenchMeasurement.__table__
        existing: set[str] = set()
        for i in range(0, len(hashes), HASH_CHUNK):
            chunk = hashes[i:i + HASH_CHUNK]
            existing.update(self.conn.execute(select(table.c.content_hash)
                                              .where(table.c.content_hash.in_(chunk))).scalars())
        if self.seen:
            existing.update(h for h in hashes if h in self.seen)
        fresh = [row for h, row in unique.items() if h not in existing]
        self.fr.duplicates += len(rows) - len(fresh)
        return fresh

    def finish(self) -> None:
        """Write what is pending, and drop the setups all of whose figures were already stored."""
        self.flush()
        if self.import_id is None:
            return
        s, m = BenchSetup.__table__, BenchMeasurement.__table__
        if self.fr.duplicates:
            self.conn.execute(delete(s).where(s.c.import_id == self.import_id,
                                              ~exists().where(m.c.setup_id == s.c.id)))
        if self.bulk and self.stored_here is not None:  # a dry run: what the next files would find stored
            self.stored_here.update(self.conn.execute(select(m.c.content_hash).select_from(m.join(s))
                                                      .where(s.c.import_id == self.import_id)).scalars())


def _decoded(text: str) -> dict:
    import json

    return json.loads(text)


def new_import_row(conn: Connection, values: dict) -> int:
    """The file's bench_imports row (its counts are filled in when the file is done)."""
    return conn.execute(insert(BenchImport).values(**values).returning(BenchImport.id)).scalar_one()
