"""Memory fit and per-device compute time checked against hand calculations, written to kill the
mutants that survived mutation testing of gpudesk/core/estimate/memory.py and compute.py (README
"Mutation testing"). The shapes are tiny on purpose, so that every expected byte count below can be
worked out in its comment from the formula's physics (bytes per parameter, per token and layer,
divided by the devices that share them), not copied from the engine's output."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpudesk.core.estimate import memory as M
from gpudesk.core.estimate.compute import (
    LayerWork,
    Peak,
    Rates,
    StageTime,
    backward_shapes,
    layer_shapes,
    layer_work,
    mean_layer_work,
    optimizer_step_s,
    rates,
    stage_time,
    training_peak,
)
from gpudesk.core.estimate.kernels import GemmCurve, shape_factor
from gpudesk.core.estimate.memory import MemoryModel, Plan
from gpudesk.core.estimate.model import Shape
from gpudesk.core.estimate.profiles import PROFILES
from gpudesk.core.estimate.types import Device, Workload

from .tiny_model import tiny_shape

GIB_IN_GB = 2.0 ** 30 / 1e9  # 1.073741824


def _shape(**kw) -> Shape:
    """A 4-layer dense decoder, d=8, 2 query heads and 1 KV head of width 4, gated MLP of 16, vocab 100.
    Activations per token and layer: attention 2·(3·8 + 8 + 2·4) = 80 bytes, MLP 2·(8 + 3·16) = 112,
    192 in all; logits 100 × 6 = 600 bytes per token."""
    return tiny_shape(**{"dense_layers": 0, **kw})


# a 4-layer MoE of 4 experts per layer, expert MLP 3·8·16 = 384 parameters: 4 × 4 × 384 = 6144 expert
# parameters; 8192 in all leaves 2048 dense ones
MOE = _shape(params=8192.0, experts=4, experts_active=1, expert_ffn_dim=16)
TRAIN = Workload(kind="train", params=1e9, seq_len=10, precision="bf16")


# --------------------------------------------------------------------------- plans


def test_a_plan_counts_its_devices_and_the_share_recomputed():
    p = Plan(tp=2, cp=3, pp=5, dp=7, ep=11)
    assert p.devices == 2 * 3 * 5 * 7  # experts live inside the data-parallel replicas: ep is not a factor
    assert p.model_parallel == 2 * 3 * 5
    assert Plan(recompute="full", recompute_share=0.25).recomputed == 0.25
    assert Plan(recompute="selective", recompute_share=0.25).recomputed == 0.0
    assert Plan(recompute_share=0.25).recomputed == 0.0


def test_the_short_label_leaves_out_every_part_that_is_one():
    assert Plan().short() == "one device · mb1"
    assert Plan(tp=8, pp=16, vpp=4, dp=128, sharding="zero1", recompute="full", recompute_share=0.25).short() == \
        "TP8 · PP16 v4 · DP128 · ZeRO-1 · mb1 · recompute 25%"
    assert Plan(cp=2, ep=4, sharding="hsdp", recompute="selective", micro_batch=2).short() == \
        "CP2 · EP4 · HSDP · mb2 · sel. recompute"
    assert Plan(pp=2, sharding="zero2").short() == "PP2 · ZeRO-2 · mb1"
    assert Plan(pp=2, vpp=2, ep=2).short() == "PP2 v2 · EP2 · mb1"
    assert Plan(tp=2, sharding="zero3", recompute="full").short() == "TP2 · ZeRO-3 · mb1 · full recompute"
    # 99.9% recomputed is called full; 99.8% is not, though it rounds to 100%
    assert Plan(dp=2, recompute="full", recompute_share=0.999).short() == "DP2 · mb1 · full recompute"
    assert Plan(dp=2, recompute="full", recompute_share=0.998).short() == "DP2 · mb1 · recompute 100%"


def test_the_long_description_names_every_split_and_the_sharding():
    assert Plan().describe() == "data parallel 1, micro-batch 1"
    assert Plan(tp=2, cp=2, pp=4, vpp=2, ep=2, dp=8, sharding="zero2", recompute="full", recompute_share=0.5,
                micro_batch=2).describe() == (
        "tensor parallel 2, context parallel 2, pipeline parallel 4 (interleaved ×2), expert parallel 2, "
        "data parallel 8 with ZeRO-2 (optimizer state and gradients sharded), "
        "full activation recomputation of 50% of the layers, micro-batch 2")
    # sharding is named even on one replica; an unsharded data-parallel group is not qualified
    assert Plan(sharding="zero3").describe() == \
        "data parallel 1 with ZeRO-3 / FSDP (weights, gradients and optimizer state sharded), micro-batch 1"
    assert Plan(dp=2).describe() == \
        "data parallel 2 with plain data parallelism (every replica holds the full model states), micro-batch 1"
    assert Plan(pp=2, recompute="selective").describe() == \
        "pipeline parallel 2, data parallel 1, selective activation recomputation, micro-batch 1"
    assert Plan(recompute="full").describe() == "data parallel 1, full activation recomputation, micro-batch 1"


def test_a_plan_to_json_reports_its_splits_and_the_share_actually_recomputed():
    assert Plan(tp=2, pp=3, dp=4, micro_batches=6, recompute="selective", recompute_share=0.5,
                sharding="zero1").to_json() == {
        "tp": 2, "cp": 1, "pp": 3, "vpp": 1, "dp": 4, "ep": 1, "micro_batch": 1, "micro_batches": 6,
        "recompute": "selective", "recompute_share": 0.0, "sharding": "zero1", "devices_used": 24,
        "label": "TP2 · PP3 · DP4 · ZeRO-1 · mb1 · sel. recompute"}


# --------------------------------------------------------------------------- capacity


def test_a_discrete_gpu_sees_995_per_mille_of_its_binary_gigabytes():
    h100 = Device("h100", "H100 SXM", "datacenter", memory_gb=80)
    raw = 80 * GIB_IN_GB * 0.995  # 85.4698 GB
    assert M.raw_capacity_gb(h100) == pytest.approx(raw)
    assert M.runtime_gb(h100) == 1.5
    assert M.capacity_gb(h100) == pytest.approx((raw - 1.5) * 0.95)  # 79.77 GB
    assert M.capacity_basis(h100) == ("H100 SXM: 80 GiB (85.5 GB visible), less 1.5 GB for the runtime and "
                                      "5% for allocator fragmentation = 79.8 GB usable")


def test_apple_silicon_wires_three_quarters_of_shared_memory_for_the_gpu():
    mac = Device("m2u", "M2 Ultra", "desktop_ai", vendor="Apple", memory_gb=64, memory_shared=True)
    assert M.raw_capacity_gb(mac) == pytest.approx(64 * GIB_IN_GB * 0.75)  # 51.54 GB
    assert M.capacity_gb(mac) == pytest.approx((64 * GIB_IN_GB * 0.75 - 1.0) * 0.95)
    assert M.capacity_basis(mac).startswith(
        "M2 Ultra: 64 GiB shared with the CPU, 75% of it wired for the GPU by macOS, less 1 GB for the runtime")
    assert M.raw_capacity_gb(Device("m", "M", "laptop", vendor="APPLE", memory_gb=64, memory_shared=True)) == \
        pytest.approx(64 * GIB_IN_GB * 0.75)


def test_a_shared_memory_board_keeps_a_fixed_reserve_for_the_os():
    orin = Device("orin", "Orin", "edge", vendor="NVIDIA", memory_gb=8, memory_shared=True)
    raw = 8 * GIB_IN_GB - 1.2  # 7.39 GB
    assert M.raw_capacity_gb(orin) == pytest.approx(raw)
    assert M.runtime_gb(orin) == 0.3
    assert M.capacity_gb(orin) == pytest.approx((raw - 0.3) * 0.95)
    assert M.capacity_basis(orin) == ("Orin: 8 GiB shared with the CPU, 1.2 GB kept by the OS and CPU, less 0.3 GB "
                                      "for the runtime and 5% for allocator fragmentation = 6.7 GB usable")
    # an unknown class keeps 8 GB for the OS and 1 GB for the runtime
    odd = Device("x", "X", "mainframe", vendor=None, memory_gb=16, memory_shared=True)
    assert M.raw_capacity_gb(odd) == pytest.approx(16 * GIB_IN_GB - 8.0)
    assert M.runtime_gb(odd) == 1.0
    assert "8 GB kept by the OS and CPU" in M.capacity_basis(odd)


def test_capacity_never_goes_below_zero():
    # a 4 GiB laptop with shared memory: 4.29 GB less a 6 GB reserve is nothing, not -1.7 GB
    small = Device("s", "Small", "laptop", memory_gb=4, memory_shared=True)
    assert M.raw_capacity_gb(small) == 0.0
    assert M.capacity_gb(small) == 0.0
    # 1 GiB visible (1.068 GB) less a 1.5 GB runtime leaves nothing usable either
    assert M.capacity_gb(Device("t", "Tiny", "datacenter", memory_gb=1)) == 0.0
    assert M.raw_capacity_gb(Device("u", "Unknown", "datacenter")) == 0.0


# --------------------------------------------------------------------------- model states


def test_mixed_precision_states_are_2_2_and_12_bytes_per_parameter_fp32_4_4_and_8():
    s = _shape()
    assert M.state_parts(TRAIN, s, Plan(), 8) == {"weights": 2e9, "gradients": 2e9, "optimizer": 12e9}
    for precision in ("fp32", "tf32"):
        w = Workload(params=1e9, seq_len=10, precision=precision)
        assert M.state_parts(w, s, Plan(), 8) == {"weights": 4e9, "gradients": 4e9, "optimizer": 8e9}


def test_each_zero_stage_shards_one_more_state_over_the_replicas():
    s = _shape()
    # TP2 × PP2 leaves 0.25e9 parameters per device; four replicas share what the stage shards
    local = 0.25e9
    expect = {"none": (2 * local, 2 * local, 12 * local),
              "zero1": (2 * local, 2 * local, 12 * local / 4),
              "zero2": (2 * local, 2 * local / 4, 12 * local / 4),
              "zero3": (2 * local / 4, 2 * local / 4, 12 * local / 4)}
    for sharding, (weights, grads, optimizer) in expect.items():
        parts = M.state_parts(TRAIN, s, Plan(tp=2, pp=2, dp=4, sharding=sharding), 64)
        assert parts == pytest.approx({"weights": weights, "gradients": grads, "optimizer": optimizer}), sharding
    # context-parallel ranks are replicas of the states too: DP2 × CP2 = 4
    assert M.state_parts(TRAIN, s, Plan(cp=2, dp=2, sharding="zero1"), 64)["optimizer"] == pytest.approx(3e9)
    # EP2 inside CP2 × DP2: the experts have 2 × 2 // 2 = 2 replicas (MoE: 6144 / 2 expert parameters)
    moe = M.state_parts(Workload(params=8192.0, seq_len=10), MOE, Plan(cp=2, dp=2, ep=2, sharding="zero1"), 64)
    assert moe["optimizer"] == pytest.approx(12 * 2048 / 4 + 12 * 3072 / 2)
    # one replica shards nothing
    assert M.state_parts(TRAIN, s, Plan(sharding="zero3"), 64)["weights"] == pytest.approx(2e9)


def test_hybrid_sharding_shards_only_inside_a_node():
    s = _shape()
    # TP2 on 8-device nodes leaves 4 replicas per node: DP8 shards by 4, not 8
    parts = M.state_parts(TRAIN, s, Plan(tp=2, dp=8, sharding="hsdp"), 8)
    assert parts == pytest.approx({"weights": 2 * 0.5e9 / 4, "gradients": 2 * 0.5e9 / 4, "optimizer": 12 * 0.5e9 / 4})
    # a node smaller than the model-parallel group still counts as one replica, never zero
    assert M.state_parts(TRAIN, s, Plan(tp=2, dp=8, sharding="hsdp"), 1)["weights"] == pytest.approx(1e9)
    # PP3 on 8-device nodes leaves 8 // 3 = 2 whole replicas per node; 1e9 / 3 parameters per device
    assert M.state_parts(TRAIN, s, Plan(pp=3, dp=4, sharding="hsdp"), 8)["weights"] == pytest.approx(2 * 1e9 / 3 / 2)
    # DP2 inside 16-device nodes shards by the replicas there are (2), not the room (8)
    assert M.state_parts(TRAIN, s, Plan(tp=2, dp=2, sharding="hsdp"), 16)["weights"] == pytest.approx(0.5e9)


def test_expert_parallelism_splits_the_experts_and_shrinks_their_replica_count():
    w = Workload(params=8192.0, seq_len=10)
    # EP2, TP2: dense 2048 / 2 = 1024 per device, experts 6144 / 2 (EP, not TP) = 3072; DP4 gives dense
    # 4 replicas and experts 4 // 2 = 2
    parts = M.state_parts(w, MOE, Plan(tp=2, ep=2, dp=4, sharding="zero1"), 64)
    assert parts["weights"] == pytest.approx(2 * (1024 + 3072))
    assert parts["optimizer"] == pytest.approx(12 * 1024 / 4 + 12 * 3072 / 2)
    # without EP the experts split over TP4 like dense weights: 512 + 1536 per device
    parts = M.state_parts(w, MOE, Plan(tp=4, dp=4, sharding="zero1"), 64)
    assert parts["weights"] == pytest.approx(2 * (512 + 1536))
    assert parts["optimizer"] == pytest.approx(12 * (512 + 1536) / 4)
    # EP4 over DP2 leaves each expert one replica (not 2 // 4 = 0); PP2 halves both
    parts = M.state_parts(w, MOE, Plan(pp=2, ep=4, dp=2, sharding="zero1"), 64)
    assert parts["optimizer"] == pytest.approx(12 * 1024 / 2 + 12 * 6144 / 8)


def test_lora_keeps_frozen_weights_whole_and_trains_only_the_adapters():
    s = _shape()
    lora = Workload(kind="finetune", method="lora", params=1e9, seq_len=10, lora_fraction=0.01)
    # 1e9 frozen 16-bit weights plus 1e7 adapter parameters at 2 / 2 / 12 bytes; sharding is ignored
    expect = {"weights": 2e9 + 2e7, "gradients": 2e7, "optimizer": 1.2e8}
    assert M.state_parts(lora, s, Plan(dp=4, sharding="zero3"), 8) == pytest.approx(expect)
    # TP2 halves everything
    assert M.state_parts(lora, s, Plan(tp=2), 8) == pytest.approx({k: v / 2 for k, v in expect.items()})
    qlora = Workload(kind="finetune", method="qlora", params=1e9, seq_len=10, lora_fraction=0.01)
    assert M.state_parts(qlora, s, Plan(), 8) == pytest.approx(
        {"weights": 0.5625e9 + 2e7, "gradients": 2e7, "optimizer": 1.2e8})
    # the experts are frozen and adapted like the dense weights: 8192 parameters in all
    moe = Workload(kind="finetune", method="lora", params=8192.0, seq_len=10, lora_fraction=0.01)
    assert M.state_parts(moe, MOE, Plan(), 8) == pytest.approx(
        {"weights": 8192 * 2 * 1.01, "gradients": 8192 * 0.02, "optimizer": 8192 * 0.12})
    # a full fine-tune is ordinary training
    full = Workload(kind="finetune", method="full", params=1e9, seq_len=10)
    assert M.state_parts(full, s, Plan(), 8) == {"weights": 2e9, "gradients": 2e9, "optimizer": 12e9}


# --------------------------------------------------------------------------- activations


def test_activations_are_bytes_per_token_and_layer_times_tokens_layers_and_micro_batches_in_flight():
    s = _shape()
    # fused attention, 10 tokens, 4 layers, one micro-batch: 192 × 10 × 4 = 7680; logits 600 × 10
    assert M.activation_parts(TRAIN, s, Plan(), True) == pytest.approx({"activations": 7680.0, "logits": 6000.0})
    # unfused attention keeps 5 bytes per head and key: 192 + 5 × 2 × 10 = 292 per token and layer
    assert M.activation_parts(TRAIN, s, Plan(), False)["activations"] == pytest.approx(292 * 10 * 4)
    # selective recomputation drops the score matrices again
    assert M.activation_parts(TRAIN, s, Plan(recompute="selective"), False)["activations"] == \
        pytest.approx(7680.0)
    # TP2, CP2, micro-batch 3: 3 × 10 / 2 = 15 tokens, 96 bytes each; PP2 leaves 2 layers and
    # min(4, 2) = 2 micro-batches in flight, ×(1 + 1/(2·2)) = 2.5 interleaved; logits 600 × 15 / 2
    plan = Plan(tp=2, cp=2, pp=2, vpp=2, micro_batch=3, micro_batches=4)
    assert M.activation_parts(TRAIN, s, plan, True) == pytest.approx({"activations": 96 * 15 * 2 * 2.5,
                                                                     "logits": 4500.0})
    # PP3 over 4 layers: the first stage holds ceil(4/3) = 2 layers; one micro-batch in flight
    assert M.activation_parts(TRAIN, s, Plan(pp=3), True)["activations"] == pytest.approx(192 * 10 * 2)
    # unfused with TP2: 96 + 5 × 2 / 2 × 10 = 146 per token and layer
    assert M.activation_parts(TRAIN, s, Plan(tp=2), False)["activations"] == pytest.approx(146 * 10 * 4)


def test_full_recomputation_keeps_each_layers_input_and_one_layers_working_set():
    s = _shape()
    # every layer recomputed: 2 × 8 bytes per token and layer, plus one layer's 192 during backward
    assert M.activation_parts(TRAIN, s, Plan(recompute="full"), True)["activations"] == \
        pytest.approx(16 * 10 * 4 + 192 * 10)
    # half the layers recomputed: (0.5 × 16 + 0.5 × 192) = 104 per token and layer
    assert M.activation_parts(TRAIN, s, Plan(recompute="full", recompute_share=0.5), True)["activations"] == \
        pytest.approx(104 * 10 * 4 + 192 * 10)
    # PP2 with two micro-batches in flight: the first stage keeps 2 layers' inputs of each
    assert M.activation_parts(TRAIN, s, Plan(pp=2, micro_batches=2, recompute="full"), True)["activations"] == \
        pytest.approx(16 * 10 * 2 * 2 + 192 * 10)
    # TP2 halves the stored inputs too; unfused layers that keep activations keep their scores
    assert M.activation_parts(TRAIN, s, Plan(tp=2, recompute="full", recompute_share=0.5), False)["activations"] \
        == pytest.approx((0.5 * 8 + 0.5 * 146) * 10 * 4 + 146 * 10)


def test_training_parts_add_zero3s_gathered_layers_and_the_runtime_in_gb():
    s = _shape()
    h100 = Device("h100", "H100", "datacenter", memory_gb=80)
    # ZeRO-3 over DP2: 1e9 of 2e9 weight bytes, plus two gathered layers of 1e9 / 4 parameters at 2 bytes
    parts = M.training_parts(TRAIN, s, h100, Plan(dp=2, sharding="zero3"), True, 8)
    assert parts == pytest.approx({"weights": 2.0, "gradients": 1.0, "optimizer": 6.0, "activations": 7680e-9,
                                   "logits": 6000e-9, "runtime": 1.5})
    assert M.total_gb(parts) == pytest.approx(9.0 + 13680e-9)  # the runtime is left out
    # HSDP gathers too; TP2 halves the gathered layers
    hsdp = M.training_parts(TRAIN, s, h100, Plan(tp=2, dp=2, sharding="hsdp"), True, 8)
    assert hsdp["weights"] == pytest.approx(0.5 + 2 * 0.125e9 * 2 / 1e9)
    # TP2 × PP2 × DP2: 0.25e9 parameters per device, half of them held; a gathered layer is 0.25e9 / 4
    tp_pp = M.training_parts(TRAIN, s, h100, Plan(tp=2, pp=2, dp=2, sharding="zero3"), True, 8)
    assert tp_pp["weights"] == pytest.approx(0.25 + 2 * 0.0625 * 2)
    # on one replica ZeRO-3 gathers nothing
    assert M.training_parts(TRAIN, s, h100, Plan(sharding="zero3"), True, 8)["weights"] == pytest.approx(2.0)


def test_the_memory_model_fast_path_agrees_with_the_parts_for_every_kind_of_plan():
    h100 = Device("h100", "H100", "datacenter", memory_gb=80)
    plans = [Plan(), Plan(tp=2, pp=2, dp=4, sharding="zero1"), Plan(dp=4, sharding="zero2"),
             Plan(tp=2, dp=4, sharding="zero3", recompute="full", recompute_share=0.5),
             Plan(tp=2, dp=8, sharding="hsdp", recompute="selective"),
             Plan(cp=2, pp=4, vpp=2, dp=2, micro_batch=2, micro_batches=8),
             Plan(tp=2, ep=2, dp=4, pp=2, sharding="zero1", recompute="full"), Plan(sharding="zero3"),
             Plan(cp=2, dp=2, ep=2, sharding="zero1"), Plan(ep=4, dp=2, sharding="zero2"),
             Plan(pp=3, dp=4, sharding="hsdp"), Plan(tp=8, dp=2, sharding="hsdp"),
             Plan(pp=2, micro_batches=2, recompute="full", recompute_share=0.5)]
    for s, params in ((_shape(), 1e9), (MOE, 8192.0)):
        # LoRA and QLoRA too: their fast path once took the runtime off twice, accepting plans 1.5 GB over
        for w in (Workload(params=params, seq_len=10), Workload(params=params, seq_len=10, precision="fp32"),
                  Workload(kind="finetune", method="full", params=params, seq_len=10),
                  Workload(kind="finetune", method="lora", params=params, seq_len=10),
                  Workload(kind="finetune", method="qlora", params=params, seq_len=10)):
            for flash in (True, False):
                model = MemoryModel(w, s, flash, 8)
                for plan in plans:
                    expect = M.total_gb(M.training_parts(w, s, h100, plan, flash, 8))
                    assert model.need_gb(plan) == pytest.approx(expect, rel=1e-12), (plan, w, flash)
    # LoRA and QLoRA: whatever the constant, the fast path must tell plans apart exactly as the parts do
    for method in ("lora", "qlora"):
        w = Workload(kind="finetune", method=method, params=1e9, seq_len=10)
        for flash in (True, False):
            model = MemoryModel(w, _shape(), flash, 8)
            base = M.total_gb(M.training_parts(w, _shape(), h100, Plan(), flash, 8))
            for plan in plans[1:]:
                gap = M.total_gb(M.training_parts(w, _shape(), h100, plan, flash, 8)) - base
                assert model.need_gb(plan) - model.need_gb(Plan()) == pytest.approx(gap, rel=1e-9, abs=1e-12)
    # and one by hand: ZeRO-3 over DP2 on the dense shape is 9 GB of states plus 13680 bytes
    assert MemoryModel(TRAIN, _shape(), True, 8).need_gb(Plan(dp=2, sharding="zero3")) == \
        pytest.approx(9.0 + 13680e-9, rel=1e-12)


# --------------------------------------------------------------------------- inference


def test_served_weights_split_over_tensor_and_pipeline_ranks():
    assert M.serving_weights_gb(Workload(params=8e9), _shape(), 2, 2) == pytest.approx(4.0)  # 16 GB / 4
    assert M.serving_weights_gb(Workload(params=8e9, weights_bytes=4e9), _shape(), 2, 1) == pytest.approx(2.0)


def test_the_kv_cache_splits_over_kv_heads_until_each_device_holds_one():
    # one KV head of 4: 2 × 4 × 2 bytes × 4 layers = 64 bytes per token; TP2 cannot split one head
    assert M.kv_gb_per_sequence(TRAIN, _shape(), 1000, 2, 1) == pytest.approx(64e3 / 1e9)
    # two KV heads (kv_dim 8, 128 bytes per token) over TP4: split by 2; PP2 halves the layers again
    two = _shape(kv_heads=2)
    assert M.kv_gb_per_sequence(TRAIN, two, 1000, 4, 1) == pytest.approx(128e3 / 2 / 1e9)
    assert M.kv_gb_per_sequence(TRAIN, two, 1000, 4, 2) == pytest.approx(128e3 / 4 / 1e9)
    assert M.kv_gb_per_sequence(TRAIN, two, 1000, 1, 1) == pytest.approx(128e3 / 1e9)
    # a shape with no KV heads recorded still divides by one, not zero
    assert M.kv_gb_per_sequence(TRAIN, _shape(kv_heads=0, attention="mha"), 1000, 4, 1) == 0.0
    # MLA's latent (6 + 2) × 2 bytes × 4 layers = 64 bytes per token is replicated over TP
    mla = _shape(attention="mla", kv_heads=2, kv_lora_rank=6, qk_rope_head_dim=2)
    assert M.kv_gb_per_sequence(TRAIN, mla, 1000, 4, 1) == pytest.approx(64e3 / 1e9)
    assert M.kv_gb_per_sequence(TRAIN, mla, 1000, 4, 2) == pytest.approx(32e3 / 1e9)
    # half the layers with a 100-token window: at 1000 tokens they hold a tenth, 64 × (0.5 × 0.1 + 0.5)
    windowed = _shape(sliding_window=100, sliding_share=0.5)
    assert M.kv_gb_per_sequence(TRAIN, windowed, 1000, 1, 1) == pytest.approx(64 * 0.55 * 1000 / 1e9)


def test_prefill_workspace_is_four_widths_and_two_mlp_widths_of_16_bit_values_per_token():
    # (4 × 8 + 2 × 16) × 2 bytes = 128 bytes per token; 100 tokens over TP2
    assert M.prefill_workspace_gb(TRAIN, _shape(), 2, 100) == pytest.approx(6400 / 1e9)


# --------------------------------------------------------------------------- compute.py: peaks

H100 = Device("h100", "H100", "datacenter", vendor="NVIDIA", architecture="Hopper", mem_bandwidth_gbs=3350,
              peak_tflops={"bf16": 989, "fp8": 1979})


def _peaks(name: str = "Card", **peaks) -> Device:
    return Device("card", name, "datacenter", vendor="NVIDIA", architecture="Hopper", peak_tflops=peaks)


def test_a_listed_peak_is_used_as_is_and_fp8_keeps_the_16_bit_rate_for_the_rest():
    assert training_peak(H100, "bf16") == Peak(989, 989, "bf16")
    assert training_peak(H100, "fp8") == Peak(1979, 989, "fp8", fp8_tflops=1979)
    # FP8 without a 16-bit figure: the rest of the work is assumed at half the FP8 rate
    assert training_peak(_peaks(fp8=1000), "fp8") == Peak(1000, 500.0, "fp8", fp8_tflops=1000)
    assert training_peak(_peaks(fp8=1000, fp16=600), "fp8") == Peak(1000, 600, "fp8", fp8_tflops=1000)


def test_a_missing_precision_falls_back_to_its_nearest_neighbour_and_says_so():
    assert training_peak(_peaks(bf16=400), "fp8") == Peak(400, 400, "bf16", "Card has no FP8 figure: BF16 used")
    assert training_peak(_peaks(fp16=300), "fp8") == Peak(300, 300, "fp16", "Card has no FP8 figure: FP16 used")
    assert training_peak(_peaks(fp16=300), "bf16") == Peak(300, 300, "fp16", "Card has no BF16 figure: FP16 used")
    assert training_peak(_peaks(bf16=400), "fp16") == Peak(400, 400, "bf16", "Card has no FP16 figure: BF16 used")
    assert training_peak(_peaks(fp32=60), "tf32") == Peak(60, 60, "fp32", "Card has no TF32 figure: FP32 used")
    assert training_peak(_peaks(fp32=19.5), "bf16") == \
        Peak(19.5, 19.5, "fp32", "Card has no 16-bit figure: its FP32 rate (19.5 TFLOPS) is used")
    assert training_peak(_peaks(tf32=100, fp32=60), "tf32") == Peak(100, 100, "tf32")
    # both 16-bit figures listed: each precision keeps its own
    assert training_peak(_peaks(bf16=400, fp16=300), "bf16") == Peak(400, 400, "bf16")
    assert training_peak(_peaks(bf16=400, fp16=300), "fp16") == Peak(300, 300, "fp16")
    # FP16 and FP8 fall back to FP32 as BF16 does
    assert training_peak(_peaks(fp32=19.5), "fp16") == \
        Peak(19.5, 19.5, "fp32", "Card has no 16-bit figure: its FP32 rate (19.5 TFLOPS) is used")
    assert training_peak(_peaks(fp32=19.5), "fp8") == \
        Peak(19.5, 19.5, "fp32", "Card has no 16-bit figure: its FP32 rate (19.5 TFLOPS) is used")


def test_no_usable_figure_gives_no_peak():
    assert training_peak(_peaks(), "bf16") is None
    assert training_peak(_peaks(bf16=400), "fp32") is None  # FP32 training never borrows a 16-bit rate
    assert training_peak(_peaks(fp32=60), "int8") is None


def test_without_tensor_cores_16_bit_math_runs_at_the_fp32_rate():
    # a consumer Pascal card: FP16 at 1/64 of its FP32 rate, and mixed precision at the FP32 rate
    gtx = Device("gtx1080", "GTX 1080", "consumer", vendor="NVIDIA", architecture="Pascal",
                 peak_tflops={"fp16": 0.139, "fp32": 8.87})
    assert training_peak(gtx, "fp16") == Peak(0.139, 8.87, "fp16", tensor_note=(
        "GTX 1080 has no tensor cores: 16-bit training accumulates in FP32 at 8.87 TFLOPS, not its 0.139 TFLOPS FP16 "
        "figure"))
    p100 = Device("p100", "P100", "datacenter", vendor="NVIDIA", architecture="Pascal",
                  peak_tflops={"fp16": 21.2, "fp32": 10.6})
    # no FP32 figure: half the 16-bit one
    bare = Device("gp", "GP", "datacenter", vendor="NVIDIA", architecture="Pascal", peak_tflops={"bf16": 20})
    assert training_peak(bare, "bf16").rate_tflops == 10.0
    # FP32 itself is not reduced
    assert training_peak(p100, "fp32") == Peak(10.6, 10.6, "fp32")


# --------------------------------------------------------------------------- compute.py: rates


def test_rates_take_the_profiles_shares_of_the_peak_and_bandwidth():
    # Hopper: 80.3% of the matrix peak, 50% for attention, 88% of the bandwidth, 3 µs a kernel, 5 µs a launch
    r = rates(H100, training_peak(H100, "bf16"), 1.0, "bf16")
    assert r.gemm == pytest.approx(989e12 * 0.803) and r.gemm16 == pytest.approx(989e12 * 0.803)
    assert r.attention == pytest.approx(989e12 * 0.5)
    assert r.bandwidth == pytest.approx(3350e9 * 0.88)
    assert (r.kernel_s, r.launch_s, r.flash) == (pytest.approx(3e-6), pytest.approx(5e-6), True)
    assert r.profile is PROFILES["nvidia-hopper"] and r.matmul_basis == "NVIDIA Hopper (data centre)"


def test_the_case_factor_scales_shares_but_never_beyond_95_percent_nor_bandwidth_beyond_105():
    r = rates(H100, training_peak(H100, "bf16"), 1.3, "bf16")
    assert r.gemm == pytest.approx(989e12 * 0.95)  # 0.803 × 1.3 = 1.04, capped
    assert r.attention == pytest.approx(989e12 * 0.65)
    assert r.bandwidth == pytest.approx(3350e9 * 0.88 * 1.05)
    low = rates(H100, training_peak(H100, "bf16"), 0.5, "bf16")
    assert low.gemm == pytest.approx(989e12 * 0.4015) and low.bandwidth == pytest.approx(3350e9 * 0.44)
    assert rates(H100, Peak(989, 989, "bf16"), 2.0, "bf16").attention == pytest.approx(989e12 * 0.95)


def test_fp8_runs_its_own_share_of_the_fp8_peak_and_16_bit_work_the_bf16_share():
    r = rates(H100, training_peak(H100, "fp8"), 1.0, "fp8")
    assert r.gemm == pytest.approx(1979e12 * 0.709)
    assert r.gemm16 == pytest.approx(989e12 * 0.803)
    assert r.attention == pytest.approx(989e12 * 0.5)
    # the case factor scales the FP8 share too: 0.709 × 0.5
    assert rates(H100, training_peak(H100, "fp8"), 0.5, "fp8").gemm == pytest.approx(1979e12 * 0.3545)


def test_a_measured_matmul_rate_replaces_the_profiles_share():
    measured = Device("h100", "H100m", "datacenter", vendor="NVIDIA", architecture="Hopper", mem_bandwidth_gbs=3350,
                      peak_tflops={"bf16": 1000}, achievable_tflops={"bf16": 800})
    r = rates(measured, training_peak(measured, "bf16"), 1.0, "bf16")
    assert r.gemm == pytest.approx(1000e12 * 0.8)
    assert r.matmul_basis == "H100m's measured 800 of 1,000 TFLOPS"


def test_an_unknown_bandwidth_is_one_byte_a_second_not_zero_and_a_family_without_fusion_has_no_flash():
    odd = Device("x", "X", "datacenter", peak_tflops={"bf16": 100})
    r = rates(odd, training_peak(odd, "bf16"), 1.0, "bf16")
    assert r.bandwidth == 1.0
    assert r.flash is False and r.profile is PROFILES["generic"]
    assert (r.kernel_s, r.launch_s) == (pytest.approx(5e-6), pytest.approx(6e-6))


def _rates(flash: bool) -> Rates:
    return Rates(gemm=1e12, gemm16=0.5e12, attention=0.25e12, bandwidth=1e11, kernel_s=0.0, launch_s=0.0,
                 flash=flash, profile=PROFILES["generic"], matmul_basis="")


CURVE = GemmCurve(efficiency=0.8, bandwidth_share=0.8, fixed_us=1.0, k_half=100.0, tile_m=64, tile_n=128, units=100)


def _curved(flash: bool) -> Rates:
    return replace(_rates(flash), curve=CURVE, curve16=CURVE, peak_flops=2e12, peak16_flops=1e12, bandwidth_raw=1e11)


def _sf(shapes, peak=2e12) -> float:
    return shape_factor(CURVE, shapes, peak, 1e11)


def test_a_dense_layers_gemms_attention_and_element_wise_traffic():
    s = _shape()
    # matmul parameters: attention 8·8 + 2·8·4 + 8·8 = 192, gated MLP 3·8·16 = 384; 576 in all.
    # without a curve the GEMMs run at the large-GEMM rate; backward (input and weight gradients) twice that
    work = layer_work(s, TRAIN, _rates(True), 192, 1, False, 2.0)
    assert work.gemm == pytest.approx(2 * 576 * 192 / 1e12)
    assert work.backward_gemm == pytest.approx(2 * work.gemm)
    # causal attention over 10 tokens sees 5 on average: 4 × 8 × 5 × 192 = 30720 FLOPs at 0.25 PFLOP/s
    assert work.attention == pytest.approx(30720 / 0.25e12)
    # element-wise: (25 × 8 + 6 × 16) × 192 bytes, counted twice (ew_factor 2), at 100 GB/s
    assert work.memory == pytest.approx((200 + 96) * 192 * 2 / 1e11)
    # unfused: the two score GEMMs at 70% of the 16-bit rate plus 8 bytes per head and key through memory
    unfused = layer_work(s, TRAIN, _rates(False), 192, 1, False, 2.0)
    assert unfused.attention == pytest.approx(30720 / (0.5e12 * 0.7) + 8 * 2 * 5 * 192 / 1e11)
    # with a curve, the rate is scaled by the shape factor of the layer's own products: QKV (192 × 16 × 8),
    # the output projection (192 × 8 × 8), gate and up (192 × 32 × 8) and down (192 × 8 × 16)
    shapes = layer_shapes(s, 192, 1)
    assert shapes == ((192, 16, 8), (192, 8, 8), (192, 32, 8), (192, 8, 16))
    curved = layer_work(s, TRAIN, _curved(True), 192, 1, False, 2.0)
    assert curved.gemm == pytest.approx(2 * 576 * 192 / (1e12 * _sf(shapes)))
    assert curved.backward_gemm == pytest.approx(4 * 576 * 192 / (1e12 * _sf(backward_shapes(shapes))))
    assert backward_shapes(((192, 16, 8),)) == ((192, 8, 16), (8, 16, 192))


def test_lora_backward_runs_only_the_input_gradients_of_its_frozen_weights_plus_the_adapters():
    s = _shape()
    lora = replace(TRAIN, kind="finetune", method="lora", lora_fraction=0.01)
    full = layer_work(s, TRAIN, _curved(True), 192, 1, False, 2.0)
    work = layer_work(s, lora, _curved(True), 192, 1, False, 2.0)
    shapes = layer_shapes(s, 192, 1)
    # no weight gradient for a frozen matrix: the backward pass runs each input gradient once
    assert backward_shapes(((192, 16, 8),), weights=False) == ((192, 8, 16),)
    adapters = 0.01 * 576 * 192 / (1e12 * _sf(shapes))
    assert work.gemm == pytest.approx(full.gemm + 2 * adapters)
    assert work.backward_gemm == pytest.approx(
        2 * 576 * 192 / (1e12 * _sf(backward_shapes(shapes, weights=False))) + 4 * adapters)
    assert work.backward_gemm < 0.6 * full.backward_gemm
    # QLoRA's base weights are frozen too; a full fine-tune's are not
    assert replace(lora, method="qlora").frozen_base and not replace(lora, method="full").frozen_base
    assert not replace(TRAIN, method="lora").frozen_base  # "method" counts only for a fine-tune
    # the output head of a LoRA stage likewise skips its weight gradient
    r = _curved(True)
    head = ((192, 100, 8),)  # tokens × vocab × width, at the 16-bit rate
    logits = 2 * 600 * 192 * 2 / 3 / 1e11  # two thirds of the logits written and read (600 bytes a token each)
    for w, passes, weights in ((TRAIN, 4, True), (lora, 2, False)):
        with_head = stage_time(s, w, r, 192, 1, 4, 0.0, "none", 2.0, 0.0, True)
        without = stage_time(s, w, r, 192, 1, 4, 0.0, "none", 2.0, 0.0, False)
        assert with_head.backward - without.backward == pytest.approx(
            passes * 100 * 8 * 192 / r.gemm_rate(backward_shapes(head, weights), sixteen=True) + logits, rel=1e-9)


def test_backward_products_split_over_tensor_parallel_ranks_for_dense_and_moe_layers_alike():
    r = _curved(True)
    lora = replace(TRAIN, kind="finetune", method="lora", lora_fraction=0.01)
    dense_shapes, moe_shapes = layer_shapes(_shape(), 192, 2), layer_shapes(MOE, 192, 2)
    # MoE at TP2: 224 parameters outside the experts (attention 192, router 32), one routed expert of 384 whose
    # 192 token rows are padded to 256 (four experts, 64-row tiles), its products' widths halved
    attn, experts = moe_shapes[:2], ((256, 16, 8), (256, 8, 8))
    for w, passes, weights in ((TRAIN, 2, True), (lora, 1, False)):
        dense = layer_work(_shape(), w, r, 192, 2, False, 1.0)
        moe = layer_work(MOE, w, r, 192, 2, True, 1.0)
        dense_adapters = 0.0 if weights else 0.01 * 576 * 192 / 2 / r.gemm_rate(dense_shapes)
        moe_adapters = 0.0 if weights else 0.01 * 608 * 192 / 2 / r.gemm_rate(moe_shapes)
        assert dense.backward_gemm == pytest.approx(
            2 * passes * 576 * 192 / 2 / r.gemm_rate(backward_shapes(dense_shapes, weights)) + 4 * dense_adapters)
        outside = 224 * 192 / 2 / r.gemm_rate(backward_shapes(attn, weights))
        routed = 384 * 192 / 2 / (r.gemm_rate(backward_shapes(experts, weights)) * 192 / 256)
        assert moe.backward_gemm == pytest.approx(2 * passes * (outside + routed) + 4 * moe_adapters)
        assert moe.gemm == pytest.approx(2 * 224 * 192 / 2 / r.gemm_rate(attn)
                                         + 2 * 384 * 192 / 2 / (r.gemm_rate(experts) * 192 / 256) + 2 * moe_adapters)


def test_tensor_parallelism_splits_a_layers_work_and_narrows_its_matrices():
    s = _shape(gated=False)
    # plain MLP 2·8·16 = 256, 448 in all; TP2 halves the work and the products' widths
    work = layer_work(s, TRAIN, _curved(False), 192, 2, False, 1.0)
    shapes = layer_shapes(s, 192, 2)
    assert shapes == ((192, 8, 8), (192, 8, 4), (192, 8, 8), (192, 8, 8))
    assert work.gemm == pytest.approx(2 * 448 * 192 / 2 / (1e12 * _sf(shapes)))
    assert work.attention == pytest.approx(15360 / (0.5e12 * 0.7) + 8 * 1 * 5 * 192 / 1e11)
    assert work.memory == pytest.approx((200 + 4 * 16) * 96 / 1e11)  # a plain MLP moves 4 bytes per width


def test_a_moe_layer_runs_its_experts_on_the_tokens_routed_to_each():
    # attention 192 + router 8 × 4 = 32 outside the experts; one active expert of 3·8·16 = 384.
    # 192 tokens over 4 experts: 48 rows each, run as one grouped product whose experts' rows are padded
    # to whole 64-row tiles: 4 × 64 = 256 rows, 192 of them real (products 256 × 32 × 8 and 256 × 8 × 16)
    work = layer_work(MOE, TRAIN, _curved(True), 192, 1, True, 1.0)
    attn = layer_shapes(MOE, 192, 1)[:2]
    outside = 2 * 224 * 192 / (1e12 * _sf(attn))
    experts = 2 * 384 * 192 / (1e12 * _sf(((256, 32, 8), (256, 8, 16))) * 192 / 256)
    assert work.gemm == pytest.approx(outside + experts)
    assert work.memory == pytest.approx((200 + 6 * 16) * 192 / 1e11)
    # two tokens reach two of the 4 experts: two padded tiles of one real row each
    two = layer_work(MOE, TRAIN, _curved(True), 2, 1, True, 1.0)
    assert two.gemm == pytest.approx(2 * 224 * 2 / (1e12 * _sf(layer_shapes(MOE, 2, 1)[:2])) +
                                     2 * 384 * 2 / (1e12 * _sf(((128, 32, 8), (128, 8, 16))) * 2 / 128))


def test_shared_experts_run_on_every_token_beside_the_routed_ones():
    # 2 routed of 4 experts and 1 shared: 3 × 384 = 1152 expert parameters a token; attention 192 and the
    # router 32 outside them. 192 tokens × 2 / 4 = 96 rows per expert, padded to two 64-row tiles each:
    # a grouped product of 4 × 128 = 512 rows, 384 real; TP2 halves widths and work
    s = _shape(params=20000.0, experts=4, experts_active=2, shared_experts=1, expert_ffn_dim=16)
    work = layer_work(s, TRAIN, _curved(True), 192, 2, True, 1.0)
    outside = 2 * 224 * 192 / 2 / (1e12 * _sf(layer_shapes(s, 192, 2)[:2]))
    experts = 2 * 1152 * 192 / 2 / (1e12 * _sf(((512, 16, 8), (512, 8, 8))) * 384 / 512)
    assert work.gemm == pytest.approx(outside + experts)
    assert work.memory == pytest.approx((200 + 6 * 48) * 96 / 1e11)  # MLP width (2 + 1) × 16


def test_the_mean_layer_weighs_dense_and_moe_layers_by_their_share():
    r = _rates(True)
    dense = layer_work(MOE, TRAIN, r, 192, 1, False, 1.0)
    moe = layer_work(MOE, TRAIN, r, 192, 1, True, 1.0)
    mean = mean_layer_work(MOE, TRAIN, r, 192, 1, 0.25, 1.0)
    assert mean.gemm == pytest.approx(0.75 * dense.gemm + 0.25 * moe.gemm)
    assert mean.attention == pytest.approx(0.75 * dense.attention + 0.25 * moe.attention)
    assert mean.memory == pytest.approx(0.75 * dense.memory + 0.25 * moe.memory)
    assert moe.gemm != pytest.approx(dense.gemm)
    assert mean_layer_work(_shape(), TRAIN, r, 192, 1, 0.25, 1.0) == layer_work(_shape(), TRAIN, r, 192, 1, False, 1.0)


def _stage(recompute: str = "none", flash: bool = True, launch_s: float = 0.0, share: float = 1.0) -> StageTime:
    r = Rates(1.0, 1.0, 1.0, 1.0, 0.01, launch_s, flash, PROFILES["generic"], "")
    # two layers of 1 s GEMMs, 0.5 s attention and 0.3 s element-wise traffic; 10 kernels a layer at 10 ms
    return stage_time(_shape(), TRAIN, r, 192, 1, 2, 0.0, recompute, 1.0, 10, False,
                      unit=LayerWork(1.0, 0.5, 0.3), recompute_share=share)


def test_backward_costs_twice_the_gemms_and_two_and_a_half_times_fused_attention():
    # forward 2 + 1 + 0.6/3 + 0.2/3; backward 4 + 2.5 + 2·0.6/3 + 2·0.2/3
    t = _stage()
    assert (t.forward, t.backward) == (pytest.approx(3.2 + 0.2 / 3), pytest.approx(6.9 + 0.4 / 3))
    assert (t.gemm, t.attention, t.memory, t.overhead) == pytest.approx((6.0, 3.5, 0.6, 0.2))
    assert t.total == pytest.approx(10.3)
    # unfused attention's backward is twice its forward
    t = _stage(flash=False)
    assert t.backward == pytest.approx(6.4 + 0.4 / 3) and t.attention == pytest.approx(3.0)


def test_recomputation_adds_a_forward_or_the_attention_and_a_ninth_of_the_traffic():
    forward = 3.2 + 0.2 / 3
    assert _stage("full").backward == pytest.approx(6.9 + 0.4 / 3 + forward)
    assert _stage("full", share=0.5).backward == pytest.approx(6.9 + 0.4 / 3 + forward / 2)
    assert _stage("selective").backward == pytest.approx(6.9 + 0.4 / 3 + 1.0 + 0.6 / 9)
    assert _stage("selective").forward == pytest.approx(forward)
    # full recomputation recomputes every layer unless told otherwise
    r = Rates(1.0, 1.0, 1.0, 1.0, 0.01, 0.0, True, PROFILES["generic"], "")
    t = stage_time(_shape(), TRAIN, r, 192, 1, 2, 0.0, "full", 1.0, 10, False, unit=LayerWork(1.0, 0.5, 0.3))
    assert t.backward == pytest.approx(6.9 + 0.4 / 3 + forward)


def test_the_host_launch_rate_floors_a_stage():
    # 20 kernels at 1 s each: the forward takes at least a third, the backward two thirds
    t = _stage(launch_s=1.0)
    assert (t.forward, t.backward) == (pytest.approx(20 / 3), pytest.approx(40 / 3))
    assert t.gemm == pytest.approx(6.0)  # the parts are not floored


def test_the_last_stage_adds_the_output_head_and_the_loss():
    r = Rates(1e6, 1e6, 1e6, 1e6, 0.0, 0.0, True, PROFILES["generic"], "")
    nothing = LayerWork(0.0, 0.0, 0.0)
    # head: 2 × 100 × 8 × 192 FLOPs at 1 MFLOP/s = 0.3072 s forward, twice that backward; logits
    # 6 × 2 × 100 × 192 bytes
    t = stage_time(_shape(), TRAIN, r, 192, 1, 1, 0.0, "none", 1.0, 0, True, unit=nothing)
    assert t.gemm == pytest.approx(3 * 0.3072) and t.memory == pytest.approx(0.2304)
    assert t.forward == pytest.approx(0.3072 + 0.2304 / 3)
    assert t.backward == pytest.approx(2 * 0.3072 + 2 * 0.2304 / 3)
    # TP2 halves the head's work (the vocabulary is split)
    t2 = stage_time(_shape(), TRAIN, r, 192, 2, 1, 0.0, "none", 1.0, 0, True, unit=nothing)
    assert t2.gemm == pytest.approx(3 * 0.1536) and t2.memory == pytest.approx(0.1152)
    # the head adds to the layers' work
    t = stage_time(_shape(), TRAIN, r, 192, 1, 2, 0.0, "none", 1.0, 0, True, unit=LayerWork(1.0, 0.5, 0.3))
    assert t.gemm == pytest.approx(3 * (2 + 0.3072)) and t.memory == pytest.approx(0.6 + 0.2304)
    # with a curve the head's product (192 × 100 × 8) runs at its own shape factor, on the 16-bit curve
    curved = replace(r, curve16=CURVE, peak16_flops=1e12, bandwidth_raw=1e11)
    t = stage_time(_shape(), TRAIN, curved, 192, 1, 1, 0.0, "none", 1.0, 0, True, unit=nothing)
    factor = shape_factor(CURVE, [(192, 100, 8)], 1e12, 1e11)
    assert t.forward == pytest.approx(0.3072 / factor + 0.2304 / 3)
    # no vocabulary, or not the last stage: no head
    assert stage_time(_shape(vocab=None), TRAIN, r, 192, 1, 1, 0.0, "none", 1.0, 0, True, unit=nothing).total == 0.0
    assert stage_time(_shape(), TRAIN, r, 192, 1, 1, 0.0, "none", 1.0, 0, False, unit=nothing).total == 0.0


def test_a_stage_without_a_given_unit_computes_its_mean_layer():
    r = _rates(True)
    t = stage_time(_shape(), TRAIN, r, 192, 1, 3, 0.0, "none", 1.0, 0, False)
    unit = layer_work(_shape(), TRAIN, r, 192, 1, False, 1.0)
    assert t.gemm == pytest.approx(3 * 3 * unit.gemm) and t.memory == pytest.approx(3 * unit.memory)


def test_a_moe_stage_without_a_given_unit_mixes_its_layers():
    r = _rates(True)
    t = stage_time(MOE, TRAIN, r, 192, 1, 4, 0.25, "none", 1.0, 0, False)
    assert t.gemm == pytest.approx(3 * 4 * mean_layer_work(MOE, TRAIN, r, 192, 1, 0.25, 1.0).gemm)


def test_an_adam_step_moves_28_bytes_per_parameter():
    assert optimizer_step_s(1e9, _rates(True)) == pytest.approx(28e9 / 1e11)
