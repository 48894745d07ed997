"""The tasks' view of the one reader of private tables (:mod:`dpsubmod.datasets.records`)."""

from ..datasets.records import RecordTable, as_table, public_column, read_public_csv

__all__ = ["RecordTable", "as_table", "read_public_csv", "public_column"]
