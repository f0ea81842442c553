"""The catalogue's kinds and fields: one description that drives loading, validation, the JSON
contract, the database columns and the UI's tables, forms and detail panel."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9.\-]*$")
DATE_RE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


class FieldError(ValueError):
    """A value that does not fit its field; the message says what is wrong, in words."""


@dataclass(frozen=True)
class Field:
    name: str
    label: str
    type: str = "str"  # str | int | float | bool | date | slug | choice | ref
    unit: str = ""
    figure: bool = False  # a sourced number (needs a source and a date)
    required: bool = False
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    ref: str = ""  # kind a `ref` field points to ("sources", "interconnects", ...)
    column: bool = True  # shown as a column in the catalogue table
    source_field: str = ""  # the column holding this figure's source, when not `source`
    date_field: str = ""  # the column holding this figure's date, when not `date`
    help: str = ""
    positive: bool = False  # a price: zero or less is refused

    @property
    def numeric(self) -> bool:
        return self.type in ("int", "float")

    def header(self) -> str:
        return f"{self.label} ({self.unit})" if self.unit else self.label


def _f(name, label, unit="", lo=0.0, hi=None, **kw) -> Field:
    return Field(name, label, "float", unit, figure=True, minimum=lo, maximum=hi, **kw)


def _i(name, label, unit="", lo=0, hi=None, **kw) -> Field:
    return Field(name, label, "int", unit, figure=True, minimum=lo, maximum=hi, **kw)


ID = Field("id", "ID", "slug", required=True, help="lowercase letters, digits, '-' and '.'")
SOURCE = Field("source", "Source", "ref", ref="sources", required=True, column=False)
DATE = Field("date", "Date", "date", required=True)
NOTES = Field("notes", "Notes", column=False)

DEVICE_CLASSES = ("datacenter", "workstation", "consumer", "laptop", "edge", "desktop_ai")
ACCELERATOR_KINDS = ("gpu", "tpu", "npu", "soc", "asic")
SYSTEM_KINDS = ("server", "board", "rack", "workstation", "desktop_ai", "edge_kit", "laptop")
PRICE_KINDS = ("list", "msrp", "street", "quote", "reported_deal")
# How a price of each kind is named to a buyer ("MSRP $99", "your quote $9,000").
PRICE_KIND_WORDS = {"list": "list price", "msrp": "MSRP", "street": "street price", "quote": "your quote",
                    "reported_deal": "reported deal"}
CLOUD_PRICINGS = ("on_demand", "spot", "reserved_1y", "reserved_3y")
# the cost-of-ownership factors (gpudesk.core.estimate.tco.COMPONENTS; kept in step by a test)
COST_COMPONENTS = ("host_usd_per_node", "nic_usd", "switch_usd", "switch_ports", "link_usd",
                   "facility_usd_per_kw")
EMBODIED_BOUNDARIES = ("cradle_to_gate", "lifecycle_excl_use", "lifecycle_total")
EMBODIED_SCOPES = ("device", "system", "baseboard")
FFN_KINDS = ("swiglu", "geglu", "gelu")
ATTENTION_KINDS = ("mha", "gqa", "mqa", "mla")
SOURCE_KINDS = (
    "datasheet", "whitepaper", "spec_page", "price_page", "paper", "report", "dataset",
    "press_release", "documentation", "quote", "other",
)
LINK_FAMILIES = (
    "nvlink", "nvlink-c2c", "pcie", "infiniband", "ethernet", "infinity_fabric", "ici",
    "neuronlink", "other",
)

# Peak-throughput fields in the order a precision is looked up.
PRECISION_FIELDS = {
    "fp64": "fp64_tflops",
    "fp32": "fp32_tflops",
    "tf32": "tf32_tflops",
    "fp16": "fp16_tflops",
    "bf16": "bf16_tflops",
    "fp8": "fp8_tflops",
    "int8": "int8_tops",
    "fp4": "fp4_tflops",
}

# Measured maximum achievable matmul throughput (MAMF), by precision.
ACHIEVABLE_FIELDS = {"bf16": "mamf_bf16_tflops", "fp8": "mamf_fp8_tflops"}

KINDS: dict[str, tuple[Field, ...]] = {
    "accelerators": (
        ID,
        Field("name", "Name", required=True),
        Field("vendor", "Vendor", required=True),
        Field("family", "Family", column=False),
        Field("architecture", "Architecture"),
        Field("year", "Year", "int", minimum=1990, maximum=2040),
        Field("device_class", "Class", "choice", choices=DEVICE_CLASSES),
        Field("kind", "Kind", "choice", choices=ACCELERATOR_KINDS, column=False),
        Field("form_factor", "Form factor"),
        _f("memory_gb", "Memory", "GB", hi=100000),
        Field("memory_type", "Memory type"),
        _f("mem_bandwidth_gbs", "Bandwidth", "GB/s", hi=1e6),
        Field("memory_shared", "Shared memory", "bool", column=False),
        _f("tdp_w", "TDP", "W", hi=50000),
        _f("fp64_tflops", "FP64", "TFLOPS", hi=1e6, column=False),
        _f("fp64_tensor_tflops", "FP64 tensor", "TFLOPS", hi=1e6, column=False),
        _f("fp32_tflops", "FP32", "TFLOPS", hi=1e6),
        _f("tf32_tflops", "TF32", "TFLOPS", hi=1e6, column=False),
        _f("fp16_tflops", "FP16", "TFLOPS", hi=1e6),
        _f("bf16_tflops", "BF16", "TFLOPS", hi=1e6),
        _f("fp8_tflops", "FP8", "TFLOPS", hi=1e6),
        _f("int8_tops", "INT8", "TOPS", hi=1e6, column=False),
        _f("fp4_tflops", "FP4", "TFLOPS", hi=1e6, column=False),
        _f("mamf_bf16_tflops", "Achievable BF16 matmul", "TFLOPS", hi=1e6, column=False,
           help="measured maximum achievable matmul throughput (MAMF), dense BF16"),
        _f("mamf_fp8_tflops", "Achievable FP8 matmul", "TFLOPS", hi=1e6, column=False,
           help="measured maximum achievable matmul throughput (MAMF), dense FP8"),
        _i("cuda_cores", "CUDA cores", hi=10_000_000, column=False),
        _i("tensor_cores", "Tensor cores", hi=100_000, column=False),
        Field("intra_link", "Link", "ref", ref="interconnects"),
        _f("intra_link_gbs", "Link bandwidth", "GB/s", hi=1e6, column=False),
        _i("pcie_gen", "PCIe gen", lo=1, hi=8, column=False),
        Field("ecc", "ECC", "bool", column=False),
        _i("mig", "MIG instances", lo=0, hi=64, column=False),
        SOURCE, DATE, NOTES,
    ),
    "systems": (
        ID,
        Field("name", "Name", required=True),
        Field("vendor", "Vendor", required=True),
        Field("kind", "Kind", "choice", choices=SYSTEM_KINDS),
        Field("accelerator", "Accelerator", "ref", ref="accelerators", required=True),
        _i("accelerator_count", "Accelerators", lo=1, hi=1_000_000),
        Field("cpu", "CPU", column=False),
        _f("system_memory_gb", "System memory", "GB", hi=1e7),
        _f("system_power_w", "System power", "W", hi=1e7),
        Field("intra_link", "Link", "ref", ref="interconnects"),
        Field("nic", "NIC", "ref", ref="interconnects"),
        _i("nic_count", "NICs", lo=0, hi=1024, column=False),
        SOURCE, DATE, NOTES,
    ),
    "cloud": (
        ID,
        Field("provider", "Provider", required=True),
        Field("instance_type", "Instance", required=True),
        Field("accelerator", "Accelerator", "ref", ref="accelerators", required=True),
        _i("accelerator_count", "Accelerators", lo=1, hi=100_000),
        _i("vcpus", "vCPUs", hi=100_000, column=False),
        _f("memory_gb", "Memory", "GB", hi=1e7, column=False),
        Field("region", "Region"),
        _f("usd_per_hour", "On demand", "$/h", hi=1e6, required=True),
        _f("usd_per_hour_spot", "Spot", "$/h", hi=1e6),
        _f("usd_per_hour_reserved", "Reserved", "$/h", hi=1e6),
        Field("reserved_term", "Term", column=False),
        Field("intra_link", "Link", "ref", ref="interconnects", column=False),
        Field("inter_link", "Network", "ref", ref="interconnects", column=False),
        DATE, SOURCE, NOTES,
    ),
    "prices": (
        ID,
        Field("item", "Item", "ref", ref="accelerators|systems", required=True),
        Field("kind", "Kind", "choice", choices=PRICE_KINDS, required=True),
        _f("usd", "Price", "$", hi=1e9, required=True, positive=True),
        DATE, SOURCE, NOTES,
    ),
    "cloud_prices": (
        ID,
        Field("offering", "Offering", "ref", ref="cloud", required=True),
        Field("pricing", "Pricing", "choice", choices=CLOUD_PRICINGS, required=True),
        _f("usd_per_hour", "Price", "$/h", hi=1e6, required=True, positive=True),
        DATE, SOURCE, NOTES,
    ),
    "embodied": (
        ID,
        Field("item", "Item", "ref", ref="accelerators|systems", required=True),
        _f("kg_co2e", "Embodied", "kg CO2e", hi=1e9, required=True),
        Field("boundary", "Boundary", "choice", choices=EMBODIED_BOUNDARIES, required=True),
        Field("scope", "Covers", "choice", choices=EMBODIED_SCOPES, required=True),
        _f("manufacturing_share", "Manufacturing share", "", hi=1.0, column=False,
           help="share of a whole-life figure that is manufacturing (production and transport)"),
        DATE, SOURCE, NOTES,
    ),
    "cost_factors": (
        ID,
        Field("component", "Component", "choice", choices=COST_COMPONENTS, required=True),
        _f("value", "Value", "", hi=1e9, required=True, positive=True,
           help="USD for a price (per node, per NIC, per switch, per transceiver, per kW), a count for ports"),
        Field("applies_to", "Applies to", help="what exactly was priced: the part, its speed and size"),
        DATE, SOURCE, NOTES,
    ),
    "regions": (
        ID,
        Field("name", "Name", required=True),
        Field("country", "Country"),
        _f("grid_gco2e_per_kwh", "Grid intensity", "gCO2e/kWh", hi=2000,
           source_field="grid_source", date_field="grid_year"),
        Field("grid_year", "Grid year", "int", minimum=1990, maximum=2040),
        Field("grid_source", "Grid source", "ref", ref="sources", column=False),
        _f("electricity_usd_per_kwh", "Electricity", "$/kWh", hi=5,
           source_field="electricity_source", date_field="electricity_year"),
        Field("electricity_year", "Price year", "int", minimum=1990, maximum=2040),
        Field("electricity_source", "Price source", "ref", ref="sources", column=False),
        NOTES,
    ),
    "interconnects": (
        ID,
        Field("name", "Name", required=True),
        Field("family", "Family", "choice", choices=LINK_FAMILIES, required=True),
        Field("generation", "Generation"),
        _f("unidirectional_gbs", "One way", "GB/s", hi=1e6),
        _f("bidirectional_gbs", "Both ways", "GB/s", hi=2e6),
        Field("lanes_or_ports", "Lanes / ports", column=False),
        Field("year", "Year", "int", minimum=1990, maximum=2040),
        SOURCE, DATE, NOTES,
    ),
    "models": (
        ID,
        Field("name", "Name", required=True),
        Field("family", "Family"),
        Field("developer", "Developer"),
        Field("year", "Year", "int", minimum=1990, maximum=2040),
        _f("params", "Parameters", "", hi=1e15, lo=1.0),
        _f("active_params", "Active parameters", "", hi=1e15, lo=1.0),
        _i("layers", "Layers", lo=1, hi=100_000),
        _i("d_model", "Width", lo=1, hi=1_000_000),
        _i("heads", "Heads", lo=1, hi=100_000),
        _i("kv_heads", "KV heads", lo=1, hi=100_000),
        _i("head_dim", "Head width", lo=1, hi=100_000, column=False),
        _i("ffn_dim", "FFN width", lo=1, hi=10_000_000),
        Field("ffn_kind", "FFN", "choice", choices=FFN_KINDS, column=False),
        _i("vocab", "Vocabulary", lo=1, hi=100_000_000, column=False),
        _i("context", "Context", "tokens", lo=1, hi=1_000_000_000),
        Field("tied_embeddings", "Tied embeddings", "bool", column=False),
        Field("attention", "Attention", "choice", choices=ATTENTION_KINDS),
        _i("sliding_window", "Sliding window", "tokens", lo=1, hi=1_000_000_000, column=False),
        _f("sliding_share", "Windowed layers", "", hi=1.0, column=False),
        _i("experts", "Experts", lo=1, hi=100_000),
        _i("experts_active", "Active experts", lo=1, hi=100_000),
        _i("shared_experts", "Shared experts", lo=0, hi=100_000, column=False),
        _i("expert_ffn_dim", "Expert FFN width", lo=1, hi=10_000_000, column=False),
        _i("dense_layers", "Dense layers", lo=0, hi=100_000, column=False),
        _i("kv_lora_rank", "KV latent width", lo=1, hi=1_000_000, column=False),
        _i("q_lora_rank", "Q latent width", lo=1, hi=1_000_000, column=False),
        _i("qk_rope_head_dim", "RoPE head width", lo=0, hi=100_000, column=False),
        _i("qk_nope_head_dim", "Non-RoPE head width", lo=0, hi=100_000, column=False),
        _i("v_head_dim", "Value head width", lo=1, hi=100_000, column=False),
        SOURCE, DATE, NOTES,
    ),
    "sources": (
        ID,
        Field("title", "Title", required=True),
        Field("publisher", "Publisher"),
        Field("url", "URL"),
        Field("kind", "Kind", "choice", choices=SOURCE_KINDS),
        Field("published", "Published"),
        Field("accessed", "Accessed"),
    ),
}

KIND_LABELS = {
    "accelerators": "Accelerators",
    "systems": "Systems",
    "cloud": "Cloud",
    "prices": "Prices",
    "regions": "Grid regions",
    "interconnects": "Interconnects",
    "cloud_prices": "Cloud price history",
    "embodied": "Embodied carbon",
    "cost_factors": "Cost factors",
    "models": "Models",
    "sources": "Sources",
}

# Singular nouns for messages ("accelerator 'h100-sxm5-80gb'").
KIND_NOUNS = {
    "accelerators": "accelerator",
    "systems": "system",
    "cloud": "cloud offering",
    "prices": "price",
    "regions": "region",
    "interconnects": "interconnect",
    "cloud_prices": "cloud price",
    "embodied": "embodied-carbon figure",
    "cost_factors": "cost factor",
    "models": "model",
    "sources": "source",
}


def field_map(kind: str) -> dict[str, Field]:
    return {f.name: f for f in KINDS[kind]}


def figure_fields(kind: str) -> list[Field]:
    return [f for f in KINDS[kind] if f.figure]


def parse_value(field: Field, raw: object) -> object:
    """Turn a raw value (from TOML, CSV, JSON or a form) into the field's type; None when empty.

    Raises FieldError with a message in words when the value does not fit.
    """
    if raw is None or (isinstance(raw, str) and raw.strip() == ""):
        if field.required:
            raise FieldError(f"{field.label} is required")
        return None
    kind = field.type
    if kind in ("int", "float"):
        value = _parse_number(field, raw)
        if field.positive and value <= 0:
            raise FieldError(f"{field.label} must be more than 0, not {_fmt(value)}")
        if field.minimum is not None and value < field.minimum:
            raise FieldError(f"{field.label} must be at least {_fmt(field.minimum)}{_unit(field)}, not {_fmt(value)}")
        if field.maximum is not None and value > field.maximum:
            raise FieldError(f"{field.label} must be at most {_fmt(field.maximum)}{_unit(field)}, not {_fmt(value)}")
        return value
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("true", "yes", "1", "y"):
            return True
        if text in ("false", "no", "0", "n"):
            return False
        raise FieldError(f"{field.label} must be yes or no, not {raw!r}")
    text = str(raw).strip() if not isinstance(raw, date) else raw.isoformat()
    if kind == "slug":
        if not SLUG_RE.match(text):
            raise FieldError(f"{field.label} {text!r} must be lowercase letters, digits, '-' or '.'")
        return text
    if kind == "date":
        if not DATE_RE.match(text):
            raise FieldError(f"{field.label} {text!r} must be a date like 2024, 2024-06 or 2024-06-30")
        if text > date.today().isoformat()[:len(text)]:
            raise FieldError(f"{field.label} {text} is in the future: a price or figure is dated when it was "
                             "published or observed")
        return text
    if kind == "choice":
        if text not in field.choices:
            raise FieldError(f"{field.label} {text!r} must be one of: {', '.join(field.choices)}")
        return text
    if kind == "ref":
        if not SLUG_RE.match(text):
            raise FieldError(f"{field.label} {text!r} is not an id")
        return text
    return text


def _parse_number(field: Field, raw: object) -> float | int:
    if isinstance(raw, bool):
        raise FieldError(f"{field.label} must be a number, not {raw!r}")
    if isinstance(raw, (int, float)):
        value = float(raw)
    else:
        text = str(raw).strip().replace(",", "").replace("_", "")
        if field.unit.startswith("$"):
            text = _dollars(field, text)
        try:
            value = float(text)
        except ValueError:
            unit = f" (in {field.unit})" if _unit(field) else ""
            raise FieldError(f"{field.label} must be a number{unit}, not {str(raw)!r}") from None
    if math.isnan(value) or math.isinf(value):
        raise FieldError(f"{field.label} must be a finite number, not {raw!r}")
    if field.type == "int":
        if value != int(value):
            raise FieldError(f"{field.label} must be a whole number, not {raw!r}")
        return int(value)
    return value


CURRENCY_RE = re.compile(r"(?i)^\s*(?P<pre>[A-Z]{3}|[€£¥₹₩]|US\$|\$)?\s*(?P<num>[-+0-9.eE]+)\s*(?P<post>[A-Z]{3}|[€£¥₹₩])?\s*$")


def _dollars(field: Field, text: str) -> str:
    """A money figure without its currency mark; a currency other than US dollars is refused."""
    m = CURRENCY_RE.match(text)
    if m is None:
        return text
    mark = (m.group("pre") or m.group("post") or "").upper()
    if mark and mark not in ("$", "US$", "USD"):
        raise FieldError(f"{field.label} {text!r} is not in US dollars: gpudesk keeps every price in USD; convert it "
                         "and say the rate and its date in the notes")
    return m.group("num")


def _fmt(value: float) -> str:
    return f"{value:g}"


def _unit(field: Field) -> str:
    return f" {field.unit}" if field.unit and field.unit != "slug" else ""
