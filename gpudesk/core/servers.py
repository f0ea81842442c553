"""Inference servers and the defaults they document (data/servers.toml), for the serving model:
which servers a scenario may name, and the limits a named server puts on a given device."""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

from gpudesk.core.paths import bundled_data_dir

DEFAULT_SERVER = "tuned"


@functools.lru_cache(maxsize=4)
def servers(data_dir: Path | None = None) -> dict[str, dict]:
    path = (data_dir or bundled_data_dir()) / "servers.toml"
    with path.open("rb") as handle:
        return {row["id"]: row for row in tomllib.load(handle).get("server", [])}


def server_ids(data_dir: Path | None = None) -> tuple[str, ...]:
    return tuple(servers(data_dir))


def limits(server_id: str, memory_gib: float | None, device_name: str = "",
           data_dir: Path | None = None) -> dict:
    """{'max_batch', 'chunk_tokens', 'memory_share', 'memory_basis', 'graphs', 'block_formats'} of `server_id` on a device with
    `memory_gib` of memory (None where the server sets no such limit)."""
    row = servers(data_dir)[server_id]
    large = bool(row.get("large_gpu_gib") and memory_gib and memory_gib >= row["large_gpu_gib"]
                 and "a100" not in device_name.lower())
    return {
        "max_batch": row.get("max_batch_large_gpu") if large and row.get("max_batch_large_gpu") else row.get("max_batch"),
        "chunk_tokens": row.get("chunk_tokens_large_gpu") if large and row.get("chunk_tokens_large_gpu")
        else row.get("chunk_tokens"),
        "memory_share": row.get("memory_share"),
        "memory_basis": row.get("memory_basis", "total"),
        "graphs": row.get("graphs", True),
        "block_formats": bool(row.get("block_formats", False)),
    }
