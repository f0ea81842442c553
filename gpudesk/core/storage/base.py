"""The SQLAlchemy declarative base of every table in gpudesk's database."""

from __future__ import annotations

from sqlalchemy.orm import DeclarativeBase


class Base(DeclarativeBase):
    pass
