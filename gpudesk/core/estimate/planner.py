"""The parallelism planner: the fastest training plan that fits, found by search, as Calculon
(Isaev et al. 2023) and Megatron-LM's performance model do it.

It tries tensor parallelism inside the fast domain, context parallelism for long sequences,
expert parallelism for MoE models, pipeline depths of any size (uneven stages cost what the
busiest stage costs), interleaving, data parallelism with ZeRO stage 1-3 or hybrid sharding,
activation recomputation and the micro-batch size, at the global batch the scenario gives (or a
default that grows with the cluster). Devices a plan cannot use stay idle: a bigger cluster is
never slower than the best plan on part of it. The objective is tokens per second; every part of
the plan can be pinned by the scenario.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.comm import (
    Group,
    all_gather,
    all_reduce,
    all_to_all,
    exposed,
    place,
    point_to_point,
    reduce_scatter,
)
from gpudesk.core.estimate.compute import Peak, Rates, StageTime, mean_layer_work, optimizer_step_s, stage_time
from gpudesk.core.estimate.memory import MemoryModel, Plan, total_gb, training_parts
from gpudesk.core.estimate.model import Shape, expert_params
from gpudesk.core.estimate.topology import Topology
from gpudesk.core.estimate.types import Band, Device, Workload

PP_CANDIDATES = tuple(range(1, 17)) + (18, 20, 24, 28, 32, 36, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 256)
MB_CANDIDATES = (1, 2, 4, 8, 16)
# From most memory to least: the search tries them in this order, and the last is the most frugal.
SHARDINGS = ("zero1", "zero2", "hsdp", "zero3")
RECOMPUTES = ("none", "selective", "full")


@dataclass(frozen=True)
class Case:
    """The uncertain factors of one case (pessimistic, likely, optimistic)."""

    ew_factor: float
    kernels_per_layer: float
    overlap: float
    tp_overlap: float
    ep_overlap: float
    overhead_share: float

    @classmethod
    def pick(cls, case: int) -> Case:
        b = lambda band: Band.pick(band, case)  # noqa: E731
        return cls(b(C.ELEMENTWISE_TRAIN_FACTOR), b(C.KERNELS_PER_LAYER_TRAIN), b(C.OVERLAP), b(C.TP_OVERLAP),
                   b(C.EP_OVERLAP), b(C.STEP_OVERHEAD_SHARE))


@dataclass(frozen=True)
class Context:
    """What stays fixed while plans are searched."""

    w: Workload
    s: Shape
    device: Device
    topo: Topology
    peak: Peak
    rates: Rates
    case: Case
    global_batch: float
    capacity_gb: float


@dataclass
class StepResult:
    plan: Plan
    tokens_per_step: float
    step_s: float
    compute_s: float  # layers' work, all micro-batches, one stage (what the step would be with nothing else)
    bubble_s: float
    tp_s: float
    cp_s: float
    ep_s: float
    pp_s: float
    dp_s: float  # exposed data-parallel traffic
    dp_total_s: float
    optimizer_s: float
    overhead_s: float
    memory_gb: dict = field(default_factory=dict)
    stage: StageTime | None = None
    link_seconds: dict = field(default_factory=dict)

    @property
    def tokens_per_s(self) -> float:
        return self.tokens_per_step / self.step_s

    def breakdown(self) -> dict:
        return {"compute_s": self.compute_s, "pipeline_bubble_s": self.bubble_s, "tensor_parallel_s": self.tp_s,
                "context_parallel_s": self.cp_s, "expert_parallel_s": self.ep_s, "pipeline_transfer_s": self.pp_s,
                "gradient_exchange_s": self.dp_total_s, "gradient_exchange_exposed_s": self.dp_s,
                "optimizer_s": self.optimizer_s, "overhead_s": self.overhead_s, "step_s": self.step_s}


# ----------------------------------------------------------------------------- candidates
def _divides_heads(s: Shape, tp: int) -> bool:
    return s.heads % tp == 0 and (s.kv_heads % tp == 0 or tp % s.kv_heads == 0 or s.attention == "mla")


def tp_candidates(w: Workload, s: Shape, topo: Topology) -> list[int]:
    if w.tp:
        return [int(w.tp)]
    limit = min(topo.domain, C.MAX_TENSOR_PARALLEL, topo.devices)
    return [t for t in (1, 2, 4, 8, 16) if t <= limit and _divides_heads(s, t)]


def cp_candidates(w: Workload, s: Shape, topo: Topology) -> list[int]:
    if w.cp:
        return [int(w.cp)]
    if w.seq_len < C.CONTEXT_PARALLEL_FROM:
        return [1]
    return [c for c in (1, 2, 4, 8, 16) if c <= topo.devices and w.seq_len % c == 0]


def ep_candidates(w: Workload, s: Shape) -> list[int]:
    if w.ep:
        return [int(w.ep)]
    if not s.moe:
        return [1]
    return [e for e in (1, 2, 4, 8, 16, 32, 64) if s.experts % e == 0]


# Pipeline depths whose busiest stage holds more than this share above the average are not tried:
# the imbalance idles every other stage (Llama 3 405B: 126 layers on 16 stages, 8 on the busiest,
# 1.6% above the mean).
MAX_STAGE_IMBALANCE = 1.10


def pp_candidates(w: Workload, s: Shape, limit: int) -> list[int]:
    if w.pp:
        return [int(w.pp)]
    return [p for p in PP_CANDIDATES if p <= min(limit, s.layers)
            and math.ceil(s.layers / p) * p <= MAX_STAGE_IMBALANCE * s.layers]


def shardings(w: Workload, dp: int) -> list[str]:
    chosen = w.sharding if w.sharding not in ("auto", "", None) else None
    if chosen:
        return ["zero3" if chosen == "fsdp" else chosen]
    return ["none"] if dp == 1 else list(SHARDINGS)


def recomputes(w: Workload) -> list[str]:
    if w.recompute:
        return [w.recompute]
    if w.checkpointing is not None:
        return ["full"] if w.checkpointing else ["none", "selective"]
    return list(RECOMPUTES)


# ----------------------------------------------------------------------------- one plan
def _stage(ctx: Context, tp: int, cp: int, mb: int, layers: int, recompute: str, head: bool,
           cache: dict, share: float = 1.0) -> StageTime:
    key = (tp, cp, mb, layers, recompute, head, share)
    hit = cache.get(key)
    if hit is None:
        s = ctx.s
        moe_share = s.moe_layers / s.layers if s.moe else 0.0
        tokens = mb * ctx.w.seq_len / cp
        unit = cache.get(("unit", tp, cp, mb))
        if unit is None:
            unit = cache[("unit", tp, cp, mb)] = mean_layer_work(s, ctx.w, ctx.rates, tokens, tp, moe_share,
                                                                 ctx.case.ew_factor)
        hit = stage_time(s, ctx.w, ctx.rates, tokens, tp, layers, moe_share, recompute, ctx.case.ew_factor,
                         ctx.case.kernels_per_layer, head, unit, share)
        cache[key] = hit
    return hit


def critical_stage(ctx: Context, plan: Plan, cache: dict) -> StageTime:
    """The busiest pipeline stage: whole-layer stages, the last also holding the output head.
    It does not depend on the data-parallel size, so it is remembered per split of the model."""
    f = plan.recompute_share
    key = ("critical", plan.tp, plan.cp, plan.pp, plan.micro_batch, plan.recompute, f)
    hit = cache.get(key)
    if hit is not None:
        return hit
    L = ctx.s.layers
    if plan.pp == 1:
        hit = _stage(ctx, plan.tp, plan.cp, plan.micro_batch, L, plan.recompute, True, cache, f)
    else:
        per = math.ceil(L / plan.pp)
        last = max(1, L - (plan.pp - 1) * per)
        body = _stage(ctx, plan.tp, plan.cp, plan.micro_batch, per, plan.recompute, False, cache, f)
        tail = _stage(ctx, plan.tp, plan.cp, plan.micro_batch, last, plan.recompute, True, cache, f)
        hit = body if body.total >= tail.total else tail
    cache[key] = hit
    return hit


def _layer_comm(ctx: Context, plan: Plan, stage: StageTime) -> tuple[float, float, float, float]:
    """Exposed tensor-, context- and expert-parallel seconds, and pipeline transfers, per micro-batch."""
    s, topo, case = ctx.s, ctx.topo, ctx.case
    tokens = plan.micro_batch * ctx.w.seq_len / plan.cp
    layers = math.ceil(s.layers / plan.pp)
    tp = cp = ep = pp = 0.0
    if plan.tp > 1:
        calls = 4 + 2 * plan.recomputed  # the recomputed forward all-reduces again
        tp = calls * layers * all_reduce(tokens * s.d_model * 2.0, place(plan.tp, 1, topo), topo)
        tp *= 1.0 - case.tp_overlap
    if plan.cp > 1:
        chunk = tokens * 2 * s.kv_dim * 2.0
        raw = 3 * layers * all_gather(chunk * plan.cp, place(plan.cp, plan.tp, topo), topo)
        cp = exposed(raw, stage.attention, case.overlap)
    if plan.ep > 1 and s.moe:
        moe_layers = layers * s.moe_layers / s.layers
        raw = 4 * moe_layers * all_to_all(tokens * s.experts_active * s.d_model * 2.0 / plan.tp,
                                          place(plan.ep, plan.tp * plan.cp, topo), topo)
        ep = raw * (1.0 - case.ep_overlap)
    if plan.pp > 1:
        crosses = plan.tp * plan.cp * plan.dp * 2 > topo.domain
        pp = 2 * plan.vpp * point_to_point(tokens * s.d_model * 2.0 / plan.tp, crosses, topo)
    return tp, cp, ep, pp


def _grad_bytes(ctx: Context, plan: Plan) -> tuple[float, float]:
    """(dense, expert) gradient bytes each device reduces."""
    s = ctx.s
    per = 4.0 if ctx.w.precision in ("fp32", "tf32") else 2.0
    trainable = ctx.w.lora_fraction if ctx.w.frozen_base else 1.0
    experts = expert_params(s)
    dense = (s.params - experts) / (plan.tp * plan.pp) * per * trainable
    split = plan.ep * (plan.tp if plan.ep == 1 else 1)
    return dense, experts / (split * plan.pp) * per * trainable


def _data_parallel(ctx: Context, plan: Plan, stage: StageTime) -> tuple[float, float]:
    """(exposed, total) seconds of data-parallel traffic per optimizer step. Per step, with Ψ
    gradient bytes and m micro-batches: plain data parallel moves 2Ψ in one all-reduce, hidden
    behind the last micro-batch's backward pass; ZeRO-1 as Megatron-LM's distributed optimizer
    also moves 2Ψ, as a reduce-scatter of the gradients behind the last backward pass and a gather
    of the updated weights behind the next forward pass (--overlap-grad-reduce,
    --overlap-param-gather); ZeRO-2 reduce-scatters every micro-batch and gathers the weights
    once, (m+1)Ψ; ZeRO-3/FSDP gathers the weights forward and backward and reduce-scatters every
    micro-batch, 3mΨ (Rajbhandari et al. 2020, section 7; Zhao et al. 2023). So with nothing
    recomputed, more sharding never exposes less traffic: the search stops at the least that fits."""
    if plan.dp * plan.cp <= 1:
        return 0.0, 0.0
    topo, case, m = ctx.topo, ctx.case, plan.micro_batches
    dense_b, expert_b = _grad_bytes(ctx, plan)
    replicas = place(plan.dp * plan.cp, plan.tp, topo)
    expert_replicas = place(max(1, plan.dp * plan.cp // plan.ep), plan.tp * plan.ep, topo)
    msgs = max(1.0, (dense_b + expert_b) / C.BUCKET_BYTES)
    if plan.sharding in ("zero3", "hsdp"):
        # fully sharded weights are gathered, and their gradients scattered, one layer at a time (the
        # FSDP unit: PyTorch FSDP wraps each transformer block, XLA gathers each scanned layer), not in
        # the gradient buckets of plain data parallelism
        msgs = max(1.0, ctx.s.layers / plan.pp)

    def both(fn, factor=1.0):
        return fn(dense_b * factor, replicas, topo, msgs) + fn(expert_b * factor, expert_replicas, topo, 1.0)

    if plan.sharding == "none":
        total = both(all_reduce)
        return exposed(total, stage.backward, case.overlap), total
    if plan.sharding in ("zero1", "zero2"):
        rs, ag = both(reduce_scatter), both(all_gather)
        scatters = 1 if plan.sharding == "zero1" else m  # ZeRO-2 keeps no whole gradient to accumulate into
        return scatters * exposed(rs, stage.backward, case.overlap) + exposed(ag, stage.forward, case.overlap), \
            scatters * rs + ag
    if plan.sharding == "hsdp":
        inside = place(min(plan.dp * plan.cp, max(1, topo.domain // plan.tp)), plan.tp, topo)
        ag = reduce_scatter(dense_b + expert_b, inside, topo, msgs)
        across = all_reduce((dense_b + expert_b) / inside.size, Group(replicas.domains, 1), topo, msgs) \
            if replicas.domains > 1 else 0.0
        per_mb = exposed(ag, stage.forward, case.overlap) + exposed(2 * ag, stage.backward, case.overlap)
        return m * per_mb + exposed(across, stage.backward, case.overlap), m * 3 * ag + across
    ag = both(all_gather)  # zero3: weights gathered forward and backward, gradients reduce-scattered
    per_mb = exposed(ag, stage.forward, case.overlap) + exposed(2 * ag, stage.backward, case.overlap) \
        + ag / max(1, ctx.s.layers)  # the first layer's gather has nothing to hide behind
    return m * per_mb, m * 3 * ag


def evaluate(ctx: Context, plan: Plan, cache: dict, memory: dict | None = None) -> StepResult:
    stage = critical_stage(ctx, plan, cache)
    tp, cp, ep, pp = _layer_comm(ctx, plan, stage)
    per_mb = stage.total + tp + cp + ep + pp
    m = plan.micro_batches
    compute = m * stage.total
    bubble = (plan.pp - 1) / plan.vpp * per_mb if plan.pp > 1 else 0.0
    dp_exposed, dp_total = _data_parallel(ctx, plan, stage)
    replicas = plan.dp * plan.cp if plan.sharding != "none" else 1
    params_local = ctx.s.params / (plan.tp * plan.pp) / max(1, replicas if plan.sharding != "hsdp" else
                                                           min(replicas, max(1, ctx.topo.domain // plan.tp)))
    if ctx.w.frozen_base:
        params_local *= ctx.w.lora_fraction
    opt = optimizer_step_s(params_local, ctx.rates)
    core = m * per_mb + bubble + dp_exposed + opt
    overhead = core * ctx.case.overhead_share
    tokens = float(m * plan.dp * plan.micro_batch * ctx.w.seq_len)
    result = StepResult(plan, tokens, core + overhead, compute, bubble, m * tp, m * cp, m * ep, m * pp,
                        dp_exposed, dp_total, opt, overhead, memory or {}, stage)
    result.link_seconds = _link_seconds(ctx, plan, result)
    return result


def _link_seconds(ctx: Context, plan: Plan, r: StepResult) -> dict:
    """Exposed seconds per link of one step, to name the slowest."""
    topo = ctx.topo
    out: dict[str, float] = {}

    def add(name: str, seconds: float) -> None:
        if name and seconds > 0:
            out[name] = out.get(name, 0.0) + seconds

    add(topo.intra_name or topo.inter_name, r.tp_s)
    cross = plan.tp * plan.cp * plan.dp * 2 > topo.domain
    add(topo.inter_name if cross else topo.intra_name, r.pp_s)
    across = place(plan.dp * plan.cp, plan.tp, topo).domains > 1
    add(topo.inter_name if across else topo.intra_name, r.dp_s)
    add(topo.inter_name if place(plan.cp, plan.tp, topo).domains > 1 else topo.intra_name, r.cp_s)
    add(topo.inter_name if place(plan.ep, plan.tp * plan.cp, topo).domains > 1 else topo.intra_name, r.ep_s)
    return out


# ----------------------------------------------------------------------------- memory
def fits(ctx: Context, plan: Plan) -> tuple[bool, dict]:
    parts = training_parts(ctx.w, ctx.s, ctx.device, plan, ctx.rates.flash, ctx.topo.domain)
    return total_gb(parts) <= ctx.capacity_gb, parts


# ----------------------------------------------------------------------------- the search
@dataclass
class SearchResult:
    best: StepResult | None
    alternatives: list[StepResult]
    smallest: tuple[Plan, dict] | None  # the most frugal plan tried, when none fits
    batch_note: str = ""
    evaluated: int = 0


def _micro_batches(ctx: Context, dp: int, mb: int) -> int:
    return max(1, int(ctx.global_batch // (dp * mb * ctx.w.seq_len)))


def _shapes(ctx: Context):
    """(tp, cp, ep, pp, dp) splits to try, fewest devices per replica first."""
    w, s, topo = ctx.w, ctx.s, ctx.topo
    max_dp_batch = max(1, int(ctx.global_batch // w.seq_len))
    for tp in tp_candidates(w, s, topo):
        for cp in cp_candidates(w, s, topo):
            for pp in pp_candidates(w, s, topo.devices // (tp * cp) or 1):
                if tp * cp * pp > topo.devices:
                    continue
                for dp in dp_candidates(w, topo.devices // (tp * cp * pp), max_dp_batch):
                    if dp * tp * cp * pp > topo.devices:
                        continue
                    for ep in ep_candidates(w, s):
                        if ep > 1 and (dp * cp) % ep:
                            continue
                        yield tp, cp, ep, pp, dp


# Every data-parallel size up to this is tried; above it, the largest the devices and the batch
# allow and four halvings of it.
ALL_DP_UP_TO = 64


def dp_candidates(w: Workload, room: int, max_dp_batch: int) -> list[int]:
    """Data-parallel sizes, largest first: as many replicas as the devices and the batch allow, and
    fewer, since on a slow network or with a small batch part of a cluster can be faster than all of
    it (the rest then stays idle, and the estimate says so). Up to ALL_DP_UP_TO every size is tried,
    so a bigger cluster is never slower than the best plan on part of it."""
    if w.dp:
        return [int(w.dp)]
    top = min(room, max_dp_batch)
    if top < 1:
        return []
    if top <= ALL_DP_UP_TO:
        return list(range(top, 0, -1))
    out = [top]
    while len(out) < 5:
        out.append(out[-1] // 2)
    return out


def micro_batch_sizes(ctx: Context, dp: int) -> list[int]:
    """Micro-batch sizes that split each replica's sequences evenly (and powers of two)."""
    if ctx.w.micro_batch:
        return [int(ctx.w.micro_batch)]
    per_replica = max(1, int(ctx.global_batch // (dp * ctx.w.seq_len)))
    even = [m for m in range(1, min(per_replica, MB_CANDIDATES[-1]) + 1) if per_replica % m == 0]
    return sorted(set(even) | {m for m in MB_CANDIDATES if m <= per_replica} | {1})


def _variants(ctx: Context, tp, cp, ep, pp, dp):
    w, s = ctx.w, ctx.s
    per_stage = math.ceil(s.layers / pp)
    for mb in micro_batch_sizes(ctx, dp):
        m = _micro_batches(ctx, dp, mb)
        if w.vpp:
            vpps = [int(w.vpp)]
        else:
            deepest = max([v for v in (2, 4, 8) if pp > 1 and m >= pp and per_stage >= v] or [1])
            vpps = sorted({1, deepest})
        for v in vpps:
            yield mb, m, v


class _Best:
    """The fastest three distinct plans seen so far, and a bound to skip hopeless ones."""

    def __init__(self) -> None:
        self.items: list[StepResult] = []

    def add(self, r: StepResult) -> None:
        if len(self.items) == 3 and r.tokens_per_s <= self.items[-1].tokens_per_s:
            return
        label = r.plan.short()
        self.items = [x for x in self.items if x.plan.short() != label or x.tokens_per_s > r.tokens_per_s]
        if all(x.plan.short() != label for x in self.items):
            self.items.append(r)
        self.items.sort(key=lambda x: -x.tokens_per_s)
        del self.items[3:]

    def hopeless(self, tokens_per_s_bound: float) -> bool:
        return len(self.items) == 3 and tokens_per_s_bound < self.items[-1].tokens_per_s

    @property
    def full(self) -> bool:
        return len(self.items) == 3

    @property
    def floor(self) -> float:
        """The third best throughput: a plan must beat it to matter."""
        return self.items[-1].tokens_per_s


def _stage_bound(ctx: Context, tp: int, cp: int, pp: int, v: int, dp: int, mb: int, m: int, recompute: str,
                 cache: dict, share: float = 1.0) -> float:
    """Tokens per second no plan of this split can exceed: its layers' work, its tensor-parallel
    all-reduces and the pipeline bubble, nothing else (no data-parallel traffic, no overhead).
    Taken without building a plan: the search's inner loop calls it thousands of times."""
    step = (m + (pp - 1) / v) * _per_micro_batch(ctx, tp, cp, pp, mb, recompute, cache, share)
    return m * dp * mb * ctx.w.seq_len / step


def _per_micro_batch(ctx: Context, tp: int, cp: int, pp: int, mb: int, recompute: str, cache: dict,
                     share: float = 1.0) -> float:
    """Seconds of the busiest stage's work and its tensor-parallel all-reduces for one micro-batch,
    which no data-parallel size changes (remembered per split)."""
    key = ("bound", tp, cp, pp, mb, recompute, share)
    per_mb = cache.get(key)
    if per_mb is None:
        plan = Plan(tp, cp, pp, 1, 1, 1, mb, 1, recompute, "none", share)
        stage = critical_stage(ctx, plan, cache)
        per_mb = cache[key] = stage.total + (_layer_comm(ctx, plan, stage)[0] if tp > 1 else 0.0)
    return per_mb


def _split_bound(ctx: Context, tp: int, cp: int, pp: int, dp: int, recompute: str, cache: dict) -> float:
    """Tokens per second no plan of this model split can exceed at this data-parallel size or any
    smaller one, whatever its micro-batch: the best of _stage_bound over every micro-batch size, with
    no pipeline bubble (it falls as the data-parallel size shrinks, so it rules out all of them)."""
    # with no bubble the bound is dp x (tokens per second of one replica's slowest stage), so the
    # best rate over the micro-batch sizes is found once per split and scaled by dp
    key = ("split", tp, cp, pp, recompute)
    per_replica = cache.get(key)
    if per_replica is None:
        per_replica = cache[key] = max(_stage_bound(ctx, tp, cp, pp, 10 ** 9, 1, mb, 1, recompute, cache)
                                       for mb in MB_CANDIDATES)
    return dp * per_replica


def _shape_bound(ctx: Context, tp: int, cp: int, pp: int, dp: int, recompute: str, cache: dict) -> float:
    """Tokens per second no plan of this split at this data-parallel size can exceed: the best of
    _stage_bound over the micro-batch sizes, each with the least pipeline bubble it allows (the
    deepest interleaving). Tighter than _split_bound, it orders the search best-first."""
    best = 0.0
    per_stage = math.ceil(ctx.s.layers / pp)
    deepest = int(ctx.w.vpp) if ctx.w.vpp else (8 if per_stage >= 8 else 4 if per_stage >= 4 else 2)
    tokens = ctx.global_batch / ctx.w.seq_len
    for mb in MB_CANDIDATES:
        m = max(1, int(tokens // (dp * mb)))
        v = deepest if (ctx.w.vpp or (pp > 1 and m >= pp and per_stage >= 2)) else 1
        rate = m * dp * mb / ((m + (pp - 1) / v) * _per_micro_batch(ctx, tp, cp, pp, mb, recompute, cache))
        if rate > best:
            best = rate
    return best * ctx.w.seq_len


def _partial_recompute(memory: MemoryModel, plan: Plan, capacity: float, layers_per_stage: int) -> Plan:
    """The plan recomputing the fewest whole layers per stage that still fits (memory falls linearly
    with the share recomputed), as Megatron-LM's recompute_num_layers does."""
    none = memory.need_gb(replace(plan, recompute_share=0.0))
    full = memory.need_gb(plan)
    if none <= full:
        return plan
    k = math.ceil(max(0.0, (none - capacity) / (none - full)) * layers_per_stage - 1e-9)
    while k < layers_per_stage:
        candidate = replace(plan, recompute_share=k / layers_per_stage)
        if k > 0 and memory.need_gb(candidate) <= capacity:
            return candidate
        k += 1
    return plan


def search(ctx: Context) -> SearchResult:
    """The three fastest distinct plans that fit (best first), or the most frugal plan when none fits."""
    return _Search(ctx).run()


class _Search:
    """One plan search: best-first over the model splits, each split's micro-batch variants, and for
    each the lightest sharding and recomputation that fits (see search)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.cache: dict = {}
        self.best = _Best()
        self.smallest: tuple[Plan, float] | None = None
        self.evaluated = 0
        self.memory = MemoryModel(ctx.w, ctx.s, ctx.rates.flash, ctx.topo.domain)
        self.lightest = recomputes(ctx.w)[0]
        self.partial = not ctx.w.recompute and ctx.w.checkpointing is None  # free to recompute only some layers

    def run(self) -> SearchResult:
        ctx, best, cache = self.ctx, self.best, self.cache
        exhausted: set[tuple] = set()  # model splits whose data-parallel sizes are all hopeless from here down
        # best first: the splits whose bound is highest are timed first, so the three best plans are
        # known early and the rest fall under the bound (a stable sort keeps the fewest-devices-first
        # order among equal bounds)
        shapes = list(_shapes(ctx))
        bounds = [_shape_bound(ctx, tp, cp, pp, dp, self.lightest, cache) for tp, cp, ep, pp, dp in shapes]
        for i in sorted(range(len(shapes)), key=lambda i: -bounds[i]):
            tp, cp, ep, pp, dp = shapes[i]
            if best.full and bounds[i] < best.floor:
                break  # every split left is bounded below the third-best plan already timed
            if (tp, cp, ep, pp) in exhausted:
                continue
            tried, pruned = self._split(tp, cp, ep, pp, dp)
            if tried and pruned == tried and _split_bound(ctx, tp, cp, pp, dp, self.lightest, cache) < best.floor:
                exhausted.add((tp, cp, ep, pp))
        return self._result()

    def _split(self, tp: int, cp: int, ep: int, pp: int, dp: int) -> tuple[int, int]:
        """Time this split's micro-batch variants; (variants tried, variants pruned by the bound)."""
        pruned = tried = 0
        for mb, m, v in _variants(self.ctx, tp, cp, ep, pp, dp):
            tried += 1
            outcome = self._variant(Plan(tp, cp, pp, v, dp, ep, mb, m, self.lightest, "none"))
            if outcome == "pruned":
                pruned += 1
            elif outcome == "stop":
                break  # a larger micro-batch will not fit either
        return tried, pruned

    def _variant(self, base: Plan) -> str:
        """'pruned' (bounded below the three best), 'stop' (nothing fits, nor will a larger
        micro-batch) or 'next'."""
        ctx, best = self.ctx, self.best
        tp, cp, pp, v, dp, mb, m = base.tp, base.cp, base.pp, base.vpp, base.dp, base.micro_batch, base.micro_batches
        # no variant of this split can beat the three best plans so far: the bound with the
        # lightest recomputation and no communication is already lower (and it only falls as the
        # data-parallel size shrinks: more micro-batches of the same stage time)
        if best.full and _stage_bound(ctx, tp, cp, pp, v, dp, mb, m, self.lightest, self.cache) < best.floor:
            return "pruned"
        options = shardings(ctx.w, dp)
        ep = base.ep
        frugal = Plan(tp, cp, pp, v, dp, ep, mb, m, recomputes(ctx.w)[-1], options[-1])
        if not self._fits(frugal):
            return "next" if ctx.w.micro_batch else "stop"
        fitted_any = False
        for sharding in options:
            for recompute in recomputes(ctx.w):
                plan = Plan(tp, cp, pp, v, dp, ep, mb, m, recompute, sharding)
                if not self._fits(plan):
                    continue
                fitted_any = True
                if recompute == "full" and self.partial and len(recomputes(ctx.w)) > 1:
                    plan = _partial_recompute(self.memory, plan, ctx.capacity_gb, math.ceil(ctx.s.layers / pp))
                if not best.hopeless(_stage_bound(ctx, tp, cp, pp, v, dp, mb, m, recompute, self.cache,
                                                  plan.recompute_share)):
                    self.evaluated += 1
                    best.add(evaluate(ctx, plan, self.cache))
                break  # lighter recomputation is always faster when it fits
            if fitted_any and plan.recompute == "none":
                break  # more sharding only adds traffic once nothing is recomputed
        return "next" if fitted_any or ctx.w.micro_batch else "stop"

    def _fits(self, plan: Plan) -> bool:
        """Whether the plan fits; the most frugal plan that does not is remembered for the answer."""
        need = self.memory.need_gb(plan)
        if need <= self.ctx.capacity_gb:
            return True
        if self.smallest is None or need < self.smallest[1]:
            self.smallest = (plan, need)
        return False

    def _result(self) -> SearchResult:
        ctx, found = self.ctx, self.best.items
        for r in found:
            r.memory_gb = training_parts(ctx.w, ctx.s, ctx.device, r.plan, ctx.rates.flash, ctx.topo.domain)
        if found or self.smallest is None:
            return SearchResult(found[0] if found else None, found[1:], None, evaluated=self.evaluated)
        frugal = self.smallest[0]
        return SearchResult(None, [], (frugal, training_parts(ctx.w, ctx.s, ctx.device, frugal, ctx.rates.flash,
                                                              ctx.topo.domain)), evaluated=self.evaluated)


def default_global_batch(w: Workload, devices: int) -> float:
    """Tokens per optimizer step when the scenario gives none: the model-size default, and at least
    TOKENS_PER_DEVICE_DEFAULT per device as large runs grow the batch with the cluster."""
    scaled = C.DEFAULT_GLOBAL_BATCH_TOKENS * max(1.0, w.params / 1e9) ** C.GLOBAL_BATCH_EXPONENT
    model = min(C.MAX_MODEL_DEFAULT_BATCH_TOKENS, max(C.DEFAULT_GLOBAL_BATCH_TOKENS, scaled))
    cluster = C.TOKENS_PER_DEVICE_DEFAULT * devices
    tokens = min(C.MAX_DEFAULT_GLOBAL_BATCH_TOKENS, max(model, cluster))
    return float(max(w.seq_len, round(tokens / w.seq_len) * w.seq_len))
