"""Two measured host facts the engine takes from data/kernels/ rather than from a family's guess:
- the streaming bandwidth a device reaches (stream.csv: a read or triad kernel past the caches),
  which replaces its family's share of the datasheet bandwidth wherever memory is streamed;
- the rate an all-reduce over more than two GPUs of one PCIe host reaches (pcie_hosts.csv), the
  median of the measured hosts, which replaces one host's table past a pair."""

from __future__ import annotations

import csv
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from gpudesk.core.catalogue.convert import link_from_row
from gpudesk.core.estimate import Device, NodeGroup
from gpudesk.core.estimate.comm import all_reduce, place
from gpudesk.core.estimate.kernels import AllReduceCurve
from gpudesk.core.estimate.profiles import bandwidth_share, profile_of
from gpudesk.core.estimate.serving import engine_rates, tp_all_reduce
from gpudesk.core.estimate.topology import topology_of
from gpudesk.core.estimate.types import Link
from gpudesk.core.kernel_tables import kernels_dir, pcie_host_rows, pcie_ring_share, stream_by_device

DATA = Path(__file__).resolve().parents[1] / "data"
GB = 1e9


def _sources() -> set[str]:
    ids = set()
    for path in (DATA / "sources").glob("*.toml"):
        with path.open("rb") as handle:
            ids.update(s["id"] for s in tomllib.load(handle).get("source", []))
    return ids


def _accelerators() -> dict[str, dict]:
    out = {}
    for path in (DATA / "accelerators").glob("*.toml"):
        with path.open("rb") as handle:
            out.update({a["id"]: a for a in tomllib.load(handle).get("accelerator", [])})
    return out


def _rows(name: str) -> list[dict]:
    with (kernels_dir(DATA) / name).open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_every_stream_row_names_a_catalogue_device_a_source_and_a_rate_below_its_datasheet():
    devices, sources = _accelerators(), _sources()
    rows = _rows("stream.csv")
    assert len(rows) >= 6
    for row in rows:
        assert row["device"] in devices, row
        assert row["source"] in sources, row
        assert row["test"] in ("read", "triad"), row
        assert row["label"] and row["test"] in row["label"] or "BabelStream" in row["label"], row
        assert 0.5 * devices[row["device"]]["mem_bandwidth_gbs"] < float(row["gbs"]) < devices[row["device"]]["mem_bandwidth_gbs"]


def test_a_device_measured_twice_takes_the_middle_of_its_rates():
    by_device = stream_by_device.__wrapped__(DATA)
    assert by_device["jetson-agx-orin-64gb"][0] == pytest.approx((154.4 + 152.8) / 2)
    assert by_device["jetson-agx-thor"][0] == pytest.approx(259.7)
    assert by_device["jetson-agx-thor"][1] == "a 4 GB read kernel (infinigence/ApxInf roofline)"
    # two measurements of one device: both named
    assert by_device["jetson-agx-orin-64gb"][1] == ("a 2 GB read kernel (infinigence/ApxInf roofline); "
                                                   "a 4 GB read kernel (infinigence/ApxInf roofline)")
    assert "rtx-4090" not in by_device


def test_a_measured_stream_replaces_the_family_share_and_names_itself():
    thor = Device("thor", "Jetson AGX Thor", vendor="NVIDIA", device_class="edge", architecture="Blackwell",
                  mem_bandwidth_gbs=273.0, peak_tflops={"bf16": 100.0})
    profile = profile_of(thor)
    assert bandwidth_share(thor, profile) == (profile.bandwidth, profile.label)
    measured = replace(thor, stream_gbs=259.7, stream_basis="read kernel (ed-apxinf-thor-roofline)")
    share, basis = bandwidth_share(measured, profile)
    assert share == pytest.approx(259.7 / 273.0)
    assert "259.7" not in basis and "260 of 273 GB/s" in basis and "ed-apxinf-thor-roofline" in basis
    # the cap a streaming kernel never passes holds for a measured figure too
    assert bandwidth_share(replace(thor, stream_gbs=273.0), profile)[0] == 0.97
    # decoding streams at it: the likely case reads at exactly the measured rate
    assert engine_rates(measured, "bf16", 1, 1.0).bandwidth == pytest.approx(259.7e9)
    assert engine_rates(thor, "bf16", 1, 1.0).bandwidth == pytest.approx(273e9 * profile.bandwidth)


def test_every_pcie_host_row_is_sourced_and_a_table_row_takes_the_fitted_line():
    sources = _sources()
    rows = pcie_host_rows(DATA)
    assert len({r["host"] for r in rows}) >= 5
    with (kernels_dir(DATA) / "curves.toml").open("rb") as handle:
        fitted = {(c["table"], c["gpus"]): c["bus_gbs"] for c in tomllib.load(handle)["allreduce"]}
    for row in rows:
        assert row["source"] in sources and row["link"] in ("pcie4", "pcie5") and row["gpus"] > 2, row
        if row["table"]:
            assert row["bus_gbs"] == fitted[(row["table"], row["gpus"])]
        link = 32.0 if row["link"] == "pcie4" else 64.0
        assert row["share"] == pytest.approx(row["bus_gbs"] / link)


def test_the_ring_share_is_the_median_of_each_hosts_median():
    by_host: dict[str, list[float]] = {}
    for row in pcie_host_rows(DATA):
        by_host.setdefault(row["host"], []).append(row["share"])

    def median(v):
        v = sorted(v)
        return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2

    share, basis = pcie_ring_share.__wrapped__(DATA)  # not the cached figure: the rule itself
    assert share == pytest.approx(median([median(v) for v in by_host.values()]))
    assert 0.3 < share < 0.7  # between the slowest host (1.4 GB/s on PCIe 4) and the best-tuned switches
    assert f"{len(by_host)} measured PCIe hosts" in basis
    # only PCIe links carry it
    assert link_from_row({"id": "pcie4", "family": "pcie", "unidirectional_gbs": 32}).ring_share == share
    assert link_from_row({"id": "nvlink4", "family": "nvlink", "unidirectional_gbs": 450}).ring_share is None


PCIE4 = Link("pcie4", "PCI Express 4.0 x16", "pcie", 32.0, 10.0, ring_share=0.5, ring_basis="measured hosts")
CURVES = (AllReduceCurve(2, 7.0, 18.0, "nccl", "pcie"), AllReduceCurve(8, 23.0, 1.45, "nccl", "pcie"),
          AllReduceCurve(8, 10.0, 300.0, "nccl", "nvlink"))
CARD = Device("card", "Card", vendor="NVIDIA", mem_bandwidth_gbs=864.0, peak_tflops={"bf16": 362.0},
              intra_link_gbs=64.0, all_reduce_curves=CURVES)


def test_past_a_pair_a_pcie_host_measured_elsewhere_gives_way_to_the_hosts_median():
    topo = topology_of((NodeGroup(CARD, per_node=8, intra=PCIE4),))
    assert topo.ring_gbs == pytest.approx(32.0 * 0.5) and topo.ring_basis == "measured hosts"
    by_size = {c.gpus: c for c in topo.all_reduce_curves}
    assert set(by_size) == {2, 8}  # the NVLink table says nothing of PCIe
    assert by_size[2].bus_gbs == 18.0  # a pair keeps the device's own table
    assert by_size[8].bus_gbs == pytest.approx(16.0) and by_size[8].latency_us == 23.0
    nbytes = 12.7e6
    assert tp_all_reduce(topo, 8, nbytes) == pytest.approx(23e-6 + 2 * 7 / 8 * nbytes / (16.0 * GB))
    # a link without a measured host share keeps the table as it is
    plain = topology_of((NodeGroup(CARD, per_node=8, intra=replace(PCIE4, ring_share=None)),))
    assert {c.gpus: c.bus_gbs for c in plain.all_reduce_curves}[8] == 1.45 and plain.ring_gbs == plain.intra_gbs


def test_without_tables_groups_past_a_pair_run_at_the_ring_rate_and_pairs_at_the_link():
    bare = replace(CARD, all_reduce_curves=())
    topo = topology_of((NodeGroup(bare, per_node=8, intra=PCIE4),))
    assert topo.ring_rate_gbs(2) == topo.intra_gbs and topo.ring_rate_gbs(4) == pytest.approx(16.0)
    nbytes = 1e8
    pair = tp_all_reduce(topo, 2, nbytes)
    assert pair == pytest.approx(topo.intra_latency_s * 2 + nbytes / (topo.intra_gbs * GB))
    four = tp_all_reduce(topo, 4, nbytes)
    assert four == pytest.approx(topo.intra_latency_s * 4 + 2 * 3 / 4 * nbytes / (16.0 * GB))
    # training's collectives inside the domain take the same rate
    assert all_reduce(nbytes, place(4, 1, topo), topo) == pytest.approx(2 * 3 / 4 * nbytes / (16.0 * GB)
                                                                      + 2 * 3 * topo.intra_latency_s)


def _host_folder(tmp_path: Path, rows: list[str]) -> Path:
    """A data folder with the bundled kernel curves and links and these pcie_hosts.csv rows."""
    (tmp_path / "kernels").mkdir(parents=True)
    (tmp_path / "kernels" / "curves.toml").write_text((DATA / "kernels" / "curves.toml").read_text())
    (tmp_path / "interconnects.csv").write_text((DATA / "interconnects.csv").read_text())
    header = "host,gpu,gpus,link,bus_gbs,table,source,date,notes\n"
    (tmp_path / "kernels" / "pcie_hosts.csv").write_text(header + "".join(r + "\n" for r in rows))
    return tmp_path


def test_the_share_is_each_hosts_median_then_the_median_of_hosts(tmp_path):
    folder = _host_folder(tmp_path, [
        "a,x,4,pcie4,8,,s,2026,",  # host a: 0.25 and 0.75 of 32 GB/s, its median 0.5
        "a,x,8,pcie4,24,,s,2026,",
        "b,x,8,pcie5,16,,s,2026,",  # host b: 0.25 of 64 GB/s
        "c,x,8,pcie5,32,,s,2026,",  # host c: 0.5
        "d,x,4,pcie4,28.8,,s,2026,",  # host d: 0.9
    ])
    rows = pcie_host_rows(folder)
    assert [r["share"] for r in rows] == pytest.approx([0.25, 0.75, 0.25, 0.5, 0.9])
    share, basis = pcie_ring_share.__wrapped__(folder)
    assert share == pytest.approx(0.5)  # hosts 0.25, 0.5, 0.5, 0.9: the middle two
    assert "4 measured PCIe hosts" in basis and "25% to 90%" in basis
    odd = _host_folder(tmp_path / "odd", ["a,x,8,pcie4,8,,s,2026,", "b,x,8,pcie4,16,,s,2026,", "c,x,8,pcie4,30,,s,2026,"])
    assert pcie_ring_share.__wrapped__(odd)[0] == pytest.approx(0.5)  # three hosts: the middle one


def test_a_host_row_naming_a_table_takes_the_line_fitted_to_it(tmp_path):
    folder = _host_folder(tmp_path, ["l40s-host,l40s,8,pcie4,,l40s-nccl2.27.3-allreduce,s,2026,"])
    with (DATA / "kernels" / "curves.toml").open("rb") as handle:
        fitted = [c for c in tomllib.load(handle)["allreduce"] if c["table"] == "l40s-nccl2.27.3-allreduce" and c["gpus"] == 8]
    assert pcie_host_rows(folder)[0]["bus_gbs"] == fitted[0]["bus_gbs"]
    # the folder's own fitted lines, not the bundled ones
    own = _host_folder(tmp_path / "own", ["h,x,8,pcie5,,my-table,s,2026,"])
    (own / "kernels" / "curves.toml").write_text('[[allreduce]]\ntable = "my-table"\ndevice = "x"\nkind = "nccl"\n'
                                                  'fabric = "pcie"\ngpus = 8\nlatency_us = 20.0\nbus_gbs = 16.0\n')
    assert pcie_host_rows(own)[0]["share"] == pytest.approx(0.25)
    # no fitted lines at all: rows with their own figure still work
    bare = _host_folder(tmp_path / "bare", ["h,x,8,pcie5,32,,s,2026,"])
    (bare / "kernels" / "curves.toml").write_text("")
    assert pcie_host_rows(bare)[0]["share"] == pytest.approx(0.5)


def test_the_ring_rate_is_the_slower_of_the_link_and_the_cards_own_link():
    gen4_card = replace(CARD, intra_link_gbs=64.0, all_reduce_curves=())  # 32 GB/s each way
    pcie5 = replace(PCIE4, id="pcie5", unidirectional_gbs=64.0)
    assert topology_of((NodeGroup(gen4_card, per_node=8, intra=pcie5),)).ring_gbs == pytest.approx(32.0 * 0.5)
    unknown = replace(CARD, intra_link_gbs=None, all_reduce_curves=())  # the card says nothing: the link's rate
    assert topology_of((NodeGroup(unknown, per_node=8, intra=pcie5),)).ring_gbs == pytest.approx(64.0 * 0.5)
    topo = topology_of((NodeGroup(gen4_card, per_node=8, intra=pcie5),))
    assert topo.ring_rate_gbs(3) == topo.ring_gbs != topo.intra_gbs  # a ring of three already crosses the host


def test_a_measured_ring_of_three_gives_way_too():
    three = replace(CARD, all_reduce_curves=(AllReduceCurve(3, 9.0, 1.0, "nccl", "pcie"),))
    curves = topology_of((NodeGroup(three, per_node=8, intra=PCIE4),)).all_reduce_curves
    assert [c.bus_gbs for c in curves] == [pytest.approx(16.0)]


def test_an_estimate_says_when_the_hosts_set_the_ring_rate(catalogue):
    from gpudesk.core.resolve import estimate_scenario
    from gpudesk.core.scenario import parse_scenario

    def said(item, intra, tp):
        doc = {"gpudesk_scenario": 1, "name": "t", "cluster": [{"item": item, "per_node": 8, "nodes": 1, "intra": intra}],
               "workload": {"kind": "infer", "model": "llama-3.1-70b", "precision": "fp8", "concurrency": 64, "tp": tp}}
        return [a for a in estimate_scenario(parse_scenario(doc, "t"), catalogue).assumptions if "exchange at" in a]

    eight = said("l40s", "pcie4", 8)
    share, _basis = pcie_ring_share(DATA)
    assert len(eight) == 1 and f"{32.0 * share:,.1f} GB/s one way per device" in eight[0]
    assert "PCI Express 4.0 x16" in eight[0] and "measured PCIe hosts" in eight[0]
    assert said("l40s", "pcie4", 2) == []  # a pair keeps its own table: nothing to say
    assert said("h100-sxm5-80gb", "nvlink4", 8) == []  # NVLink: the device's own tables


def test_a_tpu_slice_ends_where_a_node_holds_more_chips_than_a_host():
    """ICI joins a slice's chips whichever host holds them: rented one chip at a time (Google Cloud's TPU
    offerings) or a host of 4 or 8, the whole group is one domain. A node of more chips than a host holds
    (8 on v5e and v6e) is itself a slice; slices talk over the data-centre network (multislice)."""
    chip = Device(id="tpu", name="TPU v5e", vendor="Google", peak_tflops={"bf16": 197.0}, memory_gb=16.0,
                  mem_bandwidth_gbs=819.0, intra_link_gbs=400.0)
    ici = link_from_row({"id": "tpu-ici-v5e", "name": "ICI", "family": "ici", "bidirectional_gbs": 400})
    dcn = link_from_row({"id": "eth-100g", "name": "100 GbE", "family": "ethernet", "unidirectional_gbs": 12.5})
    assert ici.unidirectional_gbs == 200.0
    assert topology_of((NodeGroup(chip, per_node=1, nodes=256, intra=ici, inter=dcn),)).domain == 256
    assert topology_of((NodeGroup(chip, per_node=8, nodes=32, intra=ici, inter=dcn),)).domain == 256
    sliced = topology_of((NodeGroup(chip, per_node=256, nodes=32, intra=ici, inter=dcn),))
    assert sliced.domain == 256 and sliced.domains == 32
    # a link that is not ICI never spans nodes, however small
    nvlink = link_from_row({"id": "nvlink4", "name": "NVLink", "family": "nvlink", "unidirectional_gbs": 450})
    assert topology_of((NodeGroup(chip, per_node=8, nodes=4, intra=nvlink, inter=dcn),)).domain == 8


def test_every_tpu_with_a_published_ici_rate_names_its_link():
    links = {row["id"]: row for row in csv.DictReader((DATA / "interconnects.csv").open(encoding="utf-8"))}
    named = 0
    for acc in _accelerators().values():
        if acc.get("kind") == "tpu" and acc.get("intra_link_gbs") and acc.get("intra_link"):
            row = links[acc["intra_link"]]
            assert row["family"] == "ici" and float(row["bidirectional_gbs"]) == acc["intra_link_gbs"], acc["id"]
            named += 1
    assert named >= 3  # v5e, v5p, v6e
    assert _accelerators()["tpu-v5e"]["intra_link"] == "tpu-ici-v5e"
    assert _accelerators()["tpu-v6e"]["intra_link"] == "tpu-ici-v6e"
