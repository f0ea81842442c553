"""Hardware names as tools write them -> catalogue id, count, confidence and reason."""

from __future__ import annotations

import pytest

from gpudesk.core.benchmarks.matching import bundled_ids, cpu_only, match_hardware, split_devices
from gpudesk.core.benchmarks.mlperf import read_system

from .test_benchmarks_importers import MLPERF_SYSTEM, TRAINING_SYSTEM


@pytest.mark.parametrize("text, acc, count, confidence", [
    ("NVIDIA GeForce RTX 4090, NVIDIA GeForce RTX 4090", "rtx-4090", 2, "exact"),
    ("AMD Radeon RX 7900 XTX", "radeon-rx-7900-xtx", 1, "exact"),
    ("Apple M5 Max", "apple-m5-max", 1, "exact"),
    ("NVIDIA H100 80GB HBM3", "h100-sxm5-80gb", 1, "likely"),
    ("NVIDIA H100 PCIe", "h100-pcie-80gb", 1, "exact"),
    ("NVIDIA H100 NVL", "h100-nvl-94gb", 1, "exact"),
    ("NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb", 1, "exact"),
    ("NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb", 1, "exact"),
    ("NVIDIA A100 80GB PCIe", "a100-pcie-80gb", 1, "exact"),
    ("NVIDIA A100-SXM4", "a100-sxm4-80gb", 1, "likely"),  # 40 or 80 GB?
    ("NVIDIA A100-PCIE-40GB", "a100-pcie-40gb", 1, "exact"),
    ("NVIDIA H200", "h200-sxm-141gb", 1, "likely"),
    ("NVIDIA L40S", "l40s", 1, "exact"),
    ("NVIDIA L4", "l4", 1, "exact"),
    ("Tesla V100-SXM2-32GB", "v100-sxm2-32gb", 1, "exact"),
    ("Tesla T4", "t4", 1, "exact"),
    ("NVIDIA GeForce RTX 4070 Ti", "rtx-4070-ti", 1, "exact"),
    ("NVIDIA GeForce RTX 4090 Laptop GPU", "rtx-4090-laptop", 1, "exact"),
    ("NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada", 1, "exact"),
    ("AMD Instinct MI300X-NPS1-SPX-192GB-750W", "mi300x", 1, "exact"),
    ("AMD Instinct MI325X", "mi325x", 1, "exact"),
    ("Radeon 8060S Graphics", "radeon-8060s", 1, "exact"),
    ("NVIDIA GB10", "gb10", 1, "exact"),
    ("AMD Radeon RX 7900 XTX, AMD Radeon(TM) Graphics", "radeon-rx-7900-xtx", 1, "likely"),  # plus an iGPU
])
def test_names_to_catalogue_ids(text, acc, count, confidence):
    m = match_hardware(text)
    assert (m.accelerator_id, m.count, m.confidence) == (acc, count, confidence), m.reason
    assert m.reason
    assert acc in bundled_ids()


@pytest.mark.parametrize("text, words", [
    ("NVIDIA A100", "which variant"),
    ("NVIDIA H100", "SXM5, PCIe or NVL"),
    ("Intel(R) Arc(TM) Pro B70 Graphics", "not a device gpudesk knows"),
    ("NVIDIA GeForce RTX 4080 SUPER", "not in the catalogue"),
    ("NVIDIA GeForce RTX 4090, NVIDIA GeForce RTX 3090", "mixed devices"),
    ("", "does not say"),
])
def test_ambiguous_or_unknown_names_ask(text, words):
    m = match_hardware(text)
    assert m.confidence == "ask" and m.accelerator_id is None
    assert words in m.reason


def test_candidates_name_the_variants():
    assert set(match_hardware("NVIDIA H100 80GB HBM3").candidates) == {"h100-sxm5-80gb", "h100-pcie-80gb",
                                                                        "h100-nvl-94gb"}
    assert set(match_hardware("NVIDIA A100").candidates) == {"a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-40gb",
                                                             "a100-pcie-80gb"}


def test_counts_from_the_file_win():
    assert match_hardware("NVIDIA GeForce RTX 4070 Ti", 4).count == 4  # trtllm world_size
    assert split_devices("CUDA0: NVIDIA A10 / CUDA1: NVIDIA A10") == ["NVIDIA A10", "NVIDIA A10"]


def test_a_catalogue_without_the_device_asks():
    m = match_hardware("NVIDIA L40S", ids={"h100-sxm5-80gb"})
    assert m.accelerator_id is None and m.confidence == "ask" and "not in your catalogue" in m.reason


def test_mlperf_system_descriptions():
    amd, _ = read_system(MLPERF_SYSTEM)
    m = match_hardware(amd["accelerator_model_name"], amd["accelerator_count"])
    assert (m.accelerator_id, m.count, m.confidence) == ("mi300x", 8, "exact")
    dell, _ = read_system(TRAINING_SYSTEM)
    m = match_hardware(dell["accelerator_model_name"], dell["accelerator_count"])
    assert (m.accelerator_id, m.count) == ("l40s", 4)


def test_cpu_only_runs_have_no_accelerator():
    m = cpu_only("Intel(R) Xeon(R) CPU E5-2690 v3 @ 2.60GHz")
    assert m.cpu_only and m.accelerator_id is None and m.count == 0 and "CPU-only" in m.reason
