"""Catalogue rows into the estimation engine's plain inputs (the engine never sees the database)."""

from __future__ import annotations

from gpudesk.core.catalogue.fields import ACHIEVABLE_FIELDS, PRECISION_FIELDS
from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.types import CloudOffer, Device, Link
from gpudesk.core.kernel_tables import (
    all_reduce_by_device,
    context_by_device,
    curves_by_device,
    decode_by_device,
    moe_by_device,
    pcie_ring_share,
    stream_by_device,
)


def device_from_row(row: dict, overrides: dict | None = None) -> Device:
    values = dict(row)
    for key, value in (overrides or {}).items():
        values[key] = value
    peaks = {p: float(values[f]) for p, f in PRECISION_FIELDS.items() if values.get(f)}
    stream = stream_by_device().get(row["id"], (None, ""))
    return Device(
        id=row["id"],
        name=row.get("name") or row["id"],
        device_class=row.get("device_class") or "datacenter",
        kind=row.get("kind") or "gpu",
        vendor=row.get("vendor") or "",
        memory_gb=values.get("memory_gb"),
        memory_type=row.get("memory_type") or "",
        mem_bandwidth_gbs=values.get("mem_bandwidth_gbs"),
        memory_shared=bool(row.get("memory_shared")),
        tdp_w=values.get("tdp_w"),
        idle_w=values.get("idle_w"),
        peak_tflops=peaks,
        intra_link_gbs=values.get("intra_link_gbs"),
        architecture=row.get("architecture") or "",
        tensor_cores=row.get("tensor_cores"),
        achievable_tflops={p: float(values[f]) for p, f in ACHIEVABLE_FIELDS.items() if values.get(f)},
        form_factor=row.get("form_factor") or "",
        gemm_curves=curves_by_device().get(row["id"], {}),
        all_reduce_curves=all_reduce_by_device().get(row["id"], ()),
        decode_attention_curves=decode_by_device().get(row["id"], ()),
        moe_curves=moe_by_device().get(row["id"], ()),
        context_attention_curve=context_by_device().get(row["id"]),
        stream_gbs=stream[0],
        stream_basis=stream[1],
    )


def link_from_row(row: dict) -> Link:
    one_way = row.get("unidirectional_gbs")
    if not one_way and row.get("bidirectional_gbs"):
        one_way = row["bidirectional_gbs"] / 2.0
    family = row.get("family") or "other"
    ring = pcie_ring_share() if family == "pcie" else (None, "")
    return Link(
        id=row["id"],
        name=row.get("name") or row["id"],
        family=family,
        unidirectional_gbs=float(one_way or 0.0),
        latency_us=C.LINK_LATENCY_US.get(family, 20.0),
        ring_share=ring[0],
        ring_basis=ring[1],
    )


def cloud_from_row(row: dict) -> CloudOffer:
    return CloudOffer(
        id=row["id"],
        provider=row.get("provider") or "",
        instance_type=row.get("instance_type") or row["id"],
        usd_per_hour=float(row["usd_per_hour"]),
        devices_per_instance=int(row.get("accelerator_count") or 1),
        usd_per_hour_spot=row.get("usd_per_hour_spot"),
        usd_per_hour_reserved=row.get("usd_per_hour_reserved"),
        region=row.get("region") or "",
    )
