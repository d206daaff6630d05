"""The OpenAPI document's response shapes, recorded: the schemas of the models both the server and
the client use (service/wire.py) and which one each route answers with. The client parses with
these very models, so a change to them changes what every client reads; the recording makes such
a change visible in review. After an intended change, record again:
``python -m tests.api.test_openapi_wire``."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from service import wire
from service.api import create_app
from service.settings import Settings

RECORDED = Path(__file__).with_name("openapi_wire.json")


def _wire_models() -> list[str]:
    return sorted(
        name
        for name, c in vars(wire).items()
        if inspect.isclass(c) and issubclass(c, wire.ApiModel) and c is not wire.ApiModel and c.__module__ == wire.__name__
    )


def _app(tmp: Path) -> FastAPI:
    return create_app(Settings(database_url=f"sqlite:///{tmp / 'c.db'}", warehouse_roots=[str(tmp)]))


def shapes(doc: dict[str, Any]) -> dict[str, Any]:
    """What is recorded of an OpenAPI document: the wire models' schemas, and each operation's
    JSON answer schema."""
    answers = {
        op["operationId"]: schema
        for item in doc["paths"].values()
        for op in item.values()
        if (schema := op["responses"].get("200", {}).get("content", {}).get("application/json", {}).get("schema"))
    }
    return {"schemas": {n: doc["components"]["schemas"][n] for n in _wire_models()}, "responses": answers}


def test_every_wire_model_is_in_the_document(tmp_path: Path) -> None:
    schemas = _app(tmp_path).openapi()["components"]["schemas"]
    assert [n for n in _wire_models() if n not in schemas] == []


def test_the_response_shapes_are_the_recorded_ones(tmp_path: Path) -> None:
    got = json.loads(json.dumps(shapes(_app(tmp_path).openapi())))  # tuples as the JSON file has them
    assert got == json.loads(RECORDED.read_text())


def test_min_snapshot_id_is_declared_once_for_every_read_taking_it(tmp_path: Path) -> None:
    """One declaration (service/api/tables.py's ``MinSnapshotId``), so one parameter in the document:
    a second copy would drift from it (its bounds, its description)."""
    import service.api

    doc = _app(tmp_path).openapi()
    taking = {
        op["operationId"]: json.dumps(p, sort_keys=True)
        for item in doc["paths"].values()
        for op in item.values()
        for p in op.get("parameters", [])
        if p["name"] == "min-snapshot-id"
    }
    assert "loadTable" in taking and len(taking) >= 5 and len(set(taking.values())) == 1
    declared = [
        f.name for f in Path(service.api.__file__).parent.glob("*.py") if 'alias="min-snapshot-id"' in f.read_text()
    ]
    assert declared == ["tables.py"]


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        RECORDED.write_text(json.dumps(shapes(_app(Path(d)).openapi()), indent=1, sort_keys=True) + "\n")
