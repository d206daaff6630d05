"""The Parquet Variant: its binary encoding (:mod:`.binary`), Variant columns and their shredding
trees in a footer's schema (:mod:`.schema`), and DuckLake's ``variant_path`` syntax (:mod:`.paths`).

Pure functions over bytes and schema trees; shredded leaf types come from :mod:`service.values`.
"""
