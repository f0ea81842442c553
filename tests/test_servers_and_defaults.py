"""Inference servers as data (data/servers.toml) and the cluster defaults the resolver supplies: the
server named in a scenario sets the serving model's sequence cap, prefill chunk and memory share;
an unknown server is refused with the list of known ones; HGX-class nodes get a NIC per GPU."""

from __future__ import annotations

import pytest

from gpudesk.core.resolve import estimate_scenario, resolve_option
from gpudesk.core.scenario import ScenarioError, parse_scenario
from gpudesk.core.servers import limits, server_ids, servers


def _doc(server=None, item="h100-sxm5-80gb", per_node=1, nodes=1, concurrency=512, **cluster):
    workload = {"kind": "infer", "model": "llama-3.1-8b", "precision": "fp8", "prompt_tokens": 128,
                "output_tokens": 1024, "concurrency": concurrency}
    if server:
        workload["server"] = server
    return {"gpudesk_scenario": 1, "name": "t", "workload": workload,
            "cluster": [{"item": item, "per_node": per_node, "nodes": nodes, **cluster}]}


def test_every_server_documents_where_its_defaults_come_from():
    ids = server_ids()
    assert {"tuned", "vllm", "trtllm", "sglang", "llamacpp"} <= set(ids)
    from gpudesk.core.servers import servers

    for sid, row in servers().items():
        if sid != "tuned":
            assert row.get("source") and row.get("date"), sid


def test_vllm_takes_its_larger_defaults_on_large_gpus_but_not_on_an_a100():
    assert limits("vllm", 80, "H100 SXM5 80GB") == {"max_batch": 1024, "chunk_tokens": 8192, "memory_share": 0.9,
                                                      "memory_basis": "total", "kv_reserve": "used", "graphs": True,
                                                      "graphs_max_batch": None, "block_formats": False}
    assert limits("vllm", 80, "A100 SXM4 80GB")["max_batch"] == 256
    assert limits("vllm", 24, "RTX 4090")["chunk_tokens"] == 2048
    assert limits("tuned", 80, "H100")["max_batch"] is None
    assert limits("trtllm", 80, "H100")["kv_reserve"] == "whole"


def test_an_unknown_server_is_refused_with_the_known_ones():
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(_doc(server="triton-magic"), "t")
    text = str(caught.value)
    assert "workload.server" in text and "triton-magic" in text
    for sid in server_ids():
        assert sid in text


@pytest.mark.parametrize(("line", "named"), [
    ('memory_basis = "freee"', "'memory_basis' must be \"free\" or \"total\", not 'freee'"),
    ("memory_share = 1.5", "'memory_share' must be above 0 and at most 1"),
    ("max_batch = 0", "'max_batch' must be a whole number above 0"),
    ('graphs = "yes"', "'graphs' must be true or false"),
    ("block_formats = 1", "'block_formats' must be true or false"),
    ('kv_reserve = "all"', "'kv_reserve' must be \"used\" or \"whole\", not 'all'"),
    ("max_batch = true", "'max_batch' must be a whole number above 0, not True"),
    ('chunk_tokens = "8k"', "'chunk_tokens' must be a whole number above 0, not '8k'"),
    ("memory_share = 0", "'memory_share' must be above 0 and at most 1, not 0"),
    ("memory_share = true", "'memory_share' must be above 0 and at most 1, not True"),
    ("graphs_max_batch = 0", "'graphs_max_batch' must be a whole number above 0, not 0"),
    ("graphs_max_batch = 1.5", "'graphs_max_batch' must be a whole number above 0, not 1.5"),
    ('id = ""', "'id' is missing"),
])
def test_a_server_row_the_model_would_misread_is_refused_by_name(tmp_path, line, named):
    good = '[[server]]\nid = "tuned"\nmemory_share = 0.9\n\n'
    row = line if line.startswith("id =") else f'id = "odd"\n{line}'
    (tmp_path / "servers.toml").write_text(good + f"[[server]]\n{row}\n", encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        servers(tmp_path)
    where = "servers.toml, server 2: " if line.startswith("id =") else "servers.toml, server odd: "
    assert str(caught.value).startswith(where) and named in str(caught.value)
    (tmp_path / "servers.toml").write_text(good, encoding="utf-8")
    assert list(servers(tmp_path)) == ["tuned"]  # the same file without the odd row loads


def test_the_edges_of_a_server_rows_numbers_are_accepted(tmp_path):
    (tmp_path / "servers.toml").write_text('[[server]]\nid = "edge"\nmax_batch = 1\nmemory_share = 1\n'
                                           'memory_basis = "total"\nkv_reserve = "used"\n', encoding="utf-8")
    assert servers(tmp_path)["edge"]["max_batch"] == 1 and servers(tmp_path)["edge"]["memory_share"] == 1


def test_a_server_without_cuda_graphs_decodes_eagerly_unless_the_scenario_says(catalogue, monkeypatch):
    import gpudesk.core.resolve as R

    graphs = R.server_limits("vllm", 80, "H100")
    resolved = resolve_option(*_first(parse_scenario(_doc(server="vllm"), "t")), catalogue)
    assert resolved.inputs.workload.runtime == ""  # vLLM replays CUDA graphs by default
    monkeypatch.setattr(R, "server_limits", lambda *args: {**graphs, "graphs": False})
    resolved = resolve_option(*_first(parse_scenario(_doc(server="vllm"), "t")), catalogue)
    assert resolved.inputs.workload.runtime == "eager"
    doc = _doc(server="vllm")
    doc["workload"]["runtime"] = "graphs"
    assert resolve_option(*_first(parse_scenario(doc, "t")), catalogue).inputs.workload.runtime == "graphs"


def test_a_mixture_of_experts_may_be_served_with_data_parallel_attention(catalogue):
    def doc(**workload):
        d = _doc(item="h200-sxm-141gb", per_node=8, concurrency=1024)
        d["workload"].update({"model": "deepseek-r1", "prompt_tokens": 1024, "output_tokens": 1024, **workload})
        return d

    tuned = estimate_scenario(parse_scenario(doc(), "t"), catalogue)
    off = estimate_scenario(parse_scenario(doc(attention_dp=False), "t"), catalogue)
    # MLA's latent is whole on every tensor-parallel device; attention DP keeps each device's own sequences only
    assert tuned.plan["dp_attention"] and not off.plan["dp_attention"]
    assert "data-parallel attention" in tuned.plan["label"]
    assert tuned.serving["kv_capacity_sequences"] > 2 * off.serving["kv_capacity_sequences"]
    assert tuned.tokens_per_s.likely > off.tokens_per_s.likely
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(doc(attention_dp="yes"), "t")
    assert "workload.attention_dp" in str(caught.value)


def test_the_named_server_caps_the_running_batch(catalogue):
    resolved = resolve_option(*_first(parse_scenario(_doc(server="vllm", item="a100-sxm4-80gb",
                                                            concurrency=2000), "t")), catalogue)
    assert resolved.inputs.workload.server_max_batch == 256
    assert resolved.inputs.workload.server_kv_reserve == "used"
    trt = resolve_option(*_first(parse_scenario(_doc(server="trtllm"), "t")), catalogue)
    assert trt.inputs.workload.server_kv_reserve == "whole"
    capped = estimate_scenario(parse_scenario(_doc(server="vllm", item="a100-sxm4-80gb", concurrency=2000), "t"),
                               catalogue)
    tuned = estimate_scenario(parse_scenario(_doc(item="a100-sxm4-80gb", concurrency=2000), "t"), catalogue)
    assert capped.serving["running_batch"] == 256 and capped.serving["limit"] == "max_batch"
    assert tuned.serving["running_batch"] > 256 and tuned.serving["limit"] == "kv_cache"
    assert any("as many sequences as the KV cache holds" in a for a in tuned.assumptions)


def test_hgx_class_nodes_get_one_nic_per_gpu_and_say_so(catalogue):
    doc = _doc(per_node=8, nodes=4, inter="ib-ndr-400")
    doc["workload"] = {"kind": "train", "params": 70e9, "tokens": 1e9, "seq_len": 4096}
    resolved = resolve_option(*_first(parse_scenario(doc, "t")), catalogue)
    assert resolved.inputs.groups[0].nic_count == 8
    assert any("one NIC per GPU assumed" in n for n in resolved.assumptions)
    doc["cluster"][0]["nic_count"] = 1  # a NIC count the scenario names is kept
    assert resolve_option(*_first(parse_scenario(doc, "t")), catalogue).inputs.groups[0].nic_count == 1
    doc["cluster"][0].pop("nic_count")
    doc["cluster"][0]["item"] = "rtx-4090"  # consumer boxes keep one NIC
    assert resolve_option(*_first(parse_scenario(doc, "t")), catalogue).inputs.groups[0].nic_count == 1


def _first(scenario):
    return scenario, scenario.options()[0]


def test_every_engine_data_source_is_a_catalogue_source():
    import tomllib

    from gpudesk.core.kernel_tables import read_tables
    from gpudesk.core.paths import bundled_data_dir
    from gpudesk.core.servers import servers

    known = set()
    for path in (bundled_data_dir() / "sources").glob("*.toml"):
        with path.open("rb") as handle:
            known |= {s["id"] for s in tomllib.load(handle).get("source", [])}
    named = {t["source"] for kind in ("table", "collective", "attention", "prefill") for t in read_tables(None, kind)}
    named |= {row["source"] for row in servers().values() if row.get("source")}
    assert named and named <= known, named - known
    for kind in ("table", "collective", "attention", "prefill"):
        for t in read_tables(None, kind):
            assert t["date"] and len(t["commit"]) == 40, t["id"]


def test_llama_cpp_replays_its_cuda_graph_only_for_one_sequence(catalogue):
    """llama.cpp's CUDA backend turns its graphs off for a step of more than one token (ggml-cuda.cu): one user
    decodes with 14 fused kernels a layer replayed as a graph, eight users with 26 launched from the host."""
    from dataclasses import replace

    from gpudesk.core.estimate.serving import eager_decode

    assert limits("llamacpp", 128, "GB10")["graphs_max_batch"] == 1
    assert limits("vllm", 80, "H100")["graphs_max_batch"] is None

    def resolved(concurrency, runtime=None):
        doc = _doc(server="llamacpp", item="gb10", concurrency=concurrency)
        doc["workload"]["precision"] = "q4"
        if runtime:
            doc["workload"]["runtime"] = runtime
        return resolve_option(*_first(parse_scenario(doc, "t")), catalogue).inputs.workload

    one, eight = resolved(1), resolved(8)
    assert one.server_graphs_max_batch == 1 and one.runtime == ""
    assert not eager_decode(one, 1) and eager_decode(eight, 2) and eager_decode(eight, 8)
    # the scenario's own word wins either way
    assert not eager_decode(resolved(8, "graphs"), 8) and eager_decode(resolved(1, "eager"), 1)
    assert not eager_decode(replace(one, server_graphs_max_batch=None), 64)  # a server with graphs at any batch

    def said(concurrency):
        doc = _doc(server="llamacpp", item="gb10", concurrency=concurrency)
        doc["workload"]["precision"] = "q4"
        text = " ".join(estimate_scenario(parse_scenario(doc, "t"), catalogue).assumptions)
        return ("14 kernels per layer at 4 µs each, replayed as one CUDA graph" in text,
                "26 kernels per layer, each launched from the host at 6 µs (the server replays its CUDA graph only "
                "for steps of at most 1 sequence(s))" in text)

    assert said(1) == (True, False) and said(8) == (False, True)


def test_a_gaudi_box_joins_its_cards_by_their_21_scale_up_ports_not_one_ethernet_port(catalogue):
    """Intel's HLS boxes wire 21 of each Gaudi's 24 RoCE ports all-to-all (3 to each peer): a Gaudi 3 box's
    fast domain moves 525 GB/s each way per card, a Gaudi 2 box's 262.5, where one 200 or 100 GbE port (the
    link these records named before) moves 25 or 12.5."""
    from gpudesk.core.estimate.topology import topology_of
    from gpudesk.core.resolve import resolve_option
    from gpudesk.core.scenario import parse_scenario

    def topo(item):
        doc = {"gpudesk_scenario": 1, "name": "t", "cluster": [{"item": item, "per_node": 8, "nodes": 1}],
               "workload": {"kind": "infer", "model": "llama-3.1-70b", "precision": "fp8", "tp": 8}}
        scenario = parse_scenario(doc, "t")
        return topology_of(resolve_option(scenario, scenario.options()[0], catalogue).inputs.groups)

    g3, g2 = topo("gaudi-3"), topo("gaudi-2")
    assert "Gaudi 3 scale-up" in g3.intra_name and "Gaudi 2 scale-up" in g2.intra_name
    assert g3.intra_gbs == pytest.approx(525 * 0.9) and g2.intra_gbs == pytest.approx(262.5 * 0.9)
    kit = catalogue.get("systems", "intel-gaudi3-ai-kit-8x")
    assert kit["intra_link"] == "gaudi3-scaleup"
    link = catalogue.get("interconnects", "gaudi3-scaleup")
    assert link["source"] == "intel-gaudi-docs-network-configuration" and link["unidirectional_gbs"] == 525
