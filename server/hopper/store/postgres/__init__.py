"""The PostgreSQL store: the QueueStore contract in guarded SQL statements, shared by
every hopper process over one database."""

from hopper.store.postgres.store import PostgresQueueStore

__all__ = ["PostgresQueueStore"]
