"""The README's object-store table is true: every environment variable it names for a cloud is one
its store module reads (``ENV_VARS``), and every variable a module passes on to obstore is a key
obstore's store of that cloud accepts (an unknown key makes obstore refuse the whole store: a user
who merely had it set could read nothing)."""

from __future__ import annotations

import re
from types import ModuleType

import pytest

from service.storage.objects import azure_config, gcs, s3
from tests.storage.emulators import REPO

#: The README table's rows, by the first cell, and the module that reads each cloud's environment.
ROWS = {"S3 (and MinIO, Ceph, moto)": s3, "Azure Blob": azure_config, "GCS": gcs}
_VAR = re.compile(r"`((?:AWS|AZURE|GOOGLE|STORAGE)_[A-Z0-9_]*(?:\[_[A-Z0-9]+\])?)`")


def readme_rows() -> dict[str, list[str]]:
    """The variables each row of the object-store table names (``X[_S3]`` is both ``X`` and ``X_S3``)."""
    out: dict[str, list[str]] = {}
    text = (REPO / "README.md").read_text()
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and cells[0] in ROWS:
            names = []
            for m in _VAR.finditer(cells[-1]):
                base, _, opt = m.group(1).partition("[")
                names += [base, base + opt.rstrip("]")] if opt else [base]
            out[cells[0]] = names
    return out


def test_the_table_has_every_cloud() -> None:
    rows = readme_rows()
    assert set(rows) == set(ROWS)
    assert all(len(names) >= 4 for names in rows.values()), rows


@pytest.mark.parametrize("row", list(ROWS))
def test_every_variable_the_readme_names_is_read(row: str) -> None:
    module = ROWS[row]
    unread = [v for v in readme_rows()[row] if v not in module.ENV_VARS]
    assert not unread, f"README names {unread} for {row}, which {module.__name__}.ENV_VARS does not read"


def _accepts(module: ModuleType, config: dict[str, str]) -> str | None:
    """obstore's refusal of ``config`` as an unknown key, or None."""
    from obstore.exceptions import UnknownConfigurationKeyError
    from obstore.store import AzureStore, GCSStore, S3Store

    cls = {s3: S3Store, azure_config: AzureStore, gcs: GCSStore}[module]
    try:
        cls("bucket", config=config)  # type: ignore[operator]
    except UnknownConfigurationKeyError as e:
        return str(e).splitlines()[0]
    except Exception:  # a value obstore cannot use (no such file, ...): the key itself was taken
        pass
    return None


@pytest.mark.parametrize("module", [s3, azure_config, gcs], ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_every_variable_passed_to_obstore_is_a_key_it_accepts(module: ModuleType) -> None:
    values = {"AWS_REGION": "us-east-1", "AZURE_STORAGE_ACCOUNT_NAME": "acct", "STORAGE_EMULATOR_HOST": "127.0.0.1:1"}
    refused = []
    for var in module.ENV_VARS:
        env = {**{k: v for k, v in values.items() if k in module.ENV_VARS}, var: values.get(var, "x")}
        if var == "AZURE_STORAGE_CONNECTION_STRING":
            env = {var: "AccountName=acct;AccountKey=a2V5"}
        try:
            config = module.obstore_config(env)
        except Exception:  # a value shredcat itself refuses ("x" is no URL): nothing reaches obstore
            continue
        why = _accepts(module, config)
        if why is not None:
            refused.append(f"{var}: {why}")
    assert not refused, refused
