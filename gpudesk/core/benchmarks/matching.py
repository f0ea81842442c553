"""From the hardware a result file names ("NVIDIA GeForce RTX 4090, NVIDIA GeForce RTX 4090",
"AMD Instinct MI300X-NPS1-SPX-192GB-750W", "NVIDIA H100 80GB HBM3") to a catalogue accelerator id
and a count, with how sure the match is and why:

- "exact": the name identifies one catalogue entry;
- "likely": a best guess among variants the name does not tell apart (H100 SXM5 vs PCIe, A100
  40 GB vs 80 GB): stored, flagged, and worth confirming;
- "ask": nothing to go on (vLLM and SGLang files name no hardware), a device the catalogue lacks, or
  mixed devices: only the user can say.

The names are data: each accelerator of the bundled catalogue (data/accelerators/*.toml) lists the
names tools give it (`aliases`, matched "exact") and the names that most likely mean it but could
mean a sibling (`likely_aliases`, e.g. "H200" for the SXM board, "gfx942" for the CDNA 3 chips).
The code below only normalises names and compares them:

- case, punctuation, (R)/(TM) marks and vendor or brand words ("NVIDIA", "AMD", "GeForce",
  "Instinct", "Tesla", "GPU") are ignored; "RTX 4090" and "RTX4090", "MI 300X" and "MI300X",
  "SXM4" and "SXM" read alike;
- a memory size ("80GB", "64G", "192GB") is compared with the entry's memory, within 10 %, not
  matched as a word: "H100-SXM5-80GB" is the H100 SXM5, "GH200 144GB" is not the 96 GB GH200;
- a form factor the name states (PCIe, SXM, OAM) must fit the entry's;
- a variant word right after the matched name ("Ti", "SUPER", "Laptop", "NVL", "XT", "Max", ...)
  that the alias does not have means another product; an edition word ("Server", "SE", "Max-Q")
  makes the match "likely";
- the alias that accounts for most of the name wins; a name that gives only a family ("NVIDIA
  H100", "TPU") asks which variant.

Pure functions; the remembered answers live in the database (store.py).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from dataclasses import dataclass, replace
from functools import lru_cache

EXACT, LIKELY, ASK = "exact", "likely", "ask"

# Words that name no particular device: vendors, brands, filler.
NOISE = frozenset({"nvidia", "amd", "intel", "google", "aws", "amazon", "geforce", "tesla", "instinct", "radeon",
                   "gpu", "graphics", "generation", "accelerator", "series", "card", "corporation", "cloud"})
# Words whose next token is a model number: "RTX 4090" reads as "RTX4090", "MI 300X" as "MI300X".
JOIN_PREFIXES = frozenset({"rtx", "gtx", "rx", "mi", "hl", "gaudi", "trainium", "inferentia", "nvl"})
# A word right after the matched name that makes it another product ("RTX 4080 SUPER", "H200 NVL").
VARIANT_WORDS = frozenset({"ti", "super", "laptop", "mobile", "xt", "xtx", "gre", "nvl", "pro", "max", "ultra",
                           "nano", "nx", "lite", "mini", "d"})
# A word right after the matched name that names an edition the catalogue does not tell apart.
EDITION_WORDS = frozenset({"server", "se", "maxq"})
FORM_WORDS = ("pcie", "sxm", "oam")
MEMORY_TOLERANCE = 0.10

_MARKS = re.compile(r"\((?:r|tm|c)\)|[®™]")
_MAXQ = re.compile(r"max[\s_\-]*q\b")
_SEPARATORS = re.compile(r"[^a-z0-9.]+|(?<![0-9])\.|\.(?![0-9])")
_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)(?:gb|gib|g)$")
_SXM = re.compile(r"^sxm\d?$")


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


# ----------------------------------------------------------------------------------- names
@dataclass(frozen=True)
class Name:
    """A device name as the matcher reads it: its words (in order), memory sizes and form factors."""

    tokens: tuple[str, ...]
    memories: tuple[float, ...]
    forms: tuple[str, ...]  # as written: "sxm4", "pcie", "oam"

    @property
    def words(self) -> frozenset[str]:
        return frozenset(self.tokens)


@lru_cache(maxsize=4096)
def normalise(name: str) -> Name:
    """The words, memory sizes and form factors of a device name ("NVIDIA A100-SXM4-80GB" ->
    a100 sxm / 80 / sxm4)."""
    text = _MAXQ.sub("maxq", _MARKS.sub(" ", (name or "").lower()).replace("+", " "))
    raw = [t for t in _SEPARATORS.split(text) if t]
    merged: list[str] = []
    for token in raw:
        if merged and token in ("gb", "gib", "g") and re.fullmatch(r"\d+(?:\.\d+)?", merged[-1]):
            merged[-1] += "gb"
        elif merged and merged[-1] in JOIN_PREFIXES and token[:1].isdigit() and not _MEMORY.match(token):
            merged[-1] += token
        else:
            merged.append(token)
    tokens: list[str] = []
    memories: list[float] = []
    forms: list[str] = []
    for token in merged:
        m = _MEMORY.match(token)
        if m:
            memories.append(float(m.group(1)))
            continue
        if token in NOISE:
            continue
        if _SXM.match(token):
            forms.append(token)
            token = "sxm"
        elif token in FORM_WORDS:
            forms.append(token)
        tokens.append(token)
    return Name(tuple(tokens), tuple(memories), tuple(forms))


def _same_memory(a: float, b: float) -> bool:
    return abs(a - b) <= MEMORY_TOLERANCE * max(a, b)


# ----------------------------------------------------------------------------------- the aliases (data)
@dataclass(frozen=True)
class Entry:
    id: str
    name: str
    family: str
    form: str  # first word of form_factor, lowercase ("pcie", "sxm5", "oam"), "" when not given
    memory_gb: float | None
    shared_memory: bool


@dataclass(frozen=True)
class Alias:
    text: str
    entry: str  # accelerator id
    likely: bool
    name: Name

    @property
    def score(self) -> int:
        return len(self.name.words) + len(self.name.memories)


@dataclass(frozen=True)
class AliasTable:
    entries: dict
    aliases: tuple[Alias, ...]
    problems: tuple[str, ...]  # data files or entries that could not be read (the data tests check none)


ALIAS_CACHE = "accelerator-names.json"  # in the user's data folder, under cache/


@lru_cache(maxsize=1)
def alias_table() -> AliasTable:
    """The bundled catalogue's accelerators and the names tools give them.

    What is read from data/accelerators/*.toml is kept in the user's data folder
    (cache/ALIAS_CACHE) with the SHA-256 of the files it came from: a TOML parse of the folder
    takes some 50 ms (tomllib is pure Python), which every import of a result file paid before
    its first record; the files are still read whole, to check that they are the ones the cache
    was made from. Names are normalised on loading, so a change to normalise() needs no new cache."""
    from gpudesk.core import paths

    folder = paths.bundled_data_dir() / "accelerators"
    files: dict[str, bytes] = {}
    problems: list[str] = []
    for path in sorted(folder.glob("*.toml")) if folder.is_dir() else ():
        try:
            files[path.name] = path.read_bytes()
        except OSError as exc:
            problems.append(f"{path.name}: cannot be read ({exc})")
    digest = hashlib.sha256()
    for name, content in files.items():
        digest.update(b"%d %s %d\n" % (len(name.encode()), name.encode(), len(content)))
        digest.update(content)
    signature = digest.hexdigest()
    try:
        cache = paths.data_dir() / "cache" / ALIAS_CACHE
    except OSError:  # no data folder can be made (a read-only home): the names are read every time
        cache = None
    raw = _cached_names(cache, signature) if cache is not None else None
    if raw is None:
        raw = _names_in(files)
        raw["problems"] = problems + raw["problems"]
        if cache is not None:
            _keep_names(cache, signature, raw)
    return _table(raw)


def _names_in(files: dict[str, bytes]) -> dict:
    """The accelerators (id, name, family, form, memory in GB, shared memory) and their names
    (text, accelerator id, whether "likely") of the TOML files, and what could not be read."""
    import tomllib

    entries: list[list] = []
    aliases: list[list] = []
    problems: list[str] = []
    for file_name, content in files.items():
        try:
            data = tomllib.loads(content.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            problems.append(f"{file_name}: cannot be read ({exc})")
            continue
        for number, raw in enumerate(data.get("accelerator", []), 1):
            if not isinstance(raw, dict) or not raw.get("id"):
                problems.append(f"{file_name}: accelerator {number} has no id")
                continue
            acc_id = str(raw["id"])
            memory = raw.get("memory_gb")
            form = str(raw.get("form_factor") or "").lower().split()
            entries.append([acc_id, str(raw.get("name") or acc_id), str(raw.get("family") or ""),
                            form[0] if form else "", float(memory) if isinstance(memory, int | float) else None,
                            bool(raw.get("memory_shared"))])
            for key, likely in (("aliases", False), ("likely_aliases", True)):
                listed = raw.get(key, [])
                if not isinstance(listed, list):
                    problems.append(f"{file_name}: {acc_id}: {key} is not a list")
                    continue
                for text in listed:
                    if isinstance(text, str | int | float | bool):  # what the cache (JSON) holds as it is
                        aliases.append([text, acc_id, likely, file_name, key])
                    else:
                        problems.append(_names_nothing(file_name, acc_id, key, text))
    return {"entries": entries, "aliases": aliases, "problems": problems}


def _names_nothing(file_name: str, acc_id: str, key: str, text) -> str:
    return f"{file_name}: {acc_id}: {key} has {text!r}, which names nothing"


def _table(raw: dict) -> AliasTable:
    entries = {e[0]: Entry(*e) for e in raw["entries"]}
    aliases: list[Alias] = []
    problems = list(raw["problems"])
    for text, acc_id, likely, file_name, key in raw["aliases"]:
        name = normalise(text) if isinstance(text, str) else None
        if name is None or not name.words:
            problems.append(_names_nothing(file_name, acc_id, key, text))
            continue
        aliases.append(Alias(text, acc_id, likely, name))
    return AliasTable(entries, tuple(aliases), tuple(problems))


def _cached_names(cache, signature: str) -> dict | None:
    """What an earlier alias_table() read from the same files; None when there is no such cache
    or it is not one (then the files are read again and the cache written anew)."""
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("signature") != signature:
        return None
    entries, aliases, problems = data.get("entries"), data.get("aliases"), data.get("problems")
    shapes = ((entries, 6, (str, str, str, str, (float, type(None)), bool)),
              (aliases, 5, ((str, int, float, bool), str, bool, str, str)))
    for rows, width, types in shapes:
        if not isinstance(rows, list) or not all(
                isinstance(row, list) and len(row) == width and all(map(isinstance, row, types)) for row in rows):
            return None
    if not isinstance(problems, list) or not all(isinstance(p, str) for p in problems):
        return None
    return {"entries": entries, "aliases": aliases, "problems": problems}


def _keep_names(cache, signature: str, raw: dict) -> None:
    """Write the cache (atomically: a reader never sees half a file); a folder that cannot be
    written only costs the next process the TOML parse."""
    import os
    import tempfile

    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache.parent, prefix=cache.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"signature": signature, **raw}, handle, ensure_ascii=False)
            os.replace(tmp, cache)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass


def bundled_ids() -> frozenset[str]:
    """Accelerator ids of the bundled catalogue (data/accelerators/*.toml), for matching without a
    database at hand."""
    return frozenset(alias_table().entries)


# ----------------------------------------------------------------------------------- matching one name
def _fits(alias: Alias, name: Name) -> str | None:
    """Why this alias does not name the device (None when it does), from the words alone."""
    words = name.words
    if not alias.name.words <= words:
        return "words"
    for memory in alias.name.memories:
        if not any(_same_memory(memory, m) for m in name.memories):
            return "words"
    for i, token in enumerate(name.tokens[:-1]):
        nxt = name.tokens[i + 1]
        if token in alias.name.words and nxt in VARIANT_WORDS and nxt not in alias.name.words:
            return "variant:" + nxt
    return None


def _edition(alias: Alias, name: Name) -> str | None:
    for i, token in enumerate(name.tokens[:-1]):
        nxt = name.tokens[i + 1]
        if token in alias.name.words and nxt in EDITION_WORDS and nxt not in alias.name.words:
            return nxt
    return None


def _form_conflict(entry: Entry, name: Name) -> str | None:
    if not entry.form:
        return None
    for form in name.forms:
        if form.startswith("sxm") and entry.form.startswith("sxm"):
            if form != "sxm" and entry.form != "sxm" and form != entry.form:
                return form
        elif not entry.form.startswith(form):
            return form
    return None


def _memory_conflict(entry: Entry, name: Name, alias: Alias | None) -> float | None:
    """A memory size the name states (and the alias does not) that the entry does not have."""
    stated = [m for m in name.memories
              if alias is None or not any(_same_memory(m, a) for a in alias.name.memories)]
    if not stated or entry.memory_gb is None:
        return None
    if any(_same_memory(m, entry.memory_gb) for m in stated):
        return None
    return stated[0]


def _siblings(entry_id: str, table: AliasTable) -> tuple[str, ...]:
    family = table.entries[entry_id].family
    if not family:
        return (entry_id,)
    return tuple(e.id for e in table.entries.values() if e.family == family)


def _gb(value: float) -> str:
    return f"{value:g} GB"


def _variant_labels(ids: list[str], table: AliasTable, family: str) -> str:
    """What tells the variants of a family apart, from their names ("PCIe, SXM5 or NVL")."""
    family_words = normalise(family).words

    def label(entry: Entry, with_memory: bool) -> str:
        text = re.sub(r"\([^)]*\)", " ", entry.name)
        words = []
        for word in text.split():
            read = normalise(word)
            if read.memories and not read.words:
                if with_memory:
                    words.append(word)
                continue
            if read.words and not read.words <= family_words:
                words.append(word)
        return " ".join(words) or entry.id

    entries = [table.entries[i] for i in ids]
    labels = [label(e, False) for e in entries]
    if len(set(labels)) < len(labels):
        labels = [label(e, True) for e in entries]
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " or " + labels[-1]


def match_name(name: str, ids: frozenset[str] | set[str] | None = None) -> tuple[str | None, str, str, tuple[str, ...]]:
    """(accelerator id or None, confidence, reason, candidates) for one device name."""
    ids = frozenset(ids) if ids is not None else bundled_ids()
    return _match_name(name or "", ids)


@lru_cache(maxsize=4096)
def _match_name(name: str, ids: frozenset[str]) -> tuple[str | None, str, str, tuple[str, ...]]:
    shown = " ".join(name.split())
    read = normalise(name)
    if not read.words:
        return None, ASK, "no device name", ()
    table = alias_table()
    acc_id, confidence, reason, candidates = _from_aliases(shown, read, table)
    if acc_id is None and confidence == ASK and not candidates:
        found = _from_ids(shown, ids)
        if found is not None:
            return found
    if acc_id is not None and acc_id not in ids:
        return None, ASK, f"'{shown}' looks like {acc_id}, which is not in your catalogue: add it first", ()
    return acc_id, confidence, reason, tuple(c for c in candidates if c in ids)


def _scored_aliases(read: Name, table: AliasTable) -> tuple[dict[str, tuple[int, Alias]], dict[str, str]]:
    """(entry -> (score, its best alias) among the aliases the name fits, entry -> why an entry whose
    words fit is refused: another product, form or memory)."""
    best: dict[str, tuple[int, Alias]] = {}  # entry -> (score, best alias)
    refused: dict[str, str] = {}  # entry -> why the words fit but the device does not
    for alias in table.aliases:
        why = _fits(alias, read)
        if why == "words":
            continue
        entry = table.entries[alias.entry]
        if why is not None:
            refused.setdefault(alias.entry, f"a different product ('{why.split(':', 1)[1]}' after the name)")
            continue
        form = _form_conflict(entry, read)
        if form is not None:
            refused.setdefault(alias.entry, f"the name says {form.upper()}; {entry.id} is {entry.form.upper()}")
            continue
        memory = _memory_conflict(entry, read, alias)
        if memory is not None and not entry.shared_memory:
            refused.setdefault(alias.entry, f"the name says {_gb(memory)}; {entry.id} has {_gb(entry.memory_gb)}")
            continue
        held = best.get(alias.entry)
        rank = (alias.score, not alias.likely)
        if held is None or rank > (held[0], not held[1].likely):
            best[alias.entry] = (alias.score, alias)
    return best, refused


def _from_aliases(shown: str, read: Name, table: AliasTable) -> tuple[str | None, str, str, tuple[str, ...]]:
    best, refused = _scored_aliases(read, table)
    if best:
        top = max(score for score, _alias in best.values())
        winners = [(e, a) for e, (score, a) in best.items() if score == top]
        exact = [(e, a) for e, a in winners if not a.likely]
        if len(winners) > 1 and len(exact) != 1:
            ids_ = [e for e, _a in winners]
            words = winners[0][1].text
            return None, ASK, (f"'{shown}' could be any of {', '.join(ids_)} ('{words}' names each of them): "
                               "which one?"), tuple(ids_)
        entry_id, alias = exact[0] if exact else winners[0]
        entry = table.entries[entry_id]
        siblings = tuple(s for s in _siblings(entry_id, table) if s != entry_id)
        notes = []
        confidence = LIKELY if alias.likely else EXACT
        if alias.likely:
            notes.append(f"'{alias.text}' most likely means the {entry.name}; "
                         + (f"it could also be {', '.join(siblings)}: confirm" if siblings else "confirm"))
        else:
            notes.append(f"{alias.text} named ({entry.name})")
        edition = _edition(alias, read)
        if edition is not None:
            confidence = LIKELY
            notes.append(f"the name also says '{edition}', an edition the catalogue does not tell apart: confirm")
        memory = _memory_conflict(entry, read, alias)
        if memory is not None:  # shared memory: another configuration of the same chip
            confidence = LIKELY
            notes.append(f"the name says {_gb(memory)}; the catalogue's entry is the {_gb(entry.memory_gb)} "
                         "configuration")
        candidates = (entry_id,) + siblings if confidence == LIKELY else ()
        return entry_id, confidence, "; ".join(notes), candidates
    family = _from_family(shown, read, table)
    if family is not None:
        return family
    if refused:
        ids_ = sorted(refused)
        why = "; ".join(f"{refused[i]}" for i in ids_[:3])
        return None, ASK, f"'{shown}' is not in the catalogue (it has {', '.join(ids_)}, not this one: {why})", \
            tuple(ids_)
    return None, ASK, f"'{shown}' is not a device gpudesk knows", ()


def _from_family(shown: str, read: Name, table: AliasTable) -> tuple | None:
    """A name that gives a family and nothing that tells its variants apart ("NVIDIA H100")."""
    by_family: dict[str, list[str]] = {}
    for entry in table.entries.values():
        family_words = normalise(entry.family).words if entry.family else frozenset()
        if not family_words or not family_words <= read.words:
            continue
        rest = read.words - family_words - set(FORM_WORDS)
        if any(ch.isdigit() for token in rest for ch in token):
            continue  # a model number the family does not explain: another device
        by_family.setdefault(entry.family, []).append(entry.id)
    if not by_family:
        return None
    family, members = max(by_family.items(), key=lambda kv: len(normalise(kv[0]).words))
    fitting = [i for i in members if _form_conflict(table.entries[i], read) is None
               and _memory_conflict(table.entries[i], read, None) is None]
    if not fitting:
        return None, ASK, (f"'{shown}' is a {family} the catalogue does not have (it has "
                           f"{', '.join(members)})"), tuple(members)
    if len(fitting) == 1:
        entry = table.entries[fitting[0]]
        return entry.id, LIKELY, (f"the name gives the {family} family only; the catalogue has one {family} that "
                                  f"fits, the {entry.name}: confirm"), tuple(members)
    return None, ASK, (f"'{shown}' names the {family} family only: which variant - "
                       f"{_variant_labels(fitting, table, family)}?"), tuple(fitting)


def _from_ids(shown: str, ids: frozenset[str]) -> tuple | None:
    """A catalogue id written as the name, or one letter off it (an id typed by hand)."""
    slug = re.sub(r"[^a-z0-9.]+", "-", shown.lower()).strip("-")
    if slug in ids:
        return slug, EXACT, f"'{slug}' is a catalogue id", ()
    if " " in shown.strip():
        return None
    digits = re.sub(r"\D", "", slug)
    close = [c for c in difflib.get_close_matches(slug, sorted(ids), n=3, cutoff=0.8)
             if re.sub(r"\D", "", c) == digits]
    if close:
        return close[0], LIKELY, f"closest catalogue id to '{shown}'", tuple(close)
    return None


# ----------------------------------------------------------------------------------- several devices
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
    conf = LIKELY if any(e[1] == LIKELY for e in entries) else EXACT
    reason = entries[0][2]
    cands = entries[0][3]
    n = len(entries)
    if unmatched:
        others = "; ".join(sorted({u[0] for u in unmatched}))
        reason += f"; also listed but not counted: {others}"
        conf = LIKELY
    if count is not None and count != n and len(names) > 1:
        reason += f"; {count} used according to the file"
    return Match(acc_id, count if count is not None else n, conf, reason, cands)


def cpu_only(cpu_text: str) -> Match:
    cpu = " ".join((cpu_text or "").split())
    return Match(None, 0, EXACT, f"CPU-only run ({cpu or 'CPU not named'}): no accelerator; kept, flagged",
                 cpu_only=True)
