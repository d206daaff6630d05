"""Variant and plain-column statistics: per-file extraction and table-level merge, no database.

* :mod:`.model`: :class:`~.model.FileStats` / :class:`~.model.PathStats` /
  :class:`~.model.ColumnStats`, what the extractor produces (DuckLake's
  ``ducklake_file_variant_stats`` and ``ducklake_file_column_stats`` rows, typed);
* :mod:`.extract`: one Parquet file's fully shredded paths and plain columns, from its footer
  (data only where the footer cannot prove a fact);
* :mod:`.geo`: a GEOMETRY column's ``extra_stats`` (DuckLake's bounding box) from the footer's
  geospatial statistics;
* :mod:`.merge`: the one global-stats algebra (:class:`~.merge.PathAccumulator`) and DuckLake's
  JSON layout of global stats.

Bounds are :mod:`service.values` values; the catalog stores and merges through this package.
"""
