"""Data for dpsubmod: bundled real tables and graphs, synthetic generators, and a validated CSV
loader for your own records.

Every loader states what one record is (the unit of the neighbouring relation "replace one
record") and where the data come from. Discretization bounds and label thresholds are public
(documented constants or arguments), never computed from private records on a user-facing path.

* Tables (need scikit-learn, the ``[data]`` extra): :func:`load_breast_cancer`,
  :func:`load_diabetes`, :func:`load_table`.
* Graphs (bundled with networkx): :func:`load_karate_club`, :func:`load_les_miserables`,
  :func:`load_davis_southern_women`, :func:`load_florentine_families`, :func:`load_graph`;
  random graphs with activation probabilities :func:`erdos_renyi_graph`,
  :func:`planted_partition_graph`, :func:`with_activation_probabilities`.
* Synthetic records: :func:`clustered_points`, :func:`random_coverage`,
  :func:`coverage_records`, :func:`categorical_table`; public candidates :func:`grid_candidates`.
* Your data: one reader of private tables with one declared bad-row policy
  (:mod:`dpsubmod.datasets.records`: :func:`~dpsubmod.datasets.records.as_table` in memory;
  :func:`scan_records` in chunks, for the record objectives' ``from_chunks``; the same CSV
  engine and cell rule in both); :func:`load_csv`, a strict loader on it that refuses the first
  bad line with its line and column (a data check, not a release path).
"""

from .._lazy import lazy_exports

#: Where each exported name is defined; it loads on first use (PEP 562).
_WHERE = {
    "chunks": ("ChunkSource", "scan_records",),
    "graphs": (
        "GRAPHS", "GraphDataset", "erdos_renyi_graph", "load_davis_southern_women",
        "load_florentine_families", "load_graph", "load_karate_club", "load_les_miserables",
        "planted_partition_graph", "with_activation_probabilities",
    ),
    "grids": ("grid_candidates",),
    "synthetic": (
        "categorical_table", "clustered_points", "coverage_records", "random_coverage",
    ),
    "tables": (
        "DIABETES_BOUNDS", "DIABETES_THRESHOLDS", "TABLES", "TableDataset", "discretize",
        "load_breast_cancer", "load_diabetes", "load_table",
    ),
    "user_csv": ("CSVDataset", "load_csv",),
}

__all__ = [
    "TableDataset",
    "TABLES",
    "DIABETES_BOUNDS",
    "DIABETES_THRESHOLDS",
    "load_breast_cancer",
    "load_diabetes",
    "load_table",
    "discretize",
    "GraphDataset",
    "GRAPHS",
    "load_graph",
    "load_karate_club",
    "load_les_miserables",
    "load_davis_southern_women",
    "load_florentine_families",
    "erdos_renyi_graph",
    "planted_partition_graph",
    "with_activation_probabilities",
    "clustered_points",
    "random_coverage",
    "coverage_records",
    "categorical_table",
    "grid_candidates",
    "CSVDataset",
    "load_csv",
    "ChunkSource",
    "scan_records",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
