"""The serving planner's throughput–interactivity curve: for every serving layout that fits and a
ladder of concurrencies, the steady state of continuous batching (serving.serve), reduced to the
points no other point beats on both axes: output tokens/s per GPU against tokens/s per user. This is
how InferenceX (SemiAnalysis) publishes serving results, and it is what a latency target picks from:
the best throughput whose time to first token and speed per user meet the targets.

Each point is a plain dict so that the caller can add what rests on it (cost per million tokens from
the cluster's cost per hour, tokens per megawatt from its power)."""

from __future__ import annotations

from gpudesk.core.estimate.memory import kv_gb_per_sequence
from gpudesk.core.estimate.serving import decode_step, held_context, kv_capacity, layouts, prefill, serve

# Concurrencies tried for each layout: powers of two up to the ladder's top, plus the scenario's own.
LADDER_TOP = 8192


def ladder(concurrency: int, cap: int) -> list[int]:
    top = max(1, min(LADDER_TOP, max(concurrency, cap)))
    out, c = [], 1
    while c <= top:
        out.append(c)
        c *= 2
    if 1 <= concurrency <= LADDER_TOP and concurrency not in out:
        out.append(concurrency)
    return sorted(set(out))


def points(w, s, device, topo, e, factors, devices: int) -> list[dict]:
    """Every (layout, concurrency) steady state, as a point of the curve."""
    from dataclasses import replace

    out = []
    variants: dict[int, object] = {}  # the workload at each concurrency, made once (a copy costs ~0.1 ms)

    def at(c: int):
        if c not in variants:
            variants[c] = replace(w, concurrency=c)
        return variants[c]

    for lay in layouts(w, s, topo):
        probe = serve(at(1), s, device, topo, lay, e, *factors)
        if probe is None:
            continue
        top = probe.kv_capacity_sequences * lay.replicas
        for c in ladder(max(1, w.concurrency), top):
            got = serve(at(c), s, device, topo, lay, e, *factors)
            if got is None or got.output_tokens_per_s <= 0:
                continue
            used = lay.tp * lay.pp * lay.replicas
            out.append({
                "concurrency": c, "tp": lay.tp, "pp": lay.pp, "replicas": lay.replicas, "disaggregated": False,
                "layout": f"TP{lay.tp}" + (" DP-attention" if lay.dp_attention else "") + (f" PP{lay.pp}" if lay.pp > 1 else "")
                          + f" × {lay.replicas}",
                "output_tokens_per_s": got.output_tokens_per_s,
                "tokens_per_s_per_gpu": got.output_tokens_per_s / max(1, devices),
                "tokens_per_s_per_user": 1.0 / got.tpot_s if got.tpot_s > 0 else 0.0,
                "ttft_s": got.ttft_s, "tpot_s": got.tpot_s, "running_batch": got.batch,
                "devices_used": used,
            })
    return out + disaggregated_points(w, s, device, topo, e, factors, devices)


def node_splits(nodes: int) -> list[int]:
    """Prefill node counts to try: every split up to 8 nodes, else eight spread between 1 and nodes−1."""
    if nodes <= 8:
        return list(range(1, nodes))
    return sorted({max(1, min(nodes - 1, round(nodes * f))) for f in (0.05, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875)})


def _prefill_pool(w, s, device, ptopo, e, prefill_factor: float) -> tuple[float, float] | None:
    """(prompts per second, seconds of one prompt alone) of a pool that only processes prompts, at
    its best layout; None where no layout holds the weights and one prompt's cache."""
    prompt = max(1, w.prompt_tokens)
    pool = None
    for lay in layouts(w, s, ptopo):
        if kv_capacity(w, s, device, lay, prompt, True)[0] < 1:
            continue
        alone, per_token = prefill(w, s, e, ptopo, lay, 1 << 20)
        if per_token <= 0:
            continue
        rate = lay.replicas / (prompt * per_token / prefill_factor)
        if pool is None or rate > pool[0]:
            pool = (rate, alone / prefill_factor)
    return pool


class _DecodePool:
    """serving.decode_only's (batch, step) for replicas that only decode, remembered across the node
    splits: replicas of one shape hold the same sequences and take the same step at the same batch."""

    def __init__(self, w, s, device, e, decode_factor: float):
        self.w, self.s, self.device, self.e, self.factor = w, s, device, e, decode_factor
        self.context = max(1, w.prompt_tokens) + max(1, w.output_tokens) / 2.0
        self.fits: dict[tuple, int] = {}  # (tp, pp) -> sequences a replica holds
        self.steps: dict[tuple, float] = {}  # (tp, pp, batch) -> seconds per decode step

    def fit(self, lay) -> int:
        key = (lay.tp, lay.pp, lay.dp_attention)
        if key not in self.fits:
            self.fits[key] = kv_capacity(self.w, self.s, self.device, lay, held_context(self.w), True)[0]
        return self.fits[key]

    def step(self, c: int, lay, dtopo) -> tuple[int, float] | None:
        fit = self.fit(lay)
        if fit < 1:
            return None
        w = self.w
        batch = min(-(-c // lay.replicas), fit, int(w.max_batch or w.server_max_batch or fit))
        key = (lay.tp, lay.pp, lay.dp_attention, batch)
        if key not in self.steps:
            self.steps[key] = decode_step(w, self.s, self.e, dtopo, lay, batch, self.context, True)[0] / self.factor
        return batch, self.steps[key]


def disaggregated_points(w, s, device, topo, e, factors, devices: int) -> list[dict]:
    """Prefill and decode on separate nodes, as NVIDIA Dynamo and SGLang's prefill/decode
    disaggregation run it: `p` nodes only process prompts, the other `d` only decode, and each
    request's KV cache crosses the network once. For each split, the prefill pool's best layout sets
    the rate at which prompts can be served; each decode layout and concurrency gives a point whose
    request rate is the slower pool's, whose speed per user is the decode step alone (no prompt chunks
    stretch it), and whose time to first token is a prompt alone on a prefill replica, the cache's
    transfer over the nodes' NICs and one decode step. Only clusters of two or more nodes split."""
    from dataclasses import replace

    if topo.nodes < 2:
        return []
    decode_factor, prefill_factor = factors
    prompt, out_tokens = max(1, w.prompt_tokens), max(1, w.output_tokens)
    transfer = kv_gb_per_sequence(w, s, prompt, 1, 1) * 1e9 / (topo.node_gbs * 1e9) + topo.inter_latency_s
    decoding = _DecodePool(w, s, device, e, decode_factor)
    out = []
    for p_nodes in node_splits(topo.nodes):
        d_nodes = topo.nodes - p_nodes
        pool = _prefill_pool(w, s, device, replace(topo, devices=p_nodes * topo.per_node, nodes=p_nodes), e,
                             prefill_factor)
        if pool is None:
            continue
        dtopo = replace(topo, devices=d_nodes * topo.per_node, nodes=d_nodes)
        for lay in [lay for lay in layouts(w, s, dtopo) if lay.pp == 1 or w.pp]:  # decode pools do not pipeline
            if decoding.fit(lay) < 1:
                continue
            for c in ladder(max(1, w.concurrency), decoding.fit(lay) * lay.replicas):
                batch, step = decoding.step(c, lay, dtopo)
                rate = min(pool[0], min(lay.replicas, c / max(1, -(-c // lay.replicas))) * batch / (out_tokens * step))
                out.append({
                    "concurrency": c, "tp": lay.tp, "pp": lay.pp, "replicas": lay.replicas, "disaggregated": True,
                    "prefill_nodes": p_nodes, "decode_nodes": d_nodes,
                    "layout": f"{p_nodes} prefill + {d_nodes} decode nodes, decode TP{lay.tp}"
                              + (" DP-attention" if lay.dp_attention else "")
                              + (f" PP{lay.pp}" if lay.pp > 1 else "") + f" × {lay.replicas}",
                    "output_tokens_per_s": rate * out_tokens,
                    "tokens_per_s_per_gpu": rate * out_tokens / max(1, devices),
                    "tokens_per_s_per_user": 1.0 / step, "ttft_s": pool[1] + transfer + step, "tpot_s": step,
                    "running_batch": batch, "devices_used": (p_nodes + d_nodes) * topo.per_node,
                })
    return out


def frontier(candidates: list[dict]) -> list[dict]:
    """The points no other point beats on both throughput per GPU and speed per user, fastest per
    user first."""
    ordered = sorted(candidates, key=lambda p: (-p["tokens_per_s_per_user"], -p["tokens_per_s_per_gpu"]))
    out: list[dict] = []
    best = -1.0
    for p in ordered:
        if p["tokens_per_s_per_gpu"] > best * (1 + 1e-9):
            out.append(p)
            best = p["tokens_per_s_per_gpu"]
    return out


def meets(p: dict, ttft_s_max: float | None, per_user_min: float | None) -> bool:
    return (ttft_s_max is None or p["ttft_s"] <= ttft_s_max) and \
        (per_user_min is None or p["tokens_per_s_per_user"] >= per_user_min)


def shortfall(p: dict, ttft_s_max: float | None, per_user_min: float | None) -> float:
    """How far a point is from the targets: the larger of its time to first token over the limit and
    the speed per user asked over what it gives (1.0 or less: met)."""
    worst = 0.0
    if ttft_s_max:
        worst = max(worst, p["ttft_s"] / ttft_s_max)
    if per_user_min:
        worst = max(worst, per_user_min / max(p["tokens_per_s_per_user"], 1e-12))
    return worst


def operating_point(curve: list[dict], ttft_s_max: float | None,
                    per_user_min: float | None) -> tuple[dict | None, bool]:
    """(the point with the highest throughput per GPU that meets the targets, True), or, where none
    does, (the point closest to them, False). Only points the estimate can stand on are chosen: those
    of one pool serving both prompts and decoding (a disaggregated point is shown on the curve)."""
    curve = [p for p in curve if not p.get("disaggregated")]
    if not curve:
        return None, False
    meeting = [p for p in curve if meets(p, ttft_s_max, per_user_min)]
    if meeting:
        return max(meeting, key=lambda p: p["tokens_per_s_per_gpu"]), True
    return min(curve, key=lambda p: shortfall(p, ttft_s_max, per_user_min)), False


def enrich(curve: list[dict], usd_per_hour: float | None, power_w: float | None) -> None:
    """Add what rests on each point's throughput: dollars per million output tokens at the cluster's
    cost per hour, and output tokens per second per megawatt of the cluster's power (None where that
    is unknown)."""
    for p in curve:
        tokens_per_hour = p["output_tokens_per_s"] * 3600.0
        p["usd_per_million_tokens"] = usd_per_hour / tokens_per_hour * 1e6 if usd_per_hour and tokens_per_hour else None
        p["tokens_per_s_per_mw"] = p["output_tokens_per_s"] / (power_w / 1e6) if power_w else None
