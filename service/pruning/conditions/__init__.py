"""Stats conditions, what a predicate tree means for a file's variant statistics.

* :mod:`.model`: the IR (``LeafCondition``/``AllOf``/``AnyOf``/``Constant`` over per-type
  ``Test`` kinds) and what each node means for one file.
* :mod:`.visitor`: :func:`visit_condition` and :func:`visit_test`, the dispatch every
  interpreter of the IR uses (the per-file evaluator, the catalog's SQL translation).
* :mod:`.compile`: tree → IR, with the soundness rules that decide which stored types may use
  their bounds.
"""

from service.pruning.conditions.compile import (
    DEFAULT_MAX_IN_POINTS,
    compile_expression,
    leaf_condition,
    usable_types,
)
from service.pruning.conditions.model import (
    AllOf,
    AnyOf,
    AnyPoint,
    Condition,
    Constant,
    HasNulls,
    HasValues,
    Keep,
    Label,
    LeafCondition,
    LeafTerm,
    MayHaveNaN,
    Never,
    NotAllIn,
    RangeMayContain,
    Test,
    TypedTest,
    merge_tests,
)
from service.pruning.conditions.visitor import (
    ConditionVisitor,
    TestVisitor,
    condition_paths,
    visit_condition,
    visit_test,
)

__all__ = [
    "DEFAULT_MAX_IN_POINTS",
    "AllOf",
    "AnyOf",
    "AnyPoint",
    "Condition",
    "ConditionVisitor",
    "Constant",
    "HasNulls",
    "HasValues",
    "Keep",
    "Label",
    "LeafCondition",
    "LeafTerm",
    "MayHaveNaN",
    "Never",
    "NotAllIn",
    "RangeMayContain",
    "Test",
    "TestVisitor",
    "TypedTest",
    "compile_expression",
    "condition_paths",
    "leaf_condition",
    "merge_tests",
    "usable_types",
    "visit_condition",
    "visit_test",
]
