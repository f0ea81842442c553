"""The engine's few global constants, each with its basis. One model explains every case: no
constant here is tuned to a single measurement (tests/validation checks them all at once).
"""

from __future__ import annotations

from gpudesk.core.estimate.types import Band

# --------------------------------------------------------------------------- training utilisation
# Hardware FLOP utilisation of dense-transformer training falls as a device's compute grows faster
# than its memory bandwidth: the matrix multiplications speed up, the memory-bound rest (norms,
# activations, optimizer step) does not. One curve, fitted once to the whole validation set:
#   likely HFU = UTILISATION_SCALE / (1 + balance / BALANCE_KNEE) × d / (d + WIDTH_KNEE)
# with balance = dense peak FLOP/s per byte/s of memory bandwidth and d the model width (narrow
# models cannot fill the device). Basis: A100 runs reach 0.64-0.74 HFU (MosaicML LLM Foundry,
# Megatron-LM), H100 BF16 runs 0.46-0.57 (LLM Foundry, Llama 3), TPU v4 0.58 (PaLM).
UTILISATION_SCALE = 1.12
BALANCE_KNEE = 250.0  # FLOP per byte
WIDTH_KNEE = 350.0  # model width at which narrow matrices halve throughput
# The same model on the same GPUs spans 2-3x across code bases (GPT-2 124M on 8xA100: nanoGPT 2023
# about 4 days, llm.c 2024 90 minutes per 10B tokens), hence a wide spread around the likely value:
# a naive code base reaches half of the likely utilisation, a tuned one 1.45x.
MFU_SPREAD = Band(0.5, 1.0, 1.45, "pessimistic and optimistic utilisation are 0.5x and 1.45x the likely value")
MFU_CEILING = 0.75  # no likely utilisation above this, whatever the curve says
UTILISATION_MAX = 0.85  # no utilisation above this in any case

# FP8 speeds up only the matrix multiplications; the rest of a step runs as in BF16 (Amdahl).
FP8_GEMM_TIME_SHARE = Band(0.6, 0.7, 0.8, "share of a BF16 training step spent in matrix multiplications")

# Full activation checkpointing recomputes the forward pass: the hardware does 4/3 of the model FLOPs.
RECOMPUTE_FACTOR = 4.0 / 3.0

# Share of data-parallel gradient traffic hidden behind the backward pass (bucketed all-reduce).
DP_OVERLAP = Band(0.5, 0.8, 0.95, "share of gradient exchange overlapped with the backward pass")
BACKWARD_SHARE = 2.0 / 3.0  # of a step's compute: backward is about twice the forward

# Pipeline schedule: interleaved 1F1B with virtual stages (Narayanan et al. 2021).
PIPELINE_VIRTUAL_STAGES = 4

# Tokens per optimizer step when the scenario does not say: 0.5M for a 1B model, growing as N^0.4
# (GPT-3 used 0.5-3.2M tokens from 125M to 175B parameters, Llama 2 4M, Llama 3 up to 16M).
DEFAULT_GLOBAL_BATCH_TOKENS = 524_288
GLOBAL_BATCH_EXPONENT = 0.4
MAX_DEFAULT_GLOBAL_BATCH_TOKENS = 16_777_216

# --------------------------------------------------------------------------- memory
MIXED_PRECISION_BYTES = {"weights": 2.0, "grads": 2.0, "optimizer": 12.0}  # bf16 + fp32 master, Adam m, v
FP32_BYTES = {"weights": 4.0, "grads": 4.0, "optimizer": 8.0}
QLORA_WEIGHT_BYTES = 0.5625  # 4-bit NF4 plus block scales (Dettmers et al. 2023)
ACTIVATION_BYTES = 2  # 16-bit activations
# Korthikanti et al. 2022: activations per layer = s*b*h*(34 + 5*a*s/h) bytes; with FlashAttention
# the attention-score term is not stored, and sequence parallelism divides all of it by t.
ACT_PER_LAYER = 34.0
LOGIT_BYTES = 6.0  # bf16 logits plus fp32 for the loss, per vocabulary entry and token
RUNTIME_GB = {"datacenter": 1.5, "workstation": 1.0, "consumer": 1.0, "laptop": 1.0, "edge": 0.4,
              "desktop_ai": 1.0}  # CUDA/ROCm context, workspaces, allocator slack per device
SHARED_MEMORY_USABLE = 0.75  # of unified/shared memory left to the accelerator next to the OS and CPU
ASPECT_RATIO = 128  # d_model / layers of typical dense transformers (GPT-3, Llama), when unknown

# --------------------------------------------------------------------------- inference
WEIGHT_BYTES = {"fp32": 4.0, "tf32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0, "int8": 1.0625,
                "int4": 0.5625, "q4": 0.5625, "fp4": 0.5625}  # int8/q4: llama.cpp Q8_0/Q4_0 block scales
KV_BYTES = {"fp8": 1.0}  # otherwise 2 (16-bit KV cache)
# Achieved share of memory bandwidth while decoding (streaming weights and KV cache).
DECODE_BW = {
    "dense": Band(0.55, 0.75, 0.9, "decoding reads 55-90% of peak memory bandwidth for 16/8-bit weights"),
    "quantised": Band(0.25, 0.55, 0.85, "4-bit kernels dequantise on the fly: 25-85% of peak bandwidth"),
}
# Fixed time per layer and generated token (kernel launches, synchronisation), in seconds.
DECODE_LAYER_OVERHEAD_S = Band(60e-6, 25e-6, 8e-6, "kernel launch and synchronisation per layer and token")
PREFILL_UTILISATION = {
    "dense": Band(0.3, 0.5, 0.75, "prompt processing reaches 30-75% of the dense peak"),
    "quantised": Band(0.2, 0.35, 0.55, "4-bit weights are dequantised on the fly: 20-55% of the 16-bit peak"),
}
DECODE_COMPUTE_UTILISATION = 0.5  # once batching makes decoding compute-bound
# GeForce and laptop GPUs run FP16 matrix multiplications with FP16 accumulation (what inference
# engines use) at twice their FP32-accumulate rate, which is the figure the catalogue stores.
FP16_ACCUMULATE_GAIN = {"consumer": 2.0, "laptop": 2.0}
LINK_LATENCY_US = {"nvlink": 3.0, "nvlink-c2c": 2.0, "pcie": 10.0, "infiniband": 5.0, "ethernet": 25.0,
                   "infinity_fabric": 4.0, "ici": 5.0, "neuronlink": 5.0, "other": 20.0}

# --------------------------------------------------------------------------- power
IDLE_FRACTION = 0.12  # device idle draw as a share of TDP when the catalogue has no idle figure
ACTIVITY = {
    "train": Band(1.0, 0.85, 0.7, "training draws 70-100% of TDP"),
    "prefill": Band(1.0, 0.85, 0.7, "prompt processing draws 70-100% of TDP"),
    "decode": Band(0.8, 0.6, 0.45, "bandwidth-bound decoding draws 45-80% of TDP"),
}
# Host power (CPU, memory, NICs, fans, storage) at full load as a share of the accelerators' TDP;
# it draws half of that at idle. A catalogue system's rated power replaces it.
NODE_OVERHEAD_SHARE = {"datacenter": 0.5, "workstation": 0.3, "consumer": 0.3, "laptop": 0.4, "edge": 0.15,
                       "desktop_ai": 0.3}

# --------------------------------------------------------------------------- cost
HOURS_PER_YEAR = 8760.0
HOURS_PER_MONTH = HOURS_PER_YEAR / 12.0
