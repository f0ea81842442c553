"""The bundled catalogue: it loads, every figure has a source and a date, the figures are sane,
and none of the seed documents' known errors reached data/."""

from __future__ import annotations

import re
import tomllib

import pytest

from gpudesk.core.catalogue.bundle import load_bundle
from gpudesk.core.catalogue.fields import KINDS

from .conftest import DATA


@pytest.fixture(scope="module")
def bundle():
    return load_bundle(DATA)


def by_id(bundle, kind):
    return bundle.index(kind)


def test_catalogue_has_a_version_and_release_date(bundle):
    assert re.match(r"^\d{4}\.\d+\.\d+$", bundle.version)
    assert re.match(r"^\d{4}-\d{2}-\d{2}$", bundle.released)


def test_counts_meet_the_floor(bundle):
    assert len(bundle.records["accelerators"]) >= 45
    assert len(bundle.records["systems"]) >= 8
    assert len(bundle.records["cloud"]) >= 30
    assert len(bundle.records["regions"]) >= 30
    providers = {c["provider"] for c in bundle.records["cloud"]}
    for provider in ("AWS", "Google Cloud", "Azure", "Lambda", "CoreWeave"):
        assert provider in providers, provider


SEED_ACCELERATORS = [
    "p100-pcie-16gb", "v100-sxm2-32gb", "rtx-2080-ti", "t4", "a100-pcie-40gb", "a100-pcie-80gb",
    "a100-sxm4-40gb", "a100-sxm4-80gb", "h100-pcie-80gb", "h100-sxm5-80gb", "h100-nvl-94gb",
    "h200-sxm-141gb", "b200-sxm-180gb", "gb200", "rtx-4090", "rtx-4090-laptop", "jetson-nano", "gb10",
    "mi300x", "tpu-v4", "tpu-v5e", "tpu-v5p", "trainium", "inferentia2",
    # what people buy today
    "rtx-3090", "rtx-5090", "rtx-6000-ada", "rtx-pro-6000-blackwell", "l4", "l40s", "a10",
    "jetson-orin-nano-8gb", "jetson-agx-orin-64gb", "mi250x", "mi325x", "gaudi-3", "apple-m3-ultra",
    "apple-m4-max",
]


@pytest.mark.parametrize("item", SEED_ACCELERATORS)
def test_named_accelerators_are_present(bundle, item):
    assert item in by_id(bundle, "accelerators")


def test_required_systems_regions_and_links_exist(bundle):
    systems = by_id(bundle, "systems")
    for item in ("dgx-h100", "dgx-b200", "dgx-spark", "hgx-h100-8gpu", "jetson-nano-devkit"):
        assert item in systems
    regions = by_id(bundle, "regions")
    assert "us-avg" in regions and "world-avg" in regions
    links = by_id(bundle, "interconnects")
    for item in ("nvlink3", "nvlink4", "nvlink5", "pcie4", "pcie5", "ib-hdr-200", "ib-ndr-400", "ib-xdr-800",
                 "eth-1g", "eth-10g", "eth-25g", "eth-100g", "eth-400g"):
        assert item in links


def test_every_figure_has_a_resolvable_source_and_a_date(bundle):
    sources = by_id(bundle, "sources")
    missing = []
    for kind, fields in KINDS.items():
        for record in bundle.records[kind]:
            for spec in fields:
                if not spec.figure or record.get(spec.name) is None:
                    continue
                src = record["field_sources"].get(spec.name) or record.get(spec.source_field or "source")
                when = record.get(spec.date_field or "date")
                if src not in sources or not when:
                    missing.append(f"{kind}:{record['id']}.{spec.name}")
    assert not missing, missing[:20]


def test_every_source_has_a_title_and_a_web_address(bundle):
    for src in bundle.records["sources"]:
        assert src["title"], src["id"]
        assert re.match(r"^https?://", src["url"] or ""), f"{src['id']}: {src['url']!r}"


def test_figures_are_positive_and_fp8_is_at_least_bf16(bundle):
    for acc in bundle.records["accelerators"]:
        for name in ("memory_gb", "mem_bandwidth_gbs", "tdp_w"):
            if acc.get(name) is not None:
                assert acc[name] > 0, (acc["id"], name)
        if acc.get("fp8_tflops") and acc.get("bf16_tflops"):
            assert acc["fp8_tflops"] >= acc["bf16_tflops"], acc["id"]
        if acc.get("fp16_tflops") and acc.get("fp32_tflops") and acc["kind"] == "gpu":
            assert acc["fp16_tflops"] >= acc["fp32_tflops"], acc["id"]
    for link in bundle.records["interconnects"]:
        if link.get("unidirectional_gbs") and link.get("bidirectional_gbs"):
            assert link["bidirectional_gbs"] == pytest.approx(2 * link["unidirectional_gbs"], rel=0.01), link["id"]


def test_dense_blackwell_figures_not_sparse(bundle):
    # seed 003 quotes B200 at 4.5 PFLOPS FP16 and 9 PFLOPS FP8: those are sparse; dense is half
    b200 = by_id(bundle, "accelerators")["b200-sxm-180gb"]
    assert b200["fp16_tflops"] < 4000 and b200["bf16_tflops"] < 4000
    assert b200["fp8_tflops"] < 8000


def test_none_of_the_seed_errors_reached_data(bundle):
    acc = by_id(bundle, "accelerators")
    # 001: A100 has 6,912 CUDA cores, not 7,680; the 4090 Laptop has 9,728 cores and 16 GB GDDR6
    for a100 in ("a100-pcie-40gb", "a100-pcie-80gb", "a100-sxm4-40gb", "a100-sxm4-80gb"):
        assert acc[a100]["cuda_cores"] == 6912
    laptop = acc["rtx-4090-laptop"]
    assert laptop["cuda_cores"] == 9728 and laptop["memory_gb"] == 16 and laptop["memory_type"] == "GDDR6"
    # 000: Jetson Nano is ~0.47 TFLOPS FP16, LPDDR4 at 25.6 GB/s shared; not 0.5 TFLOPS FP32
    nano = acc["jetson-nano"]
    assert nano.get("fp32_tflops") in (None, pytest.approx(0.236, rel=0.05))
    assert nano["fp16_tflops"] == pytest.approx(0.472, rel=0.01)
    assert nano["memory_type"] == "LPDDR4" and nano["mem_bandwidth_gbs"] == pytest.approx(25.6)
    assert nano["memory_shared"] is True
    # 003: H100 PCIe is HBM2e; the GeForce 4090's training FP16 is ~165, not ~330
    assert acc["h100-pcie-80gb"]["memory_type"] == "HBM2e"
    assert acc["rtx-4090"]["fp16_tflops"] == pytest.approx(165.2, rel=0.01)
    # 004: AWS Trn1 carries Trainium, not MI300X
    cloud = by_id(bundle, "cloud")
    trn1 = [c for c in cloud.values() if c["instance_type"].startswith("trn1")]
    assert trn1 and all(c["accelerator"] == "trainium" for c in trn1)
    # 003: GB200 NVL72 has 72 Blackwell GPUs and 36 Grace CPUs
    nvl72 = by_id(bundle, "systems")["dgx-gb200-nvl72"]
    assert nvl72["accelerator_count"] == 72 and "36" in (nvl72.get("cpu") or "36")


def test_data_files_parse_with_the_standard_library():
    for path in DATA.rglob("*.toml"):
        with path.open("rb") as handle:
            tomllib.load(handle)


def test_workload_presets_are_valid_scenario_workloads(bundle):
    from gpudesk.core.scenario import parse_scenario

    sources = by_id(bundle, "sources")
    ids = set()
    for preset in bundle.workloads:
        assert preset["id"] not in ids
        ids.add(preset["id"])
        assert preset["source"] in sources, preset["id"]
        doc = {"gpudesk_scenario": 1, "workload": preset["workload"], "cluster": [{"item": "h100-sxm5-80gb"}]}
        parse_scenario(doc, preset["id"])
    for name in ("nanochat-d20", "nanochat-d16", "gpt3-175b", "llama3-8b-train", "llama3-70b-train",
                 "llama3-405b-train", "llama3-70b-serve", "resnet50-imagenet"):
        assert name in ids


def test_a_blank_cell_says_why_from_the_data(catalogue):
    """Blank figures are told apart: one the entry's notes say was left out (not published), an FP8
    rate of an architecture that has none (not applicable), and a figure nobody found (unknown)."""
    from gpudesk.core.catalogue.blanks import NOT_APPLICABLE, NOT_PUBLISHED, UNKNOWN, why_blank

    laptop = catalogue.get("accelerators", "rtx-5090-laptop")
    left_out = why_blank(catalogue, "accelerators", laptop, "mem_bandwidth_gbs", "bandwidth")
    assert left_out.reason == NOT_PUBLISHED and "mem_bandwidth_gbs left out because the GDDR7" in left_out.text
    assert left_out.short == "—"
    assert why_blank(catalogue, "accelerators", laptop, "memory_gb") is None  # 24 GB: not blank
    xavier = catalogue.get("accelerators", "jetson-agx-xavier-32gb")
    assert why_blank(catalogue, "accelerators", xavier, "tdp_w").reason == NOT_PUBLISHED
    a10 = catalogue.get("accelerators", "a10")  # Ampere: no FP8 units in any catalogued Ampere device
    fp8 = why_blank(catalogue, "accelerators", a10, "fp8_tflops", "FP8")
    assert fp8.reason == NOT_APPLICABLE and fp8.short == "n/a" and "NVIDIA Ampere" in fp8.text
    unknown = why_blank(catalogue, "accelerators", dict(a10, pcie_gen=None), "pcie_gen", "PCIe gen")
    assert unknown.reason == UNKNOWN and unknown.text == "Unknown: no PCIe gen figure in the documents read."
