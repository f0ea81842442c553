"""Ollama `ollama run MODEL --verbose` (or `/set verbose`) statistics, printed after each answer:

    total duration:       5.088275983s
    load duration:        1.365523ms
    prompt eval count:    11 token(s)
    prompt eval duration: 204.563ms
    prompt eval rate:     53.77 tokens/s
    eval count:           120 token(s)
    eval duration:        4.876787s
    eval rate:            24.61 tokens/s

Durations are Go durations (`5m33.64s`, `945µs`). One block is one request of one user: the prompt
eval rate is stored as prompt processing speed, the eval rate as generation speed of one user
(each the mean over that request's tokens), with the token counts as the workload. The model is
taken from an `ollama run MODEL` line when one was kept with the output. Ollama prints no
hardware: it is asked. Terminal captures carry ANSI escape codes; they are removed first.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpudesk.core.benchmarks import matching
from gpudesk.core.benchmarks._common import Item, model_guess, opened
from gpudesk.core.benchmarks.reader import Source, iter_lines
from gpudesk.core.benchmarks.types import Measurement, ParseResult, Problem, clean_text, collect, finish, parse_number

FORMAT = "ollama"
MAX_BLOCKS = 100_000
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")
_STAT_RE = re.compile(r"^\s*(total duration|load duration|prompt eval count|prompt eval duration|prompt eval rate|"
                      r"eval count|eval duration|eval rate)\s*:\s*(.+?)\s*$")
_RUN_RE = re.compile(r"\bollama\s+run\s+((?:-{1,2}\S+\s+)*)([^\s'\"-][^\s'\"]*)")
_GO_PART_RE = re.compile(r"(\d+(?:\.\d+)?)(h|ms|µs|μs|us|ns|m|s)")
_GO_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "µs": 1e-6, "μs": 1e-6, "us": 1e-6, "ns": 1e-9}
QUESTION = ("Ollama's --verbose output does not name the hardware: which accelerator (and how many) ran it? Answer "
            "in the Benchmarks view or with --gpu ID; the answer is remembered for this model")


def looks_like(head: str) -> bool:
    text = _ANSI_RE.sub("", head)
    return bool(re.search(r"^\s*eval rate:\s*[\d.]+\s*tokens/s", text, re.M)) and "eval count:" in text


def go_duration(text: str) -> float | None:
    """'5m33.640378603s' -> 333.64; '1.365523ms' -> 0.001365523; None when not a Go duration."""
    raw = text.strip()
    if not raw or _GO_PART_RE.sub("", raw):
        return None
    return sum(float(v) * _GO_UNITS[u] for v, u in _GO_PART_RE.findall(raw))


def parse(source, source_name: str | None = None, **_ignored) -> ParseResult:
    return collect(iter_parse(source, source_name), FORMAT)


@opened
def iter_parse(src: Source, **_ignored) -> Iterator[Item]:
    name = src.name
    model = ""
    block: dict = {}
    start = 0
    produced = 0
    blocks = 0
    asked: set[str] = set()

    def flush() -> Iterator[Item]:
        nonlocal produced, blocks
        if not block:
            return
        blocks += 1
        yield from _convert(block, model, name, start, blocks - 1, asked)
        produced_here = block.get("_produced", 0)
        produced += produced_here

    for number, line in iter_lines(src):
        if line is None:
            continue
        text = _ANSI_RE.sub("", line)
        m = _RUN_RE.search(text)
        if m:
            yield from flush()
            block = {}
            model = clean_text(m.group(2), 120)
            continue
        m = _STAT_RE.match(text)
        if not m:
            continue
        key, value = m.group(1), m.group(2)
        if key == "total duration" or key in block:  # the next answer's statistics
            yield from flush()
            block = {}
        if not block:
            start = number
        block[key] = (value, number)
        if blocks >= MAX_BLOCKS:
            break
    yield from flush()
    if not produced:
        yield Problem(name, "", "no Ollama 'prompt eval rate' or 'eval rate' lines with a speed in this file", "error")


def _number(block: dict, key: str, unit_words: tuple[str, ...], problems: list[Problem], name: str) -> float | None:
    if key not in block:
        return None
    raw, line = block[key]
    text = raw
    for w in unit_words:
        text = re.sub(re.escape(w) + r"\s*$", "", text).strip()
    value = parse_number(text)
    if value is None or value < 0:
        problems.append(Problem(name, f"line {line}", f"'{key}' is {raw!r}, not a number: ignored", "warning"))
        return None
    return value


def _duration(block: dict, key: str, problems: list[Problem], name: str) -> float | None:
    if key not in block:
        return None
    raw, line = block[key]
    value = go_duration(raw)
    if value is None:
        problems.append(Problem(name, f"line {line}", f"'{key}' is {raw!r}, not a duration: ignored", "warning"))
    return value


def _speed_workload(workload: dict, metric: str, tokens: float | None, field: str,
                    prompt_tokens: float | None) -> dict:
    wl = dict(workload)
    if tokens is not None:
        wl[field] = int(tokens)
    if metric == "prefill_tokens_per_s":
        wl["test"] = f"prompt of {int(tokens)} tokens" if tokens is not None else "prompt"
    else:
        wl["test"] = f"{int(tokens)} generated tokens" if tokens is not None else "generation"
        if prompt_tokens is not None:
            wl["prompt_tokens"] = int(prompt_tokens)
    return wl


def _convert(block: dict, model: str, name: str, start: int, index: int, asked: set[str]) -> Iterator[Item]:
    place = f"line {start}"
    problems: list[Problem] = []
    prompt_tokens = _number(block, "prompt eval count", ("token(s)", "tokens", "token"), problems, name)
    gen_tokens = _number(block, "eval count", ("token(s)", "tokens", "token"), problems, name)
    prompt_rate = _number(block, "prompt eval rate", ("tokens/s",), problems, name)
    gen_rate = _number(block, "eval rate", ("tokens/s",), problems, name)
    workload: dict = {"model": model} if model else {}
    workload.update(model_guess(model))
    workload["concurrency"] = 1
    conditions: dict = {"backend": "ollama"}
    for key, target in (("total duration", "total_duration_s"), ("load duration", "load_duration_s"),
                        ("prompt eval duration", "prompt_eval_duration_s"), ("eval duration", "eval_duration_s")):
        value = _duration(block, key, problems, name)
        if value is not None:
            conditions[target] = value
    key = "sig:ollama:" + (model or name)
    match = matching.Match(None, None, "ask", "Ollama's output does not record the hardware")
    out: list[Measurement] = []
    for metric, rate, tokens, field in (("prefill_tokens_per_s", prompt_rate, prompt_tokens, "prompt_tokens"),
                                        ("decode_tokens_per_s_per_user", gen_rate, gen_tokens, "gen_tokens")):
        if not rate:
            continue
        wl = _speed_workload(workload, metric, tokens, field, prompt_tokens)
        m = Measurement(format=FORMAT, metric=metric, value=rate, unit="tokens/s", source_file=name,
                        record_index=index, hardware_text="", accelerator_id=None, accelerator_count=None,
                        match_confidence=match.confidence, match_reason=match.reason, hardware_key=key,
                        statistic="mean", workload=wl, conditions=dict(conditions))
        out.append(finish(m))
    yield from problems
    if not out:
        yield Problem(name, place, "a block of Ollama statistics with no prompt eval rate or eval rate: skipped",
                      "warning")
        return
    block["_produced"] = len(out)
    if key not in asked:
        asked.add(key)
        yield Problem(name, place, QUESTION, "question")
        if not model:
            yield Problem(name, place, "the output does not name the model (keep the 'ollama run MODEL --verbose' "
                          "line with it, or answer which model ran)", "question")
    yield from out
