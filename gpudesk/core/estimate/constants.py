"""The engine's global constants, each with its basis. One model explains every case: no constant
here is tuned to a single measurement. Those marked "fitted" were set once on the fitting half of
the published measurements (tests/validation, split = "fit") and are judged on the other half.

Device-specific efficiencies (matrix units, memory, fused attention, launch costs) live in
profiles.py; what each parallel plan sends over which link lives in comm.py.
"""

from __future__ import annotations

from gpudesk.core.estimate.types import Band

GIB = 2.0 ** 30

# --------------------------------------------------------------------------- model shapes
# A bare parameter count is shaped as a modern dense decoder (Llama 3 herd, Dubey et al. 2024,
# Table 3: 8B 32 layers × 4,096; 70B 80 × 8,192; 405B 126 × 16,384; 8 KV heads; FFN 3.5× width
# for 8B/70B; 128,256-token vocabulary).
ASPECT_RATIO = 128  # width per layer
MODERN_KV_HEADS = 8
MODERN_FFN_RATIO = 3.5
MODERN_VOCAB = 128_256

# --------------------------------------------------------------------------- precisions
TRAINING_PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8")
# llama.cpp's block formats keep 16-bit math: Q8_0 is "q8" (8 bits and a 16-bit scale per 32
# weights), Q4_0/Q4_K and the other 2-6-bit quants "q4"; "int8" is INT8 matrix math (W8A8).
QUANTISED = ("int4", "q4", "q8", "fp4")
# Bytes per weight as stored: llama.cpp's Q8_0 and Q4_0 carry one FP16 scale per 32 weights
# (8.5 and 4.5 bits per weight; ggml/src/ggml-common.h block layouts).
WEIGHT_BYTES = {"fp32": 4.0, "tf32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0, "int8": 1.0625,
                "int4": 0.5625, "q4": 0.5625, "q8": 1.0625, "fp4": 0.5625}
KV_BYTES = {"fp8": 1.0}  # otherwise 2: a 16-bit KV cache

# FP8 training speeds up only the matrix multiplications (Micikevicius et al. 2022, "FP8 formats
# for deep learning"; Transformer Engine keeps norms, softmax and the optimizer in higher
# precision); the engine applies the FP8 rate to GEMMs and keeps everything else at BF16 cost.

# --------------------------------------------------------------------------- memory
# Vendors quote accelerator memory in binary gigabytes printed as "GB": an "80 GB" H100 shows
# 81,559 MiB to CUDA (nvidia-smi), an "80 GB" A100 81,920 MiB, a "24 GB" RTX 4090 24,564 MiB.
# The catalogue's memory_gb is read as GiB; 0.5% is held back by the driver (ECC, page tables).
VISIBLE_SHARE = 0.995
# What the runtime takes on every device before the workload: CUDA/ROCm context, cuBLAS and
# NCCL workspaces (about 0.5-1.5 GB on data-centre GPUs, less on small boards).
RUNTIME_GB = {"datacenter": 1.5, "workstation": 1.0, "consumer": 1.0, "laptop": 1.0, "edge": 0.3,
              "desktop_ai": 1.0}
# A caching allocator cannot hand out every byte: 5% of what is left is kept for fragmentation
# (PyTorch documents fragmentation as the reason for `expandable_segments`; assumed share).
FRAGMENTATION = 0.05
# Memory shared with a CPU and an operating system: macOS lets the GPU wire about three quarters
# of RAM by default (the `iogpu.wired_limit_mb` default that llama.cpp and MLX document); a Linux
# board or desktop keeps a fixed amount for the OS and CPU-side processes.
APPLE_GPU_SHARE = 0.75
SHARED_OS_RESERVE_GB = {"edge": 1.2, "desktop_ai": 8.0, "laptop": 6.0, "workstation": 8.0, "consumer": 8.0,
                        "datacenter": 16.0}

# Model states per parameter in mixed precision with Adam (EleutherAI, "Transformer Math 101",
# 2023): 16-bit weights 2 + 16-bit gradients 2 + FP32 master weights, momentum and variance 12.
MIXED_PRECISION_BYTES = {"weights": 2.0, "grads": 2.0, "optimizer": 12.0}
FP32_BYTES = {"weights": 4.0, "grads": 4.0, "optimizer": 8.0}
QLORA_WEIGHT_BYTES = 0.5625  # 4-bit NF4 plus block scales (Dettmers et al. 2023)
LOGIT_BYTES = 6.0  # 16-bit logits plus the FP32 copy the loss keeps, per vocabulary entry and token
# An optimizer step reads FP32 master weights, momentum, variance and the gradient, and writes the
# first three and the 16-bit weights: about 28 bytes per parameter (Adam, mixed precision).
OPTIMIZER_STEP_BYTES = 28.0
# ZeRO-3/FSDP keeps the gathered weights of the layer in use and of the next (prefetch).
ZERO3_LIVE_LAYERS = 2

# --------------------------------------------------------------------------- training compute
# Bytes of element-wise traffic (norms, rotary embedding, residual adds, activation functions) one
# token's forward pass moves per layer, counted from the operations: two RMSNorms 8·d, rotary
# about 5·d, two residual adds 12·d, and the MLP activation 6·f (gated) or 4·f (GELU). The
# backward pass moves about twice as much; the band covers fused (Megatron/Transformer Engine,
# llm.c) to eager (plain PyTorch) code.
ELEMENTWISE_FORWARD_D = 25.0
ELEMENTWISE_FORWARD_F = {True: 6.0, False: 4.0}
ELEMENTWISE_TRAIN_FACTOR = Band(6.5, 4.5, 3.0, "fwd + 2×fwd backward; eager code adds copies and casts (fitted)")
# Kernels launched per layer for one micro-batch, forward and backward (fused stacks about 30, eager
# PyTorch about 80).
KERNELS_PER_LAYER_TRAIN = Band(80.0, 45.0, 30.0, "fused stacks launch fewer kernels")
# Narrow, short and skinny matrices do not fill a GPU: how far each product falls below the large-GEMM
# rate comes from the device's GEMM curve by shape (kernels.py, fitted to measured tables in data/kernels).
# Activation checkpointing: "full" recomputes the whole forward pass (4/3 of the work);
# "selective" recomputes only the attention core and activation functions (Korthikanti et al.).
RECOMPUTE_FACTOR = 4.0 / 3.0
# Work a training step does besides its layers and optimizer step (data loading, logging, Python
# overhead, gradient clipping, loss scaling): a share of the step (fitted).
STEP_OVERHEAD_SHARE = Band(0.12, 0.05, 0.02, "data loading, logging, clipping, host overhead")
# Utilisation a device cannot exceed in any case.
UTILISATION_MAX = 0.95

# --------------------------------------------------------------------------- communication
# Share of a link's rate collectives reach (NCCL bus bandwidth): about 80% over NVLink, 90% over
# InfiniBand and data-centre Ethernet, less over PCIe and commodity TCP. Basis: nccl-tests
# all_reduce on 2 nodes × 8 H100 with 8 × 200 Gb/s NICs each reaches 339 GB/s bus bandwidth at
# 8 GB (tests/data/bench/nccl-tests, 90% of the 375 GB/s a pipelined hierarchical all-reduce allows).
LINK_EFFICIENCY = {"nvlink": 0.8, "nvlink-c2c": 0.8, "pcie": 0.7, "infiniband": 0.9, "ethernet": 0.9,
                   "ethernet-slow": 0.75, "infinity_fabric": 0.75, "ici": 0.8, "neuronlink": 0.75,
                   "other": 0.7}
SLOW_ETHERNET_GBS = 5.0  # below 40 GbE, Ethernet runs TCP sockets rather than RDMA
LINK_LATENCY_US = {"nvlink": 3.0, "nvlink-c2c": 2.0, "pcie": 10.0, "infiniband": 5.0, "ethernet": 25.0,
                   "ethernet-slow": 60.0, "infinity_fabric": 4.0, "ici": 5.0, "neuronlink": 5.0, "other": 20.0}
PCIE_FALLBACK_GBS = 16.0  # one way, when a node's devices have no named link
# Gradients are exchanged in buckets of about 25 MB (PyTorch DDP's default bucket_cap_mb); fully sharded
# weights (ZeRO-3, FSDP, HSDP) are gathered and their gradients scattered one layer at a time instead.
BUCKET_BYTES = 25e6
# Share of a collective that hides behind independent compute when it can (bucketed gradient
# reduction during the backward pass; FSDP's prefetch; ring attention). Overlapped communication
# still slows compute a little (shared SMs and memory), hence never 100%.
OVERLAP = Band(0.5, 0.8, 0.92, "share of overlappable communication hidden behind compute")
# Tensor-parallel collectives sit on the critical path; newer stacks overlap part of them with the
# GEMMs (Megatron-Core/Transformer Engine userbuffers).
TP_OVERLAP = Band(0.0, 0.2, 0.5, "share of tensor-parallel communication hidden")
# Expert-parallel all-to-all: overlapped in DeepSeek-V3's DualPipe, mostly exposed elsewhere.
EP_OVERLAP = Band(0.0, 0.3, 0.7, "share of expert all-to-all hidden")

# --------------------------------------------------------------------------- the plan
# Tokens per optimizer step when the scenario does not say: a model-size default (0.5M tokens for a
# 1B model, growing as N^0.4: GPT-3 used 0.5-3.2M tokens from 125M to 175B parameters, Llama 2
# 4M), and at least about 1,024 tokens per device, as large runs grow the batch with the cluster
# (Llama 3 405B: 16M tokens on 16,384 H100; Dubey et al. 2024, section 3.3.4 and Table 4).
DEFAULT_GLOBAL_BATCH_TOKENS = 524_288
GLOBAL_BATCH_EXPONENT = 0.4
MAX_MODEL_DEFAULT_BATCH_TOKENS = 4_194_304
TOKENS_PER_DEVICE_DEFAULT = 1024
MAX_DEFAULT_GLOBAL_BATCH_TOKENS = 67_108_864
# Context parallelism is considered from this sequence length (Llama 3 used it for 131K contexts).
CONTEXT_PARALLEL_FROM = 16_384
MAX_TENSOR_PARALLEL = 16

# --------------------------------------------------------------------------- inference
# Fixed cost per decode step and layer outside the bandwidth-bound kernels is modelled by kernel
# counts (profiles.py): about 14 kernels per layer and token in llama.cpp and vLLM.
KERNELS_PER_LAYER_DECODE = 14.0
# A single-user eager runtime (llama.cpp before CUDA graphs, transformers' generate) launches every
# operation of a layer from the host: two norms and their weight multiplies, q/k/v projections, two
# rotary embeddings, two cache copies, k·q, scale, masked softmax, kqv, a permute, the output
# projection, a residual add, gate, up, activation, multiply, down and a second add: about 26
# (counted from llama.cpp's Llama graph, llm_build_llama). The host's launch rate bounds them; a
# serving engine (vLLM, SGLang, TensorRT-LLM) fuses most of them and replays the decode step as a
# CUDA graph, so only the GPU-side time of its 14 kernels counts.
KERNELS_PER_LAYER_DECODE_EAGER = 26.0
# Integer/vector operations per weight to dequantise 4- and 8-bit weights on the fly in
# matrix-vector kernels (unpack, offset, scale, multiply-add) (fitted).
DEQUANT_OPS_PER_WEIGHT = {"int4": 6.0, "q4": 6.0, "q8": 3.0, "fp4": 4.0, "int8": 3.0}
# How much of the dequantisation work overlaps with the memory traffic in the same kernel.
DEQUANT_OVERLAP = 0.5
# Serving engines reserve a share of device memory for weights, activations and KV cache (vLLM's
# gpu_memory_utilization defaults to 0.9) and cap the running sequences (max_num_seqs, 256 in
# vLLM's engine defaults).
SERVER_MEMORY_SHARE = 0.9
SERVER_MAX_BATCH = 256
# Host-side work per decode step of a serving engine (scheduling, sampling, detokenisation).
SERVER_STEP_OVERHEAD_S = Band(3e-3, 1e-3, 0.4e-3, "scheduler and sampling time per engine step")
# Chunked prefill: prompt tokens joined to decode steps per iteration (vLLM max_num_batched_tokens).
PREFILL_CHUNK_TOKENS = 2048
# Share of the matrix rate prompt processing reaches (large GEMMs over the prompt).
PREFILL_GEMM_SHARE = Band(0.65, 0.85, 0.95, "prompt processing reaches most of the large-GEMM rate")
# Weight-only 4-bit formats (llama.cpp Q4_0/Q4_K, GPTQ/AWQ W4A16) unpack their weights inside the
# matrix kernels of prompt processing. On a GPU with matrix units the vector units that unpack run
# 8-16 times slower than the matrix units they feed, so those kernels reach a lower share of the
# 16-bit matrix rate: in llama.cpp PR 4766, pp512 of LLaMA-7B Q4_0 runs at 0.72 (RTX 4090) and 0.81
# (RTX 3090) of F16. Without matrix units (Apple's GPU) the unpacking shares the ALUs with the
# multiply-adds and is amortised over the rows of a tile: no penalty is applied.
WEIGHT_ONLY_4BIT = ("int4", "q4", "q8")  # weight-only block formats, unpacked in the matrix kernels
WEIGHT_ONLY_PREFILL_SHARE = 0.75
# GeForce and laptop GPUs run FP16 matrix multiplications with FP16 accumulation (what inference
# engines use) at twice their FP32-accumulate rate, which is the figure the catalogue stores.
FP16_ACCUMULATE_GAIN = {"consumer": 2.0, "laptop": 2.0}

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
# A system's rated (maximum) power is drawn only in the worst case: load draws between the idle
# share and the rated power.
SYSTEM_IDLE_SHARE = 0.3

# --------------------------------------------------------------------------- cost
HOURS_PER_YEAR = 8760.0
HOURS_PER_MONTH = HOURS_PER_YEAR / 12.0

# --------------------------------------------------------------------------- ranges
# The low and high cases scale the matrix and attention shares by these factors (the spread between
# code bases on the same hardware); profiles that are assumed rather than measured widen them by
# their `spread`.
MATMUL_CASE = Band(0.75, 0.88, 0.97, "share of the best measured matrix rate (MAMF) that a training step's GEMMs reach (fitted)")
# What the cases above cannot know (the code base, its version, the run's settings) shows in the
# engine's error against published measurements. Each range is therefore at least as wide as that
# error: the 85th percentile of |ln(measured / likely)| over tests/validation, each source family
# judged with the fitted constants refitted without it (training 0.2513, inference 0.3120 when last
# set on 2026-12-07, over 1,577 measurements in whole published tables), rounded up so that no range
# is narrower. So about 85% of measurements fall inside a range, which is what "low" and "high"
# promise a reader. A test checks these against the validation set, so they are updated when the
# engine changes.
MODEL_ERROR = {"training": 0.26, "inference": 0.32}
# The engine's two fitted constants: what its physics gives is multiplied by these, the inverse of its
# median ratio estimated / measured over every published measurement of the kind in tests/validation
# (training: tokens/s, MFU and time to train; inference: every speed and time of serving and
# decoding, times divided). They absorb what no kernel table shows (a framework's overheads beyond
# its kernels, clocks under full load). `python -m tests.validation.report --leave-one-source-out`
# refits them without each source family and judges that family with them; a test checks these
# values are the fit on all measurements.
FITTED_SCALE = {"training": 1.042, "inference": 0.934}
# Where a measured utilisation is given (workload.mfu), its own uncertainty.
GIVEN_MFU_CASE = Band(0.9, 1.0, 1.1, "a measured utilisation carries about ±10%")
