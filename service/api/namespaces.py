"""``/v1/namespaces``: list, create, load, drop (namespaces are DuckLake schemas, one level)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path

from service.api.auth import Principal, require_admin, require_reader
from service.api.bodies import json_content_type
from service.api.deps import COMMON, error_responses, field_error, get_catalog
from service.api.schemas import (
    CreateNamespaceRequest,
    DropResponse,
    ListNamespacesResponse,
    NamespaceResponse,
)
from service.catalog import Catalog, NamespaceInfo
from service.errors import NotFoundError

router = APIRouter(prefix="/v1/namespaces", tags=["namespaces"])

NamespaceName = Annotated[str, Path(min_length=1, max_length=1024, description="Namespace name.")]


def _namespace_response(ns: NamespaceInfo) -> NamespaceResponse:
    return NamespaceResponse(namespace=(ns.name,), properties={"begin-snapshot": str(ns.begin_snapshot)})


def find_namespace(catalog: Catalog, name: str) -> NamespaceInfo:
    for ns in catalog.list_namespaces():
        if ns.name == name:
            return ns
    raise NotFoundError(f"namespace {name} does not exist", details={"namespace": name})


@router.get(
    "",
    operation_id="listNamespaces",
    summary="List namespaces",
    response_model=ListNamespacesResponse,
    responses=error_responses(*COMMON),
)
def list_namespaces(
    _: Annotated[Principal, Depends(require_reader)], catalog: Annotated[Catalog, Depends(get_catalog)]
) -> ListNamespacesResponse:
    return ListNamespacesResponse(namespaces=tuple((ns.name,) for ns in catalog.list_namespaces()))


@router.post(
    "",
    operation_id="createNamespace",
    summary="Create a namespace",
    response_model=NamespaceResponse,
    responses=error_responses(*COMMON, 409, 415),
    dependencies=[Depends(json_content_type)],
)
def create_namespace(
    body: CreateNamespaceRequest,
    _: Annotated[Principal, Depends(require_admin)],
    catalog: Annotated[Catalog, Depends(get_catalog)],
) -> NamespaceResponse:
    if body.properties:
        raise field_error("body.properties", "namespace properties are not supported")
    return _namespace_response(catalog.create_namespace(body.namespace[0]))


@router.get(
    "/{namespace}",
    operation_id="loadNamespaceMetadata",
    summary="Load a namespace",
    response_model=NamespaceResponse,
    responses=error_responses(*COMMON, 404),
)
def load_namespace(
    namespace: NamespaceName,
    _: Annotated[Principal, Depends(require_reader)],
    catalog: Annotated[Catalog, Depends(get_catalog)],
) -> NamespaceResponse:
    return _namespace_response(find_namespace(catalog, namespace))


@router.delete(
    "/{namespace}",
    operation_id="dropNamespace",
    summary="Drop an empty namespace",
    response_model=DropResponse,
    responses=error_responses(*COMMON, 404, 409),
)
def drop_namespace(
    namespace: NamespaceName,
    _: Annotated[Principal, Depends(require_admin)],
    catalog: Annotated[Catalog, Depends(get_catalog)],
) -> DropResponse:
    return DropResponse(snapshot_id=catalog.drop_namespace(namespace).snapshot_id)
