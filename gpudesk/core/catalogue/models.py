"""SQLAlchemy ORM classes of the catalogue, built from the field registry so that one description
of each kind serves the loader, the database and the UI. Migrations (migrations/versions) freeze
each schema explicitly; a test checks that the models and the newest migration agree."""

from __future__ import annotations

from sqlalchemy import JSON, Boolean, Float, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from gpudesk.core.catalogue.derived import DERIVED_KINDS
from gpudesk.core.catalogue.fields import KINDS, Field
from gpudesk.core.catalogue.reading import ORIGIN_BUNDLED, TABLE_NAMES  # shared with the snapshot reader
from gpudesk.core.storage import Base  # shared with the benchmark tables


class CatalogueMeta(Base):
    """Key/value facts about the loaded catalogue: bundled version, fingerprint, load time."""

    __tablename__ = "catalogue_meta"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text, default="")


class WorkloadPreset(Base):
    """A named workload (and optionally a suggested cluster) in the scenario vocabulary."""

    __tablename__ = "workload_presets"
    id: Mapped[str] = mapped_column(String(120), primary_key=True)
    name: Mapped[str] = mapped_column(Text)
    description: Mapped[str] = mapped_column(Text, default="")
    spec: Mapped[dict] = mapped_column(JSON, default=dict)
    origin: Mapped[str] = mapped_column(String(16), default=ORIGIN_BUNDLED)


def _column(spec: Field):
    if spec.name == "id":
        return mapped_column(String(120), primary_key=True)
    sql_type = {
        "int": Integer,
        "float": Float,
        "bool": Boolean,
    }.get(spec.type, Text)
    return mapped_column(sql_type, nullable=True)


def _make_model(kind: str):
    attrs = {
        "__tablename__": TABLE_NAMES[kind],
        "__annotations__": {},
        "catalogue_kind": kind,
        "origin": mapped_column(String(16), default=ORIGIN_BUNDLED, nullable=False),
        "updated_at": mapped_column(String(32), default="", nullable=False),
        # who added and changed the row (settings' name or the computer's login; "" for the shipped
        # catalogue), and a version each write raises: an edit based on an older version is refused
        "added_by": mapped_column(String(120), default="", server_default="", nullable=False),
        "added_at": mapped_column(String(32), default="", server_default="", nullable=False),
        "updated_by": mapped_column(String(120), default="", server_default="", nullable=False),
        "version": mapped_column(Integer, default=1, server_default="1", nullable=False),
    }
    for spec in KINDS[kind]:
        attrs[spec.name] = _column(spec)
    if kind != "sources":
        attrs["field_sources"] = mapped_column(JSON, default=dict, nullable=False)
    if kind in DERIVED_KINDS:
        attrs["derived"] = mapped_column(JSON, default=dict, nullable=False)
    attrs["__mapper_args__"] = {"version_id_col": attrs["version"]}  # UPDATE ... WHERE version = :read
    name = "".join(part.capitalize() for part in TABLE_NAMES[kind].split("_"))
    return type(name, (Base,), attrs)


MODELS = {kind: _make_model(kind) for kind in KINDS}
