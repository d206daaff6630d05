"""The default of every limit that pure code also needs, written once.

:class:`service.settings.Settings` takes its defaults from here (``SHREDCAT_MAX_IN_LIST`` and the
others override them), and the API, CLI and dashboard pass the values in force to the pure
parsers and readers, whose own defaults are these, so a library caller gets the same limits.
Import-free on purpose (the standard library only): the settings and the CLI read it at start-up.
:class:`Limits`, what a :class:`~service.catalog.Catalog` is given, is here too, so that a read
command builds it without importing the commit validator (:mod:`service.catalog.validate`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

#: Deepest predicate nesting (and/or/not levels).
MAX_PREDICATE_DEPTH = 64
#: Longest IN list in a predicate.
MAX_IN_LIST = 10_000
#: Most terms in one predicate (comparisons joined by AND/OR; a BETWEEN counts as two).
MAX_PREDICATE_TERMS = 400
#: Most steps (``.key``, ``:key``, ``[i]``) of one path written in a SQL predicate (a Variant
#: shorthand path or a column reference); all its paths together may have four times the terms limit.
#: A file's schema nests at most MAX_SCHEMA_DEPTH levels, two per shredded object step.
MAX_PATH_DEPTH = 64
#: Longest SQL predicate text (characters): an IN list of 10,000 values of ~25 characters each.
MAX_PREDICATE_LENGTH = 256 * 1024
#: Largest plan request body (bytes): a predicate of the longest allowed text, every character
#: up to 4 bytes of UTF-8, and the request's other fields. Checked before the body is decoded.
MAX_PLAN_BODY_BYTES = 4 * MAX_PREDICATE_LENGTH + 64 * 1024
#: Longest Parquet footer read (bytes), checked from the file's last 8 bytes first.
MAX_FOOTER_BYTES = 16 * 1024 * 1024
#: Most bytes of column data one file's extraction decompresses (residual checks, page scans, reads
#: of columns whose footer proves too little); past it those facts are unknown, never read.
MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024
#: Deepest schema (levels of groups below the root) a file may have; checked before its tree is built.
MAX_SCHEMA_DEPTH = 64
#: Most leaf columns a file's schema may have; checked before its tree is built.
MAX_SCHEMA_LEAVES = 100_000
#: Most shredded leaves (``typed_value`` leaf columns) a file's schema may have; checked before its
#: Variant columns are walked.
MAX_SHREDDED_PATHS = 10_000
#: Most files in one commit or removal.
MAX_FILES_PER_COMMIT = 10_000
#: Most statistics rows (fully shredded paths) of one file in a commit.
MAX_STATS_ROWS_PER_FILE = 10_000
#: Longest min_value/max_value of a statistics row (DuckLake truncates string bounds to 256 bytes).
MAX_BOUND_CHARS = 1024
#: Longest extra_stats of a statistics row (characters).
MAX_EXTRA_STATS_CHARS = 64 * 1024
#: How long a commit's idempotency key replays its result (seconds; then it is deleted).
IDEMPOTENCY_RETENTION_SECONDS = 7 * 24 * 3600
#: Largest page of files/candidates/snapshots a list call returns.
MAX_PAGE_SIZE = 10_000


@dataclass(frozen=True, slots=True)
class PredicateLimits:
    """The predicate limits in force, as one hashable value (parsed predicates are cached by it).
    ``Settings.predicate_limits`` gives the configured ones; ``PredicateLimits()`` the defaults."""

    max_depth: int = MAX_PREDICATE_DEPTH
    max_in_list: int = MAX_IN_LIST
    max_terms: int = MAX_PREDICATE_TERMS
    max_length: int = MAX_PREDICATE_LENGTH
    max_path_depth: int = MAX_PATH_DEPTH

    def sql_keywords(self) -> dict[str, int]:
        """Keywords of :func:`service.pruning.parse_sql.parse_sql`."""
        return asdict(self)

    def json_keywords(self) -> dict[str, int]:
        """Keywords of :func:`service.pruning.parse_json.parse_json` (a JSON filter has no text length)."""
        return {"max_depth": self.max_depth, "max_in_list": self.max_in_list, "max_terms": self.max_terms}


@dataclass(frozen=True, slots=True)
class FileLimits:
    """What one file's extraction may cost: ``Settings.file_limits`` gives the configured ones,
    ``FileLimits()`` the defaults."""

    max_decompressed_bytes: int = MAX_DECOMPRESSED_BYTES
    max_schema_depth: int = MAX_SCHEMA_DEPTH
    max_schema_leaves: int = MAX_SCHEMA_LEAVES
    max_shredded_paths: int = MAX_SHREDDED_PATHS

    @property
    def max_schema_elements(self) -> int:
        """Most schema elements (leaves and groups, the root included) a footer may state: a schema
        within the leaf limit whose groups are no more than its leaves has at most twice the limit
        and one (a footer over it is refused from its list header, before it is decoded)."""
        return 2 * self.max_schema_leaves + 1

#: The default per-file limits (a value, for default arguments).
DEFAULT_FILE_LIMITS = FileLimits()


@dataclass(frozen=True, slots=True)
class Limits:
    """How much one commit may hold, and the largest page a read returns (settings of the same
    names; ``Settings.commit_limits`` gives the configured ones)."""

    max_files_per_commit: int
    max_stats_rows_per_file: int
    max_bound_chars: int
    max_extra_stats_chars: int
    max_page_size: int
    #: How long an idempotency key replays its commit's result.
    idempotency_retention_seconds: int = IDEMPOTENCY_RETENTION_SECONDS
