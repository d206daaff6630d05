"""Where the public conformance files are: ``../shared/conformance/`` beside the repository.

Without them a laptop run skips the tests that read them; under ``CI=true`` those tests fail
(as the PostgreSQL tests do), so a CI machine that lost the corpus cannot pass silently.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: apache/parquet-testing as shipped in shared/conformance.
PARQUET_TESTING = Path(__file__).resolve().parents[2].parent / "shared" / "conformance" / "parquet-testing"
#: The shredded Variant cases (``*.parquet`` and ``cases.json``).
SHREDDED_VARIANT = PARQUET_TESTING / "shredded_variant"


def require_corpus(path: Path = PARQUET_TESTING) -> None:
    """Skip (laptop) or fail (CI=true) when ``path`` of the conformance corpus is missing."""
    if path.is_dir():
        return
    msg = f"conformance corpus not found at {path} (shared/conformance beside the repository)"
    if os.environ.get("CI") == "true":
        pytest.fail(msg + ": CI requires it", pytrace=False)
    pytest.skip(msg)


def needs_corpus(path: Path = PARQUET_TESTING) -> pytest.MarkDecorator:
    """Marker form of :func:`require_corpus` for tests that list the corpus at import time: under
    ``CI=true`` the test runs (and fails on the missing files) instead of being skipped."""
    return pytest.mark.skipif(
        not path.is_dir() and os.environ.get("CI") != "true", reason=f"conformance corpus not found at {path}"
    )
