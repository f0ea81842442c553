"""Benchmark (not a test): importing 100,000 llama-bench JSONL records.

    python tests/bench/bench_import.py [RECORDS] [--repeat N] [--no-tracemalloc]

Generates RECORDS (default 100,000) llama-bench records (the RTX 4080 rows of the llama.cpp README,
varied: prompt/generation tests, depths, speeds, times) in a temporary folder, then runs each step
in its own process, so that every peak-memory figure is that step's alone:

- json_parse: reading the file line by line with the standard library's json.loads - the floor
  the import's budget is set against (within 2x of it);
- orjson_parse: the same with orjson.loads, the parser gpudesk reads JSON Lines with - the floor
  of gpudesk's own reading;
- parse: gpudesk's llama-bench importer alone, as the import runs it (llama_bench.iter_batches;
  nothing kept);
- import_dry_run: import_files(..., dry_run=True) - parse, match, deduplicate, insert, roll back;
- import: import_files(...) - the same, committed (each setup once, the rows in bulk);
- reimport: the same file again (recognised by its SHA-256: nothing parsed).

Each step runs --repeat times (default 3), each in a fresh process and, for the imports, a fresh
database; the fastest run is printed, as other programs on the machine only ever make a run slower.
Printed per step: wall seconds, seconds relative to json_parse, the same for the process's CPU
seconds, the process's peak RSS (resource.getrusage) and, in a second pass under tracemalloc
(slower, so not timed), the peak of Python allocations. The budget: the import within 2x of
json_parse, and memory that does not grow with the file (the file is ~90 MB).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TEMPLATE = {
    "build_commit": "8cf427ff", "build_number": 5163, "cpu_info": "AMD Ryzen 7 7800X3D 8-Core Processor",
    "gpu_info": "NVIDIA GeForce RTX 4080", "backends": "CUDA",
    "model_filename": "/home/someone/models/Qwen2.5-7B-Instruct-Q4_K_M.gguf", "model_type": "qwen2 7B Q4_K - Medium",
    "model_size": 4677120000, "model_n_params": 7615616512, "n_batch": 2048, "n_ubatch": 512, "n_threads": 8,
    "cpu_mask": "0x0", "cpu_strict": False, "poll": 50, "type_k": "f16", "type_v": "f16", "n_gpu_layers": 99,
    "split_mode": "layer", "main_gpu": 0, "no_kv_offload": False, "flash_attn": False, "tensor_split": "0.00",
    "use_mmap": True, "embeddings": False, "n_prompt": 512, "n_gen": 0, "n_depth": 0,
    "test_time": "2025-04-24T11:58:50Z", "avg_ns": 72135640, "stddev_ns": 1453752, "avg_ts": 7100.002165,
    "stddev_ts": 140.341520, "samples_ns": [74601900, 71632900, 71745200, 71952700, 70745500],
    "samples_ts": [6863.1, 7147.55, 7136.37, 7115.79, 7237.21],
}
START = datetime(2025, 4, 24, 11, 58, 50)
STEPS = ("json_parse", "orjson_parse", "parse", "import_dry_run", "import", "reimport")


def write_records(path: Path, n: int) -> None:
    """n distinct llama-bench records, one per line (llama-bench -o jsonl)."""
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            rec = dict(TEMPLATE)
            if i % 2:
                rec.update(n_prompt=0, n_gen=128, avg_ts=118.881588 + (i % 1000) * 1e-3)
            else:
                rec["avg_ts"] = 7100.002165 + (i % 1000) * 1e-2
            rec["n_depth"] = (i // 2) % 8 * 512
            rec["test_time"] = (START + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
            handle.write(json.dumps(rec) + "\n")


def run_step(step: str, path: Path, trace: bool) -> dict:
    """One step in this process: {seconds, result, peak_rss_mib[, tracemalloc_peak_mib]}."""
    from gpudesk.core.benchmarks import llama_bench
    from gpudesk.core.benchmarks.store import import_files
    from gpudesk.core.catalogue import Catalogue

    catalogue = Catalogue.open(None, ROOT / "data")

    def parse_lines(loads):
        count = 0
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                loads(line)
                count += 1
        return count

    def json_parse():
        return parse_lines(json.loads)

    def orjson_parse():
        import orjson

        return parse_lines(orjson.loads)

    def parse():
        return sum(len(item.rows) for item in llama_bench.iter_batches(path) if hasattr(item, "rows"))

    def dry():
        return import_files(catalogue, [path], dry_run=True).files[0].stored

    def real():
        return import_files(catalogue, [path]).files[0].stored

    def again():
        return import_files(catalogue, [path]).files[0].status

    fn = {"json_parse": json_parse, "orjson_parse": orjson_parse, "parse": parse, "import_dry_run": dry, "import": real, "reimport": again}[step]
    if trace:
        tracemalloc.start()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start, cpu = time.perf_counter(), time.process_time()
    result = fn()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    out = {"seconds": seconds, "cpu_seconds": cpu, "result": result,
           "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
           "rss_before_mib": rss0 / 1024}
    if trace:
        out["tracemalloc_peak_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    catalogue.close()
    return out


def child(step: str, path: Path, home: str, trace: bool) -> dict:
    env = dict(os.environ, GPUDESK_HOME=home)
    cmd = [sys.executable, __file__, "--step", step, "--file", str(path)] + (["--trace"] if trace else [])
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    if "--step" in argv:
        step = argv[argv.index("--step") + 1]
        path = Path(argv[argv.index("--file") + 1])
        print(json.dumps(run_step(step, path, "--trace" in argv)))
        return 0
    repeat_at = argv.index("--repeat") + 1 if "--repeat" in argv else -1
    numbers = [a for i, a in enumerate(argv) if a.isdigit() and i != repeat_at]
    n = int(numbers[0]) if numbers else 100_000
    trace = "--no-tracemalloc" not in argv
    work = tempfile.mkdtemp(prefix="gpudesk-bench-import-")
    path = Path(work) / "llama-bench.jsonl"
    start = time.perf_counter()
    write_records(path, n)
    print(f"generated {n:,} llama-bench records: {path.stat().st_size / 2**20:.1f} MiB in "
          f"{time.perf_counter() - start:.1f} s")
    repeat = int(argv[repeat_at]) if repeat_at > 0 else 3
    runs: dict[str, list[dict]] = {step: [] for step in STEPS}
    for attempt in range(repeat):  # steps interleaved, so that a busy spell of the machine hits all alike
        home = str(Path(work) / f"home-{attempt}")
        os.makedirs(home)
        for step in STEPS:
            runs[step].append(child(step, path, home, False))
    rows = {step: min(found, key=lambda r: r["seconds"]) for step, found in runs.items()}
    traced = {}
    if trace:
        trace_home = str(Path(work) / "home-traced")
        os.makedirs(trace_home)
        traced = {step: child(step, path, trace_home, True) for step in STEPS if step != "reimport"}
    base, base_cpu = rows["json_parse"]["seconds"], rows["json_parse"]["cpu_seconds"]
    print(f"{'step':<16}{'seconds':>9}{'× json':>8}{'CPU s':>8}{'× json':>8}{'peak RSS MiB':>14}"
          f"{'tracemalloc peak MiB':>22}  result")
    for step in STEPS:
        row = rows[step]
        peak = f"{traced[step]['tracemalloc_peak_mib']:.1f}" if step in traced else "-"
        print(f"{step:<16}{row['seconds']:>9.2f}{row['seconds'] / base:>8.2f}{row['cpu_seconds']:>8.2f}"
              f"{row['cpu_seconds'] / base_cpu:>8.2f}{row['peak_rss_mib']:>14.0f}{peak:>22}  {row['result']}")
    print(f"fastest of {repeat} runs per step; import / orjson_parse: {rows['import']['seconds'] / rows['orjson_parse']['seconds']:.1f}x wall, "
          f"{rows['import']['cpu_seconds'] / rows['orjson_parse']['cpu_seconds']:.1f}x CPU")
    print(f"import_over_json_parse: {rows['import']['seconds'] / base:.2f} (budget 2.00)")
    print(f"records_per_s_import: {n / rows['import']['seconds']:,.0f}")
    print(f"import_{n}_records_s: {rows['import']['seconds']:.2f}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
