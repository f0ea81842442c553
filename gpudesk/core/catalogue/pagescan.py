"""Reading the rows of a damaged SQLite file page by page, without SQLite.

SQLite reads a table by walking its b-tree from the root page: one damaged interior page (or a
root page past the end of a truncated file, or a destroyed file header) hides every row beneath
it, although the leaf pages holding the rows are intact. This reader goes through every page of
the file instead (the layout is SQLite's documented file format, https://www.sqlite.org/fileformat2.html):

- the page size from the header, or when the header is gone the size whose pages parse best;
- the schema (table names, root pages) from whatever sqlite_schema leaves can be read;
- each table's leaf pages by walking its b-tree as far as it goes; the leaf pages no walk reached
  (orphans) go to the one table whose columns their rows fit, when exactly one does;
- pages on the free list are skipped (they hold deleted rows), and so are cells that do not
  decode exactly (a record whose header and body disagree, text that is not UTF-8).

Only the standard library: repair.py uses it beside SQLite's own reads, which it prefers.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

MAGIC = b"SQLite format 3\x00"
PAGE_SIZES = (4096, 1024, 2048, 8192, 16384, 32768, 65536, 512)
LEAF_TABLE, INTERIOR_TABLE, LEAF_INDEX, INTERIOR_INDEX = 0x0D, 0x05, 0x0A, 0x02
MAX_OVERFLOW_PAGES = 100_000


@dataclass
class Column:
    name: str
    affinity: str  # INTEGER, REAL, TEXT, NUMERIC, BLOB (SQLite's rules on the declared type)
    notnull: bool
    rowid_alias: bool  # an INTEGER PRIMARY KEY: stored as NULL in the record, the rowid instead


@dataclass
class Table:
    name: str
    columns: list[Column]


@dataclass
class ScanResult:
    rows: dict[str, dict[int, tuple]] = field(default_factory=dict)  # table -> rowid -> values
    page_size: int = 0
    pages: int = 0
    orphan_pages: int = 0  # leaf pages no table's b-tree walk reached
    unplaced_pages: int = 0  # orphan leaf pages that fit no table, or more than one


def affinity(declared: str) -> str:
    """SQLite's column affinity of a declared type (https://www.sqlite.org/datatype3.html)."""
    t = (declared or "").upper()
    if "INT" in t:
        return "INTEGER"
    if "CHAR" in t or "CLOB" in t or "TEXT" in t:
        return "TEXT"
    if "BLOB" in t or not t:
        return "BLOB"
    if "REAL" in t or "FLOA" in t or "DOUB" in t:
        return "REAL"
    return "NUMERIC"


def scan(path: Path, tables: dict[str, Table]) -> ScanResult:
    """The rows of `tables` (their columns as a sound database of the same schema has them) that
    the pages of the file at `path` still hold."""
    return _Scanner(with_wal(Path(path)), tables).run()


def with_wal(path: Path) -> bytes:
    """The file's bytes with the committed frames of its -wal written over their pages (what
    SQLite would read), as far as the -wal's frames carry its own salt."""
    data = bytearray(path.read_bytes())
    try:
        wal = Path(f"{path}-wal").read_bytes()
    except OSError:
        return bytes(data)
    if len(wal) < 32 or struct.unpack(">I", wal[:4])[0] not in (0x377F0682, 0x377F0683):
        return bytes(data)
    size = struct.unpack(">I", wal[8:12])[0]
    salts = wal[16:24]
    pending: dict[int, bytes] = {}
    committed: dict[int, bytes] = {}
    pages = None
    at = 32
    while at + 24 + size <= len(wal):
        number, commit = struct.unpack(">II", wal[at:at + 8])
        if wal[at + 8:at + 16] != salts or number == 0:
            break
        pending[number] = wal[at + 24:at + 24 + size]
        if commit:
            committed.update(pending)
            pending.clear()
            pages = commit
        at += 24 + size
    for number, page in committed.items():
        start = (number - 1) * size
        if len(data) < start + size:
            data.extend(bytes(start + size - len(data)))
        data[start:start + size] = page
    if pages:
        del data[pages * size:]
    return bytes(data)


class _Scanner:
    def __init__(self, data: bytes, tables: dict[str, Table]):
        self.data = data
        self.tables = tables
        self.page_size = self._page_size()
        self.reserved = data[20] if data[:16] == MAGIC and data[20] < 255 else 0
        self.usable = self.page_size - self.reserved
        self.count = len(data) // self.page_size

    # ------------------------------------------------------------------ pages
    def _page_size(self) -> int:
        if self.data[:16] == MAGIC:
            raw = struct.unpack(">H", self.data[16:18])[0]
            size = 65536 if raw == 1 else raw
            if size in PAGE_SIZES:
                return size
        # the header is gone: the size at which the most pages look like b-tree pages
        best, score = PAGE_SIZES[0], -1
        for size in PAGE_SIZES:
            n = len(self.data) // size
            hits = sum(1 for p in range(2, min(n, 400) + 1) if self._looks_like_btree(p, size))
            if hits > score:
                best, score = size, hits
        return best

    def _looks_like_btree(self, page: int, size: int) -> bool:
        start = (page - 1) * size
        kind = self.data[start] if start < len(self.data) else 0
        if kind not in (LEAF_TABLE, INTERIOR_TABLE, LEAF_INDEX, INTERIOR_INDEX):
            return False
        ncells, content = struct.unpack(">HH", self.data[start + 3:start + 7])
        content = content or 65536
        return 0 < ncells < size // 4 and 8 <= content <= size

    def page(self, number: int) -> bytes | None:
        if number < 1 or number > self.count:
            return None
        start = (number - 1) * self.page_size
        return self.data[start:start + self.page_size]

    def header(self, number: int) -> tuple[int, int, int, list[int]] | None:
        """(page type, header offset, right-most child, cell offsets) of a b-tree page, or None."""
        page = self.page(number)
        if page is None:
            return None
        at = 100 if number == 1 else 0
        kind = page[at]
        if kind not in (LEAF_TABLE, INTERIOR_TABLE, LEAF_INDEX, INTERIOR_INDEX):
            return None
        ncells = struct.unpack(">H", page[at + 3:at + 5])[0]
        interior = kind in (INTERIOR_TABLE, INTERIOR_INDEX)
        header_size = 12 if interior else 8
        right = struct.unpack(">I", page[at + 8:at + 12])[0] if interior else 0
        pointers = at + header_size
        if pointers + 2 * ncells > self.usable:
            return None
        offsets = [struct.unpack(">H", page[pointers + 2 * i:pointers + 2 * i + 2])[0] for i in range(ncells)]
        return kind, at, right, [o for o in offsets if pointers + 2 * ncells <= o < self.usable]

    def freelist(self) -> set[int]:
        pages: set[int] = set()
        if self.data[:16] != MAGIC:
            return pages
        trunk = struct.unpack(">I", self.data[32:36])[0]
        while trunk and trunk not in pages and len(pages) < self.count:
            page = self.page(trunk)
            if page is None:
                break
            pages.add(trunk)
            following, n = struct.unpack(">II", page[:8])
            if n > (self.usable - 8) // 4:
                break
            pages.update(struct.unpack(">I", page[8 + 4 * i:12 + 4 * i])[0] for i in range(n))
            trunk = following
        return pages

    # ------------------------------------------------------------------ cells and records
    def leaf_cells(self, number: int) -> Iterator[tuple[int, bytes]]:
        """(rowid, payload) of each table-leaf cell of a page that decodes; a broken cell is skipped."""
        head = self.header(number)
        if head is None or head[0] != LEAF_TABLE:
            return
        page = self.page(number)
        for offset in head[3]:
            try:
                size, at = _varint(page, offset)
                rowid, at = _varint(page, at)
                yield _signed(rowid), self._payload(page, at, size)
            except (IndexError, ValueError, struct.error):
                continue

    def _payload(self, page: bytes, at: int, size: int) -> bytes:
        u = self.usable
        most = u - 35
        if size <= most:
            if at + size > u:
                raise ValueError("cell runs past the page")
            return page[at:at + size]
        least = ((u - 12) * 32 // 255) - 23
        local = least + ((size - least) % (u - 4))
        if local > most:
            local = least
        parts = [page[at:at + local]]
        overflow = struct.unpack(">I", page[at + local:at + local + 4])[0]
        remaining = size - local
        seen = 0
        while remaining > 0:
            nxt = self.page(overflow)
            seen += 1
            if nxt is None or seen > MAX_OVERFLOW_PAGES:
                raise ValueError("overflow chain broken")
            chunk = nxt[4:4 + min(remaining, u - 4)]
            parts.append(chunk)
            remaining -= len(chunk)
            overflow = struct.unpack(">I", nxt[:4])[0]
        return b"".join(parts)

    # ------------------------------------------------------------------ the schema and the walks
    def schema_roots(self) -> dict[str, int]:
        """Table name -> root page, from the sqlite_schema rows any page still holds."""
        roots: dict[str, int] = {}
        reached = self.walk(1)
        candidates = list(reached) + [p for p in range(2, self.count + 1) if p not in reached]
        for number in candidates:
            for _rowid, payload in self.leaf_cells(number):
                values = decode_record(payload)
                if values is None or len(values) != 5:
                    continue
                kind, name, _tbl, root, sql = values
                if kind == "table" and isinstance(name, str) and isinstance(root, int) and \
                        isinstance(sql, str) and sql.upper().startswith("CREATE TABLE") and name in self.tables:
                    roots.setdefault(name, root)
        return roots

    def walk(self, root: int) -> set[int]:
        """The table-leaf pages reachable from `root` (as far as the interior pages can be read)."""
        leaves: set[int] = set()
        todo, seen = [root], set()
        while todo:
            number = todo.pop()
            if number in seen:
                continue
            seen.add(number)
            head = self.header(number)
            if head is None:
                continue
            kind, _at, right, offsets = head
            if kind == LEAF_TABLE:
                leaves.add(number)
            elif kind == INTERIOR_TABLE:
                page = self.page(number)
                children = [struct.unpack(">I", page[o:o + 4])[0] for o in offsets if o + 4 <= len(page)]
                todo.extend(c for c in children + [right] if 1 <= c <= self.count)
        return leaves

    def run(self) -> ScanResult:
        result = ScanResult(page_size=self.page_size, pages=self.count)
        free = self.freelist()
        roots = self.schema_roots()
        owner: dict[int, str] = {}
        for name, root in roots.items():
            for leaf in self.walk(root):
                owner.setdefault(leaf, name)
        schema_leaves = self.walk(1)
        for name in self.tables:
            result.rows[name] = {}
        for number in range(1, self.count + 1):
            if number in free or number in schema_leaves:
                continue
            head = self.header(number)
            if head is None or head[0] != LEAF_TABLE:
                continue
            cells = []
            for rowid, payload in self.leaf_cells(number):
                values = decode_record(payload)
                if values is not None:
                    cells.append((rowid, values))
            if not cells:
                continue
            name = owner.get(number)
            if name is None:
                result.orphan_pages += 1
                fits = [t for t in self.tables.values() if all(fits_table(t, r, v, exact=True) for r, v in cells)]
                if len(fits) != 1:
                    result.unplaced_pages += 1
                    continue
                name = fits[0].name
            table = self.tables[name]
            for rowid, values in cells:
                if fits_table(table, rowid, values):
                    result.rows[name].setdefault(rowid, as_row(table, rowid, values))
        return result


# ============================================================================ records
def _varint(buf: bytes, at: int) -> tuple[int, int]:
    value = 0
    for i in range(9):
        byte = buf[at + i]
        if i == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    raise ValueError("bad varint")  # pragma: no cover


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


_INT_SIZES = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8}


def decode_record(payload: bytes) -> list | None:
    """The values of an SQLite record, or None when it does not decode exactly."""
    try:
        header_size, at = _varint(payload, 0)
        if header_size < 1 or header_size > len(payload):
            return None
        types = []
        while at < header_size:
            serial, at = _varint(payload, at)
            types.append(serial)
        if at != header_size:
            return None
        values: list = []
        body = header_size
        for serial in types:
            if serial == 0:
                values.append(None)
            elif serial in _INT_SIZES:
                n = _INT_SIZES[serial]
                values.append(int.from_bytes(payload[body:body + n], "big", signed=True))
                body += n
            elif serial == 7:
                values.append(struct.unpack(">d", payload[body:body + 8])[0])
                body += 8
            elif serial in (8, 9):
                values.append(serial - 8)
            elif serial >= 12:
                n = (serial - 12) // 2
                raw = payload[body:body + n]
                if len(raw) != n:
                    return None
                values.append(raw.decode("utf-8") if serial % 2 else bytes(raw))
                body += n
            else:
                return None
        return values if body == len(payload) else None
    except (IndexError, ValueError, struct.error, UnicodeDecodeError):
        return None


def fits_table(table: Table, rowid: int, values: list, exact: bool = False) -> bool:
    """Whether a decoded record can be a row of `table`: as many values as columns (unless not
    `exact`: a row written before a column was added has fewer), each of a kind its column takes."""
    if not 0 < len(values) <= len(table.columns) or rowid < 1 or (exact and len(values) != len(table.columns)):
        return False
    for column, value in zip(table.columns, values, strict=False):
        if value is None:
            if column.notnull and not column.rowid_alias:
                return False
            continue
        if column.rowid_alias:
            return False  # stored as NULL
        if column.affinity == "INTEGER" and not isinstance(value, int):
            return False
        if column.affinity == "REAL" and not isinstance(value, int | float):
            return False
        if column.affinity == "TEXT" and not isinstance(value, str):
            return False
    for column in table.columns[len(values):]:
        if column.notnull:
            return False  # a NOT NULL column added later has a default; not worth guessing
    return True


def as_row(table: Table, rowid: int, values: list) -> tuple:
    row = list(values) + [None] * (len(table.columns) - len(values))
    for i, column in enumerate(table.columns):
        if column.rowid_alias:
            row[i] = rowid
    return tuple(row)


def tables_of(conn) -> dict[str, Table]:
    """The tables of a sound database (an sqlite3 connection) as the scanner needs them."""
    out = {}
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
    for name in names:
        info = list(conn.execute(f"PRAGMA table_info({name})"))
        pk = [r for r in info if r[5]]
        alias = len(pk) == 1 and (pk[0][2] or "").upper() == "INTEGER"
        out[name] = Table(name, [Column(r[1], affinity(r[2]), bool(r[3]), alias and r[5] == 1) for r in info])
    return out
