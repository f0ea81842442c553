"""Device-class efficiency: what share of its datasheet a device reaches in the kernels a
transformer runs, grounded in published micro-benchmarks rather than in one utilisation curve.

A profile holds, for one family of devices and the software usually run on it:
- `matmul`: the share of the dense peak large matrix multiplications reach (Maximum Achievable
  Matmul FLOPS / peak). Measured for data-centre parts in S. Bekman, "Machine Learning
  Engineering Open Book", compute/accelerator, MAMF table (BF16: A100 SXM 86.9%, A100 PCIe 81.1%,
  H100 SXM 80.3%, GH200 83.8%, B200 77.6%, B300 78.6%, GB200 72.9%, MI300X 51.4%, MI325X 60.4%,
  MI355X 68.0%, MI250X 76.7% per GCD, Gaudi 2 96.9%, Gaudi 3 74.1%; FP8: H100 70.9%, H200 73.4%,
  B200 76.3%). A device's own measured figure (catalogue `mamf_*`) replaces the profile's.
- `attention`: the share of the dense peak fused attention reaches over a training step's forward
  and backward passes: FlashAttention-2 reaches 50-73% of peak forward on A100 and less backward
  (Dao 2023, arXiv:2307.08691); FlashAttention-3 up to 75% forward on H100 (Shah et al. 2024,
  arXiv:2407.08608), FlashAttention-2 about 35-45% there. `flash` is False where no fused kernel
  is in the usual stack, and the score matrix then travels through memory.
- `bandwidth`: the share of peak memory bandwidth streaming kernels reach (HBM and GDDR about
  85-90% in copy and decode kernels; shared LPDDR less, as the CPU and display share it).
- `kernel_us`: GPU-side fixed cost of one kernel (launch latency, ramp-up, tail), and `launch_us`:
  the host's cost per launched kernel in eager frameworks, which bounds small kernels from below
  (tens of microseconds on the Jetson Nano's Cortex-A57 cores, a few on server CPUs).
Values marked `measured=False` are assumptions from the nearest measured family; their estimates
get a wider range (`spread`).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpudesk.core.estimate.types import Device


@dataclass(frozen=True)
class Profile:
    key: str
    label: str
    matmul: float
    attention: float
    flash: bool
    bandwidth: float
    kernel_us: float
    launch_us: float
    matmul_fp8: float | None = None
    measured: bool = True
    spread: float = 1.0  # widens the range where the profile is assumed
    tensor: bool = True  # matrix units for 16-bit inputs
    basis: str = ""


def _p(key, label, matmul, attention, flash, bandwidth, kernel_us, launch_us, **kw) -> Profile:
    return Profile(key, label, matmul, attention, flash, bandwidth, kernel_us, launch_us, **kw)


PROFILES: dict[str, Profile] = {p.key: p for p in (
    _p("nvidia-hopper", "NVIDIA Hopper (data centre)", 0.803, 0.50, True, 0.88, 3.0, 5.0, matmul_fp8=0.709,
       basis="MAMF H100 SXM 794.5 of 989 TFLOPS BF16, 1,402.6 of 1,979 FP8 (Bekman)"),
    _p("nvidia-hopper-pcie", "NVIDIA Hopper (PCIe, power-limited)", 0.75, 0.45, True, 0.85, 3.0, 5.0,
       matmul_fp8=0.66, measured=False, spread=1.1, basis="H100 SXM's MAMF less the PCIe card's lower power limit (assumed)"),
    _p("nvidia-blackwell", "NVIDIA Blackwell (data centre)", 0.776, 0.50, True, 0.88, 3.0, 5.0, matmul_fp8=0.763,
       basis="MAMF B200 1,745 of 2,250 TFLOPS BF16, 3,432.5 of 4,500 FP8 (Bekman)"),
    _p("nvidia-ampere-dc", "NVIDIA Ampere (data centre)", 0.869, 0.55, True, 0.88, 3.0, 5.0,
       basis="MAMF A100 SXM 271.2 of 312 TFLOPS BF16 (Bekman); FlashAttention-2 on A100 (Dao 2023)"),
    _p("nvidia-ampere-pcie", "NVIDIA Ampere (PCIe)", 0.811, 0.52, True, 0.86, 3.0, 5.0,
       basis="MAMF A100 PCIe 252.9 of 312 TFLOPS BF16 (Bekman)"),
    _p("nvidia-volta", "NVIDIA Volta (data centre)", 0.68, 0.35, False, 0.85, 3.0, 6.0, measured=False, spread=1.15,
       basis="no published MAMF; an 8192x8192 FP16 matmul peaks at 85 of 125 TFLOPS on V100 (Y. Bulatov, "
       "github.com/yaroslavvb/stuff matmul_benchmark_seq.py); FlashAttention (v1 and v2) needs Turing or Ampere and later, so the "
       "usual Volta stack (Megatron-LM, DeepSpeed) materialises the score matrix"),
    _p("nvidia-client", "NVIDIA GeForce / RTX workstation", 0.80, 0.48, True, 0.85, 3.0, 2.5, measured=False,
       spread=1.1, basis="no published MAMF: as A100 PCIe, against the FP32-accumulate tensor rate; desktop hosts "
       "launch kernels about twice as fast as server cores (single-thread clock about 5 against 2-3 GHz)"),
    _p("nvidia-jetson-tensor", "NVIDIA Jetson (Orin, Thor)", 0.65, 0.35, True, 0.72, 5.0, 15.0, measured=False,
       spread=1.25, basis="embedded GPU on shared LPDDR5 and Arm cores (assumed)"),
    _p("nvidia-gb10", "NVIDIA GB10 (DGX Spark)", 0.70, 0.40, True, 0.80, 4.0, 6.0, measured=False, spread=1.2,
       basis="Blackwell GPU on 273 GB/s LPDDR5X shared with 20 Arm cores (assumed)"),
    _p("nvidia-no-tensor", "NVIDIA without tensor cores (Maxwell, Pascal)", 0.70, 0.0, False, 0.75, 4.0, 8.0,
       measured=False, spread=1.2, tensor=False,
       basis="16-bit matrix products with FP32 accumulation run at the FP32 vector rate; no fused attention"),
    _p("nvidia-jetson-maxwell", "NVIDIA Jetson Nano (Maxwell)", 0.60, 0.0, False, 0.60, 6.0, 40.0, measured=False,
       spread=1.3, tensor=False,
       basis="128 CUDA cores, FP32-accumulate rate, 25.6 GB/s LPDDR4 shared with four Cortex-A57 cores (assumed)"),
    _p("amd-cdna3", "AMD Instinct CDNA 3", 0.514, 0.35, True, 0.80, 4.0, 6.0,
       basis="MAMF MI300X 668.4 of 1,300 TFLOPS BF16 (Bekman, TunableOp on)"),
    _p("amd-cdna4", "AMD Instinct CDNA 4", 0.68, 0.40, True, 0.80, 4.0, 6.0,
       basis="MAMF MI355X 1,565 of 2,300 TFLOPS BF16 (Bekman)"),
    _p("amd-cdna2", "AMD Instinct CDNA 2", 0.767, 0.35, True, 0.80, 4.0, 6.0,
       basis="MAMF MI250X 147.0 of 191.5 TFLOPS per GCD (Bekman)"),
    _p("amd-rdna", "AMD Radeon (RDNA)", 0.55, 0.30, False, 0.82, 4.0, 6.0, measured=False, spread=1.25,
       basis="consumer WMMA units, immature fused attention in the usual stacks (assumed)"),
    _p("apple", "Apple silicon GPU", 0.87, 0.30, False, 0.82, 5.0, 0.0, spread=1.2, tensor=False,
       basis="unified LPDDR5; 16-bit matrix math at the FP32 rate; simdgroup-matrix GEMMs reach 87.2% (FP32) to "
       "93.3% (FP16) of the ALU peak on M1 (P. Turner, Metal FlashAttention README); Metal encodes a whole step's "
       "kernels into command buffers, so no per-kernel host launch bounds them"),
    _p("intel-gaudi2", "Intel Gaudi 2", 0.969, 0.50, True, 0.85, 2.0, 4.0, matmul_fp8=0.955,
       basis="MAMF Gaudi 2 418.7 of 432 TFLOPS BF16 (Bekman)"),
    _p("intel-gaudi3", "Intel Gaudi 3", 0.741, 0.45, True, 0.85, 2.0, 4.0, matmul_fp8=0.769,
       basis="MAMF Gaudi 3 1,243 of 1,677 TFLOPS BF16 (Bekman)"),
    _p("intel-arc", "Intel Arc", 0.55, 0.30, False, 0.80, 5.0, 6.0, measured=False, spread=1.25,
       basis="XMX matrix engines (assumed)"),
    _p("google-tpu", "Google TPU", 0.85, 0.55, True, 0.85, 1.0, 0.0, measured=False, spread=1.15,
       basis="systolic MXUs under XLA, which compiles the step (no per-op launches) (assumed)"),
    _p("aws-neuron", "AWS Trainium / Inferentia", 0.75, 0.40, True, 0.80, 2.0, 0.0, measured=False, spread=1.2,
       basis="NeuronCores under a compiled graph (assumed)"),
    _p("generic", "accelerator of unknown family", 0.65, 0.35, False, 0.80, 5.0, 6.0, measured=False, spread=1.3,
       basis="no family known: cautious shares (assumed)"),
)}

# Ordered rules: the first whose every given field matches picks the profile.
# (vendor, architecture words, device classes, form-factor word, profile)
RULES: tuple[tuple[str, tuple[str, ...], tuple[str, ...], str, str], ...] = (
    ("NVIDIA", ("Maxwell",), ("edge",), "", "nvidia-jetson-maxwell"),
    ("NVIDIA", ("Maxwell", "Pascal", "Kepler"), (), "", "nvidia-no-tensor"),
    ("NVIDIA", (), ("edge",), "", "nvidia-jetson-tensor"),
    ("NVIDIA", (), ("desktop_ai",), "", "nvidia-gb10"),
    ("NVIDIA", ("Hopper",), ("datacenter",), "PCIe", "nvidia-hopper-pcie"),
    ("NVIDIA", ("Hopper",), ("datacenter",), "", "nvidia-hopper"),
    ("NVIDIA", ("Blackwell",), ("datacenter",), "", "nvidia-blackwell"),
    ("NVIDIA", ("Volta",), (), "", "nvidia-volta"),
    ("NVIDIA", ("Ampere",), ("datacenter",), "SXM", "nvidia-ampere-dc"),
    ("NVIDIA", ("Ampere",), ("datacenter",), "", "nvidia-ampere-pcie"),
    ("NVIDIA", (), (), "", "nvidia-client"),
    ("AMD", ("CDNA 4",), (), "", "amd-cdna4"),
    ("AMD", ("CDNA 3",), (), "", "amd-cdna3"),
    ("AMD", ("CDNA 2", "CDNA"), (), "", "amd-cdna2"),
    ("AMD", (), (), "", "amd-rdna"),
    ("Apple", (), (), "", "apple"),
    ("Intel", ("Gaudi 2",), (), "", "intel-gaudi2"),
    ("Intel", ("Gaudi",), (), "", "intel-gaudi3"),
    ("Intel", (), (), "", "intel-arc"),
    ("Google", (), (), "", "google-tpu"),
    ("AWS", (), (), "", "aws-neuron"),
)


def profile_of(device: Device) -> Profile:
    vendor = (device.vendor or "").lower()
    arch = (device.architecture or "").lower()
    form = (device.form_factor or "").lower()
    for rule_vendor, words, classes, form_word, key in RULES:
        if rule_vendor.lower() != vendor:
            continue
        if words and not any(w.lower() in arch for w in words):
            continue
        if classes and device.device_class not in classes:
            continue
        if form_word and form_word.lower() not in form:
            continue
        if device.tensor_cores == 0 and not words and PROFILES[key].tensor:
            continue  # a family-wide rule assumes matrix units this device is known to lack
        return PROFILES[key]
    if device.tensor_cores == 0:
        return PROFILES["nvidia-no-tensor"] if vendor == "nvidia" else PROFILES["generic"]
    return PROFILES["generic"]


def bandwidth_share(device: Device, profile: Profile) -> tuple[float, str]:
    """Share of the datasheet memory bandwidth streaming kernels reach, and where the figure comes
    from: the device's own measured streaming rate (data/kernels/stream.csv) where there is one, else
    its family's."""
    peak = device.mem_bandwidth_gbs
    if device.stream_gbs and peak:
        return min(0.97, device.stream_gbs / peak), (f"{device.name}'s measured {device.stream_gbs:,.0f} of "
                                                       f"{peak:,.0f} GB/s, {device.stream_basis}")
    return profile.bandwidth, profile.label


def gemm_key(precision: str) -> str:
    """The GEMM tables and shares a workload's precision is timed with: FP8 and FP4 their own, every
    other precision (16-bit, weight-only quantisation) the 16-bit ones."""
    return precision if precision in ("fp8", "fp4") else "bf16"


def matmul_share(device: Device, profile: Profile, precision: str) -> tuple[float, str]:
    """Share of the dense peak large GEMMs reach at `precision`, and where the figure comes from. At
    FP4 no MAMF is published: a measured FP4 table's large-product share is used where the device has
    one (block-scaled FP4 reaches far less of its peak than 16-bit does of its own), else the 16-bit
    share, as for every precision without a figure of its own: at FP8, the device's own measured
    16-bit share before its family's (unless the family has a measured FP8 share)."""
    key = gemm_key(precision)
    if key == "fp4":
        curve = device.gemm_curves.get("fp4")
        if curve is not None and curve.measured:
            return min(0.99, curve.efficiency), f"{device.name}'s measured FP4 products ({curve.basis})"
        key = "bf16"
    for at in (key, "bf16") if key == "fp8" and not profile.matmul_fp8 else (key,):
        measured = device.achievable_tflops.get(at)
        peak = device.peak_tflops.get(at) or device.peak_tflops.get("fp16")
        if measured and peak:
            at_16 = " at 16 bits" if at != key else ""
            return min(0.99, measured / peak), f"{device.name}'s measured {measured:,.0f} of {peak:,.0f} TFLOPS{at_16}"
    if precision == "fp8" and profile.matmul_fp8:
        return profile.matmul_fp8, profile.label
    return profile.matmul, profile.label
