"""Rebuild data/kernels/gemm.csv, allreduce.csv, the attention tables and moe.csv from AIConfigurator's measured tables (maintainers only).

AIConfigurator (github.com/ai-dynamo/aiconfigurator, Apache-2.0) publishes per-GPU operator
timings as Parquet files under aic-core/src/aiconfigurator_core/systems/data/<gpu>/gemm/<framework>/
<version>/gemm_perf.parquet. This script reads the tables named in data/kernels/tables.toml from a
local clone and writes every row on a regular sub-grid of shapes (the same M, N and K values for
every table, chosen before looking at any timing) to data/kernels/gemm.csv, so the bundled file
stays small and reviewable. It needs pyarrow, which gpudesk itself does not:

    pip install pyarrow pandas
    python tests/kernels/extract_aiconfigurator.py /path/to/aiconfigurator
"""

from __future__ import annotations

import csv
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLES = ROOT / "data" / "kernels" / "tables.toml"
OUT = ROOT / "data" / "kernels" / "gemm.csv"
OUT_ALLREDUCE = ROOT / "data" / "kernels" / "allreduce.csv"
OUT_DECODE = ROOT / "data" / "kernels" / "decode_attention.csv"
# decode attention's sub-grid: batches, cached tokens (the table's `step`), and per-device head shapes
# (query heads, KV heads, head size) of Llama 3 8B and 70B sharded 1-8 ways and of a 64-wide-head model
DECODE_BATCH = (1, 4, 16, 64, 256, 1024)
DECODE_STEP = (127, 511, 2047, 8191, 32767)
DECODE_HEADS = ((64, 8, 128), (32, 4, 128), (16, 2, 128), (8, 1, 128), (32, 8, 128), (64, 8, 64))
OUT_CONTEXT = ROOT / "data" / "kernels" / "context_attention.csv"
# context (prefill) attention's sub-grid: batches and sequence lengths, the same head shapes, a 16-bit cache
CONTEXT_BATCH = (1, 4, 16)
CONTEXT_ISL = (128, 512, 1024, 2048, 4096, 8192, 16384)
OUT_MOE = ROOT / "data" / "kernels" / "moe.csv"
# MoE operators' sub-grid: tokens in a call, and layouts along one axis within 8 GPUs (tensor parallel
# splits each expert's width, expert parallel the experts); every expert shape each table times
MOE_TOKENS = (1, 4, 16, 64, 256, 1024, 4096, 16384)
MOE_LAYOUTS = ((1, 1), (2, 1), (4, 1), (8, 1), (1, 2), (1, 4), (1, 8))

# The sub-grid: powers of two from 1 to 32,768 rows plus one row past each of 128, 256 and 1,024
# (where tile quantisation shows), and widths and depths from 256 to 65,536.
M_GRID = (1, 2, 4, 8, 16, 32, 64, 128, 129, 256, 257, 512, 1024, 1025, 2048, 4096, 8192, 16384, 32768)
NK_GRID = (256, 512, 1024, 2048, 4096, 8192, 16384, 65536)
AICONFIGURATOR = "ed-aiconfigurator-perf-db"  # the source id of the tables this script reads


def _frames(spec: dict, kind: str, clone: str):
    """Each table of `kind` in tables.toml with its Parquet file read from the clone at its commit."""
    import io

    import pandas as pd

    for table in spec.get(kind, []):
        if table.get("source") != AICONFIGURATOR:  # a table copied from another published log (rccl-tests)
            continue
        blob = subprocess.run(["git", "-C", clone, "show", f"{table['commit']}:{table['path']}"],
                              check=True, capture_output=True).stdout
        yield table, pd.read_parquet(io.BytesIO(blob))


def main(clone: str) -> int:
    spec = tomllib.loads(TABLES.read_text())
    rows = []
    for table, df in _frames(spec, "table", clone):
        df = df[(df.kernel_source == table["kernel"]) & (df.gemm_dtype == table["dtype"])]
        df = df[df.m.isin(M_GRID) & df.n.isin(NK_GRID) & df.k.isin(NK_GRID)]
        for r in df.sort_values(["m", "n", "k"]).itertuples():
            rows.append((table["id"], int(r.m), int(r.n), int(r.k), f"{float(r.latency):.6g}"))
    with OUT.open("w", newline="") as handle:
        out = csv.writer(handle, lineterminator="\n")
        out.writerow(("table", "m", "n", "k", "latency_ms"))
        out.writerows(rows)
    print(f"{len(rows)} rows -> {OUT}")
    collectives = []
    for table, df in _frames(spec, "collective", clone):
        dtype = "nccl_dtype" if "nccl_dtype" in df.columns else "allreduce_dtype"
        df = df[(df.op_name == table["op"]) & df[dtype].isin(("half", "bfloat16"))]
        if "backend" in df.columns:  # vLLM's custom all-reduce as served: replayed in a CUDA graph
            df = df[df.backend == "vllm_graph"]
        for r in df.sort_values(["num_gpus", "message_size"]).itertuples():
            collectives.append((table["id"], int(r.num_gpus), int(r.message_size) * 2, f"{float(r.latency):.6g}"))
    with OUT_ALLREDUCE.open(newline="") as handle:  # the rows of tables copied from other logs stay as they are
        ours = {t["id"] for t in spec.get("collective", []) if t.get("source") == AICONFIGURATOR}
        kept = [tuple(r.values()) for r in csv.DictReader(handle) if r["table"] not in ours]
    with OUT_ALLREDUCE.open("w", newline="") as handle:
        out = csv.writer(handle, lineterminator="\n")
        out.writerow(("table", "gpus", "bytes", "latency_ms"))
        out.writerows(collectives + kept)
    print(f"{len(collectives)} rows -> {OUT_ALLREDUCE}")
    decode = []
    for table, df in _frames(spec, "attention", clone):
        df = df[(df.kernel_source == table["kernel"]) & df.batch_size.isin(DECODE_BATCH) & df.step.isin(DECODE_STEP)]
        if "window_size" in df.columns:
            df = df[df.window_size == 0]
        shapes = set(DECODE_HEADS)
        df = df[[(h, kv, d) in shapes for h, kv, d in zip(df.num_heads, df.num_key_value_heads, df.head_dim)]]
        for r in df.sort_values(["kv_cache_dtype", "num_heads", "num_key_value_heads", "head_dim", "batch_size",
                                 "step"]).itertuples():
            dtype = "fp8" if r.kv_cache_dtype == "fp8" else "bf16"
            decode.append((table["id"], dtype, int(r.batch_size), int(r.step) + 1, int(r.num_heads),
                           int(r.num_key_value_heads), int(r.head_dim), f"{float(r.latency):.6g}"))
    with OUT_DECODE.open("w", newline="") as handle:
        out = csv.writer(handle, lineterminator="\n")
        out.writerow(("table", "kv_dtype", "batch", "context", "heads", "kv_heads", "head_dim", "latency_ms"))
        out.writerows(decode)
    print(f"{len(decode)} rows -> {OUT_DECODE}")
    context = []
    for table, df in _frames(spec, "prefill", clone):
        df = df[(df.kernel_source == table["kernel"]) & df.batch_size.isin(CONTEXT_BATCH) & df.isl.isin(CONTEXT_ISL)
                & (df.kv_cache_dtype == "bfloat16")]
        if "window_size" in df.columns:
            df = df[df.window_size == 0]
        shapes = set(DECODE_HEADS)
        df = df[[(h, kv, d) in shapes for h, kv, d in zip(df.num_heads, df.num_key_value_heads, df.head_dim)]]
        for r in df.sort_values(["num_heads", "num_key_value_heads", "head_dim", "batch_size", "isl"]).itertuples():
            context.append((table["id"], int(r.batch_size), int(r.isl), int(r.num_heads), int(r.num_key_value_heads),
                            int(r.head_dim), f"{float(r.latency):.6g}"))
    with OUT_CONTEXT.open("w", newline="") as handle:
        out = csv.writer(handle, lineterminator="\n")
        out.writerow(("table", "batch", "seq", "heads", "kv_heads", "head_dim", "latency_ms"))
        out.writerows(context)
    print(f"{len(context)} rows -> {OUT_CONTEXT}")
    moe = []
    for table, df in _frames(spec, "moe", clone):
        df = df[(df.distribution == "balanced") & df.moe_dtype.isin(table["dtypes"]) & df.num_tokens.isin(MOE_TOKENS)
                & ~df.kernel_source.str.contains("nongated")]
        df = df[[(tp, ep) in MOE_LAYOUTS for tp, ep in zip(df.moe_tp_size, df.moe_ep_size)]]
        for r in df.sort_values(["moe_dtype", "hidden_size", "inter_size", "num_experts", "topk", "moe_tp_size",
                                 "moe_ep_size", "kernel_source", "num_tokens"]).itertuples():
            moe.append((table["id"], r.moe_dtype, int(r.num_tokens), int(r.hidden_size), int(r.inter_size),
                        int(r.topk), int(r.num_experts), int(r.moe_tp_size), int(r.moe_ep_size), f"{float(r.latency):.6g}"))
    with OUT_MOE.open("w", newline="") as handle:
        out = csv.writer(handle, lineterminator="\n")
        out.writerow(("table", "dtype", "tokens", "hidden", "inter", "topk", "experts", "tp", "ep", "latency_ms"))
        out.writerows(moe)
    print(f"{len(moe)} rows -> {OUT_MOE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
