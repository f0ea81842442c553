"""The measured operator tables in data/kernels/ and the GEMM curves fitted to them.

`tables.toml` names each published table (source, commit, date, the device and precision it was
measured on); `gemm.csv` holds its rows; `curves.toml` holds the curve fitted to each, which the
engine uses for that device (core/estimate/kernels.py). `refit()` rebuilds every curve from the
rows (tests/test_kernel_curves.py checks that curves.toml is what the rows give), and
`python -m gpudesk.core.kernel_tables` writes curves.toml anew after a table changes.
"""

from __future__ import annotations

import csv
import functools
import statistics
import sys
import tomllib
from pathlib import Path

from gpudesk.core.estimate.kernel_fit import fit, fit_all_reduce, fit_context_attention, fit_decode_attention, fit_moe
from gpudesk.core.estimate.kernels import (
    MOE_FORMAT_PRECISION,
    AllReduceCurve,
    ContextAttentionCurve,
    DecodeAttentionCurve,
    GemmCurve,
    MoECurve,
    moe_terms,
)
from gpudesk.core.paths import bundled_data_dir

CURVE_FIELDS = ("efficiency", "bandwidth_share", "fixed_us", "k_half", "tile_m", "tile_n", "units", "prepass_bytes")


def kernels_dir(data_dir: Path | None = None) -> Path:
    return (data_dir or bundled_data_dir()) / "kernels"


def read_tables(data_dir: Path | None = None, kind: str = "table") -> list[dict]:
    """The [[table]] (GEMM) or [[collective]] (all-reduce) entries of tables.toml."""
    with (kernels_dir(data_dir) / "tables.toml").open("rb") as handle:
        return tomllib.load(handle).get(kind, [])


def read_all_reduce_rows(data_dir: Path | None = None) -> dict[tuple[str, int], list[tuple[int, float]]]:
    """All-reduce rows by (table id, GPU count): (bytes, seconds)."""
    out: dict[tuple[str, int], list] = {}
    with (kernels_dir(data_dir) / "allreduce.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            out.setdefault((row["table"], int(row["gpus"])), []).append(
                (int(row["bytes"]), float(row["latency_ms"]) * 1e-3))
    return out


def refit_all_reduce(data_dir: Path | None = None) -> list[dict]:
    """Every all-reduce table's line, fitted per GPU count."""
    tables = {t["id"]: t for t in read_tables(data_dir, "collective")}
    out = []
    for (table_id, gpus), rows in sorted(read_all_reduce_rows(data_dir).items()):
        table = tables[table_id]
        latency, bus, rms = fit_all_reduce(rows, gpus)
        out.append({"table": table_id, "device": table["device"], "kind": table["kind"], "fabric": table["fabric"],
                    "gpus": gpus,
                    "latency_us": latency, "bus_gbs": bus, "rms_log_error": rms, "rows": len(rows)})
    return out


def read_rows(data_dir: Path | None = None) -> dict[str, list[tuple[int, int, int, float]]]:
    """Rows by table id: (m, n, k, seconds)."""
    out: dict[str, list] = {}
    with (kernels_dir(data_dir) / "gemm.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            out.setdefault(row["table"], []).append(
                (int(row["m"]), int(row["n"]), int(row["k"]), float(row["latency_ms"]) * 1e-3))
    return out


def _accelerators(data_dir: Path) -> dict[str, dict]:
    out = {}
    for path in sorted((data_dir / "accelerators").glob("*.toml")):
        with path.open("rb") as handle:
            for row in tomllib.load(handle).get("accelerator", []):
                out[row["id"]] = row
    return out


def refit(data_dir: Path | None = None) -> list[dict]:
    """Every table's curve fitted from its rows, with the datasheet figures it rests on: the dense
    peak at the table's precision, the memory bandwidth, and the unit count (tensor cores / 4 where
    the catalogue gives tensor cores, else fitted)."""
    data_dir = data_dir or bundled_data_dir()
    devices = _accelerators(data_dir)
    rows = read_rows(data_dir)
    out = []
    for table in read_tables(data_dir):
        device = devices[table["device"]]
        peak = float(device[f"{table['precision']}_tflops"]) * 1e12
        bandwidth = float(device["mem_bandwidth_gbs"]) * 1e9
        units = int(device["tensor_cores"]) // 4 if device.get("tensor_cores") else None
        curve, rms = fit(rows[table["id"]], peak, bandwidth, table["precision"], units)
        out.append({"table": table["id"], "device": table["device"], "precision": table["precision"],
                    **{f: getattr(curve, f) for f in CURVE_FIELDS}, "units_fitted": units is None,
                    "rms_log_error": rms, "rows": len(rows[table["id"]])})
    return out


def read_decode_rows(data_dir: Path | None = None) -> dict[tuple[str, str], list[tuple]]:
    """Decode-attention rows by (table id, KV dtype): (batch, context, heads, kv heads, head dim, seconds)."""
    out: dict[tuple[str, str], list] = {}
    with (kernels_dir(data_dir) / "decode_attention.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            out.setdefault((row["table"], row["kv_dtype"]), []).append(
                (int(row["batch"]), int(row["context"]), int(row["heads"]), int(row["kv_heads"]),
                 int(row["head_dim"]), float(row["latency_ms"]) * 1e-3))
    return out


def refit_decode_attention(data_dir: Path | None = None) -> list[dict]:
    """Every decode-attention table's curve, per KV dtype, against its device's datasheet bandwidth and
    dense 16-bit peak."""
    data_dir = data_dir or bundled_data_dir()
    devices = _accelerators(data_dir)
    tables = {t["id"]: t for t in read_tables(data_dir, "attention")}
    out = []
    for (table_id, dtype), rows in sorted(read_decode_rows(data_dir).items()):
        device = devices[tables[table_id]["device"]]
        bandwidth = float(device["mem_bandwidth_gbs"]) * 1e9
        peak16 = float(device.get("bf16_tflops") or device["fp16_tflops"]) * 1e12
        curve, rms = fit_decode_attention(rows, dtype, bandwidth, peak16)
        out.append({"table": table_id, "device": tables[table_id]["device"], "kv_dtype": dtype,
                    "server": tables[table_id].get("server", "vllm"),
                    "fixed_us": curve.fixed_us, "per_sequence_us": curve.per_sequence_us,
                    "bandwidth_share": curve.bandwidth_share, "flops_share": curve.flops_share,
                    "rms_log_error": rms, "rows": len(rows)})
    return out


def read_context_rows(data_dir: Path | None = None) -> dict[str, list[tuple]]:
    """Context-attention rows by table id: (batch, seq, heads, head dim, seconds)."""
    out: dict[str, list] = {}
    with (kernels_dir(data_dir) / "context_attention.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            out.setdefault(row["table"], []).append((int(row["batch"]), int(row["seq"]), int(row["heads"]),
                                                     int(row["head_dim"]), float(row["latency_ms"]) * 1e-3))
    return out


def refit_context_attention(data_dir: Path | None = None) -> list[dict]:
    """Every context-attention table's curve, against its device's dense 16-bit peak."""
    data_dir = data_dir or bundled_data_dir()
    devices = _accelerators(data_dir)
    tables = {t["id"]: t for t in read_tables(data_dir, "prefill")}
    out = []
    for table_id, rows in sorted(read_context_rows(data_dir).items()):
        device = devices[tables[table_id]["device"]]
        peak16 = float(device.get("bf16_tflops") or device["fp16_tflops"]) * 1e12
        curve, rms = fit_context_attention(rows, peak16)
        out.append({"table": table_id, "device": tables[table_id]["device"], "efficiency": curve.efficiency,
                    "seq_half": curve.seq_half, "fixed_us": curve.fixed_us, "rms_log_error": rms, "rows": len(rows)})
    return out


def read_moe_rows(data_dir: Path | None = None) -> dict[tuple[str, str], list[tuple]]:
    """MoE rows by (table id, weight format): (tokens, hidden, inter, topk, experts, tp, ep, seconds)."""
    out: dict[tuple[str, str], list] = {}
    with (kernels_dir(data_dir) / "moe.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            out.setdefault((row["table"], row["dtype"]), []).append(
                tuple(int(row[k]) for k in ("tokens", "hidden", "inter", "topk", "experts", "tp", "ep"))
                + (float(row["latency_ms"]) * 1e-3,))
    return out


def refit_moe(data_dir: Path | None = None, gemm: list[dict] | None = None) -> list[dict]:
    """Every MoE table's curve, per weight format, on its device's fitted GEMM curve at that format's
    precision (`gemm`, refit's entries, where the GEMM curves are refitted in the same run; else
    curves.toml, itself checked against its tables), dense peak and datasheet bandwidth."""
    data_dir = data_dir or bundled_data_dir()
    devices = _accelerators(data_dir)
    if gemm is None:
        by_device = curves_by_device(data_dir)
    else:
        by_device = {}
        for row in gemm:
            by_device.setdefault(row["device"], {})[row["precision"]] = _gemm_curve(row)
    tables = {t["id"]: t for t in read_tables(data_dir, "moe")}
    out = []
    for (table_id, dtype), rows in sorted(read_moe_rows(data_dir).items()):
        table = tables[table_id]
        device = devices[table["device"]]
        precision = MOE_FORMAT_PRECISION[dtype]
        curve = by_device[table["device"]][precision]
        peak = float(device[f"{precision}_tflops"]) * 1e12
        bandwidth = float(device["mem_bandwidth_gbs"]) * 1e9
        terms = [moe_terms(dtype, *r[:7], curve, peak, bandwidth) + (r[7],) for r in rows]
        fitted, rms = fit_moe(terms, dtype, table["server"])
        out.append({"table": table_id, "device": table["device"], "dtype": dtype, "server": table["server"],
                    "grouped": fitted.grouped, "bandwidth_share": fitted.bandwidth_share, "row_bytes": fitted.row_bytes,
                    "fixed_us": fitted.fixed_us, "rms_log_error": rms, "rows": len(rows)})
    return out


def write_curves(curves: list[dict], data_dir: Path | None = None, all_reduce: list[dict] = (),
                 decode: list[dict] = (), context: list[dict] = (), moe: list[dict] = ()) -> Path:
    path = kernels_dir(data_dir) / "curves.toml"
    lines = ["# GEMM curves fitted to the tables in tables.toml (python -m gpudesk.core.kernel_tables writes this",
             "# file; tests/test_kernel_curves.py checks it against a fresh fit). Units: fixed_us in microseconds,",
             "# k_half in steps of K, prepass_bytes per M x K element; rms_log_error is the fit's root mean square",
             "# of ln(curve time / measured time) over the table's rows.", ""]
    for header, entries in (("[[curve]]", curves), ("[[allreduce]]", all_reduce), ("[[decode]]", decode),
                            ("[[context]]", context), ("[[moe]]", moe)):
        lines.extend(_entries(header, entries))
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines))
    tmp.replace(path)
    return path


def _entries(header: str, entries) -> list[str]:
    lines = []
    for c in entries:
        lines.append(header)
        for key, value in c.items():
            if isinstance(value, bool):
                lines.append(f"{key} = {'true' if value else 'false'}")
            elif isinstance(value, float):
                lines.append(f"{key} = {value:.6g}")
            elif isinstance(value, int):
                lines.append(f"{key} = {value}")
            else:
                lines.append(f'{key} = "{value}"')
        lines.append("")
    return lines


@functools.lru_cache(maxsize=4)
def _fitted(data_dir: Path | None = None) -> dict[str, list[dict]]:
    """curves.toml's entries by kind ("curve", "allreduce", "decode", "context"); empty when the file
    is missing. Read once per data folder."""
    path = kernels_dir(data_dir) / "curves.toml"
    if not path.is_file():
        return {}
    with path.open("rb") as handle:
        return tomllib.load(handle)


def _by_device(kind: str, make, data_dir: Path | None) -> dict[str, list]:
    out: dict[str, list] = {}
    for row in _fitted(data_dir).get(kind, []):
        out.setdefault(row["device"], []).append(make(row))
    return out


def _gemm_curve(row: dict, basis: str = "") -> GemmCurve:
    """A GemmCurve from a curves.toml [[curve]] entry (or refit's dict of one)."""
    return GemmCurve(**{f: row[f] for f in CURVE_FIELDS}, basis=basis, measured=True)


@functools.lru_cache(maxsize=4)
def curves_by_device(data_dir: Path | None = None) -> dict[str, dict[str, GemmCurve]]:
    """{device id: {precision: GemmCurve}} from curves.toml (empty when the file is missing)."""
    tables = {t["id"]: t for t in read_tables(data_dir)}

    def make(row):
        commit = str(tables.get(row["table"], {}).get("commit", ""))[:7]
        basis = (f"fitted to {row['rows']} measured products ({row['table']}, AIConfigurator at {commit}), rms "
                 f"log error {row['rms_log_error']:.2f}")
        return row["precision"], _gemm_curve(row, basis)
    return {device: dict(pairs) for device, pairs in _by_device("curve", make, data_dir).items()}


@functools.lru_cache(maxsize=4)
def all_reduce_by_device(data_dir: Path | None = None) -> dict[str, tuple[AllReduceCurve, ...]]:
    """{device id: (AllReduceCurve, ...)} from curves.toml's [[allreduce]] entries, each naming what
    was timed and whose table it is (tables.toml's `library` and `measured_by`, else NCCL or vLLM's
    custom all-reduce by kind, in AIConfigurator's tables)."""
    tables = {t["id"]: t for t in read_tables(data_dir, "collective")}

    def make(row):
        table = tables.get(row["table"], {})
        library = table.get("library") or ("vLLM's custom all-reduce" if row["kind"] == "custom" else "NCCL")
        return AllReduceCurve(row["gpus"], row["latency_us"], row["bus_gbs"], row["kind"], row["fabric"], library,
                              table.get("measured_by", "AIConfigurator"))
    return {device: tuple(c) for device, c in _by_device("allreduce", make, data_dir).items()}


@functools.lru_cache(maxsize=4)
def decode_by_device(data_dir: Path | None = None) -> dict[str, tuple[DecodeAttentionCurve, ...]]:
    """{device id: (DecodeAttentionCurve per KV dtype, ...)} from curves.toml's [[decode]] entries."""
    def make(row):
        return DecodeAttentionCurve(row["kv_dtype"], row["fixed_us"], row["per_sequence_us"], row["bandwidth_share"],
                                    row["flops_share"],
                                    basis=f"fitted to {row['rows']} measured decode-attention calls ({row['table']})",
                                    server=row.get("server", "vllm"))
    return {device: tuple(c) for device, c in _by_device("decode", make, data_dir).items()}


@functools.lru_cache(maxsize=4)
def context_by_device(data_dir: Path | None = None) -> dict[str, ContextAttentionCurve]:
    """{device id: ContextAttentionCurve} from curves.toml's [[context]] entries."""
    def make(row):
        return ContextAttentionCurve(row["efficiency"], row["seq_half"], row["fixed_us"],
                                     basis=f"fitted to {row['rows']} measured calls ({row['table']})")
    return {device: c[-1] for device, c in _by_device("context", make, data_dir).items()}


@functools.lru_cache(maxsize=4)
def moe_by_device(data_dir: Path | None = None) -> dict[str, tuple[MoECurve, ...]]:
    """{device id: (MoECurve per server and weight format, ...)} from curves.toml's [[moe]] entries."""
    def make(row):
        return MoECurve(row["dtype"], row["server"], row["grouped"], row["bandwidth_share"], row["row_bytes"],
                        row["fixed_us"], basis=f"fitted to {row['rows']} measured MoE calls ({row['table']}, "
                                             f"{row['dtype']}), rms log error {row['rms_log_error']:.2f}")
    return {device: tuple(c) for device, c in _by_device("moe", make, data_dir).items()}


@functools.lru_cache(maxsize=4)
def stream_by_device(data_dir: Path | None = None) -> dict[str, tuple[float, str]]:
    """{device id: (GB/s, basis)}: the median of the streaming rates measured on the device
    (stream.csv: a read or triad kernel over buffers larger than the caches)."""
    rows: dict[str, list[dict]] = {}
    path = kernels_dir(data_dir) / "stream.csv"
    if not path.is_file():
        return {}
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            rows.setdefault(row["device"], []).append(row)
    return {device: (statistics.median(float(r["gbs"]) for r in found), "; ".join(sorted({r["label"] for r in found})))
            for device, found in rows.items()}


def _link_rates(data_dir: Path) -> dict[str, float]:
    """{interconnect id: one-way GB/s} from interconnects.csv."""
    with (data_dir / "interconnects.csv").open(newline="") as handle:
        return {row["id"]: float(row["unidirectional_gbs"]) for row in csv.DictReader(handle) if row["unidirectional_gbs"]}


def pcie_host_rows(data_dir: Path | None = None) -> list[dict]:
    """pcie_hosts.csv's rows with each one's bus bandwidth (a row naming a table takes the line fitted
    to that table at its GPU count) and its share of the link's one-way rate."""
    data_dir = data_dir or bundled_data_dir()
    fitted = {(r["table"], r["gpus"]): r["bus_gbs"] for r in _fitted(data_dir).get("allreduce", [])}
    links = _link_rates(data_dir)
    out = []
    with (kernels_dir(data_dir) / "pcie_hosts.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            gpus = int(row["gpus"])
            bus = float(row["bus_gbs"]) if row["bus_gbs"] else fitted[(row["table"], gpus)]
            out.append({**row, "gpus": gpus, "bus_gbs": bus, "share": bus / links[row["link"]]})
    return out


@functools.lru_cache(maxsize=4)
def pcie_ring_share(data_dir: Path | None = None) -> tuple[float, str]:
    """(share, basis): the share of a PCIe link's one-way rate an all-reduce over more than two GPUs
    of one host reaches, the median over the measured hosts of each host's median. Past a pair the
    ring crosses the host's PCIe tree (switches, root ports, the link between sockets), so the figure
    is the host's, not the GPU's."""
    by_host: dict[str, list[float]] = {}
    for row in pcie_host_rows(data_dir):
        by_host.setdefault(row["host"], []).append(row["share"])
    hosts = sorted(statistics.median(v) for v in by_host.values())
    return statistics.median(hosts), (f"the median of {len(hosts)} measured PCIe hosts of 4 to 8 GPUs "
                            f"({hosts[0]:.0%} to {hosts[-1]:.0%} of the link)")


if __name__ == "__main__":
    fitted = refit()
    for c in fitted:
        print(f"{c['table']:28} efficiency {c['efficiency']:.3f}, rms {c['rms_log_error']:.3f}")
    reduced = refit_all_reduce()
    for c in reduced:
        print(f"{c['table']:32} {c['gpus']} GPUs: {c['latency_us']:.1f} us + bytes at {c['bus_gbs']:.0f} GB/s, "
              f"rms {c['rms_log_error']:.3f}")
    decoded = refit_decode_attention()
    for c in decoded:
        print(f"{c['table']:32} {c['kv_dtype']}: {c['fixed_us']:.1f} us + {c['per_sequence_us']:.3f} us a sequence, "
              f"KV at {c['bandwidth_share']:.0%} of bandwidth, math at {c['flops_share']:.1%}, rms {c['rms_log_error']:.3f}")
    contexts = refit_context_attention()
    for c in contexts:
        print(f"{c['table']:32} context: {c['efficiency']:.0%} of peak at long sequences, half at {c['seq_half']:.0f} "
              f"tokens, {c['fixed_us']:.1f} us a call, rms {c['rms_log_error']:.3f}")
    moes = refit_moe(gemm=fitted)  # on the GEMM curves just fitted, not the file this run replaces
    for c in moes:
        print(f"{c['table']:32} {c['dtype']}: grouped products at {c['grouped']:.2f} of the GEMM curve, weights at "
              f"{c['bandwidth_share']:.0%} of bandwidth, {c['row_bytes']:.1f} B a row element, {c['fixed_us']:.0f} us, "
              f"rms {c['rms_log_error']:.3f}")
    print(write_curves(fitted, all_reduce=reduced, decode=decoded, context=contexts, moe=moes))
    sys.exit(0)
