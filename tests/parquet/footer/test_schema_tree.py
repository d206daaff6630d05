"""Tests for service.parquet.footer.schema_tree: the flat schema rebuilt as a tree (paths, levels,
leaf indexes), its corruption checks, and row groups validated against it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from service.errors import InvalidParquetError
from service.parquet.footer import (
    SchemaElement,
    SchemaNode,
    build_schema_tree,
    iter_leaves,
    parse_file_metadata,
    read_file_metadata,
    validate_row_groups,
)
from tests.support.thrift import simple_footer


def test_schema_tree_levels_and_paths(pyarrow_files: list[Path]) -> None:
    with pyarrow_files[0].open("rb") as f:
        meta = read_file_metadata(f)
    root = build_schema_tree(meta.schema)
    assert root.path == ()
    assert (root.max_definition_level, root.max_repetition_level) == (0, 0)
    struct_node = root.child("struct")
    assert struct_node is not None
    assert not struct_node.is_leaf
    z = struct_node.child("z")
    assert z is not None
    element = z.child("list")
    assert element is not None
    q = element.children[0].child("q")
    assert q is not None
    assert q.is_leaf
    assert q.path == ("struct", "z", "list", "element", "q")
    # optional struct, optional list, repeated list, optional element, optional q
    assert (q.max_definition_level, q.max_repetition_level) == (5, 1)
    assert root.child("nope") is None
    leaves = list(iter_leaves(root))
    assert [leaf.leaf_index for leaf in leaves] == list(range(len(leaves)))


def elem(
    name: str, *, type: str | None = None, rep: str | None = "OPTIONAL", children: int | None = None
) -> SchemaElement:
    return SchemaElement(name, type, None, rep, children, None, None, None, None, None)


def test_build_schema_tree_errors() -> None:
    root = elem("root", rep=None, children=2)
    leaf = elem("a", type="INT32")
    build_schema_tree([root, leaf, leaf])
    with pytest.raises(InvalidParquetError, match="schema is empty"):
        build_schema_tree([])
    with pytest.raises(InvalidParquetError, match="declares more children"):
        build_schema_tree([root, leaf])
    with pytest.raises(InvalidParquetError, match="account for 3 elements but the schema has 4"):
        build_schema_tree([root, leaf, leaf, leaf])
    with pytest.raises(InvalidParquetError, match="not a group"):
        build_schema_tree([leaf])
    with pytest.raises(InvalidParquetError, match="neither a type nor children"):
        build_schema_tree([elem("root", children=1), elem("g")])
    with pytest.raises(InvalidParquetError, match="num_children=-1"):
        build_schema_tree([elem("root", children=1), elem("g", children=-1)])
    with pytest.raises(InvalidParquetError, match="no repetition_type"):
        build_schema_tree([elem("root", children=1), elem("a", type="INT32", rep=None)])
    chain = [elem("root", children=1)] + [elem(f"g{i}", children=1) for i in range(10_000)] + [leaf]
    with pytest.raises(InvalidParquetError, match="nested more than"):
        build_schema_tree(chain)


def test_build_schema_tree_levels() -> None:
    schema = [
        elem("root", rep="REQUIRED", children=2),
        elem("req", type="INT32", rep="REQUIRED"),
        elem("l", rep="OPTIONAL", children=1),
        elem("list", rep="REPEATED", children=1),
        elem("element", type="BYTE_ARRAY", rep="OPTIONAL"),
    ]
    root = build_schema_tree(schema)
    req = root.child("req")
    assert req is not None
    assert (req.max_definition_level, req.max_repetition_level, req.leaf_index) == (0, 0, 0)
    leaf = next(n for n in iter_leaves(root) if n.name == "element")
    assert leaf.path == ("l", "list", "element")
    assert (leaf.max_definition_level, leaf.max_repetition_level, leaf.leaf_index) == (3, 1, 1)
    group = root.child("l")
    assert isinstance(group, SchemaNode)
    assert group.leaf_index is None
    assert not group.is_leaf


def test_validate_row_groups_detects_mismatches() -> None:
    meta = parse_file_metadata(simple_footer())
    root = build_schema_tree(meta.schema)
    validate_row_groups(root, meta)
    rg = meta.row_groups[0]
    chunk = rg.columns[0]
    assert chunk.meta_data is not None
    two_chunks = dataclasses.replace(meta, row_groups=(dataclasses.replace(rg, columns=(chunk, chunk)),))
    with pytest.raises(InvalidParquetError, match="2 column chunks but the schema has 1"):
        validate_row_groups(root, two_chunks)
    moved = dataclasses.replace(chunk, meta_data=dataclasses.replace(chunk.meta_data, path_in_schema=("y",)))
    wrong_path = dataclasses.replace(meta, row_groups=(dataclasses.replace(rg, columns=(moved,)),))
    with pytest.raises(InvalidParquetError, match="has path 'y'"):
        validate_row_groups(root, wrong_path)
    retyped = dataclasses.replace(chunk, meta_data=dataclasses.replace(chunk.meta_data, type="INT32"))
    wrong_type = dataclasses.replace(meta, row_groups=(dataclasses.replace(rg, columns=(retyped,)),))
    with pytest.raises(InvalidParquetError, match="is INT32 in its chunk but INT64"):
        validate_row_groups(root, wrong_type)
