"""shredcat: a lakehouse catalog for shredded Parquet Variant statistics."""

__version__ = "0.1.0"
