"""nccl-tests text output (`all_reduce_perf -b 8 -e 8G -f 2 -g 1`, also rccl-tests): the device
lines name the GPUs (and, through their host names, the node count - host names themselves are never
stored); the table gives, per message size, the time (µs, stored in seconds) and the algorithm and
bus bandwidths (GB/s) out of place and in place; the footer the average bus bandwidth."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

from gpudesk.core.benchmarks import matching
from gpudesk.core.benchmarks._common import Item, opened
from gpudesk.core.benchmarks.reader import Source, iter_lines
from gpudesk.core.benchmarks.types import Measurement, ParseResult, Problem, collect, finish, parse_number

FORMAT = "nccl-tests"
MAX_ROWS = 10_000
# "#  Rank  0 Group  0 Pid 1887 on worker-1 device  0 [0x8d] NVIDIA H100 80GB HBM3"; newer rccl-tests and
# older nccl-tests leave out "Group N" ("#   Rank  0 Pid 590032 on host device  0 [0000:c1:00.0] AMD Instinct MI250X")
_DEVICE_RE = re.compile(r"^#?\s*Rank\s+(\d+)\s+(?:Group\s+(\d+)\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+"
                        r"\[([^\]]*)\]\s*(.*?)\s*$")
# mpirun --tag-output: "[1,0]<stdout>:" before every line (and where output of ranks interleaves, mid-line)
_TAG_RE = re.compile(r"\[\d+,\d+\]<std(?:out|err)>:")
_HEADER_RE = re.compile(r"#\s*nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)")
_OP_RE = re.compile(r"\b(all_reduce|all_gather|reduce_scatter|alltoall|broadcast|reduce|sendrecv|scatter|gather|"
                    r"hypercube)_perf\b")
_TYPES = {"int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16", "fp8_e4m3",
          "fp8_e5m2", "int", "char", "f8e4m3", "f8e5m2", "bf16", "fp16", "fp32", "fp64"}


def looks_like(head: str) -> bool:
    return bool(("out-of-place" in head and "busbw" in head) or "# Avg bus bandwidth" in head
                or re.search(r"#\s+size\s+count\s+type", head))


def parse(source, source_name: str | None = None, **_ignored) -> ParseResult:
    return collect(iter_parse(source, source_name), FORMAT)


def _row(line: str) -> dict | None:
    parts = line.split()
    if len(parts) not in (12, 13) or not parts[0].isdigit() or not parts[1].isdigit():
        return None
    has_root = len(parts) == 13
    dtype, redop = parts[2], parts[3]
    if dtype.lower() not in _TYPES and not re.fullmatch(r"[a-z0-9_]+", dtype):
        return None
    rest = parts[5:] if has_root else parts[4:]
    if len(rest) != 8:
        return None
    row = {"size_bytes": int(parts[0]), "count": int(parts[1]), "dtype": dtype, "redop": redop,
           "root": int(parts[4]) if has_root and re.fullmatch(r"-?\d+", parts[4]) else None}
    for prefix, values in (("out", rest[:4]), ("in", rest[4:])):
        row[prefix + "_time_us"] = parse_number(values[0])
        row[prefix + "_algbw"] = parse_number(values[1])
        row[prefix + "_busbw"] = parse_number(values[2])
        row[prefix + "_wrong"] = values[3]
    if all(row[k] is None for k in ("out_time_us", "out_busbw", "in_time_us", "in_busbw")):
        return None
    return row


class _Test:
    """One test of the log (a log may run all_reduce_perf, all_gather_perf ... in turn)."""

    def __init__(self, op: str | None):
        self.op = op
        self.rows: list[tuple[int, dict]] = []
        self.avg: float | None = None
        self.header: dict = {}
        self.devices: dict[tuple, str] = {}  # (rank, host, pid, device) -> name

    @property
    def started(self) -> bool:
        return bool(self.rows) or self.avg is not None


class _Log:
    """One pass over an nccl-tests log: its tests, the wrong values it reported, the lines skipped."""

    def __init__(self):
        self.tests = [_Test(None)]
        self.wrong_total = 0
        self.other = 0
        self.first_other = 0

    def read(self, src) -> _Log:
        for number, line in iter_lines(src):
            if line is None:
                continue
            if "<std" in line:
                line = _TAG_RE.sub("", line)
            text = line.strip()
            if text:
                self._line(number, text)
        self.tests = [t for t in self.tests if t.started]
        return self

    def _next_test(self) -> _Test:
        test = _Test(None)
        self.tests.append(test)
        return test

    def _line(self, number: int, text: str) -> None:
        test = self.tests[-1]
        m = _OP_RE.search(text)
        if m and not _DEVICE_RE.match(text):
            if test.started:
                self.tests.append(_Test(m.group(1)))
            else:
                test.op = m.group(1)
            return
        if "Rank" in text:
            m = _DEVICE_RE.match(text)
            if m:
                if test.rows:  # a header after a finished table: the next test (its command not echoed)
                    test = self._next_test()
                test.devices[(m.group(1), m.group(4), m.group(3), m.group(5))] = " ".join(m.group(7).split())
                return
        if text.startswith("#"):
            self._comment(text)
            return
        row = _row(text)
        if row is not None:
            if test.avg is not None:  # rows after a footer: a further test
                test = self._next_test()
            if sum(len(t.rows) for t in self.tests) < MAX_ROWS:
                test.rows.append((number, row))
            return
        self.other += 1
        self.first_other = self.first_other or number

    def _comment(self, text: str) -> None:
        test = self.tests[-1]
        m = _HEADER_RE.search(text)
        if m:
            if test.rows:
                test = self._next_test()
            test.header = {"n_threads": int(m.group(1)), "gpus_per_process": int(m.group(2)),
                           "min_bytes": int(m.group(3)), "max_bytes": int(m.group(4))}
            it = re.search(r"warmup iters:\s*(\d+)\s+iters:\s*(\d+)", text)
            if it:
                test.header["warmup_iters"], test.header["iters"] = int(it.group(1)), int(it.group(2))
            return
        m = re.search(r"Avg bus bandwidth\s*:\s*([^\s]+)", text)
        if m:
            test.avg = parse_number(m.group(1))
            return
        m = re.search(r"Out of bounds values\s*:\s*(\d+)", text)
        if m:
            self.wrong_total += int(m.group(1))


def _hardware(name: str, devices: list[tuple[str, str]], count: int | None) -> Iterator[Problem]:
    """Yield the question if the log names no GPU; return (match, hardware text)."""
    names = sorted({d for _h, d in devices if d})
    if len(names) == 1:
        return matching.match_hardware(names[0], count), names[0]
    if names:
        return matching.match_hardware(", ".join(names), count), ", ".join(names)
    yield Problem(name, "", "the log does not name the GPUs (no '# Rank ... device' lines): which accelerator and "
                  "how many? Answer with --gpu ID --count N", "question")
    return matching.Match(None, None, "ask", "the log has no '# Rank ... device' lines naming the GPUs"), ""


def _log_problems(name: str, log: _Log) -> Iterator[Problem]:
    if log.other:
        yield Problem(name, f"line {log.first_other}", f"{log.other} line(s) that are neither comments nor table rows "
                      "(NCCL debug output, commands?) were skipped", "info")
    if log.wrong_total:
        yield Problem(name, "", f"'Out of bounds values: {log.wrong_total}': the test found wrong results; figures "
                      "stored but flagged", "warning")


def _test_problems(name: str, tests: list[_Test], hosts: int | None) -> Iterator[Problem]:
    if any(t.op is None for t in tests):
        yield Problem(name, "", "the collective is not named in the log (no '*_perf' command line): stored as "
                      "'unknown'", "warning")
    if len(tests) > 1:
        yield Problem(name, "", f"{len(tests)} tests in this log (" + ", ".join(t.op or "unknown" for t in tests)
                      + "): each stored under its own collective", "info")
    yield Problem(name, "", "the log does not say how the GPUs are connected (NVLink, PCIe, InfiniBand, RoCE ...)"
                  + (f" across its {hosts} nodes" if hosts and hosts > 1 else ""), "info")


def _row_measurements(make, collective: str, row: dict, conditions: dict, index: int) -> Iterator[Measurement]:
    """A table row's time, bus and algorithm bandwidth, out-of-place and in-place."""
    for prefix, placement in (("out", "out-of-place"), ("in", "in-place")):
        workload = {"collective": collective, "size_bytes": row["size_bytes"], "count": row["count"],
                    "dtype": row["dtype"], "redop": row["redop"], "placement": placement}
        if row["root"] is not None and row["root"] >= 0:
            workload["root"] = row["root"]
        t = row[prefix + "_time_us"]
        if t is not None and t > 0:
            yield make("collective_time_s", t * 1e-6, "s", dict(workload), conditions, index=index)
        for metric, key_ in (("busbw_gbs", "_busbw"), ("algbw_gbs", "_algbw")):
            value = row[prefix + key_]
            if value is not None and value >= 0:
                yield make(metric, value, "GB/s", dict(workload), conditions, index=index)


@opened
def iter_parse(src: Source, **_ignored) -> Iterator[Item]:
    name = src.name
    log = _Log().read(src)
    tests = log.tests
    # the devices and header are printed once per test; a test that printed none shares the first's
    first_devices = next((t.devices for t in tests if t.devices), {})
    header = next((t.header for t in tests if t.header), {})
    rows = [r for t in tests for r in t.rows]
    avg = next((t.avg for t in tests if t.avg is not None), None)
    devices = [(key[1], dev) for key, dev in first_devices.items()]
    if not rows and avg is None:
        yield Problem(name, "", "no nccl-tests result table (size, count, type, ... busbw) in this file", "error")
        return
    hosts = len({h for h, _d in devices}) or None
    yield from _log_problems(name, log)
    ranks = len(devices) or None
    count = ranks  # one "# Rank" line per GPU, whatever the GPUs per process (-g)
    match, hardware_text = yield from _hardware(name, devices, count)
    yield from _test_problems(name, tests, hosts)
    key = ("hw:" + hardware_text) if hardware_text else "sig:nccl-tests"
    # one fingerprint per run, so that identical figures of different runs are not taken for duplicates
    run_id = hashlib.sha256(repr([r for _n, r in rows] + [[t.avg for t in tests], hardware_text, count])
                            .encode()).hexdigest()[:16]

    def make(metric, value, unit, workload, conditions, statistic="mean", index=0):
        m = Measurement(format=FORMAT, metric=metric, value=value, unit=unit, source_file=name, record_index=index,
                        hardware_text=hardware_text, accelerator_id=match.accelerator_id, accelerator_count=match.count,
                        match_confidence=match.confidence, match_reason=match.reason, hardware_key=key,
                        statistic=statistic, workload=workload, conditions=dict(conditions))
        return finish(m)

    index = 0
    for test in tests:
        collective = test.op or "unknown"
        conditions = {"collective": collective, "nodes": hosts, "ranks": ranks, **(test.header or header),
                      "run": run_id}
        conditions = {k: v for k, v in conditions.items() if v is not None}
        for _number, row in test.rows:
            yield from _row_measurements(make, collective, row, conditions, index)
            index += 1
        if test.avg is not None:
            yield make("avg_busbw_gbs", test.avg, "GB/s", {"collective": collective}, conditions,
                       statistic="mean over sizes", index=index)
            index += 1
