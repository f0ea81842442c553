"""Alembic environment for the catalogue database: runs on the connection gpudesk hands over."""

from alembic import context

# every table class, so that target_metadata is the whole schema (alembic autogenerate)
import gpudesk.core.benchmarks.models  # noqa: F401
import gpudesk.core.catalogue.models  # noqa: F401
from gpudesk.core.storage import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is None:  # command-line use: alembic -x url=sqlite:///path upgrade head
        from gpudesk.core.catalogue.db import make_engine

        url = context.get_x_argument(as_dictionary=True).get("url")
        with make_engine(url).begin() as conn:
            context.configure(connection=conn, target_metadata=target_metadata, render_as_batch=True)
            with context.begin_transaction():
                context.run_migrations()
        return
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
