"""Hardware names as tools write them -> catalogue id, count, confidence and reason."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpudesk.core.benchmarks.matching import (
    alias_table,
    bundled_ids,
    cpu_only,
    match_hardware,
    match_name,
    normalise,
    split_devices,
)
from gpudesk.core.benchmarks.mlperf import read_system

from .conftest import DATA
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
    ("NVIDIA H100", "which variant - PCIe, SXM5 or NVL"),  # the variants in catalogue order
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



# ----------------------------------------------------------------------------------- aliases as data
# Every hardware name written in the real result files of tests/data/bench and ../shared/fixtures/bench
# (llama-bench gpu_info, MLPerf accelerator_model_name in systems JSON and :::SYSJSON lines,
# trtllm-bench machine name, nccl-tests device lines), with what it must match.
SEEN_IN_FILES = {
    "NVIDIA GeForce RTX 4080": ("rtx-4080", "exact"),
    "Apple M5 Max": ("apple-m5-max", "exact"),
    "NVIDIA GeForce RTX 4070 Ti": ("rtx-4070-ti", "exact"),
    "NVIDIA H100 80GB HBM3": ("h100-sxm5-80gb", "likely"),  # nvidia-smi's name for the SXM5 board
    "AMD Instinct MI300X-NPS1-SPX-192GB-750W": ("mi300x", "exact"),
    "NVIDIA L40S": ("l40s", "exact"),
    "NVIDIA H100-SXM5-80GB": ("h100-sxm5-80gb", "exact"),
    "AMD Instinct MI355X 288GB HBM3e": ("mi355x", "exact"),
    "NVIDIA GB300": ("gb300", "exact"),
    "NVIDIA Vera Rubin": (None, "ask"),  # not in the catalogue
    "N/A": (None, "ask"),  # MLPerf's CPU-only systems: mlperf.py stores them as CPU runs
}

BENCH_DIRS = [Path(__file__).parent / "data" / "bench", Path(__file__).parents[2] / "shared" / "fixtures" / "bench"]
_DEVICE_LINE = re.compile(r"\bdevice\s+\d+\s+\[[^\]]*\]\s+(.+?)\s*$")


def _names_in(value, parent: str = ""):
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str) and (key in ("gpu_info", "accelerator_model_name")
                                          or (parent == "machine" and key == "name")):
                yield item
            else:
                yield from _names_in(item, key)
    elif isinstance(value, list):
        for item in value:
            yield from _names_in(item, parent)


def hardware_names_in_files() -> dict[str, str]:
    """Each device name found in the real benchmark files -> the first file it was seen in."""
    found: dict[str, str] = {}
    for folder in BENCH_DIRS:
        for path in sorted(folder.rglob("*")) if folder.is_dir() else ():
            if not path.is_file() or path.suffix not in (".json", ".jsonl", ".txt"):
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            values = []
            try:
                values.append(json.loads(text))
            except ValueError:
                for line in text.splitlines():
                    line = line.strip()
                    if line.startswith(":::SYSJSON"):
                        line = line[len(":::SYSJSON"):].strip()
                    if line.startswith("{"):
                        try:
                            values.append(json.loads(line))
                        except ValueError:
                            pass
                    m = _DEVICE_LINE.search(line)
                    if m:
                        found.setdefault(m.group(1), path.name)
            for value in values:
                for name in _names_in(value):
                    for one in split_devices(name):
                        found.setdefault(one, path.name)
    return found


def test_every_name_in_the_real_files_is_expected_and_matches():
    found = hardware_names_in_files()
    assert {"NVIDIA H100 80GB HBM3", "AMD Instinct MI300X-NPS1-SPX-192GB-750W", "Apple M5 Max"} <= set(found)
    unexpected = sorted(set(found) - set(SEEN_IN_FILES))
    assert not unexpected, f"names in the benchmark files without an expectation here: {unexpected}"
    for name, (acc, confidence) in SEEN_IN_FILES.items():
        got = match_name(name)
        assert (got[0], got[1]) == (acc, confidence), (name, found.get(name), got)


# accelerator_model_name of MLPerf systems as submitters write them (mlcommons/inference_results_v4.1,
# v5.1 and training_results_v4.0, v5.1: systems/*.json), and names other tools print.
@pytest.mark.parametrize("name, acc, confidence", [
    ("NVIDIA A100-SXM-80GB", "a100-sxm4-80gb", "exact"),
    ("NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb", "exact"),
    ("NVIDIA H100-SXM-80GB", "h100-sxm5-80gb", "exact"),
    ("NVIDIA H100-PCIe-80GB", "h100-pcie-80gb", "exact"),
    ("NVIDIA H100-NVL-94GB", "h100-nvl-94gb", "exact"),
    ("NVIDIA H200-SXM-141GB", "h200-sxm-141gb", "exact"),
    ("NVIDIA H200-SXM-141GB-CTS", "h200-sxm-141gb", "exact"),
    ("NVIDIA H200-SXM5-141GB", "h200-sxm-141gb", "exact"),
    ("Virtualized NVIDIA H200-SXM-141GB", "h200-sxm-141gb", "exact"),
    ("NVIDIA H200-NVL-141GB", "h200-nvl-141gb", "exact"),
    ("NVIDIA H200 NVL 141GB", "h200-nvl-141gb", "exact"),
    ("NVIDIA GH200 Grace Hopper Superchip 96GB", "gh200-96gb", "exact"),
    ("NVIDIA GH200-GraceHopper-Superchip", "gh200-96gb", "likely"),
    ("NVIDIA B200-SXM-180GB", "b200-sxm-180gb", "exact"),
    ("NVIDIA Blackwell GPU (B200-SXM-180GB)", "b200-sxm-180gb", "exact"),
    ("NVIDIA GB200", "gb200", "exact"),
    ("NVIDIA Blackwell GPU (GB200)", "gb200", "exact"),
    ("NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)", "b300-sxm", "exact"),
    ("NVIDIA Blackwell Ultra GPU (GB300)", "gb300", "exact"),
    ("NVIDIA L4-PCIe-24GB", "l4", "exact"),
    ("NVIDIA Jetson AGX Orin 64G", "jetson-agx-orin-64gb", "exact"),
    ("NVIDIA Jetson AGX Thor 128G", "jetson-agx-thor", "exact"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000-blackwell", "likely"),
    ("NVIDIA RTX Pro 6000 SE PCIe 96GB", "rtx-pro-6000-blackwell", "likely"),
    ("Tesla T4", "t4", "exact"),
    ("AMD MI300X-NPS1-SPX-192GB-750W", "mi300x", "exact"),
    ("AMD Instinct MI300X 192GB HBM3", "mi300x", "exact"),
    ("AMD Instinct MI325X 256GB HBM3E DLC", "mi325x", "exact"),
    ("AMD Instinct MI350X", "mi350x", "exact"),
    ("AMD Instinct MI355X", "mi355x", "exact"),
    ("AMD Radeon RX 7900 XTX", "radeon-rx-7900-xtx", "exact"),
    ("Intel(R) Gaudi(R) 2 AI Accelerator", "gaudi-2", "exact"),
    ("TPU v5e", "tpu-v5e", "exact"),
    ("TPU-v5p", "tpu-v5p", "exact"),
    ("TPU v6", "tpu-v6e", "likely"),  # v4.1's Trillium preview
    # other tools
    ("NVIDIA GeForce RTX 4090", "rtx-4090", "exact"),
    ("NVIDIA GeForce RTX4090", "rtx-4090", "exact"),
    ("Apple M2 Ultra", "apple-m2-ultra", "exact"),
    ("gfx1151", "radeon-8060s", "likely"),  # LLVM target of Strix Halo (rccl-tests PR 2075)
    ("AMD Instinct MI 300X", "mi300x", "exact"),
    ("Intel Gaudi 3 PCIe", "gaudi-3-pcie", "exact"),
    ("Intel Gaudi 3", "gaudi-3", "likely"),
    ("NVIDIA_L40S", "l40s", "exact"),
])
def test_submitters_names(name, acc, confidence):
    got = match_name(name)
    assert (got[0], got[1]) == (acc, confidence), got


@pytest.mark.parametrize("name, acc, words", [
    # the name says a size the catalogue's entry does not have: another product
    ("NVIDIA GH200 Grace Hopper Superchip 144GB", "gh200-96gb", "the catalogue does not have"),
    ("[MAXSUN] MS-Intel Arc Pro B60 Dual 48G Turbo", "arc-pro-b60", "the name says 48 GB; arc-pro-b60 has 24 GB"),
    # one LLVM target, several chips
    ("gfx942", "mi300x", "which one"),
    ("AMD Instinct MI300X 192GB HBM3 (x32), AMD Instinct MI325X 256GB HBM3e (x16)", "mi300x", "mixed devices"),
    ("NVIDIA RTX A5000 GPU", None, "not a device gpudesk knows"),
    ("Intel(R) Arc(TM) 140T GPU", None, "not a device gpudesk knows"),
    ("UntetherAI speedAI240 Preview", None, "not a device gpudesk knows"),
    ("Google TPU", "tpu-v5e", "which variant"),
    ("NVIDIA GeForce RTX 4070 Ti SUPER", "rtx-4070-ti", "not in the catalogue"),
])
def test_names_that_must_ask(name, acc, words):
    m = match_hardware(name)
    assert m.accelerator_id is None and m.confidence == "ask", m
    assert words in m.reason
    if acc:
        assert acc in m.candidates


def test_normalising_names():
    a = normalise("NVIDIA A100-SXM4-80GB")
    assert (a.tokens, a.memories, a.forms) == (("a100", "sxm"), (80.0,), ("sxm4",))
    b = normalise("Intel(R) Arc(TM) Pro B60 Graphics")
    assert b.tokens == ("arc", "pro", "b60") and not b.memories
    assert normalise("RTX PRO 6000 Blackwell Max-Q").tokens[-1] == "maxq"
    assert normalise("AMD Instinct MI 300X").tokens == normalise("MI300X").tokens == ("mi300x",)
    assert normalise("NVIDIA Jetson AGX Orin 64G").memories == (64.0,)


def test_aliases_are_data_every_entry_matches_its_own_name_and_no_name_is_shared():
    table = alias_table()
    assert table.problems == ()
    assert set(table.entries) == bundled_ids() and len(table.entries) >= 100
    for entry in table.entries.values():
        assert any(a.entry == entry.id for a in table.aliases), f"{entry.id} has no aliases in data/"
        got = match_name(entry.name)
        assert got[0] == entry.id and got[1] in ("exact", "likely"), (entry.name, got)
    exact = {}
    for alias in table.aliases:
        if not alias.likely:
            key = (alias.name.words, alias.name.memories)
            assert exact.setdefault(key, alias.entry) == alias.entry, f"'{alias.text}' names two entries"


def test_an_entry_with_a_bad_alias_list_is_refused_by_the_catalogue_loader(tmp_path):
    import shutil

    from gpudesk.core.catalogue.bundle import BundleError, load_bundle

    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    path = data / "accelerators" / "nvidia-datacenter.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('aliases = ["L40S"]', 'aliases = "L40S"', 1), encoding="utf-8")
    with pytest.raises(BundleError) as err:
        load_bundle(data)
    assert "aliases must be a list of names" in str(err.value) and "l40s" in str(err.value)


@pytest.fixture
def own_accelerator_files(tmp_path, monkeypatch):
    """A copy of data/accelerators as the bundled data, and alias_table() read afresh (and again
    after the test, for the tests that follow)."""
    import shutil

    from gpudesk.core import paths

    data = tmp_path / "data"
    shutil.copytree(DATA / "accelerators", data / "accelerators")
    monkeypatch.setattr(paths, "bundled_data_dir", lambda: data)
    alias_table.cache_clear()
    yield data / "accelerators"
    alias_table.cache_clear()


def _parses(monkeypatch) -> list[str]:
    """The TOML texts parsed from now on."""
    import tomllib

    parsed: list[str] = []
    real = tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda text: parsed.append(text) or real(text))
    return parsed


def test_names_read_from_the_data_are_kept_and_read_again_only_when_a_file_changes(own_accelerator_files,
                                                                                  gpudesk_home, monkeypatch):
    from gpudesk.core.benchmarks.matching import ALIAS_CACHE

    first = alias_table()
    assert (gpudesk_home / "cache" / ALIAS_CACHE).is_file()
    parsed = _parses(monkeypatch)
    alias_table.cache_clear()
    assert alias_table() == first and parsed == []  # the next process: no TOML parsed
    path = own_accelerator_files / "nvidia-datacenter.toml"
    path.write_text(path.read_text(encoding="utf-8").replace('aliases = ["L40S"]', 'aliases = ["L40S", "Ada DC 48"]',
                                                             1), encoding="utf-8")
    alias_table.cache_clear()
    changed = alias_table()
    assert len(parsed) == len(list(own_accelerator_files.glob("*.toml")))
    assert [(a.entry, a.likely) for a in changed.aliases if a.text == "Ada DC 48"] == [("l40s", False)]
    assert len(changed.aliases) == len(first.aliases) + 1 and changed.entries == first.entries
    assert match_name("NVIDIA Ada DC 48")[:2] == ("l40s", "exact")


@pytest.mark.parametrize("damage", ["{not json", '{"signature": 1}', "[]", "entries", "aliases", "problems"])
def test_a_damaged_cache_of_names_is_read_past_and_written_anew(own_accelerator_files, gpudesk_home, monkeypatch,
                                                                damage):
    from gpudesk.core.benchmarks.matching import ALIAS_CACHE

    first = alias_table()
    cache = gpudesk_home / "cache" / ALIAS_CACHE
    kept = json.loads(cache.read_text(encoding="utf-8"))
    if damage in kept:  # one row of the wrong shape
        kept[damage] = [7] if damage == "problems" else [kept[damage][0][:-1]] + kept[damage][1:]
        cache.write_text(json.dumps(kept), encoding="utf-8")
    else:
        cache.write_text(damage, encoding="utf-8")
    parsed = _parses(monkeypatch)
    alias_table.cache_clear()
    assert alias_table() == first and parsed
    assert json.loads(cache.read_text(encoding="utf-8"))["signature"] == kept["signature"]


def test_a_problem_in_the_data_is_kept_with_the_names(own_accelerator_files, monkeypatch):
    path = own_accelerator_files / "nvidia-datacenter.toml"
    path.write_text(path.read_text(encoding="utf-8").replace('aliases = ["L40S"]', 'aliases = ["L40S", "NVIDIA"]', 1),
                    encoding="utf-8")
    problem = "nvidia-datacenter.toml: l40s: aliases has 'NVIDIA', which names nothing"
    assert alias_table().problems == (problem,)
    parsed = _parses(monkeypatch)
    alias_table.cache_clear()
    assert alias_table().problems == (problem,) and parsed == []


def test_names_are_read_where_no_cache_can_be_written(own_accelerator_files, gpudesk_home):
    (gpudesk_home / "cache").write_text("a file where the folder would be", encoding="utf-8")
    table = alias_table()
    assert table.problems == () and "l40s" in table.entries and (gpudesk_home / "cache").is_file()


def test_names_are_read_where_no_data_folder_can_be_made(own_accelerator_files, monkeypatch):
    from gpudesk.core import paths

    def refused():
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(paths, "data_dir", refused)
    table = alias_table()
    assert table.problems == () and "l40s" in table.entries
