"""File pruning on shredded Variant statistics, as pure logic: no database, no HTTP, no import of
SQLAlchemy or :mod:`service.catalog` (a test walks the imports).

* :mod:`.expressions`: the predicate tree (leaves over a Variant path or a plain/partition column,
  and Unknown for what pruning cannot use), its builders and :func:`~.expressions.visit`;
* :mod:`.schema`: the table's columns, which the parsers resolve names against;
* :mod:`.parse_json` / :mod:`.parse_sql`: Iceberg-style filter JSON and Spark SQL text ⇄ tree,
  :mod:`.render` the tree as Spark SQL; :mod:`.paths`, :mod:`.literals`, :mod:`.spark_types`
  the pieces they share;
* :mod:`.conditions`: the stats conditions a tree compiles to, :mod:`.conjunctions` their
  same-path merge;
* :mod:`.evaluator`: those conditions over one file's stats;
* :mod:`.diagnostics`: the columns a predicate names and the warnings of a plan (terms nothing can
  be pruned on), from facts the catalog supplies.

Running conditions against the catalog is the catalog's job: :meth:`service.catalog.Catalog.plan`,
whose planner (:mod:`service.catalog.planner`) translates the conditions defined here into SQL.
"""

from typing import TYPE_CHECKING

from service.lazy import lazy_exports

if TYPE_CHECKING:
    from service.pruning.conditions import Condition, LeafCondition, compile_expression, usable_types
    from service.pruning.evaluator import (
        CANNOT_MATCH,
        MIGHT_MATCH,
        FileEvaluator,
        Verdict,
        evaluate,
        stats_by_path,
    )
    from service.pruning.expressions import (
        AlwaysFalse,
        AlwaysTrue,
        And,
        BooleanExpression,
        ColumnTerm,
        LiteralPredicate,
        Not,
        Op,
        Or,
        SetPredicate,
        Term,
        UnaryPredicate,
        Unknown,
        VariantTerm,
        and_,
        not_,
        or_,
        variant,
    )
    from service.pruning.paths import (
        JsonPath,
        format_json_path,
        format_variant_path,
        json_path_to_variant_path,
        parse_json_path,
        parse_variant_path,
    )
    from service.pruning.schema import ColumnInfo, TableSchema
    from service.pruning.spark_types import parse_spark_type, spark_type_name

#: Each name exported here, by the module that defines it: imported on first use (:func:`__getattr__`),
#: so that a caller of one part (the SQL parser, the planner) does not load every other (the JSON
#: parser, the evaluator): the read commands start faster. The parsers are their modules'
#: (:mod:`.parse_json`, :mod:`.parse_sql`), not names here: a name the same as its module's would
#: be the module once that is imported.
_EXPORTS = {
    **dict.fromkeys(("Condition", "LeafCondition", "compile_expression", "usable_types"), "conditions"),
    **dict.fromkeys(
        (
            "CANNOT_MATCH",
            "FileEvaluator",
            "MIGHT_MATCH",
            "Verdict",
            "evaluate",
            "stats_by_path",
        ),
        "evaluator",
    ),
    **dict.fromkeys(
        (
            "AlwaysFalse",
            "AlwaysTrue",
            "And",
            "BooleanExpression",
            "ColumnTerm",
            "LiteralPredicate",
            "Not",
            "Op",
            "Or",
            "SetPredicate",
            "Term",
            "UnaryPredicate",
            "Unknown",
            "VariantTerm",
            "and_",
            "not_",
            "or_",
            "variant",
        ),
        "expressions",
    ),
    **dict.fromkeys(
        (
            "JsonPath",
            "format_json_path",
            "format_variant_path",
            "json_path_to_variant_path",
            "parse_json_path",
            "parse_variant_path",
        ),
        "paths",
    ),
    **dict.fromkeys(("ColumnInfo", "TableSchema"), "schema"),
    **dict.fromkeys(("parse_spark_type", "spark_type_name"), "spark_types"),
}

__all__ = [
    "CANNOT_MATCH",
    "MIGHT_MATCH",
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "BooleanExpression",
    "ColumnInfo",
    "ColumnTerm",
    "Condition",
    "FileEvaluator",
    "JsonPath",
    "LeafCondition",
    "LiteralPredicate",
    "Not",
    "Op",
    "Or",
    "SetPredicate",
    "TableSchema",
    "Term",
    "UnaryPredicate",
    "Unknown",
    "VariantTerm",
    "Verdict",
    "and_",
    "compile_expression",
    "evaluate",
    "format_json_path",
    "format_variant_path",
    "json_path_to_variant_path",
    "not_",
    "or_",
    "parse_json_path",
    "parse_spark_type",
    "parse_variant_path",
    "spark_type_name",
    "stats_by_path",
    "usable_types",
    "variant",
]


__getattr__ = lazy_exports(__name__, _EXPORTS)
