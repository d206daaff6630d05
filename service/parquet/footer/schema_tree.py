"""The schema tree: ``FileMetaData.schema`` (a flat, depth-first list) rebuilt as nodes with their
paths, definition and repetition levels and leaf (column) indexes, and the footer's row groups
checked against it.

Built without recursion, so a deep hostile schema cannot exhaust the stack; bad input raises
:class:`service.errors.InvalidParquetError`.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from service.errors import InvalidParquetError
from service.parquet.footer.metadata import FileMetaData, SchemaElement

#: Nesting limit for the schema tree; bounds the memory spent on per-node paths.
MAX_SCHEMA_DEPTH = 256


@dataclass(frozen=True, slots=True)
class SchemaNode:
    element: SchemaElement
    children: tuple[SchemaNode, ...]
    #: Names from below the root, e.g. ('v', 'typed_value', 'a', 'value'); () for the root.
    path: tuple[str, ...]
    max_definition_level: int
    max_repetition_level: int
    #: Position among all leaves (= index of its ColumnChunk in every row group); None for groups.
    leaf_index: int | None

    @property
    def name(self) -> str:
        return self.element.name

    @property
    def is_leaf(self) -> bool:
        return self.leaf_index is not None

    def child(self, name: str) -> SchemaNode | None:
        for c in self.children:
            if c.element.name == name:
                return c
        return None


def build_schema_tree(schema: Sequence[SchemaElement]) -> SchemaNode:
    """Rebuild the tree that ``FileMetaData.schema`` lists flat.

    "The nodes of the tree are flattened to a list by doing a depth-first traversal. The first
    element is the root." Built without recursion, so deep schemas cannot exhaust the stack.
    """
    n = len(schema)
    if n == 0:
        raise InvalidParquetError(
            "corrupt Parquet footer: the schema is empty (it must at least have a root)"
        )
    root = schema[0]
    if root.num_children is None or root.num_children < 0:
        raise InvalidParquetError(
            f"corrupt Parquet footer: schema root {root.name!r} is not a group (num_children={root.num_children})"
        )
    children: list[list[int]] = [[] for _ in range(n)]
    paths: list[tuple[str, ...]] = [()] * n
    def_levels = [0] * n
    rep_levels = [0] * n
    leaf_indexes: list[int | None] = [None] * n
    leaves = 0
    # Stack of [element index, children still to attach].
    stack: list[list[int]] = [[0, root.num_children]]
    i = 1
    while stack:
        top = stack[-1]
        if top[1] == 0:
            stack.pop()
            continue
        if i >= n:
            raise InvalidParquetError(
                f"corrupt Parquet footer: schema element {schema[top[0]].name!r} declares more children "
                f"than the schema's {n} elements hold"
            )
        top[1] -= 1
        parent = top[0]
        el = schema[i]
        children[parent].append(i)
        paths[i] = (*paths[parent], el.name)
        rep = _repetition(el)
        # Each optional or repeated ancestor adds a definition level; each repeated one a
        # repetition level (Dremel encoding, Parquet README "Nested Encoding").
        def_levels[i] = def_levels[parent] + (rep != "REQUIRED")
        rep_levels[i] = rep_levels[parent] + (rep == "REPEATED")
        nc = _group_children(el)
        if nc is None:
            leaf_indexes[i] = leaves
            leaves += 1
        else:
            if len(stack) >= MAX_SCHEMA_DEPTH:
                raise InvalidParquetError(f"schema nested more than {MAX_SCHEMA_DEPTH} levels deep")
            stack.append([i, nc])
        i += 1
    if i != n:
        raise InvalidParquetError(
            f"corrupt Parquet footer: the schema root's num_children account for {i} elements but the schema has {n}"
        )
    # Pre-order puts children after their parent, so building back to front has them ready.
    nodes: list[SchemaNode | None] = [None] * n
    for j in range(n - 1, -1, -1):
        nodes[j] = SchemaNode(
            schema[j],
            tuple(typing.cast(SchemaNode, nodes[c]) for c in children[j]),
            paths[j],
            def_levels[j],
            rep_levels[j],
            leaf_indexes[j],
        )
    return typing.cast(SchemaNode, nodes[0])


def _repetition(el: SchemaElement) -> str:
    # "The root of the schema does not have a repetition_type. All other nodes must have one"
    rep = el.repetition
    if rep is None:
        raise InvalidParquetError(
            f"corrupt Parquet footer: schema element {el.name!r} has no repetition_type"
        )
    if rep == "VECTOR":
        raise InvalidParquetError(
            f"schema element {el.name!r} uses VECTOR repetition, which is not supported"
        )
    return rep


def _group_children(el: SchemaElement) -> int | None:
    """The number of children of a group element, None for a leaf.

    "if it is a group (inner node) then type is undefined and num_children is defined
     - if it is a primitive type (leaf) then type is defined and num_children is undefined"
    """
    nc = el.num_children
    if nc is not None and nc < 0:
        raise InvalidParquetError(
            f"corrupt Parquet footer: schema element {el.name!r} has num_children={nc}"
        )
    if nc is None or (nc == 0 and el.type is not None):
        if el.type is None:
            raise InvalidParquetError(
                f"corrupt Parquet footer: schema element {el.name!r} has neither a type nor children"
            )
        return None
    return nc


@dataclass(frozen=True, slots=True)
class SchemaShape:
    """What a flat schema costs to walk, counted without building anything."""

    #: Levels of groups below the root (0: only top-level leaves).
    depth: int
    leaves: int
    #: Leaves named ``typed_value``: an upper bound of a file's shredded Variant paths.
    typed_value_leaves: int


def schema_shape(schema: Sequence[SchemaElement], depth_cap: int = MAX_SCHEMA_DEPTH) -> SchemaShape:
    """Depth and leaf counts of the flat schema, allocating only a stack of counters, so that a
    hostile schema can be refused before :func:`build_schema_tree` builds a path per leaf (a
    250-deep chain of groups over 1,000,000 leaves would hold 250 million path entries). The depth
    is counted up to ``depth_cap + 1`` (then the walk stops: deeper is refused anyway). A schema
    whose counts do not add up is counted as far as it goes: building it then refuses it."""
    n = len(schema)
    if n == 0 or schema[0].num_children is None:
        return SchemaShape(0, 0, 0)
    # "if it is a primitive type (leaf) then type is defined and num_children is undefined"
    leaves = [el for el in schema[1:] if el.num_children is None or (el.num_children == 0 and el.type is not None)]
    typed = sum(1 for el in leaves if el.name == "typed_value")
    depth = 0
    stack = [schema[0].num_children]
    i = 1
    while stack and i < n and depth <= depth_cap:
        if stack[-1] <= 0:
            stack.pop()
            continue
        stack[-1] -= 1
        el = schema[i]
        nc = el.num_children
        if not (nc is None or (nc == 0 and el.type is not None)):
            stack.append(nc)
            depth = max(depth, len(stack) - 1)
        i += 1
    return SchemaShape(depth, len(leaves), typed)


def iter_leaves(root: SchemaNode) -> Iterator[SchemaNode]:
    """Leaves in column order (depth first), without recursion."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.leaf_index is not None:
            yield node
        else:
            stack.extend(reversed(node.children))


def validate_row_groups(
    root: SchemaNode, meta: FileMetaData, leaves: Sequence[SchemaNode] | None = None
) -> None:
    """Check the footer against its own schema; raise InvalidParquetError where they disagree.
    ``leaves`` (the root's leaves in order) saves walking the tree when the caller has them.

    * every row group has one chunk per leaf, in leaf order, with the leaf's path and physical
      type: "RowGroup.columns: Metadata for each column chunk in this row group. This list must
      have the same order as the SchemaElement list in FileMetaData.";
    * ``column_orders``, when present, has one entry per leaf (otherwise which order applies to
      which column is undefined, and min/max statistics could be misread).
    """
    if leaves is None:
        leaves = list(iter_leaves(root))
    for g, rg in enumerate(meta.row_groups):
        if len(rg.columns) != len(leaves):
            raise InvalidParquetError(
                f"corrupt Parquet footer: row group {g} has {len(rg.columns)} column chunks "
                f"but the schema has {len(leaves)} leaf columns"
            )
        for leaf, chunk in zip(leaves, rg.columns, strict=True):
            md = chunk.meta_data
            if md is None:
                continue  # encrypted column: its metadata is not in the plaintext footer
            if md.path_in_schema != leaf.path:
                raise InvalidParquetError(
                    f"corrupt Parquet footer: row group {g} column {leaf.leaf_index} has path "
                    f"{'.'.join(md.path_in_schema)!r} but the schema leaf is {'.'.join(leaf.path)!r}"
                )
            if md.type != leaf.element.type:
                raise InvalidParquetError(
                    f"corrupt Parquet footer: row group {g} column {'.'.join(leaf.path)!r} is {md.type} "
                    f"in its chunk but {leaf.element.type} in the schema"
                )
    if meta.column_orders is not None and len(meta.column_orders) != len(leaves):
        # "Sort orders are listed in the order matching the columns in the schema ... only leaf
        #  nodes of the schema are represented in the list of sort orders."
        raise InvalidParquetError(
            f"corrupt Parquet footer: {len(meta.column_orders)} column orders for {len(leaves)} leaf columns"
        )
