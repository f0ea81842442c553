"""Reading result files safely: a path or a text, checked for size and binary content, read as a
stream so that memory stays bounded however large the file.

`iter_json` finds the JSON values in a text however the tool wrote them - one object, an array
(also one cut off by a crash), JSON Lines, objects appended one after another, log lines around
them - and hands over one top-level record at a time, decoding with `json.JSONDecoder.raw_decode`
over a sliding buffer. A record alone on its line (JSON Lines, and arrays written one record per
line) is first tried whole with orjson, about three times faster than the standard library; what
orjson refuses (NaN and infinities, several values on a line, a record over many lines, a lone
surrogate) goes the standard way, and so does a line with a run of 19 or more digits, which could
be a whole number beyond 64 bits (orjson would read it as the nearest float): the values read are
the same either way. A JSON line that starts with the same members, word for word, as the lines
before it (a tool's setup, written before the figures that change) has only the rest parsed, and
shares those members' values with them (_SharedStart). `iter_lines` reads text logs line by line
with a cap on the line length.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from gpudesk.core.benchmarks.types import Problem, source_label

try:
    from orjson import loads as _line_loads
except ImportError:  # a source checkout without the dependency installed: the same values, more slowly
    _line_loads = json.loads

MAX_FILE_BYTES = 1 << 30  # files above 1 GiB are refused
MAX_RECORD_CHARS = 256 << 20  # one JSON value (e.g. a vLLM --save-detailed result) above 256 MiB is refused
MAX_LINE_CHARS = 1 << 20  # text-log lines above 1 MiB are skipped
HEAD_CHARS = 64 << 10  # what format detection looks at
CHUNK_CHARS = 1 << 16
_DIGITS_AS_NINES = bytes.maketrans(b"0123456789", b"9999999999")
_LONG_RUN = b"9" * 19


def _has_long_number(text: str) -> bool:
    """Whether `text` holds 19 digits in a row, which could be a whole number beyond 64 bits: such a
    text is read by the standard library (exact integers), not orjson. Two C passes over the text."""
    return _LONG_RUN in text.encode("utf-8", "surrogatepass").translate(_DIGITS_AS_NINES)

_MAGIC = (
    (b"\x1f\x8b", "a gzip-compressed file: decompress it first (gunzip)"),
    (b"PK\x03\x04", "a zip archive: extract the result file from it first"),
    (b"\xfd7zXZ\x00", "an xz-compressed file: decompress it first (unxz)"),
    (b"BZh", "a bzip2-compressed file: decompress it first (bunzip2)"),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file: decompress it first (unzstd)"),
    (b"SQLite format 3\x00", "an SQLite database, not a benchmark result"),
    (b"%PDF", "a PDF document, not a benchmark result"),
    (b"\x89PNG", "a PNG image, not a benchmark result"),
    (b"\xff\xd8\xff", "a JPEG image, not a benchmark result"),
    (b"GGUF", "a GGUF model file, not a benchmark result"),
)


class SourceError(Exception):
    """A file that cannot be read at all; `problem` says why, naming the file."""

    def __init__(self, problem: Problem):
        self.problem = problem
        super().__init__(str(problem))


class _Counting:
    """A text stream that reports how many characters were read (for progress and cancel: the
    callback may raise to stop the import)."""

    def __init__(self, stream: TextIO, on_read):
        self._stream = stream
        self._on_read = on_read

    def read(self, size: int = -1) -> str:
        data = self._stream.read(size)
        self._on_read(len(data))
        return data

    def readline(self, size: int = -1) -> str:
        data = self._stream.readline(size)
        self._on_read(len(data))
        return data

    def close(self) -> None:
        self._stream.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._stream.close()


@dataclass
class Source:
    """A result file (`path`) or a text handed over directly (`text`), with the name used in messages.
    `on_read(chars)`, when set, is called as the content is read (progress; it may raise to cancel)."""

    name: str
    path: Path | None = None
    text: str | None = None
    on_read: Callable[[int], None] | None = None

    def size(self) -> int:
        if self.path is not None:
            return self.path.stat().st_size
        return len((self.text or "").encode("utf-8", "surrogatepass"))

    def open(self) -> TextIO:
        stream = self._open()
        return _Counting(stream, self.on_read) if self.on_read is not None else stream  # type: ignore[return-value]

    def _open(self) -> TextIO:
        if self.path is not None:
            return open(self.path, encoding="utf-8-sig", errors="replace", newline=None)  # noqa: SIM115
        text = self.text or ""
        if text.startswith("\ufeff"):
            text = text[1:]
        return io.StringIO(text.replace("\r\n", "\n").replace("\r", "\n"))

    def head(self, chars: int = HEAD_CHARS) -> str:
        with self._open() as handle:
            return handle.read(chars)


def open_source(source, source_name: str | None = None, max_bytes: int | None = None) -> Source:
    """A checked Source: raises SourceError for a missing, oversized, empty or binary file."""
    name = source_label(source, source_name)
    if isinstance(source, bytes | bytearray):
        _check_bytes(bytes(source[:8192]), name)
        return Source(name, text=bytes(source).decode("utf-8-sig", errors="replace"))
    if isinstance(source, str) and ("\n" in source or source.lstrip().startswith(("{", "[")) or len(source) > 4096):
        return Source(name, text=source)
    path = Path(os.fspath(source))
    if not path.exists():
        raise SourceError(Problem(name, "", "the file does not exist", "error"))
    if path.is_dir():
        raise SourceError(Problem(name, "", "this is a folder, not a file: name the result files in it", "error"))
    from gpudesk.core.fileio import not_regular

    odd = not_regular(path)
    if odd:  # a named pipe or a device: refused before it is opened (reading one would wait or never end)
        raise SourceError(Problem(name, "", f"{odd}; name a result file", "error"))
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            head = handle.read(8192)
    except OSError as exc:
        raise SourceError(Problem(name, "", f"the file cannot be read ({exc.strerror or exc})", "error")) from exc
    limit = MAX_FILE_BYTES if max_bytes is None else max_bytes
    if size > limit:
        raise SourceError(Problem(name, "", f"the file is {_size(size)}, more than the {_size(limit)} gpudesk "
                                  "imports; split it (JSON Lines can be cut at any line) or keep only the runs you need",
                                  "error"))
    if size == 0:
        raise SourceError(Problem(name, "", "the file is empty", "error"))
    _check_bytes(head, name)
    return Source(name, path=path)


def _check_bytes(head: bytes, name: str) -> None:
    for magic, what in _MAGIC:
        if head.startswith(magic):
            raise SourceError(Problem(name, "byte 0", f"this is {what}", "error"))
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise SourceError(Problem(name, "byte 0", "the file is UTF-16 text: save it as UTF-8 and import it again",
                                  "error"))
    if b"\x00" in head:
        nul = head.index(b"\x00")
        raise SourceError(Problem(name, f"byte {nul}", "the file is binary (it contains NUL bytes), "
                                  "not the text or JSON a benchmark tool writes", "error"))
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not just a character cut at the end of the sample
            bad = sum(1 for b in head if b < 9 or 13 < b < 32)
            what = "binary" if bad or exc.start < 64 else "not UTF-8 text"
            raise SourceError(Problem(name, f"byte {exc.start}", f"the file is {what} (invalid UTF-8 at this byte), "
                                      "not the text or JSON a benchmark tool writes", "error")) from exc
    controls = sum(1 for b in head if b < 9 or 13 < b < 27 or 27 < b < 32)
    if head and controls > max(8, len(head) // 50):
        raise SourceError(Problem(name, "", "the file is binary (control characters), not the text or JSON a "
                                  "benchmark tool writes", "error"))


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


# ----------------------------------------------------------------------------------- JSON values
@dataclass(slots=True)
class Record:
    value: object
    index: int  # 0-based position among the file's records
    line: int  # 1-based line where the record starts
    in_array: bool
    # the members `value` shares, as this very object, with other records (the common start of
    # their lines, see _SharedStart), holding every value for its keys; None when read whole
    shared: dict | None = None

    @property
    def place(self) -> str:
        return f"record {self.index} (line {self.line})"


_WS = " \t\n\r"


class _Buffer:
    """A sliding window over a text stream that knows the line number of every position."""

    def __init__(self, stream: TextIO, chunk: int):
        self.stream = stream
        self.chunk = chunk
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.base_line = 1  # line number of buf[0]
        self.base_col = 0  # characters before buf[0] on its line
        self._line_pos = 0
        self._line_no = 1

    def more(self, at_least: int = 0) -> bool:
        """Read more text; keep buf[pos:]. Returns False at the end of the stream."""
        if self.eof:
            return False
        if self.pos:
            self.base_line = self.line_at(self.pos)
            nl = self.buf.rfind("\n", 0, self.pos)
            self.base_col = self.pos - nl - 1 if nl >= 0 else self.base_col + self.pos
            self.buf = self.buf[self.pos:]
            self.pos = 0
            self._line_pos, self._line_no = 0, self.base_line
        size = max(self.chunk, at_least)
        data = self.stream.read(size)
        if not data:
            self.eof = True
            return False
        self.buf += data
        return True

    def line_at(self, index: int) -> int:
        if index < self._line_pos:
            self._line_pos, self._line_no = 0, self.base_line
        self._line_no += self.buf.count("\n", self._line_pos, index)
        self._line_pos = index
        return self._line_no

    def mark_line(self, index: int, line: int) -> None:
        """Note that buf[index] is on line `line` (line_at counts on from there)."""
        self._line_pos, self._line_no = index, line

    def column_at(self, index: int) -> int:
        """1-based column of buf[index] on its line."""
        nl = self.buf.rfind("\n", 0, index)
        return index - nl if nl >= 0 else self.base_col + index + 1

    def skip_ws(self, extra: str = "") -> bool:
        """Move past whitespace (and `extra` characters); False when the stream has ended."""
        chars = _WS + extra
        while True:
            n = len(self.buf)
            p = self.pos
            while p < n and self.buf[p] in chars:
                p += 1
            self.pos = p
            if p < n:
                return True
            if not self.more():
                return False

    def skip_line(self) -> bool:
        """Move to the start of the next line; False when the stream ended first."""
        while True:
            nl = self.buf.find("\n", self.pos)
            if nl >= 0:
                self.pos = nl + 1
                return True
            self.pos = len(self.buf)
            if not self.more():
                return False


class _JsonScan:
    """Where iter_json is: inside a top-level array or not, and the non-JSON lines skipped so far."""

    __slots__ = ("in_array", "array_line", "array_items", "noise_lines", "noise_first")

    def __init__(self):
        self.in_array = False
        self.array_line = 0
        self.array_items = 0
        self.noise_lines = 0
        self.noise_first = 0

    def noise(self, line: int) -> None:
        if not self.noise_lines:
            self.noise_first = line
        self.noise_lines += 1

    def open_array(self, b: _Buffer, line: int, name: str) -> tuple[bool, Problem | None]:
        """At a top-level '[': an array of records - or a log line such as "[INFO] ...", decided on
        its first element. Returns (whether reading goes on, a problem to report)."""
        b.pos += 1
        if not b.skip_ws():
            return False, Problem(name, f"line {line}", "the file ends right after '[': no records", "warning")
        if b.buf[b.pos] in "{[]":
            self.in_array = True
            self.array_line = line
            self.array_items = 0
            return True, None
        self.noise(line)
        # skip the rest of the '[' line (if the first element is on a later line, we are past it)
        if b.line_at(b.pos) == line and not b.skip_line():
            return False, None
        return True, None

    def resynchronise(self, b: _Buffer) -> bool:
        """After a value that could not be read, to the next line that starts a record; False at the end."""
        if b.eof and b.pos >= len(b.buf):
            return False
        if self.in_array:
            self.in_array = _resync(b)
            return True
        return b.skip_line()

    def closing_problems(self, name: str) -> Iterator[Problem]:
        if self.in_array:
            yield Problem(name, f"line {self.array_line}", f"the array that starts here is not closed with ']': the "
                          f"file was cut off (a crashed or killed run?); the {self.array_items} complete record(s) "
                          "before the cut were kept", "warning")
        if self.noise_lines:
            yield Problem(name, f"line {self.noise_first}", f"{self.noise_lines} line(s) that are not JSON (log "
                          "output?) were skipped", "info")


def iter_json(source: Source, *, max_record_chars: int | None = None,
              chunk: int = CHUNK_CHARS) -> Iterator[Record | Problem]:
    """Every top-level JSON record of the source (array elements one by one), and Problems for what
    could not be read. Never raises for bad content."""
    limit = MAX_RECORD_CHARS if max_record_chars is None else max_record_chars
    name = source.name
    decoder = json.JSONDecoder()
    with source.open() as stream:
        b = _Buffer(stream, chunk)
        scan = _JsonScan()
        starts = _SharedStart()
        index = 0
        while b.skip_ws("," if scan.in_array else ""):
            c = b.buf[b.pos]
            start_line = b.line_at(b.pos)
            if scan.in_array and c == "]":
                scan.in_array = False
                b.pos += 1
                continue
            if not scan.in_array and c not in "{[":
                scan.noise(start_line)
                if not b.skip_line():
                    break
                continue
            if not scan.in_array and c == "[":
                go_on, problem = scan.open_array(b, start_line, name)
                if problem is not None:
                    yield problem
                if not go_on:
                    break
                continue
            if c == "{":
                value = _whole_line(b, scan.in_array, starts)
                if value is not None:
                    if scan.in_array:
                        scan.array_items += 1
                    yield Record(value, index, start_line, scan.in_array, starts.used)
                    index += 1
                    if not scan.in_array:  # JSON Lines: the lines after it, as long as each holds one object
                        for record in _json_lines(b, index, start_line, starts):
                            yield record
                            index += 1
                    continue
            # decode one value starting at b.pos
            value, problem = _decode(b, decoder, limit, name, start_line, index, scan.in_array)
            if problem is not None:
                yield problem
                index += 1
                if problem.severity == "error" and "larger than" in problem.message:
                    return
                if not scan.resynchronise(b):
                    break
                continue
            if scan.in_array:
                scan.array_items += 1
            yield Record(value, index, start_line, scan.in_array)
            index += 1
        yield from scan.closing_problems(name)


_PARTIAL_TAIL = re.compile(r"[\w.+\-]*\s*")


def _decode(b: _Buffer, decoder: json.JSONDecoder, limit: int, name: str, line: int, index: int,
            in_array: bool) -> tuple[object, Problem | None]:
    start = b.pos
    while True:
        try:
            value, end = decoder.raw_decode(b.buf, b.pos)
        except json.JSONDecodeError as exc:
            # the value is cut off (rather than broken) when the error sits in a partial literal or
            # number at the very end of what has been read, or inside a string that runs to the end
            incomplete = (exc.msg.startswith("Unterminated string")
                          or _PARTIAL_TAIL.fullmatch(b.buf, exc.pos) is not None)
            if incomplete and not b.eof:
                pending = len(b.buf) - b.pos
                if pending > limit:
                    return None, Problem(name, f"record {index} (line {line})", f"one JSON value is larger than "
                                         f"{_size(limit)}; gpudesk does not read values this large (per-request "
                                         "details? re-run without --save-detailed/--output-details)", "error")
                b.more(at_least=pending)  # grow geometrically: each retry at least doubles the window
                start = b.pos
                continue
            if incomplete:
                what = ("the array's last record is incomplete" if in_array else "the last record is incomplete")
                b.pos = len(b.buf)
                return None, Problem(name, f"record {index} (line {line})", f"{what}: the file ends inside it "
                                     "(cut off?); it was skipped", "warning")
            err_line = b.line_at(exc.pos)
            col = b.column_at(exc.pos)
            b.pos = start  # the caller resumes on the line after the record's first line
            return None, Problem(name, f"record {index} (line {line})", f"not valid JSON: {exc.msg} at line "
                                 f"{err_line}, column {col}; skipped", "warning")
        except RecursionError:
            b.pos = start
            return None, Problem(name, f"record {index} (line {line})", "the JSON is nested too deeply; skipped",
                                 "warning")
        b.pos = end
        return value, None


def _json_lines(b: _Buffer, index: int, line: int, starts: _SharedStart) -> Iterator[Record]:
    """Records of the lines that follow the one b.pos ends (at its newline), as long as each line of
    what has been read holds one object and nothing else; b.pos ends at the start of the first line
    that does not (the usual way takes it from there)."""
    buf, pos = b.buf, b.pos + 1
    if b.pos >= len(buf) or buf[b.pos] != "\n":
        return
    n = len(buf)
    loads = starts.loads
    try:
        while pos < n and buf[pos] == "{":
            end = buf.find("\n", pos)
            if end < 0:
                break
            value = loads(buf[pos:end])
            if value is None:
                break
            line += 1
            yield Record(value, index, line, False, starts.used)
            index += 1
            pos = end + 1
    finally:
        b.pos = pos - 1  # on the newline before that line, where a record read the usual way leaves it
        b.mark_line(b.pos, line)  # that newline ends line `line`: the lines read need no counting again


_SCALARS = (str, int, float, bool, type(None))


class _SharedStart:
    """Reads JSON lines that start with the same members as the line before, word for word, without
    parsing those members again. Tools write their setup first and the figures that change after
    it (llama-bench's 25 setup fields are two thirds of every line), so once two lines have shown
    where their common members end, a line that starts with exactly that text only has the rest
    parsed, and the common members' values (text, numbers, true/false/null only, so that no record
    can change another's) are shared. Parsing is deterministic, so the values are the ones a parse
    of the whole line gives, in the same key order; a line that does not start that way is parsed
    whole. After MAX_MISSES lines in a row without a common start, a file's lines are all parsed
    whole."""

    MAX_MISSES = 16

    __slots__ = ("text", "cut", "members", "last", "misses", "used")

    def __init__(self):
        self.text = ""  # the common start, up to the ',' after its last member
        self.cut = 0  # len(text)
        self.members: dict = {}
        self.last: tuple[str, dict] | None = None  # the line before and its object, while looking
        self.misses = 0
        self.used: dict | None = None  # `members` when the last line read shared them (Record.shared)

    def loads(self, text: str) -> dict | None:
        """The object the line holds when it is one object alone; None otherwise, and for a line
        whose part to parse holds 19 digits in a row (see _has_long_number: the usual way reads it)."""
        cut = self.cut
        if cut and text.startswith(self.text) and text[cut:cut + 1] == ",":
            rest = text[cut + 1:]
            if _has_long_number(rest):  # the common start was checked when it was learned
                self.used = None
                return None
            try:
                rest = _line_loads("{" + rest)
            except ValueError:
                rest = None
            if type(rest) is dict and rest:  # not a bare '{...,}', which is no JSON
                self.misses = 0
                members = self.members
                value = {**members, **rest}
                # a key written twice keeps its later value: then the record does not share `members`
                self.used = members if len(value) == len(members) + len(rest) else None
                return value
        self.used = None
        if _has_long_number(text):
            return None
        try:
            value = _line_loads(text)
        except ValueError:
            return None
        if type(value) is not dict:
            return None
        if self.misses < self.MAX_MISSES:
            self.misses += 1
            self._learn(text, value)
        return value

    def _learn(self, text: str, value: dict) -> None:
        """After a line read whole: the members it starts with in common with the line before, if
        any (until then, or when there are none, lines are read whole)."""
        last, self.last = self.last, (text, value)
        self.text, self.cut, self.members = "", 0, {}
        if last is None:
            return
        n = 0
        for (key, v), (key0, v0) in zip(value.items(), last[1].items()):
            if key != key0 or type(v) not in _SCALARS or type(v) is not type(v0) or v != v0:
                break
            n += 1
        if n == 0 or n == len(value):
            return
        keys = list(value)
        following = keys[n]  # the first member that is not common: the start ends before it
        if any(c in following for c in '"\\') or not following.isprintable():
            return  # written with escapes, perhaps: not looked for as text
        at = 0
        for _ in range(4):  # the key's text occurs earlier when a key is written twice
            at = text.find(f'"{following}"', at + 1)
            if at < 0:
                return
            comma = text.rfind(",", 0, at)
            if comma < 0 or text[comma + 1:at].strip(" \t\r\n"):
                continue
            try:
                members = _line_loads(text[:comma] + "}")
            except ValueError:
                continue
            if type(members) is dict and list(members) == keys[:n]:
                self.text, self.cut, self.members = text[:comma], comma, members
                self.last = None
                return


def _whole_line(b: _Buffer, in_array: bool, starts: _SharedStart) -> dict | None:
    """The object that starts at b.pos when it is all that its line holds (but for a comma after it
    in an array), moving b.pos past it; None, with b.pos unmoved, otherwise."""
    end = b.buf.find("\n", b.pos)
    if end < 0 and not b.eof:
        b.more()  # the line goes on past what has been read (b.pos moves to 0)
        end = b.buf.find("\n", b.pos)
    buf, start = b.buf, b.pos
    text = buf[start:end] if end >= 0 else buf[start:]
    if in_array:
        text = text.rstrip(" \t\r,")  # the comma is skipped after the record, as after any value
    value = starts.loads(text)
    if value is None:
        return None
    b.pos = start + len(text)
    return value


def _resync(b: _Buffer) -> bool:
    """After a broken record (b.pos at its start): skip to the next line starting with '{' (a
    record) or ']' (the end of the array). Returns True if still inside the array."""
    while b.skip_line():
        if not b.skip_ws():
            return False
        c = b.buf[b.pos]
        if c == "{":
            return True
        if c == "]":
            b.pos += 1
            return False
    return False


# ----------------------------------------------------------------------------------- text lines
def iter_lines(source: Source, max_line: int = MAX_LINE_CHARS) -> Iterator[tuple[int, str | None]]:
    """(line number, text without the newline) for every line; text None for a line longer than
    `max_line` (skipped without holding it in memory)."""
    with source.open() as stream:
        number = 0
        while True:
            line = stream.readline(max_line)
            if not line:
                return
            number += 1
            if not line.endswith("\n") and len(line) >= max_line:
                while True:
                    rest = stream.readline(max_line)
                    if not rest or rest.endswith("\n"):
                        break
                yield number, None
                continue
            yield number, line.rstrip("\n")
