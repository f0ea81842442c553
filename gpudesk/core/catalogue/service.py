"""The catalogue as the rest of gpudesk sees it: plain dict records, sources resolved, user edits
validated and written in one transaction. The CLI, the UI and the estimators go through here."""

from __future__ import annotations

import copy
import functools
import logging
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date
from pathlib import Path

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from gpudesk.core import paths
from gpudesk.core.catalogue import backup, db, sync
from gpudesk.core.catalogue.fields import KIND_NOUNS, KINDS, FieldError, field_map, parse_value
from gpudesk.core.catalogue.models import MODELS, WorkloadPreset
from gpudesk.core.catalogue.reading import (
    AUDIT_COLUMNS,
    ORIGIN_BUNDLED,
    ORIGIN_USER_ADDED,
    ORIGIN_USER_EDITED,
    USER_ORIGINS,
    CatalogueReader,
    ConflictError,
    EditError,
)
from gpudesk.core.settings import current_user

log = logging.getLogger(__name__)

USER_SOURCE_PREFIX = "user-"
PRESETS_KEY = "_presets"  # beside the kinds in the record cache


def _edit(method):
    """A database fault during an edit (server gone, no permission, disk) becomes an EditError that
    says nothing was saved and why, which the forms show beside the values the person typed."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        from sqlalchemy.exc import DBAPIError

        try:
            return method(self, *args, **kwargs)
        except DBAPIError as exc:
            if "permission denied" in str(exc.orig).lower():
                why = "your database role may not change the catalogue (permission denied); ask its administrator"
            else:
                from gpudesk.core.catalogue.team import describe_error

                why = f"the database could not be written: {describe_error(exc)}"
            raise EditError({"": f"Nothing was saved: {why}. Your values are still here; save again when it "
                                 f"is resolved."}) from exc

    return wrapper


@dataclass
class Catalogue(CatalogueReader):
    """The catalogue database: reads (from CatalogueReader) and validated, transactional edits."""

    engine: Engine
    data_dir: Path
    user: str = field(default_factory=current_user)  # recorded with every row this catalogue writes
    _sessions: sessionmaker = field(init=False, repr=False)
    read_only = False
    not_writable = ""  # why writes cannot work here (a read-only file or folder), in words; "" when they can

    def __post_init__(self) -> None:
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._reader_init()

    def refresh(self) -> None:
        """Forget what was read, so the next read shows what others wrote meanwhile (shared servers)."""
        self._cache.clear()
        self._indexes.clear()

    @contextmanager
    def _writing(self):
        """One write transaction; a row changed under it becomes an EditError (rolled back whole)."""
        from sqlalchemy.orm.exc import StaleDataError

        try:
            with self._sessions.begin() as session:
                yield session
        except StaleDataError as exc:  # the version changed between our read and our write
            raise EditError({"": "Someone else changed this record while you saved it; nothing was saved. "
                                 "Reload it and try again."}) from exc
        finally:
            self.refresh()

    # ---------------------------------------------------------------- opening
    @classmethod
    def open(cls, url: str | None = None, data_dir: Path | None = None) -> Catalogue:
        """Open (creating or upgrading) the database and load the bundled catalogue if it changed."""
        from sqlalchemy.exc import DatabaseError, IntegrityError

        db.check_url(url)
        engine = db.make_engine(url)
        database = db.sqlite_file(engine)
        reason = db.read_only_reason(database) if database is not None else ""
        if reason:
            engine.dispose()
            return cls._open_read_only(database, reason, data_dir)
        try:
            if database is not None:
                backup.check_database(database)  # PRAGMA quick_check: a damaged file is reported, not used
                if db.needs_migration(engine):
                    backup.make_backup(database, "before-migration")
            db.migrate(engine)
            catalogue = cls(engine, data_dir or paths.bundled_data_dir())
            try:
                catalogue.sync_if_needed()
            except IntegrityError:  # another program loaded the same catalogue at the same moment:
                catalogue.sync_if_needed()  # after its commit there is nothing left to load
        except DatabaseError as exc:
            engine.dispose()
            if database is not None and backup.is_damage(exc):
                raise backup.DamagedDatabaseError(database, str(exc.orig)) from exc
            raise
        except BaseException:
            engine.dispose()
            raise
        return catalogue

    @classmethod
    def _open_read_only(cls, database: Path, reason: str, data_dir: Path | None) -> Catalogue:
        """A database this program cannot write, opened for reading: nothing is created, migrated or
        loaded; `read_only` says why, and a write fails with SQLite's read-only error."""
        if not database.exists():
            raise db.UrlError(f"{database}: cannot be created: {reason}", "not_writable")
        engine = db.read_only_engine(database)
        found = db.current_revision(engine)
        if found != db.HEAD_REVISION:
            engine.dispose()
            raise db.UrlError(f"{database}: needs its schema upgraded ({found or 'empty'} to {db.HEAD_REVISION}), "
                              f"which cannot be written: {reason}", "not_writable")
        catalogue = cls(engine, data_dir or paths.bundled_data_dir())
        catalogue.read_only = f"{database} is opened read-only ({reason}): nothing can be saved"
        catalogue.not_writable = f"{database} cannot be written ({reason}); check that its folder is writable"
        return catalogue

    def sync_if_needed(self, force: bool = False) -> dict[str, int] | None:
        # an imported catalogue bundle at least as new as data/ stands in for it (see exchange.py)
        from gpudesk.core.catalogue.exchange import sync_catalogue

        with self._sessions() as session:
            db.hold_upgrade_lock(session.connection())  # one program loads a shared catalogue; others wait
            counts = sync_catalogue(session, self.data_dir, force, before_upgrade=self.backup)
            if counts is None:
                return None
            session.commit()
        self._cache.clear()
        return counts

    def backup(self, reason: str) -> Path | None:
        """A backup of an SQLite database file (see backup.py); None for other databases."""
        database = db.sqlite_file(self.engine)
        return backup.make_backup(database, reason) if database is not None else None

    def close(self) -> None:
        self.engine.dispose()

    # ---------------------------------------------------------------- reading
    def _meta(self, key: str) -> str | None:
        with self._sessions() as session:
            return sync.get_meta(session, key)

    def _load(self, kind: str) -> list[dict]:
        with self._sessions() as session:
            rows = session.scalars(select(MODELS[kind]).order_by(MODELS[kind].id)).all()
            return [_row_dict(kind, row) for row in rows]

    def presets(self) -> list[dict]:
        # read once (every estimate resolves its workload through here); a sync clears the cache
        if PRESETS_KEY not in self._cache:
            with self._sessions() as session:
                rows = session.scalars(select(WorkloadPreset).order_by(WorkloadPreset.id)).all()
                self._cache[PRESETS_KEY] = [{"id": p.id, "name": p.name, "description": p.description,
                                             **(p.spec or {})} for p in rows]
        return copy.deepcopy(self._cache[PRESETS_KEY])

    # ---------------------------------------------------------------- editing
    @_edit
    def add_item(self, kind: str, values: dict, source: dict | None = None) -> dict:
        """Add a user record. `source` is {'title','url','publisher'} of a new source, or None to use
        values['source'] (an existing source id) or a dated 'entered by the user' source."""
        record, problems = self._validate(kind, values, new=True)
        if problems:
            raise EditError(problems)
        model = MODELS[kind]
        with self._writing() as session:
            existing = session.get(model, record["id"])
            if existing is not None:
                by = f" by {existing.added_by}" if existing.added_by else ""
                raise EditError({"id": f"{KIND_NOUNS[kind]} '{record['id']}' already exists (added{by})"})
            if kind != "sources":
                src_id = self._resolve_source(session, source, record.get("source"))
                if "source" in field_map(kind):
                    record["source"] = src_id
                record["field_sources"] = self._source_columns(kind, record, src_id)
            now = _now()
            session.add(model(**record, origin=ORIGIN_USER_ADDED, updated_at=now, added_at=now,
                              added_by=self.user, updated_by=self.user))
        return self.get(kind, record["id"])

    @_edit
    def update_item(self, kind: str, item_id: str, values: dict, source: dict | None = None,
                    expected_version: int | None = None) -> dict:
        """Edit a record; a bundled record becomes the user's (kept across catalogue updates).

        `expected_version` is the version the person started from (the record's `version` when the
        form opened): when someone saved the record since, ConflictError carries both sides and
        nothing is written. Without it, the edit applies to the record as stored now."""
        model = MODELS[kind]
        with self._writing() as session:
            row = session.get(model, item_id, with_for_update=True, populate_existing=True)
            if row is None:
                raise EditError({"": f"{KIND_NOUNS[kind]} '{item_id}' does not exist"})
            current = _row_dict(kind, row)
            if expected_version is not None and row.version != expected_version:
                raise ConflictError(kind, current, {**values, "id": item_id}, expected_version)
            record, problems = self._validate(kind, {**current, **values, "id": item_id}, new=False)
            if problems:
                raise EditError(problems)
            changed = [s.name for s in KINDS[kind] if record.get(s.name) != current.get(s.name)]
            if not changed:
                return current
            self._apply_edit(session, kind, row, current, record, changed, source)
        return self.get(kind, item_id)

    def _apply_edit(self, session: Session, kind: str, row, current: dict, record: dict, changed: list[str],
                    source: dict | None) -> None:
        if kind != "sources":
            figures = [n for n in changed if field_map(kind)[n].figure]
            field_sources = dict(current.get("field_sources") or {})
            if figures:
                src_id = self._resolve_source(session, source, None)
                for name in figures:
                    field_sources[name] = src_id
            record["field_sources"] = field_sources
            if "derived" in current:
                record["derived"] = {k: v for k, v in (current.get("derived") or {}).items() if k not in figures}
        for key, value in record.items():
            setattr(row, key, value)
        if row.origin == ORIGIN_BUNDLED:
            row.origin = ORIGIN_USER_EDITED
        row.updated_at = _now()
        row.updated_by = self.user

    @_edit
    def delete_item(self, kind: str, item_id: str, expected_version: int | None = None) -> None:
        """Delete one of the user's own records; bundled records cannot be deleted. With
        `expected_version`, a record someone changed since is not deleted (ConflictError)."""
        with self._writing() as session:
            row = session.get(MODELS[kind], item_id, with_for_update=True, populate_existing=True)
            if row is None:
                raise EditError({"": f"{KIND_NOUNS[kind]} '{item_id}' does not exist"})
            if row.origin not in USER_ORIGINS:
                raise EditError({"": f"{KIND_NOUNS[kind]} '{item_id}' is part of the bundled catalogue; only your own entries can be deleted"})
            if row.origin == ORIGIN_USER_EDITED:
                raise EditError({"": f"{KIND_NOUNS[kind]} '{item_id}' is a bundled entry you edited; revert it instead"})
            if expected_version is not None and row.version != expected_version:
                current = _row_dict(kind, row)
                raise ConflictError(kind, current, {"id": item_id}, expected_version)
            session.delete(row)

    @_edit
    def revert_item(self, kind: str, item_id: str) -> dict | None:
        """Drop the user's edits of a bundled record: the next sync restores the shipped figures."""
        self.refresh()
        current = self.get(kind, item_id)
        if current is None or current["origin"] != ORIGIN_USER_EDITED:
            raise EditError({"": f"{KIND_NOUNS[kind]} '{item_id}' has no edits to revert"})
        with self._writing() as session:
            row = session.get(MODELS[kind], item_id)
            row.origin = ORIGIN_BUNDLED
            row.updated_by = self.user
        self.sync_if_needed(force=True)
        return self.get(kind, item_id)

    @_edit
    def add_price_quote(self, item_id: str, usd: object, when: str | None = None, supplier: str = "",
                        url: str = "", notes: str = "") -> dict:
        """Record a vendor quote for an accelerator or system, sourced to the supplier."""
        values = {
            "id": _unique_id(f"quote-{item_id}-{when or date.today().isoformat()}", self.index("prices")),
            "item": item_id,
            "kind": "quote",
            "usd": usd,
            "date": when or date.today().isoformat(),
            "notes": notes,
        }
        source = {"title": f"Quote from {supplier}" if supplier.strip() else "Quote entered by the user",
                  "url": url, "publisher": supplier, "kind": "quote"}
        return self.add_item("prices", values, source=source)

    def _validate(self, kind: str, values: dict, new: bool) -> tuple[dict, dict[str, str]]:
        problems: dict[str, str] = {}
        record: dict = {}
        for spec in KINDS[kind]:
            if spec.name == "source" and kind != "sources":
                record["source"] = values.get("source") or None
                continue
            if spec.name == "date" and not values.get("date"):
                record["date"] = date.today().isoformat()
                continue
            try:
                record[spec.name] = parse_value(spec, values.get(spec.name))
            except FieldError as exc:
                problems[spec.name] = str(exc)
        for spec in KINDS[kind]:
            value = record.get(spec.name)
            if spec.type == "ref" and value and spec.name != "source":
                targets = spec.ref.split("|")
                if not any(self.get(t, value) for t in targets):
                    problems[spec.name] = f"'{value}' is not in the catalogue's {' or '.join(targets)}"
        if record.get("source") and kind != "sources" and not self.get("sources", record["source"]):
            problems["source"] = f"'{record['source']}' is not a known source"
        return record, problems

    def _source_columns(self, kind: str, record: dict, src_id: str) -> dict:
        """Field sources for a new record whose figures have no `source` column of their own."""
        fields = field_map(kind)
        if "source" in fields:
            return {}
        return {s.name: src_id for s in fields.values() if s.figure and record.get(s.name) is not None}

    def _resolve_source(self, session: Session, source: dict | None, existing: str | None) -> str:
        model = MODELS["sources"]
        if source is None and existing:
            return existing
        today = date.today().isoformat()
        if source is None or not (source.get("title") or "").strip():
            src_id = f"{USER_SOURCE_PREFIX}entry-{today}"
            if session.get(model, src_id) is None:
                session.add(model(id=src_id, title=f"Entered by the user in gpudesk on {today}",
                                  publisher="", url="", kind="other", published=today, accessed=today,
                                  origin=ORIGIN_USER_ADDED, updated_at=_now(), **self._audit()))
            return src_id
        title = source["title"].strip()
        url = (source.get("url") or "").strip()
        if url and not re.match(r"^(https?|file)://", url):
            raise EditError({"source_url": f"'{url}' is not a web address (it must start with http:// or https://)"})
        taken = {r[0] for r in session.execute(select(model.id))}
        src_id = _unique_id(USER_SOURCE_PREFIX + _slug(title)[:60], {k: None for k in taken})
        session.add(model(id=src_id, title=title, publisher=(source.get("publisher") or "").strip(), url=url,
                          kind=source.get("kind") or "other", published=today, accessed=today,
                          origin=ORIGIN_USER_ADDED, updated_at=_now(), **self._audit()))
        return src_id

    def _audit(self) -> dict:
        return {"added_by": self.user, "added_at": _now(), "updated_by": self.user}


def _row_dict(kind: str, row) -> dict:
    out = {spec.name: getattr(row, spec.name) for spec in KINDS[kind]}
    out["origin"] = row.origin
    out["field_sources"] = dict(getattr(row, "field_sources", None) or {})
    if hasattr(row, "derived"):
        out["derived"] = dict(row.derived or {})
    out["updated_at"] = row.updated_at
    for column in AUDIT_COLUMNS:
        out[column] = getattr(row, column)
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "item"


def _unique_id(base: str, taken: dict) -> str:
    base = _slug(base)
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


def _now() -> str:
    from datetime import datetime

    return datetime.now(UTC).isoformat(timespec="seconds")


def open_local_copy(url: str):
    """The local copy of the team catalogue, opened read-only (None when there is none)."""
    from gpudesk.core.catalogue.team import copy_time, display_url, local_copy_path

    path = local_copy_path(url)
    if copy_time(path) is None:
        return None
    catalogue = Catalogue.open(f"sqlite:///{path}")
    catalogue.read_only = True
    catalogue.offline_from = display_url(url)
    return catalogue
