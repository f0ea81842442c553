"""Tables of imported benchmark results, on the catalogue's declarative Base (one database, one
migration history: migrations/versions/0002_benchmarks.py creates them).

- bench_imports: one row per imported file (its SHA-256, so that the same file is never imported
  twice), with what was read and the problems found;
- bench_setups: what the measurements of one setup in one import share (the hardware as named and
  as matched, the common workload and conditions), stored once rather than on every row: a
  llama-bench file of 100,000 records holds a handful of setups;
- bench_measurements: one row per measured figure, unique by content hash, so that the same run in
  two files (a vLLM sweep's run file and its summary, an MLPerf summary and its detail log) is
  stored once; its workload and conditions hold only what the row adds to its setup's
  (migrations/versions/0005_bench_setups.py split the earlier one-table layout);
- bench_answers: the user's answers to "which hardware ran this?" (and "which model?"), keyed by
  the hardware text or a file signature, reused for the next files.
"""

from __future__ import annotations

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from gpudesk.core.storage import Base


class BenchImport(Base):
    __tablename__ = "bench_imports"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    file_hash: Mapped[str] = mapped_column(String(64), nullable=False, unique=True, index=True)
    source_file: Mapped[str] = mapped_column(Text, nullable=False)  # base name only
    format: Mapped[str] = mapped_column(String(40), nullable=False)
    imported_at: Mapped[str] = mapped_column(String(32), nullable=False)
    size_bytes: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    records: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    stored: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    duplicates: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    problems: Mapped[list] = mapped_column(JSON, nullable=False, default=list)
    imported_by: Mapped[str] = mapped_column(String(120), nullable=False, default="", server_default="")


class BenchSetup(Base):
    __tablename__ = "bench_setups"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    import_id: Mapped[int] = mapped_column(ForeignKey("bench_imports.id", ondelete="CASCADE"), nullable=False,
                                           index=True)
    format: Mapped[str] = mapped_column(String(40), nullable=False)
    hardware_text: Mapped[str] = mapped_column(Text, nullable=False, default="")
    hardware_key: Mapped[str] = mapped_column(Text, nullable=False, default="", index=True)
    accelerator_id: Mapped[str | None] = mapped_column(String(120), nullable=True, index=True)
    accelerator_count: Mapped[int | None] = mapped_column(Integer, nullable=True)
    match_confidence: Mapped[str] = mapped_column(String(8), nullable=False, default="ask")
    match_reason: Mapped[str] = mapped_column(Text, nullable=False, default="")
    cpu_only: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    workload: Mapped[dict] = mapped_column(JSON, nullable=False, default=dict)
    conditions: Mapped[dict] = mapped_column(JSON, nullable=False, default=dict)


class BenchMeasurement(Base):
    __tablename__ = "bench_measurements"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    setup_id: Mapped[int] = mapped_column(ForeignKey("bench_setups.id", ondelete="CASCADE"), nullable=False,
                                          index=True)
    content_hash: Mapped[str] = mapped_column(String(64), nullable=False, unique=True, index=True)
    metric: Mapped[str] = mapped_column(String(64), nullable=False)
    statistic: Mapped[str] = mapped_column(String(40), nullable=False, default="mean")
    value: Mapped[float] = mapped_column(Float, nullable=False)
    unit: Mapped[str] = mapped_column(String(16), nullable=False)
    stddev: Mapped[float | None] = mapped_column(Float, nullable=True)
    workload: Mapped[dict] = mapped_column(JSON, nullable=False, default=dict)  # added to the setup's
    conditions: Mapped[dict] = mapped_column(JSON, nullable=False, default=dict)  # added to the setup's
    record_index: Mapped[int] = mapped_column(Integer, nullable=False, default=0)


class BenchAnswer(Base):
    __tablename__ = "bench_answers"

    key: Mapped[str] = mapped_column(String(400), primary_key=True)
    accelerator_id: Mapped[str | None] = mapped_column(String(120), nullable=True)
    accelerator_count: Mapped[int | None] = mapped_column(Integer, nullable=True)
    model: Mapped[dict] = mapped_column(JSON, nullable=False, default=dict)  # params, precision, ... answered
    updated_at: Mapped[str] = mapped_column(String(32), nullable=False, default="")
    updated_by: Mapped[str] = mapped_column(String(120), nullable=False, default="", server_default="")


TABLES = (BenchImport.__table__, BenchSetup.__table__, BenchMeasurement.__table__, BenchAnswer.__table__)
