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
        rows = tomllib.load(handle).get("server", [])
    for number, row in enumerate(rows, 1):
        check_server(row, f"{path.name}, server {row.get('id') or number}")
    return {row["id"]: row for row in rows}


_NUMBERS = ("max_batch", "max_batch_large_gpu", "chunk_tokens", "chunk_tokens_large_gpu", "large_gpu_gib",
            "graphs_max_batch")


def check_server(row: dict, where: str) -> None:
    """Refuse a server row whose fields the serving model would misread, naming the row and field."""
    if not isinstance(row.get("id"), str) or not row["id"]:
        raise ValueError(f"{where}: 'id' is missing")
    for key in _NUMBERS:
        value = row.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
            raise ValueError(f"{where}: '{key}' must be a whole number above 0, not {value!r}")
    share = row.get("memory_share")
    if share is not None and (isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1):
        raise ValueError(f"{where}: 'memory_share' must be above 0 and at most 1, not {share!r}")
    if row.get("memory_basis", "total") not in ("free", "total"):
        raise ValueError(f"{where}: 'memory_basis' must be \"free\" or \"total\", not {row['memory_basis']!r}")
    if row.get("kv_reserve", "used") not in ("used", "whole"):
        raise ValueError(f"{where}: 'kv_reserve' must be \"used\" or \"whole\", not {row['kv_reserve']!r}")
    for key in ("graphs", "block_formats"):
        if key in row and not isinstance(row[key], bool):
            raise ValueError(f"{where}: '{key}' must be true or false, not {row[key]!r}")


def server_ids(data_dir: Path | None = None) -> tuple[str, ...]:
    return tuple(servers(data_dir))


def limits(server_id: str, memory_gib: float | None, device_name: str = "",
           data_dir: Path | None = None) -> dict:
    """{'max_batch', 'chunk_tokens', 'memory_share', 'memory_basis', 'kv_reserve', 'graphs', 'graphs_max_batch',
    'block_formats'} of
    `server_id` on a device with
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
        "kv_reserve": row.get("kv_reserve", "used"),
        "graphs": row.get("graphs", True),
        "graphs_max_batch": row.get("graphs_max_batch"),
        "block_formats": bool(row.get("block_formats", False)),
    }
