"""What the catalogue and the benchmarks share to live in one database: the declarative base their
tables hang on. The database's engine, sessions and migrations are in gpudesk.core.catalogue.db,
which needs no table class (the migrations are explicit scripts); both packages import this one,
and it imports neither, so neither needs the other for its tables."""

from gpudesk.core.storage.base import Base

__all__ = ["Base"]
