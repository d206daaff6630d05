# syntax=docker/dockerfile:1
# shredcat: the REST API (`shredcat serve`) and the schema migrations (`shredcat migrate`).
#
#   docker build -t shredcat .
#   docker run --rm -e SHREDCAT_DATABASE_URL=postgresql://... shredcat migrate        # explicit step
#   docker run -p 8181:8181 -e SHREDCAT_DATABASE_URL=... -e SHREDCAT_TOKENS=... shredcat
#
# The server never creates or upgrades the schema: run `migrate` once per upgrade, before the new
# servers start (docker-compose.yml does it with a one-shot service). Settings: README "Production".

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --- build: a virtualenv with the runtime dependencies and shredcat itself ------------------------
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
# A C compiler for the footer decoder's accelerator (service/parquet/_compact.c); only in this stage.
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/shredcat
ENV PATH=/opt/shredcat/bin:$PATH
WORKDIR /app
# Runtime dependencies only ([project.dependencies]; no dev, Spark or test extras), in their own
# layer so that a code change does not reinstall them.
COPY pyproject.toml README.md ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt
COPY alembic.ini ./
COPY migrations ./migrations
COPY service ./service
# Editable: the package is used from /app, where migrations/ sits beside it (a plain install would
# carry them too, under <prefix>/share/shredcat/migrations).
RUN pip install --no-deps -e . \
    && python -c "from service.parquet.footer import ACCELERATED; assert ACCELERATED, 'C accelerator not built'" \
    && python -m compileall -q /app/service /app/migrations

# --- runtime ---------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE}
ENV PATH=/opt/shredcat/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    SHREDCAT_LOG_FORMAT=json
RUN groupadd --system --gid 10001 shredcat \
    && useradd --system --uid 10001 --gid shredcat --home-dir /app --no-create-home --shell /usr/sbin/nologin shredcat
COPY --from=build /opt/shredcat /opt/shredcat
COPY --from=build /app /app
WORKDIR /app
USER 10001:10001
EXPOSE 8181
# Readiness: the database answers and its schema is at this image's head revision.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8181/health', timeout=4).status != 200)"]
ENTRYPOINT ["shredcat"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8181", "--workers", "2"]
