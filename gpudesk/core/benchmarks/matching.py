"""From the hardware a result file names ("NVIDIA GeForce RTX 4090, NVIDIA GeForce RTX 4090",
"AMD Instinct MI300X-NPS1-SPX-192GB-750W", "NVIDIA H100 80GB HBM3") to a catalogue accelerator id
and a count, with how sure the match is and why:

- "exact": the name identifies one catalogue entry;
- "likely": a best guess among variants the name does not tell apart (H100 SXM5 vs PCIe, A100
  40 GB vs 80 GB): stored, flagged, and worth confirming;
- "ask": nothing to go on (vLLM and SGLang files name no hardware), a device the catalogue lacks, or
  mixed devices: only the user can say.

Pure functions; the remembered answers live in the database (store.py).
"""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass, replace
from functools import lru_cache

EXACT, LIKELY, ASK = "exact", "likely", "ask"


@dataclass(frozen=True)
class Match:
    accelerator_id: str | None
    count: int | None
    confidence: str  # exact | likely | ask
    reason: str
    candidates: tuple[str, ...] = ()
    cpu_only: bool = False
    source: str = "file"  # file | answer (remembered) | cli (--gpu/--count) | user

    @property
    def uncertain(self) -> bool:
        return self.confidence != EXACT

    def to_json(self) -> dict:
        return {"accelerator_id": self.accelerator_id, "count": self.count, "confidence": self.confidence,
                "reason": self.reason, "candidates": list(self.candidates), "cpu_only": self.cpu_only,
                "source": self.source}


NO_HARDWARE = Match(None, None, ASK, "the file does not say which hardware ran it")


@lru_cache(maxsize=1)
def bundled_ids() -> frozenset[str]:
    """Accelerator ids of the bundled catalogue (data/accelerators/*.toml), for matching without a
    database at hand."""
    from gpudesk.core import paths

    ids: set[str] = set()
    folder = paths.bundled_data_dir() / "accelerators"
    for path in sorted(folder.glob("*.toml")) if folder.is_dir() else ():
        try:
            with path.open("rb") as handle:
                data = tomllib.load(handle)
        except (OSError, tomllib.TOMLDecodeError):
            continue
        for entry in data.get("accelerator", []):
            if isinstance(entry, dict) and entry.get("id"):
                ids.add(str(entry["id"]))
    return frozenset(ids)


def _norm(name: str) -> str:
    text = name.lower()
    text = re.sub(r"\((?:r|tm|c)\)|[®™]", " ", text)
    text = re.sub(r"[_\-/,()\[\]]", " ", text)
    text = re.sub(r"(\d+)\s*gb\b", r"\1gb", text)
    return " ".join(text.split())


def _has(text: str, pattern: str) -> re.Match | None:
    return re.search(pattern, text)


def _variant(text: str, family: str, forms: dict[str, str], mems: tuple[str, ...], table: dict[tuple[str, str], str],
             ids: frozenset[str]) -> tuple[str | None, str, str, tuple[str, ...]]:
    """Resolve a family with form-factor × memory variants (A100, V100, P100)."""
    form = next((f for pat, f in forms.items() if _has(text, pat)), None)
    mem = next((m for m in mems if _has(text, rf"\b{m}gb\b")), None)
    cands = tuple(v for (f, m), v in table.items() if (form in (None, f)) and (mem in (None, m)) and v in ids)
    if not cands:
        known = tuple(v for v in table.values() if v in ids)
        return None, ASK, f"the catalogue has no {family} matching this name (it has: {', '.join(known)})", known
    if len(cands) == 1:
        if form and mem:
            return cands[0], EXACT, f"{family} {form} {mem} GB named in full", ()
        missing = "memory size" if mem is None else "form factor (SXM or PCIe)"
        return cands[0], LIKELY, (f"the name does not give the {missing}; the catalogue has only this {family} "
                                  "variant that fits"), cands
    if form is None and mem is None:
        return None, ASK, f"'{family}' without form factor or memory size: which variant?", cands
    guess = cands[0]
    missing = "form factor (SXM or PCIe)" if form is None else "memory size"
    return guess, LIKELY, (f"the name does not give the {missing}: taken as {guess}; other variants: "
                           f"{', '.join(c for c in cands if c != guess)}"), cands


_A100 = {("sxm4", "80"): "a100-sxm4-80gb", ("sxm4", "40"): "a100-sxm4-40gb",
         ("pcie", "80"): "a100-pcie-80gb", ("pcie", "40"): "a100-pcie-40gb"}
_V100 = {("sxm2", "32"): "v100-sxm2-32gb", ("sxm2", "16"): "v100-sxm2-16gb", ("pcie", "16"): "v100-pcie-16gb"}
_P100 = {("sxm2", "16"): "p100-sxm2-16gb", ("pcie", "16"): "p100-pcie-16gb"}
_FORMS = {r"\bsxm\d?\b": "sxm4", r"\bpcie\b": "pcie"}
_FORMS2 = {r"\bsxm\d?\b": "sxm2", r"\bpcie\b": "pcie"}


def match_name(name: str, ids: frozenset[str] | set[str] | None = None) -> tuple[str | None, str, str, tuple[str, ...]]:
    """(accelerator id or None, confidence, reason, candidates) for one device name."""
    ids = frozenset(ids) if ids is not None else bundled_ids()
    t = _norm(name)
    if not t:
        return None, ASK, "no device name", ()

    def known(acc_id: str, confidence: str, reason: str, cands: tuple[str, ...] = ()):
        if acc_id in ids:
            return acc_id, confidence, reason, tuple(c for c in cands if c in ids)
        return None, ASK, f"'{name.strip()}' looks like {acc_id}, which is not in your catalogue: add it first", ()

    # ---- NVIDIA data centre
    if _has(t, r"\bgh200\b"):
        if _has(t, r"\b(144gb|141gb|hbm3e)\b"):
            return None, ASK, "a GH200 with 144 GB HBM3e: the catalogue has the 96 GB GH200 only", ("gh200-96gb",)
        return known("gh200-96gb", EXACT if _has(t, r"\b96gb\b") else LIKELY,
                     "GH200 (the catalogue's 96 GB HBM3 version)", ("gh200-96gb",))
    if _has(t, r"\bgb200\b"):
        return known("gb200", EXACT, "GB200 named")
    if _has(t, r"\bgb10\b|dgx spark"):
        return known("gb10", EXACT, "GB10 (DGX Spark) named")
    if _has(t, r"\bb300\b"):
        return known("b300-sxm", EXACT, "B300 named")
    if _has(t, r"\bb200\b"):
        return known("b200-sxm-180gb", EXACT, "B200 named")
    if _has(t, r"\bh200\b"):
        if _has(t, r"\bnvl\b"):
            return known("h200-nvl-141gb", EXACT, "H200 NVL named")
        if _has(t, r"\bsxm\d?\b"):
            return known("h200-sxm-141gb", EXACT, "H200 SXM named")
        return known("h200-sxm-141gb", LIKELY, "'H200' without 'NVL' is how the SXM board names itself (the PCIe "
                     "card says 'H200 NVL'); confirm if yours is an NVL card", ("h200-sxm-141gb", "h200-nvl-141gb"))
    if _has(t, r"\bh100\b"):
        cands = ("h100-sxm5-80gb", "h100-pcie-80gb", "h100-nvl-94gb")
        if _has(t, r"\bnvl\b|\b9[46]gb\b"):
            return known("h100-nvl-94gb", EXACT if _has(t, r"\bnvl\b") else LIKELY, "H100 NVL (94 GB) named", cands)
        if _has(t, r"\bpcie\b"):
            return known("h100-pcie-80gb", EXACT, "H100 PCIe named")
        if _has(t, r"\bsxm\d?\b"):
            return known("h100-sxm5-80gb", EXACT, "H100 SXM named")
        if _has(t, r"\bhbm3\b"):
            return known("h100-sxm5-80gb", LIKELY, "'H100 80GB HBM3' is how the SXM5 board names itself (PCIe cards "
                         "say 'H100 PCIe' and carry HBM2e); confirm if yours is a PCIe or NVL card", cands)
        if _has(t, r"\bhbm2e\b"):
            return known("h100-pcie-80gb", LIKELY, "an H100 with HBM2e is the PCIe card", cands)
        return None, ASK, "'H100' without form factor: SXM5, PCIe or NVL?", tuple(c for c in cands if c in ids)
    if _has(t, r"\ba100\b"):
        return _variant(t, "A100", _FORMS, ("40", "80"), _A100, ids)
    if _has(t, r"\bv100\b"):
        return _variant(t, "V100", _FORMS2, ("16", "32"), _V100, ids)
    if _has(t, r"\bp100\b"):
        return _variant(t, "P100", _FORMS2, ("16",), _P100, ids)
    if _has(t, r"\bl40s\b"):
        return known("l40s", EXACT, "L40S named")
    if _has(t, r"\bl40\b"):
        return None, ASK, "an L40 (not L40S): the catalogue does not have it", ("l40s",)
    if _has(t, r"\bl4\b"):
        return known("l4", EXACT, "L4 named")
    if _has(t, r"\ba10g\b"):
        return known("a10g", EXACT, "A10G named")
    if _has(t, r"\ba10\b"):
        return known("a10", EXACT, "A10 named")
    if _has(t, r"\ba30\b"):
        return known("a30", EXACT, "A30 named")
    if _has(t, r"\bt4\b") and not _has(t, r"\bjetson\b"):
        return known("t4", EXACT, "T4 named")
    # ---- NVIDIA workstation / client
    if _has(t, r"\brtx pro 6000\b"):
        return known("rtx-pro-6000-blackwell", EXACT if "max q" not in t and "server" not in t else LIKELY,
                     "RTX PRO 6000 Blackwell named")
    if _has(t, r"\brtx 6000 ada\b|\b6000 ada\b"):
        return known("rtx-6000-ada", EXACT, "RTX 6000 Ada named")
    if _has(t, r"\brtx a6000\b"):
        return known("rtx-a6000", EXACT, "RTX A6000 named")
    m = _has(t, r"\b(?:rtx|gtx)\s*(\d{4})\s*(ti|super)?\b")
    if m:
        acc_id = f"rtx-{m.group(1)}" + (f"-{m.group(2)}" if m.group(2) else "")
        if "laptop" in t or "mobile" in t or "max q" in t:
            acc_id += "-laptop"
        if acc_id not in ids:
            base = f"rtx-{m.group(1)}"
            return None, ASK, (f"'{name.strip()}' is not in the catalogue"
                               + (f" (it has {base}, a different card)" if base in ids else "")), \
                ((base,) if base in ids else ())
        return acc_id, EXACT, f"{name.strip()} named", ()
    if _has(t, r"\bjetson\b"):
        if _has(t, r"\bthor\b"):
            return known("jetson-agx-thor", EXACT, "Jetson AGX Thor named")
        if _has(t, r"\bagx orin\b"):
            return known("jetson-agx-orin-64gb", LIKELY if "64gb" not in t else EXACT, "Jetson AGX Orin named")
        if _has(t, r"\borin nano\b"):
            return known("jetson-orin-nano-8gb", LIKELY if "8gb" not in t else EXACT, "Jetson Orin Nano named")
        if _has(t, r"\bnano\b"):
            return known("jetson-nano", EXACT, "Jetson Nano named")
    # ---- AMD
    m = _has(t, r"\bmi\s?(\d{3})([a-z]?)\b")
    if m:
        acc_id = f"mi{m.group(1)}{m.group(2)}"
        return known(acc_id, EXACT, f"AMD Instinct MI{m.group(1)}{m.group(2).upper()} named")
    m = _has(t, r"\brx\s*(\d{4})\s*(xtx|xt|gre)?\b")
    if m:
        acc_id = f"radeon-rx-{m.group(1)}" + (f"-{m.group(2)}" if m.group(2) else "")
        if acc_id in ids:
            return acc_id, EXACT, f"{name.strip()} named", ()
        return None, ASK, f"'{name.strip()}' is not in the catalogue", ()
    if _has(t, r"\b8060s\b"):
        return known("radeon-8060s", EXACT, "Radeon 8060S (Ryzen AI Max+ 395) named")
    # ---- Apple
    m = _has(t, r"\bapple m(\d+)\s*(pro|max|ultra)?\b")
    if m:
        acc_id = f"apple-m{m.group(1)}" + (f"-{m.group(2)}" if m.group(2) else "")
        if acc_id in ids:
            return acc_id, EXACT, f"{name.strip()} named (the catalogue's largest-GPU configuration)", ()
        return None, ASK, f"'{name.strip()}' is not in the catalogue", ()
    # ---- others
    if _has(t, r"\bgaudi\s*3\b|\bhl 325"):
        return known("gaudi-3", EXACT, "Gaudi 3 named")
    if _has(t, r"\bgaudi\s*2\b|\bhl 225"):
        return known("gaudi-2", EXACT, "Gaudi 2 named")
    m = _has(t, r"\btpu\s*v(\d)\s*(e|p|lite)?\b")
    if m:
        suffix = {"lite": "e"}.get(m.group(2) or "", m.group(2) or "")
        return known(f"tpu-v{m.group(1)}{suffix}", EXACT, "TPU generation named")
    if _has(t, r"\btrainium\s*2\b|\btrn2\b"):
        return known("trainium2", EXACT, "Trainium2 named")
    if _has(t, r"\btrainium\b|\btrn1\b"):
        return known("trainium", EXACT, "Trainium named")
    if _has(t, r"\binferentia\s*2\b|\binf2\b"):
        return known("inferentia2", EXACT, "Inferentia2 named")
    # ---- an id or a close name
    slug = re.sub(r"[^a-z0-9.]+", "-", name.lower()).strip("-")
    if slug in ids:
        return slug, EXACT, f"'{slug}' is a catalogue id", ()
    close = difflib.get_close_matches(slug, sorted(ids), n=3, cutoff=0.8)
    if close:
        return close[0], LIKELY, f"closest catalogue id to '{name.strip()}'", tuple(close)
    return None, ASK, f"'{name.strip()}' is not a device gpudesk knows", ()


def split_devices(text: str) -> list[str]:
    """The device names of a list such as llama-bench's gpu_info ("A, B") or "CUDA0: A / CUDA1: B"."""
    parts = [p.strip() for p in re.split(r",|;|\s/\s|\n", text or "")]
    return [re.sub(r"^(?:cuda|rocm|vulkan|sycl|metal|mtl)\d*\s*:\s*", "", p, flags=re.I) for p in parts if p]


def match_hardware(text: str, count: int | None = None, ids=None) -> Match:
    """Match a hardware description that may list several devices; `count` (from world_size,
    accelerators_per_node × nodes, ...) overrides the number of names listed."""
    return _match_hardware(text or "", count, frozenset(ids) if ids is not None else bundled_ids())


@lru_cache(maxsize=1024)
def _match_hardware(text: str, count: int | None, ids: frozenset[str]) -> Match:
    names = split_devices(text)
    if not names:
        return replace(NO_HARDWARE, count=count)
    found: dict[str | None, list] = {}
    for name in names:
        acc_id, conf, reason, cands = match_name(name, ids)
        found.setdefault(acc_id, []).append((name, conf, reason, cands))
    matched = {k: v for k, v in found.items() if k is not None}
    unmatched = found.get(None, [])
    if not matched:
        name, conf, reason, cands = unmatched[0]
        return Match(None, count if count is not None else len(names), ASK, reason, cands)
    if len(matched) > 1:
        listed = ", ".join(f"{len(v)} × {k}" for k, v in matched.items())
        return Match(None, count if count is not None else len(names), ASK,
                     f"mixed devices ({listed}): one accelerator is stored per measurement - which ran this?",
                     tuple(matched))
    acc_id, entries = next(iter(matched.items()))
    conf = min((e[1] for e in entries), key=lambda c: (EXACT, LIKELY, ASK).index(c))
    if any(e[1] == LIKELY for e in entries):
        conf = LIKELY
    reason = entries[0][2]
    cands = entries[0][3]
    n = len(entries)
    if unmatched:
        others = "; ".join(sorted({u[0] for u in unmatched}))
        reason += f"; also listed but not counted: {others}"
        conf = LIKELY if conf == EXACT else conf
    if count is not None and count != n and len(names) > 1:
        reason += f"; {count} used according to the file"
    return Match(acc_id, count if count is not None else n, conf, reason, cands)


def cpu_only(cpu_text: str) -> Match:
    cpu = " ".join((cpu_text or "").split())
    return Match(None, 0, EXACT, f"CPU-only run ({cpu or 'CPU not named'}): no accelerator; kept, flagged",
                 cpu_only=True)
