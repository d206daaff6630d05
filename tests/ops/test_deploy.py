"""Deployment files, tested without a Docker engine (none runs here):

* ``docker-compose.yml`` parses (PyYAML) and has what production needs: PostgreSQL with a volume and
  a health check, a one-shot ``migrate`` service, shredcat with several workers depending on both,
  the warehouse mounted read-only; every ``SHREDCAT_*`` variable it sets is a real setting and the
  values validate.
* ``Dockerfile``: slim base, non-root user, runtime dependencies only, ``HEALTHCHECK`` on
  ``/health``, no implicit migration; ``.dockerignore`` lets in exactly what it copies.
* The image's commands themselves run here against the local PostgreSQL: its ``CMD`` (``shredcat
  serve --workers 2``) answers 503 on an unmigrated database (the server never migrates), the
  explicit step (``shredcat migrate``, the compose ``migrate`` command) fixes that, and the
  image's own ``HEALTHCHECK`` command then passes; the server's log lines are JSON with request ids.
* The README's Production section documents every setting.
"""

from __future__ import annotations

import fnmatch
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from service.settings import Settings
from tests.ops.support import REPO, TOKENS, free_port, fresh_database, server_env
from tests.support.server import shredcat_cmd

SETTINGS = set(Settings.model_fields)


def _compose() -> dict[str, Any]:
    return yaml.safe_load((REPO / "docker-compose.yml").read_text())


def _interpolate(value: str, given: dict[str, str]) -> str:
    """Compose's ``${VAR}``, ``${VAR:-default}`` and ``${VAR:?error}``: ``given`` or the default."""

    def sub(m: re.Match[str]) -> str:
        name, op, arg = m.group(1), m.group(2), m.group(3)
        if name in given:
            return given[name]
        if op == ":-":
            return arg or ""
        raise AssertionError(f"${{{name}}} has no default and the test gives none")

    return re.sub(r"\$\{(\w+)(?:(:[-?])([^}]*))?\}", sub, value)


def _dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", (REPO / "Dockerfile").read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def _final_stage() -> list[tuple[str, str]]:
    steps = _dockerfile()
    last_from = max(i for i, (k, _) in enumerate(steps) if k == "FROM")
    return steps[last_from:]


def _exec_form(args: str) -> list[str]:
    v = json.loads(args)
    assert isinstance(v, list) and all(isinstance(x, str) for x in v), args
    return v


def _image_command() -> tuple[list[str], list[str]]:
    final = _final_stage()
    entry = _exec_form(next(a for k, a in final if k == "ENTRYPOINT"))
    cmd = _exec_form(next(a for k, a in final if k == "CMD"))
    return entry, cmd


def _healthcheck_command() -> list[str]:
    args = next(a for k, a in _final_stage() if k == "HEALTHCHECK")
    return _exec_form(args.split("CMD", 1)[1].strip())


# --- docker-compose.yml -----------------------------------------------------------------------------


def test_compose_services_volumes_and_health_checks() -> None:
    doc = _compose()
    services = doc["services"]
    assert set(services) == {"postgres", "migrate", "shredcat"}
    pg, migrate, app = services["postgres"], services["migrate"], services["shredcat"]
    # PostgreSQL: its data on a named volume, a real readiness check.
    assert pg["image"].startswith("postgres:")
    volumes = {v.split(":")[0]: v.split(":")[1] for v in pg["volumes"]}
    assert volumes.get("pgdata") == "/var/lib/postgresql/data" and "pgdata" in doc["volumes"]
    assert "pg_isready" in " ".join(pg["healthcheck"]["test"])
    # migrate: the explicit, one-shot step, after PostgreSQL is healthy.
    assert migrate["command"] == ["migrate"] and migrate["restart"] == "no"
    assert migrate["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert migrate.get("build") == "." and migrate["image"] == app["image"]  # built once, used twice
    # shredcat: several workers, after PostgreSQL is healthy and the migration has succeeded.
    from service.cli import build_parser

    args = build_parser().parse_args(app["command"])
    assert args.command == "serve" and args.workers >= 2 and args.host == "0.0.0.0"
    assert app["depends_on"] == {
        "postgres": {"condition": "service_healthy"},
        "migrate": {"condition": "service_completed_successfully"},
    }
    assert "/health" in " ".join(app["healthcheck"]["test"])
    assert f"{args.port}:{args.port}" in app["ports"]
    # The warehouse: mounted read-only where SHREDCAT_WAREHOUSE_ROOTS points.
    roots = json.loads(app["environment"]["SHREDCAT_WAREHOUSE_ROOTS"])
    mounts = [v.split(":") for v in app["volumes"]]
    ro = [target for *_, target, mode in (m for m in mounts if len(m) >= 3) if mode == "ro"]
    assert roots and set(roots) <= set(ro)
    # The database URL is the same for both and points at the postgres service.
    assert migrate["environment"]["SHREDCAT_DATABASE_URL"] == app["environment"]["SHREDCAT_DATABASE_URL"]
    assert "@postgres:5432/" in app["environment"]["SHREDCAT_DATABASE_URL"]


def test_compose_names_only_real_settings() -> None:
    given = {"SHREDCAT_TOKENS": json.dumps({"0" * 64: "admin"})}
    seen = set()
    for name, service in _compose()["services"].items():
        env = service.get("environment", {})
        assert isinstance(env, dict), f"{name}: use the mapping form of environment"
        values = {}
        for key, value in env.items():
            if key.startswith("SHREDCAT_"):
                field = key.removeprefix("SHREDCAT_").lower()
                assert field in SETTINGS, f"{name}: {key} is not a setting of service.settings.Settings"
                values[field] = _interpolate(str(value), given)
                seen.add(field)
        if values:
            # The values validate (JSON lists/objects parsed as the settings do).
            s = Settings.model_validate(
                {k: json.loads(v) if v[:1] in "[{" else v for k, v in values.items()}
            )
            assert s.database_url.startswith("postgresql://")
    assert {"database_url", "tokens", "warehouse_roots", "log_format"} <= seen


def test_compose_file_validates_with_docker_compose_when_installed(tmp_path: Path) -> None:
    probe = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True, check=False) \
        if _has_docker() else None
    if probe is None or probe.returncode != 0:
        pytest.skip("the docker compose plugin is not installed here (PyYAML checks above still ran)")
    r = subprocess.run(
        ["docker", "compose", "-f", str(REPO / "docker-compose.yml"), "config", "-q"],
        env={"SHREDCAT_TOKENS": "{}", "PATH": "/usr/local/bin:/usr/bin:/bin"},
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert r.returncode == 0, r.stderr


def _has_docker() -> bool:
    import shutil

    return shutil.which("docker") is not None


# --- Dockerfile and .dockerignore ------------------------------------------------------------------------


def test_dockerfile_is_slim_non_root_and_checks_health() -> None:
    steps = _dockerfile()
    froms = [a for k, a in steps if k == "FROM"]
    args = dict(a.split("=", 1) for k, a in steps if k == "ARG" and "=" in a)
    bases = [re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], f.split()[0]) for f in froms]
    assert all(re.fullmatch(r"python:3\.1[1-9]-slim(-\w+)?", b) for b in bases), bases
    final = _final_stage()
    user = [a for k, a in final if k == "USER"]
    assert user and user[-1].split(":")[0] not in ("root", "0")
    health = _healthcheck_command()
    assert "/health" in " ".join(health) and "--interval" in next(a for k, a in final if k == "HEALTHCHECK")
    entry, cmd = _image_command()
    assert entry == ["shredcat"]
    assert cmd[0] == "serve" and "migrate" not in entry + cmd  # migrating is an explicit step
    from service.cli import build_parser

    parsed = build_parser().parse_args(cmd)
    assert parsed.workers >= 2 and parsed.host == "0.0.0.0"
    assert f"{parsed.port}" in " ".join(health)
    # Runtime dependencies only: no extras, no test or dev tools.
    runs = " ".join(a for k, a in steps if k == "RUN")
    assert "[project]" not in runs and "optional-dependencies" not in runs
    assert not re.search(r"\.\[|pytest|ruff|hypothesis|duckdb|pyspark|playwright", runs), runs
    # The footer decoder's C accelerator is compiled in the build stage, which checks that it was
    # built; the final image carries no compiler.
    assert "gcc" in runs and "ACCELERATED" in runs
    assert not any("gcc" in a for k, a in final if k == "RUN")
    for k, a in steps:
        if k == "ENV":
            for name in re.findall(r"\b(SHREDCAT_\w+)=", a):
                assert name.removeprefix("SHREDCAT_").lower() in SETTINGS, name


def _ignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parent directories wins."""
    parts = path.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for p in patterns:
        neg = p.startswith("!")
        pat = p[1:] if neg else p
        regex = fnmatch.translate(pat).replace(".*", "[^/]*")
        if pat.startswith("**/"):
            regex = "(?:.*/)?" + fnmatch.translate(pat[3:]).replace(".*", "[^/]*")
        if any(re.match(regex, c) for c in candidates):
            ignored = not neg
    return ignored


def test_dockerignore_lets_in_exactly_what_the_image_copies() -> None:
    patterns = [
        line.strip() for line in (REPO / ".dockerignore").read_text().splitlines() if line.strip() and not line.startswith("#")
    ]
    copied = []
    for k, a in _dockerfile():
        if k == "COPY" and "--from" not in a:
            copied.extend(a.split()[:-1])
    assert {"pyproject.toml", "README.md", "service", "migrations"} <= set(copied)
    for src in copied:
        p = REPO / src
        assert p.exists(), src
        files = [p] if p.is_file() else [f for f in p.rglob("*") if f.is_file() and "__pycache__" not in f.parts]
        for f in files:
            assert not _ignored(f.relative_to(REPO).as_posix(), patterns), f
    for kept_out in (".venv/bin/python", ".git/HEAD", "tests/conftest.py", "bench/load.py", "demo-data/x.parquet",
                     "shredcat.db", "service/__pycache__/x.pyc", ".hypothesis/x", "docs/ducklake-format.md"):
        assert _ignored(kept_out, patterns), kept_out


# --- the image's commands, run here --------------------------------------------------------------------


def _run_healthcheck(port: int) -> int:
    cmd = [c.replace("8181", str(port)) for c in _healthcheck_command()]
    assert cmd[0] == "python"
    return subprocess.run([sys.executable, *cmd[1:]], capture_output=True, timeout=30, check=False).returncode


@pytest.mark.slow
@pytest.mark.postgres
def test_the_images_commands_run_against_postgres(tmp_path: Path) -> None:
    import httpx

    from tests.conftest import PG_ADMIN_URL, require_postgres

    require_postgres()
    entry, cmd = _image_command()
    assert entry == ["shredcat"]
    migrate_cmd = _compose()["services"]["migrate"]["command"]
    port = free_port()
    serve = [*cmd]
    serve[serve.index("--host") + 1] = "127.0.0.1"
    serve[serve.index("--port") + 1] = str(port)
    with fresh_database(PG_ADMIN_URL, "shredcat_image") as url:
        env = server_env(url)
        log_path = tmp_path / "server.log"
        with log_path.open("wb") as log:
            proc = subprocess.Popen([*shredcat_cmd(), *serve], env=env, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            base = f"http://127.0.0.1:{port}"
            try:
                # The server starts on an empty database and does not migrate it: /health says so.
                deadline = time.monotonic() + 60
                while True:
                    assert proc.poll() is None, log_path.read_text()
                    try:
                        r = httpx.get(base + "/health", timeout=2)
                        break
                    except httpx.TransportError:
                        assert time.monotonic() < deadline, "shredcat serve never answered"
                        time.sleep(0.1)
                assert r.status_code == 503 and r.json()["error"]["type"] == "schema_not_migrated"
                assert _run_healthcheck(port) != 0
                # The explicit step, exactly as the compose file runs it.
                m = subprocess.run([*shredcat_cmd(), *migrate_cmd], env=env, capture_output=True, text=True,
                                   timeout=120, check=False)
                assert m.returncode == 0, m.stderr
                assert "catalog schema at revision" in m.stdout
                # Every worker is healthy now, without a restart (several requests reach both).
                for _ in range(6):
                    assert httpx.get(base + "/health", timeout=5).status_code == 200
                assert _run_healthcheck(port) == 0
                r = httpx.get(base + "/v1/namespaces", headers={"Authorization": f"Bearer {TOKENS['reader']}",
                                                                "X-Request-ID": "image-test-1"}, timeout=5)
                assert r.status_code == 200 and r.headers["x-request-id"] == "image-test-1"
                time.sleep(0.3)
            finally:
                import os
                import signal

                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=10)
    lines = [json.loads(line) for line in log_path.read_text().splitlines() if line.strip()]
    assert lines and all({"ts", "level", "logger", "message", "request_id"} <= set(x) for x in lines)
    pids = {x["message"] for x in lines if x["message"].startswith("Started server process")}
    assert len(pids) == 2  # two workers
    access = [x for x in lines if x["logger"] == "shredcat.access"]
    assert any(x["request_id"] == "image-test-1" and x["status"] == 200 and x["path"] == "/v1/namespaces" for x in access)
    assert any(x["status"] == 503 and x["path"] == "/health" for x in access)
    assert all(isinstance(x["request_id"], str) and x["duration_ms"] >= 0 for x in access)
    assert not any("Traceback" in (x.get("exc_info") or "") for x in lines)


# --- README ---------------------------------------------------------------------------------------------


def test_readme_production_section_documents_every_setting() -> None:
    text = (REPO / "README.md").read_text()
    m = re.search(r"^## Production\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert m, "README.md has no '## Production' section"
    section = m.group(1)
    missing = [f for f in sorted(SETTINGS) if f"`SHREDCAT_{f.upper()}`" not in section]
    assert missing == [], f"settings missing from README 'Production': {missing}"
    for topic in ("shredcat migrate", "pg_dump", "workers", "docker compose"):
        assert topic in section, topic
