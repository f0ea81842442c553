"""Load the bundled catalogue into the database, keeping every row the user added or edited.

Runs on first start and whenever the bundled files change (their fingerprint: version plus a
hash of every file). One transaction: a failure leaves the database as it was.
"""

from __future__ import annotations

import hashlib
import logging
import tomllib
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from gpudesk.core.catalogue.bundle import Bundle, load_bundle
from gpudesk.core.catalogue.fields import KINDS
from gpudesk.core.catalogue.models import MODELS, CatalogueMeta, WorkloadPreset
from gpudesk.core.catalogue.reading import ORIGIN_BUNDLED, USER_ORIGINS

log = logging.getLogger(__name__)


# data/ folders whose files never enter the database: the engine reads its measured kernel tables and
# their fitted curves straight from data/kernels (3.9 MB, three quarters of data/), so a change there
# needs no resync and hashing them at every start would only cost time.
NOT_SYNCED = ("kernels",)


def fingerprint(data_dir: Path) -> str:
    """The bundled catalogue's version and a hash of the files it syncs into the database: cheap enough
    for every start."""
    digest = hashlib.sha256()
    for path in sorted(p for p in data_dir.rglob("*") if p.is_file() and p.suffix in (".toml", ".csv")
                       and p.relative_to(data_dir).parts[0] not in NOT_SYNCED):
        digest.update(path.relative_to(data_dir).as_posix().encode())
        digest.update(path.read_bytes())
    return f"{bundled_version(data_dir)}+{digest.hexdigest()[:16]}"


def bundled_version(data_dir: Path) -> str:
    try:
        with (data_dir / "catalogue.toml").open("rb") as handle:
            return str(tomllib.load(handle).get("catalogue", {}).get("version", ""))
    except (OSError, tomllib.TOMLDecodeError):
        return ""


def get_meta(session: Session, key: str) -> str | None:
    row = session.get(CatalogueMeta, key)
    return row.value if row else None


def set_meta(session: Session, key: str, value: str) -> None:
    row = session.get(CatalogueMeta, key)
    if row is None:
        session.add(CatalogueMeta(key=key, value=value))
    else:
        row.value = value


def needs_sync(session: Session, data_dir: Path) -> bool:
    return get_meta(session, "fingerprint") != fingerprint(data_dir)


def sync_bundle(session: Session, data_dir: Path, bundle: Bundle | None = None) -> dict[str, int]:
    """Upsert bundled rows, drop bundled rows no longer shipped, never touch the user's rows.

    The caller commits. Returns counts of inserted, updated, removed and kept-user rows.
    """
    bundle = bundle or load_bundle(data_dir)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    counts = {"inserted": 0, "updated": 0, "removed": 0, "user_kept": 0}
    for kind in KINDS:
        model = MODELS[kind]
        existing = {row.id: row for row in session.scalars(select(model))}
        shipped = bundle.index(kind)
        for row_id, row in existing.items():
            if row.origin in USER_ORIGINS:
                counts["user_kept"] += 1
            elif row_id not in shipped:
                session.delete(row)
                counts["removed"] += 1
        for row_id, record in shipped.items():
            row = existing.get(row_id)
            if row is not None and row.origin in USER_ORIGINS:
                continue
            values = {k: v for k, v in record.items() if k != "field_sources" or kind != "sources"}
            if row is None:
                session.add(model(**values, origin=ORIGIN_BUNDLED, updated_at=now))
                counts["inserted"] += 1
            else:
                changed = False
                for key, value in values.items():
                    if getattr(row, key) != value:
                        setattr(row, key, value)
                        changed = True
                if changed:
                    row.updated_at = now
                    counts["updated"] += 1
    presets = {p.id: p for p in session.scalars(select(WorkloadPreset))}
    shipped_presets = {w["id"]: w for w in bundle.workloads if isinstance(w, dict) and w.get("id")}
    for preset_id, preset in presets.items():
        if preset.origin == ORIGIN_BUNDLED and preset_id not in shipped_presets:
            session.delete(preset)
    for preset_id, spec in shipped_presets.items():
        preset = presets.get(preset_id)
        if preset is not None and preset.origin != ORIGIN_BUNDLED:
            continue
        payload = {k: v for k, v in spec.items() if k not in ("id", "name", "description")}
        if preset is None:
            session.add(WorkloadPreset(id=preset_id, name=spec.get("name", preset_id),
                                       description=spec.get("description", ""), spec=payload))
        else:
            preset.name = spec.get("name", preset_id)
            preset.description = spec.get("description", "")
            preset.spec = payload
    set_meta(session, "version", bundle.version)
    set_meta(session, "released", bundle.released)
    set_meta(session, "fingerprint", fingerprint(data_dir))
    set_meta(session, "loaded_at", now)
    log.info("catalogue %s synced: %s", bundle.version, counts)
    return counts
