"""Where the public conformance files are: ``../shared/conformance/`` beside the repository."""

from __future__ import annotations

from pathlib import Path

#: apache/parquet-testing as shipped in shared/conformance.
PARQUET_TESTING = Path(__file__).resolve().parents[2].parent / "shared" / "conformance" / "parquet-testing"
#: The shredded Variant cases (``*.parquet`` and ``cases.json``).
SHREDDED_VARIANT = PARQUET_TESTING / "shredded_variant"
