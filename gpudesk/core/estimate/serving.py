"""LLM inference and serving.

Decoding one step reads every weight a step touches and each running sequence's KV cache once,
dequantises quantised weights on the vector units, and pays a fixed cost per kernel; tensor
parallelism splits the reads and adds two all-reduces per layer. Kernels on one stream run in turn:
the products take the slower of their weights' reads and their arithmetic (bandwidth-bound until
batching makes them compute-bound), and the attention kernel's reads of the cache come after them.
A mixture of experts multiplies as one grouped GEMM over its routed experts. Prompt processing is
compute-bound, and under tensor parallelism each prompt token is all-reduced twice a layer too.

Serving follows continuous batching (Yu et al. 2022, "Orca"; Kwon et al. 2023, "vLLM"): the
running batch is the concurrency, capped by the KV cache the memory left after the weights can hold
(paged, so sequences take what they use) and by the server's sequence limit; requests beyond it
queue. Prompts are processed in chunks joined to decode steps, so each request's prefill stretches
the steps of the others. Per replica, with B sequences running, prompt P and output O tokens:
requests/s R = 1 / (P·t_prefill_token + O·T_step(B)/B), output tokens/s = R·O, time per output
token = T_step(B) + B·P·t_prefill_token/O, and the queue adds (waiting requests)/R to the time to
the first token (Little's law).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.comm import place
from gpudesk.core.estimate.compute import gemm_curve
from gpudesk.core.estimate.kernels import GemmCurve, measured_all_reduce, shape_factor
from gpudesk.core.estimate.memory import (
    GB,
    capacity_gb,
    device_params,
    kv_gb_per_sequence,
    prefill_workspace_gb,
    serving_weights_gb,
)
from gpudesk.core.estimate.model import (
    Shape,
    attention_flops_per_token,
    expert_products,
    inference_flops_per_token,
    is_quantised,
    kv_dtype,
    layer_matmul_params,
    matmul_params_per_token,
    mlp_params,
    weight_bytes_per_param,
)
from gpudesk.core.estimate.profiles import bandwidth_share, gemm_key, matmul_share, profile_of
from gpudesk.core.estimate.topology import Topology
from gpudesk.core.estimate.types import Band, Device, Workload

KERNEL_CASE = Band(1.6, 1.0, 0.7, "fixed cost per kernel, slower and faster runtimes")


def inference_peak(device: Device, precision: str) -> tuple[float | None, str]:
    """Dense peak (TFLOPS) of the matrix multiplications of inference at `precision`."""
    peaks = device.peak_tflops
    order = {
        "fp32": ("fp32",), "tf32": ("tf32", "fp32"), "fp16": ("fp16", "bf16", "fp32"), "bf16": ("bf16", "fp16", "fp32"),
        "fp8": ("fp8", "bf16", "fp16", "fp32"), "int8": ("int8", "fp8", "fp16", "bf16", "fp32"),
        "int4": ("fp16", "bf16", "fp32"), "q4": ("fp16", "bf16", "fp32"), "q8": ("fp16", "bf16", "fp32"), "fp4": ("fp4", "fp8", "fp16", "bf16", "fp32"),
    }.get(precision, ("fp16", "bf16", "fp32"))
    profile = profile_of(device)
    for key in order:
        if not peaks.get(key):
            continue
        value = peaks[key]
        note = "" if key == order[0] else f"{device.name}: {precision.upper()} runs at its {key.upper()} rate"
        if not profile.tensor and key in ("fp16", "bf16") and peaks.get("fp32"):
            value = peaks["fp32"]
        gain = C.FP16_ACCUMULATE_GAIN.get(device.device_class, 1.0) if key in ("fp16", "bf16", "fp8") else 1.0
        if gain != 1.0 and profile.tensor:
            value *= gain
            note = (note + "; " if note else "") + f"{device.name}: inference GEMMs with FP16 accumulation at twice " \
                                                   "the stored FP32-accumulate rate"
        return value, note
    return None, f"the catalogue has no compute figure for {device.name} at {precision.upper()}"


@dataclass(frozen=True)
class Engine:
    """One device's sustained rates for inference in one case."""

    gemm: float  # FLOP/s of large GEMMs
    bandwidth: float  # bytes/s
    vector: float  # simple operations/s on the vector units (dequantisation)
    kernel_s: float
    launch_s: float  # the host's cost per kernel launched eagerly
    step_overhead_s: float
    compute_known: bool = True  # False when the catalogue has no compute figure: decode is timed by bandwidth alone
    tensor: bool = True  # matrix units, fed by vector units that must unpack quantised weights first
    curve: GemmCurve | None = None  # GEMM curve at the serving precision (shape dependence)
    peak_flops: float = 0.0
    bandwidth_raw: float = 0.0
    gemm_precision: str = "bf16"
    decode_curves: tuple = ()  # measured decode-attention curves (kernels.DecodeAttentionCurve) by KV dtype
    context_curve: object | None = None  # measured prefill attention (kernels.ContextAttentionCurve)
    attention_case: float = 1.0  # the case's factor on the measured prefill attention
    bandwidth_case: float = 1.0  # the case's factor on memory speed (pessimistic, likely, optimistic)
    peak16_flops: float = 0.0
    moe_curves: tuple = ()  # a mixture of experts' expert computation measured on the device (kernels.MoECurve)

    def shape(self, shapes, compute_only: bool = False) -> float:
        """The curve's shape factor for these products (1.0 without a curve)."""
        if self.curve is None or self.peak_flops <= 0:
            return 1.0
        return shape_factor(self.curve, shapes, self.peak_flops, self.bandwidth_raw, self.gemm_precision, compute_only)


def engine_rates(device: Device, precision: str, case: int, spread: float) -> Engine:
    profile = profile_of(device)
    peak, _ = inference_peak(device, precision)
    key = gemm_key(precision)
    share, _basis = matmul_share(device, profile, key)
    gemm_case = C.PREFILL_GEMM_SHARE.pick(case)
    bw_case = {0: 0.85 / spread, 1: 1.0, 2: min(1.08, 1.0 * spread)}[case]
    vector = (device.peak_tflops.get("fp32") or (peak or 0.0) / 8.0) * 1e12 / 2.0  # FMA counts 2 FLOPs
    return Engine(
        gemm=(peak or 0.0) * 1e12 * share * gemm_case,
        bandwidth=(device.mem_bandwidth_gbs or 0.0) * 1e9 * min(0.97, bandwidth_share(device, profile)[0] * bw_case),
        vector=max(vector, 1.0),
        kernel_s=profile.kernel_us * 1e-6 * KERNEL_CASE.pick(case),
        launch_s=profile.launch_us * 1e-6 * KERNEL_CASE.pick(case),
        step_overhead_s=C.SERVER_STEP_OVERHEAD_S.pick(case),
        compute_known=peak is not None,
        tensor=profile.tensor,
        curve=gemm_curve(device, profile, key),
        peak_flops=(peak or 0.0) * 1e12,
        bandwidth_raw=max(1.0, (device.mem_bandwidth_gbs or 0.0) * 1e9),
        gemm_precision=key,
        decode_curves=tuple(device.decode_attention_curves),
        context_curve=device.context_attention_curve,
        attention_case=gemm_case / C.PREFILL_GEMM_SHARE.likely,
        bandwidth_case=bw_case,
        peak16_flops=(device.peak_tflops.get("bf16") or device.peak_tflops.get("fp16") or 0.0) * 1e12,
        moe_curves=tuple(device.moe_curves),
    )


def decode_attention_s(w: Workload, s: Shape, e: Engine, lay: Layout, micro: int, context: float) -> float | None:
    """Seconds one pipeline stage spends in decode attention for one micro-batch, from the attention
    measured on this device for the cache's element type; None where there is no such table or the
    model's attention is not what it measured (multi-head latent attention, sliding windows)."""
    if not e.decode_curves or s.attention == "mla" or s.sliding_window:
        return None
    curves = attention_curves(e.decode_curves, kv_dtype(w), w.server)
    if not curves:
        return None
    heads, kv_heads = s.heads / lay.tp, max(1.0, s.kv_heads / lay.tp)
    if lay.dp_attention:  # each device: its own share of the sequences, every head
        heads, kv_heads, micro = s.heads, max(1, s.kv_heads), math.ceil(micro / lay.tp)
    per_layer = min(c.seconds(micro, context, heads, kv_heads, s.head_dim, e.bandwidth_raw * e.bandwidth_case,
                              e.peak16_flops) for c in curves)
    return per_layer * s.layers / lay.pp


# whose measured attention kernels time each server's decoding: its own where timed, else vLLM's (the
# kernels SGLang and llama.cpp's CUDA backend share the most with); the tuned server takes the fastest timed
ATTENTION_KERNELS = {"trtllm": ("trtllm", "vllm")}
TIMED_ENGINES = ("trtllm", "vllm")


def attention_curves(curves, dtype: str, server: str) -> tuple:
    """The decode-attention curves for a cache of `dtype` under `server`: the server's own table, else the
    first of its fallbacks a table exists for; for the tuned server every engine's (the fastest is taken)."""
    of_dtype = [c for c in curves if c.kv_dtype == dtype]
    if server in ("", "tuned", None):
        return tuple(c for c in of_dtype if c.server in TIMED_ENGINES)
    for name in ATTENTION_KERNELS.get(server, ("vllm",)):
        found = tuple(c for c in of_dtype if c.server == name)
        if found:
            return found
    return ()


# the weight format each engine's MoE operator was timed in at a serving precision: 16-bit, NVFP4, and
# FP8 as each runs MoE checkpoints (TensorRT-LLM per-tensor scaled, NVIDIA's ModelOpt checkpoints; vLLM
# and SGLang 128x128 block-scaled, DeepSeek's and Qwen's). Weight-only formats (int4, GGUF) have none.
MOE_FORMATS = {"bf16": "bfloat16", "fp16": "bfloat16", "fp4": "nvfp4"}
MOE_FP8 = {"trtllm": "fp8"}


def moe_format(precision: str, engine: str) -> str | None:
    if precision == "fp8":
        return MOE_FP8.get(engine, "fp8_block")
    return MOE_FORMATS.get(precision)


# whose measured MoE operator times each server's experts, as ATTENTION_KERNELS does for attention;
# llama.cpp runs its own per-expert path, which none of them is
MOE_KERNELS = {**ATTENTION_KERNELS, "llamacpp": ()}


def moe_curves_for(curves, precision: str, server: str) -> tuple:
    """The MoE curves for `precision` under `server`: the server's own operator where timed, else the
    first of its fallbacks; for the tuned server every engine's (the fastest is taken)."""
    def of(engine):
        return tuple(c for c in curves if c.server == engine and c.dtype == moe_format(precision, engine))
    if server in ("", "tuned", None):
        return tuple(c for engine in TIMED_ENGINES for c in of(engine))
    return next((found for found in map(of, MOE_KERNELS.get(server, ("vllm",))) if found), ())


def moe_layer_s(w: Workload, s: Shape, e: Engine, lay: Layout, tokens: float) -> float | None:
    """Seconds one device spends in one MoE layer's routed experts over `tokens` tokens, from the MoE
    operator measured on it (experts split tensor-parallel, or spread expert-parallel over the tp devices
    with data-parallel attention); None where none was measured for this precision and server."""
    if not s.moe or not e.moe_curves or e.curve is None or not e.curve.measured or tokens <= 0:
        return None
    curves = moe_curves_for(e.moe_curves, w.precision, w.server)
    if not curves:
        return None
    tp, ep = (1, lay.tp) if lay.dp_attention else (lay.tp, 1)
    return min(c.seconds(tokens, s.d_model, s.expert_ffn_dim, s.experts_active, s.experts, tp, ep, e.curve,
                         e.peak_flops, e.bandwidth_raw * e.bandwidth_case) for c in curves)


def routed_params_per_token(s: Shape) -> float:
    """Parameters a token multiplies by in its routed experts, over all MoE layers."""
    return s.moe_layers * s.experts_active * mlp_params(s.d_model, s.expert_ffn_dim, True) if s.moe else 0.0


@dataclass(frozen=True)
class Layout:
    tp: int
    pp: int
    replicas: int
    # a mixture of experts served with data-parallel attention (SGLang's and TensorRT-LLM's attention DP, the
    # layout DeepSeek's own serving uses): each of the tp devices runs attention for its own share of the
    # sequences with the whole attention, holding only their KV cache, and the routed experts are split
    # over the tp devices (expert parallel tp); tokens go to their experts and back by two all-to-alls a layer
    dp_attention: bool = False


@dataclass
class Serving:
    layout: Layout
    batch: int  # sequences running per replica
    limit: str  # what caps the batch: concurrency | kv_cache | max_batch
    kv_capacity_sequences: int
    queued: int  # requests waiting per replica
    step_s: float  # one decode step at the running batch
    prefill_s: float  # one prompt alone on a replica
    prefill_token_s: float  # marginal compute per prompt token while batching
    requests_per_s: float  # whole cluster
    output_tokens_per_s: float  # whole cluster
    tpot_s: float
    ttft_s: float
    round_s: float  # time for every user's request once
    bound: str
    weights_gb: float
    kv_gb: float
    step_bytes: float = 0.0  # bytes one device reads for one micro-batch (a token reads pp of these in turn)


def tp_all_reduce(topo: Topology, tp: int, nbytes: float) -> float:
    """Seconds of one tensor-parallel all-reduce of `nbytes`: from the all-reduces measured on this
    hardware where the group sits in one fast domain (a serving engine uses the faster of NCCL and its
    own), else latency hops and the link's rate (four times that when the group spans domains)."""
    group = place(tp, 1, topo)
    if group.domains == 1:
        measured = measured_all_reduce(topo.all_reduce_curves, tp, nbytes, ("nccl", "custom"))
        if measured is not None:
            return measured
    per_call = topo.intra_latency_s * 2 * math.ceil(math.log2(tp)) + \
        2 * (tp - 1) / tp * nbytes / (topo.ring_rate_gbs(min(tp, topo.domain)) * 1e9)
    return per_call * (1 if group.domains == 1 else 4)


def expert_all_to_all(topo: Topology, s: Shape, tp: int, tokens: float) -> float:
    """Seconds of one MoE layer's two all-to-alls under data-parallel attention: each device sends its
    `tokens` tokens' activations (16-bit) to the devices holding their experts, and gets them back
    (no measured table: latency hops and the link's rate, four times that across domains)."""
    nbytes = tokens * s.experts_active * s.d_model * 2
    one = topo.intra_latency_s * math.ceil(math.log2(tp)) + (tp - 1) / tp * nbytes / (topo.ring_rate_gbs(min(tp, topo.domain)) * 1e9)
    return 2 * one * (1 if place(tp, 1, topo).domains == 1 else 4)


def layer_exchanges(topo: Topology, s: Shape, lay: Layout, tokens: float) -> float:
    """Seconds a step's tensor-parallel exchanges take over all layers for `tokens` tokens of the replica:
    two all-reduces a layer, or, with data-parallel attention, the MoE layers' all-to-alls of each
    device's share."""
    if lay.tp <= 1:
        return 0.0
    if lay.dp_attention:
        return s.moe_layers * expert_all_to_all(topo, s, lay.tp, math.ceil(tokens / lay.tp))
    return 2 * s.layers * tp_all_reduce(topo, lay.tp, tokens * s.d_model * 2)


def chunk_tokens(w: Workload) -> int:
    """Tokens one engine step schedules: the server's documented chunk, else the engine's default."""
    return int(w.server_chunk_tokens or C.PREFILL_CHUNK_TOKENS)


def eager_decode(w: Workload, sequences: int) -> bool:
    """Whether a decode step of `sequences` sequences launches each kernel from the host: where the scenario
    says so, or where its server replays CUDA graphs only for smaller steps (llama.cpp: one sequence) and
    the scenario does not pin graphs."""
    if w.runtime:
        return w.runtime == "eager"
    return w.server_graphs_max_batch is not None and sequences > w.server_graphs_max_batch


def decode_step(w: Workload, s: Shape, e: Engine, topo: Topology, lay: Layout, batch: int, context: float,
                server: bool) -> tuple[float, str, float]:
    """Seconds of one decode step of `batch` sequences at `context` tokens, what bounds it, and the
    bytes one device reads for one micro-batch (weights the step touches and the micro-batch's KV
    cache; without a pipeline, the whole batch).

    A pipeline passes each token through its stages in turn. With k = min(batch, pp) micro-batches
    in flight (vLLM's virtual engines), each stage reads its weights for every micro-batch and the
    KV cache and arithmetic of each sequence once: a step is pp stage times of one micro-batch, so
    pipelining never shortens one sequence's step (it reads all the weights in turn) and spreads
    the batch's KV reads and arithmetic over the stages."""
    split = lay.tp * lay.pp
    in_flight = min(batch, lay.pp)  # micro-batches, each of `micro` sequences
    micro = micro_batch(lay, batch)
    touched = experts_touched(s, micro)
    # the routed experts as the device's measured MoE operator runs them (their weights, products and
    # rows' traffic), where one was timed; the rest of the layer as before
    experts = moe_layer_s(w, s, e, lay, micro)
    if experts is not None:
        touched = 0.0
    params_read = device_params(s, lay.tp, lay.pp, lay.dp_attention, touched)
    weights = params_read * weight_bytes_per_param(w)
    kv = batch * kv_gb_per_sequence(w, s, context, lay.tp, lay.pp, lay.dp_attention) * 1e9
    # the attention kernel streams the cache on its own, between the products (kernels on one stream
    # run in turn, so its time adds to theirs rather than hiding under their arithmetic)
    attention = decode_attention_s(w, s, e, lay, micro, context)
    if attention is None:  # the cache at the engine's share of the bandwidth, or its arithmetic if slower
        attn_flops = micro * attention_flops_per_token(s, context) / split
        attention = max(kv / in_flight / e.bandwidth,
                        attn_flops / max(2.0 * e.vector, e.gemm) if e.compute_known else 0.0)
    memory = weights / e.bandwidth  # the products' read of the weights, for one micro-batch
    if (is_quantised(w.precision) or w.precision == "int8") and e.compute_known:
        dequant = params_read * C.DEQUANT_OPS_PER_WEIGHT.get(w.precision, 4.0) / e.vector
        memory = max(memory, dequant) + C.DEQUANT_OVERLAP * min(memory, dequant)
    routed = routed_params_per_token(s) if experts is not None else 0.0
    flops = batch / in_flight * 2.0 * (matmul_params_per_token(s) - routed) / split
    # few rows: the matrix units idle, matrix-vector products run on the vector units (FMA = 2 FLOPs)
    shape = product_shape(s, e, lay.tp, micro, compute_only=True, dp_attention=lay.dp_attention,
                          experts=experts is None)
    compute = flops / max(2.0 * e.vector, e.gemm * shape) if e.compute_known else 0.0
    if eager_decode(w, micro):  # every operation launched from the host, which bounds small kernels
        kernels = s.layers * C.KERNELS_PER_LAYER_DECODE_EAGER * max(e.kernel_s, e.launch_s)
    else:  # fused kernels replayed as a CUDA graph: only their GPU-side time counts
        kernels = s.layers * C.KERNELS_PER_LAYER_DECODE * e.kernel_s
    comm = layer_exchanges(topo, s, lay, batch)
    if lay.pp > 1:
        comm += (lay.pp - 1) * topo.intra_latency_s
    moe_s = experts * s.moe_layers / lay.pp if experts is not None else 0.0
    step = (lay.pp * (max(memory, compute) + attention + moe_s) + kernels + comm
            + (e.step_overhead_s if server else 0.0))
    return step, ("compute" if compute > memory + attention else "memory bandwidth"), weights + kv / in_flight


def experts_touched(s: Shape, rows: float) -> float:
    """The share of a mixture of experts' routed experts that `rows` tokens select together, each
    choosing `experts_active` of `experts` (balanced routing); 1.0 for a dense model."""
    if not s.moe:
        return 1.0
    return 1.0 - (1.0 - s.experts_active / s.experts) ** rows


def micro_batch(lay: Layout, batch: int) -> int:
    """Sequences in each micro-batch of a decode step: a pipeline keeps min(batch, pp) in flight."""
    return math.ceil(batch / min(batch, lay.pp))


def weights_read_gb(w: Workload, s: Shape, lay: Layout, batch: int) -> float:
    """The weights one device reads in a decode step of `batch` sequences (one micro-batch's, with a
    pipeline): what it holds, less the routed experts no token of the step selects."""
    touched = experts_touched(s, micro_batch(lay, batch))
    return device_params(s, lay.tp, lay.pp, lay.dp_attention, touched) * weight_bytes_per_param(w) / GB


def product_shape(s: Shape, e: Engine, tp: int, rows: float, compute_only: bool = False,
                  dp_attention: bool = False, experts: bool = True) -> float:
    """The curve's shape factor for one layer's products over `rows` tokens: the attention's
    projections and the MLP at every row; in a mixture of experts, the experts' products as one
    grouped GEMM (every routed expert's tiles in one launch, as serving engines' MoE kernels run
    them), each expert's rows (rows × active / experts) padded to whole tiles; weighted by parameters."""
    d = s.d_model
    if s.moe and not experts:  # the routed experts timed apart (moe_layer_s): the attention's projections
        own = max(1.0, rows / tp) if dp_attention else rows
        width = 1 if dp_attention else tp
        return e.shape(((own, (s.q_dim + 2 * s.kv_dim) / width, d), (own, d, s.q_dim / width)), compute_only)
    if dp_attention and s.moe:  # the device's own rows at full width; its experts take all tokens routed to them
        own = max(1.0, rows / tp)
        _dense, moe_p = layer_matmul_params(s)
        expert_p, experts, fill = expert_products(s, rows, 1, e.curve.tile_m if e.curve is not None else 1)
        f_attn = e.shape(((own, s.q_dim + 2 * s.kv_dim, d), (own, d, s.q_dim)), compute_only)
        f_expert = e.shape(tuple((max(1.0, m / tp), n, k) for m, n, k in experts), compute_only) * fill
        return _weighted_shape(moe_p, expert_p, f_attn, f_expert)
    attn = ((rows, (s.q_dim + 2 * s.kv_dim) / tp, d), (rows, d, s.q_dim / tp))
    if not s.moe:
        return e.shape(attn + ((rows, (2 if s.gated else 1) * s.ffn_dim / tp, d), (rows, d, s.ffn_dim / tp)),
                       compute_only)
    _dense, moe_p = layer_matmul_params(s)
    expert_p, experts, fill = expert_products(s, rows, tp, e.curve.tile_m if e.curve is not None else 1)
    f_attn = e.shape(attn, compute_only)
    f_expert = e.shape(experts, compute_only) * fill
    return _weighted_shape(moe_p, expert_p, f_attn, f_expert)


def _weighted_shape(moe_p: float, expert_p: float, f_attn: float, f_expert: float) -> float:
    """A MoE layer's shape factor: its experts' and the rest's, weighted by the parameters each multiplies."""
    return moe_p / (max(0.0, moe_p - expert_p) / max(f_attn, 1e-9) + expert_p / max(f_expert, 1e-9))


def _prefill_rate(w: Workload, s: Shape, e: Engine, lay: Layout, rows: float, experts: bool = True) -> float:
    """FLOP/s of prompt processing on a replica whose GEMMs see `rows` tokens at a time (without the
    routed experts' products where `experts` is False)."""
    rate = e.gemm * product_shape(s, e, lay.tp, rows, dp_attention=lay.dp_attention, experts=experts) * lay.tp
    if w.precision in C.WEIGHT_ONLY_4BIT and e.tensor:
        rate *= C.WEIGHT_ONLY_PREFILL_SHARE
    return max(rate, 1.0)


def prefill(w: Workload, s: Shape, e: Engine, topo: Topology, lay: Layout, waiting: int = 1) -> tuple[float, float]:
    """(seconds for one prompt alone on a replica, marginal compute seconds per prompt token while
    batching); both 0 when the device has no compute figure (prompt processing is then unknown, and
    not counted). With `waiting` prompts to serve, a server fills each step's chunk with several of
    them, so the marginal cost is that of GEMMs over a full chunk, not over one prompt; under a
    pipeline every stage holds a chunk at once, so a token's marginal cost is its stage's share."""
    if not e.compute_known:
        return 0.0, 0.0
    tokens = max(1, w.prompt_tokens)
    flops = tokens * inference_flops_per_token(s, tokens / 2.0)
    attention = 0.0
    if e.context_curve is not None and e.peak16_flops > 0:
        # the attention's share of the work runs at the rate measured for prompts of this length
        attn_flops = tokens * attention_flops_per_token(s, tokens / 2.0)
        attention = attn_flops / (e.peak16_flops * e.context_curve.share(tokens) * e.attention_case * lay.tp)
        flops -= attn_flops
    full = min(tokens * max(1, waiting), chunk_tokens(w))  # rows of a step's chunk when prompts wait
    chunk = min(tokens, chunk_tokens(w))
    alone, filled = moe_layer_s(w, s, e, lay, chunk), moe_layer_s(w, s, e, lay, full)
    if alone is not None and filled is not None:  # the routed experts as the measured MoE operator runs them
        flops -= tokens * 2.0 * routed_params_per_token(s)
        compute = (flops / _prefill_rate(w, s, e, lay, chunk, experts=False) + attention
                   + s.moe_layers * alone * math.ceil(tokens / chunk))
        batched = (flops / _prefill_rate(w, s, e, lay, full, experts=False) + attention
                   + s.moe_layers * filled * tokens / full)
    else:
        compute = flops / _prefill_rate(w, s, e, lay, chunk) + attention
        batched = flops / _prefill_rate(w, s, e, lay, full) + attention
    weights = s.params * weight_bytes_per_param(w) / lay.tp / e.bandwidth  # a prompt alone visits every stage in turn
    kernels = s.layers * C.KERNELS_PER_LAYER_DECODE * e.kernel_s * max(1, math.ceil(tokens / chunk_tokens(w)))
    comm = comm_token = 0.0
    if lay.tp > 1:  # the prompt's activations are exchanged every layer too, alone or in a full chunk
        comm = math.ceil(tokens / chunk) * layer_exchanges(topo, s, lay, chunk)
        comm_token = layer_exchanges(topo, s, lay, full) / full
    # prompts waiting fill the pipeline: its stages work on different chunks at once, each on its layers
    return max(compute, weights) + kernels + comm, (batched / tokens + comm_token) / lay.pp


def held_context(w: Workload) -> float:
    """Tokens of KV cache a running sequence holds for the server's admission: on average its prompt and
    half its output, as blocks are taken while it decodes (vLLM, SGLang: a sequence is preempted if
    they run out), or its whole length where the server reserves a request's cache when it admits it
    (TensorRT-LLM's default capacity policy, GUARANTEED_NO_EVICT)."""
    prompt, output = max(1, w.prompt_tokens), max(1, w.output_tokens)
    return prompt + (output if w.server_kv_reserve == "whole" else output / 2.0)


def kv_capacity(w: Workload, s: Shape, device: Device, lay: Layout, context: float, server: bool) -> tuple[int, float, float]:
    """(sequences that fit per replica, weights GB per device, KV GB per sequence per device)."""
    cap = capacity_gb(device)
    weights = serving_weights_gb(w, s, lay.tp, lay.pp, lay.dp_attention)
    workspace = prefill_workspace_gb(w, s, lay.tp, min(max(1, w.prompt_tokens), chunk_tokens(w)))
    per_seq = kv_gb_per_sequence(w, s, context, lay.tp, lay.pp, lay.dp_attention)
    free = cap - weights - workspace
    if server:
        share = w.server_memory_share or C.SERVER_MEMORY_SHARE
        # the share is of what the weights leave (TensorRT-LLM) or of all memory (vLLM, SGLang)
        free = free * share if w.server_memory_basis == "free" else cap * share - weights - workspace
    if free <= 0:
        return 0, weights, per_seq
    return (int(free // per_seq) if per_seq > 0 else 10 ** 9), weights, per_seq


def serve(w: Workload, s: Shape, device: Device, topo: Topology, lay: Layout, e: Engine,
          decode_factor: float = 1.0, prefill_factor: float = 1.0) -> Serving | None:
    """The steady state of `w.concurrency` users on this layout; None when the weights do not fit."""
    users = max(1, w.concurrency)
    server = users > 1 or bool(w.max_batch)
    context = w.prompt_tokens + w.output_tokens / 2.0  # a running sequence's cache on average
    fit, weights_gb, kv_seq = kv_capacity(w, s, device, lay, held_context(w) if server else context, server)
    if fit < 1:
        return None
    per_replica = math.ceil(users / lay.replicas)
    cap = int(w.max_batch or w.server_max_batch or (fit if server else per_replica))
    batch = min(per_replica, fit, cap)
    limit = "concurrency" if batch == per_replica else ("kv_cache" if batch == fit else "max_batch")
    step, bound, step_bytes = decode_step(w, s, e, topo, lay, batch, context, server)
    step /= decode_factor
    pre_s, pre_token = prefill(w, s, e, topo, lay, per_replica)
    pre_s, pre_token = pre_s / prefill_factor, pre_token / prefill_factor
    out_tokens = max(1, w.output_tokens)
    if batch == 1 and per_replica == 1:
        request_s = pre_s + out_tokens * step
        rate = 1.0 / request_s
        tpot, ttft = step, pre_s
    else:
        rate = 1.0 / (w.prompt_tokens * pre_token + out_tokens * step / batch)
        tpot = step + batch * w.prompt_tokens * pre_token / out_tokens
        queued = per_replica - batch
        ttft = (queued / rate if queued > 0 else 0.0) + w.prompt_tokens * pre_token + step
    total_rate = rate * min(lay.replicas, users / per_replica)  # replicas without a user serve nothing
    return Serving(lay, batch, limit, fit, per_replica - batch, step, pre_s, pre_token, total_rate,
                   total_rate * out_tokens, tpot, ttft, users / total_rate, bound, weights_gb, kv_seq * batch,
                   step_bytes)


def decode_only(w: Workload, s: Shape, device: Device, topo: Topology, lay: Layout, e: Engine,
                decode_factor: float = 1.0) -> tuple[int, float] | None:
    """(running sequences per replica, seconds per decode step) of a replica that only decodes (its
    prompts are processed elsewhere), or None when the weights and one sequence's cache do not fit."""
    users = max(1, w.concurrency)
    context = w.prompt_tokens + w.output_tokens / 2.0
    fit, _weights, _kv = kv_capacity(w, s, device, lay, held_context(w), True)
    if fit < 1:
        return None
    per_replica = math.ceil(users / lay.replicas)
    batch = min(per_replica, fit, int(w.max_batch or w.server_max_batch or fit))
    step = decode_step(w, s, e, topo, lay, batch, context, True)[0] / decode_factor
    return batch, step


def layouts(w: Workload, s: Shape, topo: Topology) -> list[Layout]:
    """Tensor-parallel sizes inside a node (dividing the heads), pipeline depths across nodes,
    replicas over the rest; the scenario may pin tp and pp. A mixture of experts is also tried with
    data-parallel attention over the tensor-parallel devices (not on llama.cpp, which has no expert
    parallelism), unless the scenario pins `attention_dp`."""
    tps = [int(w.tp)] if w.tp else [t for t in (1, 2, 4, 8, 16) if t <= topo.domain and s.heads % t == 0]
    pps = [int(w.pp)] if w.pp else [p for p in (1, 2, 4, 8, 16, 32) if p <= s.layers]
    dpa = s.moe and w.server != "llamacpp" and w.attention_dp is not False
    out = []
    for tp in tps:
        for pp in pps:
            if tp * pp <= topo.devices:
                split = dpa and tp > 1 and s.experts % tp == 0
                if not (w.attention_dp and split):  # pinned on: only the data-parallel form, where it exists
                    out.append(Layout(tp, pp, max(1, topo.devices // (tp * pp))))
                if split:
                    out.append(Layout(tp, pp, max(1, topo.devices // (tp * pp)), True))
    return out


def smallest_replica(w: Workload, s: Shape, device: Device, per_node: int) -> int | None:
    """Fewest devices (tensor parallel inside a node, pipeline beyond) that hold the weights and
    one sequence's KV cache."""
    for n in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024):
        tp = min(n, max(1, per_node))
        while tp > 1 and s.heads % tp:
            tp //= 2
        pp = max(1, math.ceil(n / tp))  # a node of 6 holds TP6 and pipelines beyond: 12 devices, not 8
        fit, _w, _kv = kv_capacity(w, s, device, Layout(tp, pp, 1), w.prompt_tokens + w.output_tokens, False)
        if fit >= 1:
            return tp * pp
    return None


def matmul_params(s: Shape) -> float:
    return matmul_params_per_token(s)
