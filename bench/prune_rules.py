"""The proof table of the pruning rules: a Spark-written, partitioned registry-listing table,
predicates a user of it writes, Spark's own answer per predicate, and the share of match-free
(predicate, file) pairs the catalog excludes, by kind of predicate, with zero false prunes.

    .venv/bin/python bench/prune_rules.py write --out /tmp/lake     # Spark: table + ground truth
    .venv/bin/python bench/prune_rules.py plan --out /tmp/lake --result after.json
    /work/main/.venv/bin/python bench/prune_rules.py plan --out /tmp/lake --result before.json
    .venv/bin/python bench/prune_rules.py report --out /tmp/lake before.json after.json
    .venv/bin/python bench/prune_rules.py absent --out /tmp/lake after.json --result absent.json

``write`` generates public-registry-like listings (names, versions, summaries, ranks, downloads;
PyPI, npm, crates.io, RubyGems) with a seeded generator, writes them with Spark
(``partitionBy("registry", "year")``, the Variant ``v`` shredded by Spark per file, inferred from
each file's rows) and records, per predicate, Spark's ``_metadata.file_path`` of the selected rows
(the ground truth). ``plan`` registers the files in a fresh SQLite catalog with the interpreter
that runs it (run it with another checkout's interpreter for "before": this script imports
``service`` from wherever that interpreter finds it) and records each predicate's candidates.
``report`` prints the table: per kind, match-free pairs, excluded, false prunes.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

REGISTRIES = ["pypi", "npm", "crates", "rubygems"]
WORDS = [
    "Python", "fast", "async", "http", "client", "library", "parser", "json", "web", "framework",
    "test", "plugin", "cli", "tool", "data", "cloud", "aws", "sdk", "typed", "rust", "binding",
    "api", "server", "logging", "config", "yaml", "database", "orm", "image", "crypto",
]
STEMS = [
    "pytest", "boto3", "botocore", "requests", "numpy", "django", "flask", "react", "lodash",
    "express", "serde", "tokio", "rails", "rack", "aws", "azure", "google", "types", "babel", "eslint",
    "vue", "chalk", "clap", "rand", "nokogiri", "puma", "sphinx", "click", "attrs", "pydantic",
]

# (kind, predicate): kinds as in the issue (partition, plain, mixed, opaque, variant).
PREDICATES: list[tuple[str, str]] = [
    ("partition", "registry = 'npm'"),
    ("partition", "year >= 2023"),
    ("partition", "registry = 'crates' AND year = 2019"),
    ("partition", "year BETWEEN 2012 AND 2013"),
    ("partition", "registry IN ('pypi', 'rubygems') AND year < 2012"),
    ("plain", "rank <= 10"),
    ("plain", "downloads > 50000000"),
    ("plain", "name = 'boto3'"),
    ("plain", "name LIKE 'pytest-%'"),
    ("plain", "startswith(name, 'boto3')"),
    ("plain", "name LIKE 'serde%'"),
    ("plain", "rank BETWEEN 5000 AND 5100"),
    ("plain", "version = '1.0.0'"),
    ("plain", "downloads < 100"),
    ("mixed", "registry = 'pypi' AND variant_get(v, '$.rank', 'int') <= 10"),
    ("mixed", "year = 2020 AND name LIKE 'react%'"),
    ("mixed", "registry = 'npm' AND variant_get(v, '$.scoped', 'boolean') = true"),
    ("mixed", "rank < 100 AND variant_get(v, '$.version.major', 'double') > 20"),
    ("mixed", "year >= 2024 AND v:words[0]::string = 'Python'"),
    ("mixed", "registry = 'crates' AND startswith(variant_get(v, '$.name', 'string'), 'tokio')"),
    ("opaque", "length(name) > 40"),
    ("opaque", "upper(name) = 'BOTO3'"),
    ("opaque", "rank % 1000 = 0"),
    ("opaque", "name LIKE '%sdk%'"),
    ("opaque", "lower(variant_get(v, '$.license', 'string')) = 'mit'"),
    ("variant", "variant_get(v, '$.rank', 'int') <= 10"),
    ("variant", "variant_get(v, '$.rank', 'smallint') <= 10"),
    ("variant", "variant_get(v, '$.rank', 'bigint') <= 10"),
    ("variant", "try_variant_get(v, '$.rank', 'int') BETWEEN 20000 AND 20100"),
    ("variant", "variant_get(v, '$.rank', 'tinyint') = 7"),
    ("variant", "variant_get(v, '$.downloads', 'int') > 1000000"),
    ("variant", "variant_get(v, '$.version.major', 'double') > 100"),
    ("variant", "variant_get(v, '$.version.major', 'decimal(10,2)') >= 40"),
    ("variant", "variant_get(v, '$.version.major', 'float') > 30.5"),
    ("variant", "variant_get(v, '$.version.minor', 'int') = 99"),
    ("variant", "v:words[0]::string = 'Python'"),
    ("variant", "variant_get(v, '$.words[0]', 'string') = 'zzz'"),
    ("variant", "variant_get(v, '$.scoped', 'boolean') = true"),
    ("variant", "variant_get(v, '$.scoped', 'boolean') IS NOT NULL"),
    ("variant", "variant_get(v, '$.edition', 'string') = '2021'"),
    ("variant", "variant_get(v, '$.name', 'string') LIKE 'pytest-%'"),
    ("variant", "startswith(variant_get(v, '$.name', 'string'), 'boto3')"),
    ("variant", "variant_get(v, '$.name', 'string') LIKE 'aws!_%' ESCAPE '!'"),
    ("variant", "variant_get(v, '$.rank', 'string') = '42'"),
    ("variant", "variant_get(v, '$.rank', 'string') IN ('1', '2', '3')"),
    ("variant", "variant_get(v, '$.downloads', 'bigint') > 200000000"),
    ("variant", "variant_get(v, '$.license', 'string') = 'GPL-3.0'"),
    ("variant", "variant_get(v, '$.rank', 'decimal(8,1)') < 2.5"),
]


def _listing(rng: random.Random, registry: str, rank: int) -> dict[str, Any]:
    stem = rng.choice(STEMS)
    sep = {"pypi": "-", "npm": "-", "crates": "_", "rubygems": "-"}[registry]
    name = stem if rng.random() < 0.05 else f"{stem}{sep}{rng.choice(WORDS).lower()}{rng.randint(0, 999)}"
    if registry == "npm" and rng.random() < 0.3:
        name = f"@{rng.choice(STEMS)}/{name}"
    downloads = max(1, int(4e8 / (rank ** 1.1)) + rng.randint(0, 50))
    major = min(int(rng.paretovariate(1.2)) - 1, 400)
    words = rng.sample(WORDS, rng.randint(1, 5))
    if registry == "pypi" and rng.random() < 0.4:
        words[0] = "Python"
    v: dict[str, Any] = {
        "name": name,
        "rank": rank,
        "downloads": downloads,
        "version": {"major": major, "minor": rng.randint(0, 99), "patch": rng.randint(0, 30)},
        "summary": " ".join(words),
        "words": words,
        "license": rng.choice(["MIT", "Apache-2.0", "BSD-3-Clause", "GPL-3.0", "ISC"]),
    }
    if registry == "npm":
        v["scoped"] = name.startswith("@")
    if registry == "crates":
        v["edition"] = rng.choice(["2015", "2018", "2021", "2024"])
    return v


def _rows(n: int, seed: int) -> list[tuple[Any, ...]]:
    rng = random.Random(seed)
    out = []
    per = n // len(REGISTRIES)
    for registry in REGISTRIES:
        for rank in range(1, per + 1):
            v = _listing(rng, registry, rank)
            # Older packages rank higher, loosely: the year partition is correlated with rank.
            year = max(2010, min(2025, 2010 + int(15 * (rank / per) ** 0.7) + rng.randint(-2, 2)))
            version = f"{v['version']['major']}.{v['version']['minor']}.{v['version']['patch']}"
            out.append((registry, year, v["name"], version, v["summary"], rank, v["downloads"], json.dumps(v)))
    return out


def _local(uri: str) -> str:
    return unquote(urlparse(uri).path) if uri.startswith("file:") else uri


def write(out: Path, rows: int, files: int, seed: int, reuse: bool) -> None:
    from service.spark import local_session

    spark = local_session("prune-rules", driver_memory="1g")
    data = _rows(rows, seed)
    df = spark.createDataFrame(
        data, "registry string, year int, name string, version string, summary string, rank int, downloads bigint, j string"
    ).selectExpr("registry", "year", "name", "version", "summary", "rank", "downloads", "parse_json(j) AS v")
    table = out / "listings"
    t0 = time.perf_counter()
    if not (reuse and (table / "_SUCCESS").exists()):
        (
            df.repartitionByRange(files, "registry", "year", "rank")
            .sortWithinPartitions("registry", "year", "rank")
            .write.mode("overwrite")
            .partitionBy("registry", "year")
            .parquet(str(table))
        )
    written = time.perf_counter() - t0
    full = spark.read.parquet(str(table))
    truth: dict[str, list[str]] = {}
    raised: list[str] = []
    for _, pred in PREDICATES:
        try:
            sel = full.where(pred).select(full["_metadata.file_path"].alias("f")).distinct().collect()
        except Exception:
            # variant_get fails on a value its type cannot hold (INVALID_VARIANT_CAST): Spark
            # answers nothing. The files try_variant_get selects are then the ones to keep.
            raised.append(pred)
            loose = pred.replace("variant_get(", "try_variant_get(").replace("try_try_", "try_")
            sel = full.where(loose).select(full["_metadata.file_path"].alias("f")).distinct().collect()
        truth[pred] = sorted(str(Path(_local(r.f)).resolve()) for r in sel)
    paths = sorted(str(p.resolve()) for p in table.rglob("*.parquet"))
    (out / "truth.json").write_text(
        json.dumps(
            {"rows": len(data), "files": paths, "truth": truth, "raised": raised, "write_seconds": written}, indent=1
        )
    )
    print(f"{len(data)} rows, {len(paths)} files in {table} ({written:.1f} s); truth for {len(truth)} predicates")
    spark.stop()


def plan(out: Path, result: Path) -> None:
    import service
    from service.catalog import Catalog
    from service.pruning.parse_sql import parse_sql

    doc = json.loads((out / "truth.json").read_text())
    from service.catalog.db import upgrade_to_head

    with tempfile.TemporaryDirectory() as d:
        upgrade_to_head(f"sqlite:///{d}/c.db")
        got = _plan_all(Catalog(f"sqlite:///{d}/c.db"), doc, parse_sql)
    result.write_text(json.dumps({"service": service.__file__, "candidates": got}, indent=1))
    print(f"planned {len(got)} predicates with {service.__file__} -> {result}")


def _plan_all(cat: Any, doc: dict[str, Any], parse_sql: Any) -> dict[str, list[str]]:
    got: dict[str, list[str]] = {}
    with cat:
        cat.register("lake", "listings", doc["files"])
        for _, pred in PREDICATES:
            try:
                kept = [
                    c.path
                    for c in cat.iter_candidates("lake", "listings", lambda schema, p=pred: parse_sql(p, schema=schema))
                ]
            except Exception as e:  # a predicate the build refuses keeps every file
                print(f"{pred}: {type(e).__name__}: {e}", file=sys.stderr)
                kept = list(doc["files"])
            got[pred] = sorted(kept)
    return got


def absent(out: Path, base: Path, result: Path) -> None:
    """The absent-field rule on top of a ``plan`` result: each candidate of ``base`` is dropped
    when the per-file evaluator, given the file's Variant stats and its fully shredded objects
    (footer only), proves the predicate never TRUE there. The catalog does not record the objects
    yet, so this is the rule's effect measured outside it (both pruners are sound on their own)."""
    from service.catalog import Catalog
    from service.catalog.db import upgrade_to_head
    from service.pruning.absent import objects_by_path
    from service.pruning.evaluator import FileEvaluator, stats_by_path
    from service.pruning.parse_sql import parse_sql
    from service.stats.extract import extract_file
    from service.stats.objects import file_objects

    doc = json.loads((out / "truth.json").read_text())
    kept = json.loads(base.read_text())["candidates"]
    files = {f: (stats_by_path(extract_file(f).paths), objects_by_path(file_objects(f))) for f in doc["files"]}
    proven = sum(1 for _, objects in files.values() if objects)
    schemas: list[Any] = []
    with tempfile.TemporaryDirectory() as d:
        upgrade_to_head(f"sqlite:///{d}/c.db")
        with Catalog(f"sqlite:///{d}/c.db") as cat:
            cat.register("lake", "listings", doc["files"][:1])
            def everything(schema: Any) -> Any:
                schemas.append(schema)  # the schema the catalog binds against, kept for the caller
                return parse_sql("true")

            for _ in cat.iter_candidates("lake", "listings", everything):
                break
    got: dict[str, list[str]] = {}
    for _, pred in PREDICATES:
        try:
            ev = FileEvaluator(parse_sql(pred, schema=schemas[0]))
        except Exception:  # the catalog's plan refused it too, or it has columns the one file lacks
            got[pred] = kept[pred]
            continue
        got[pred] = [f for f in kept[pred] if ev.evaluate(*files[f]).might_match]
    result.write_text(json.dumps({"service": "absent-field rule over " + str(base), "candidates": got}, indent=1))
    print(f"{proven} of {len(files)} files have a fully shredded object; {len(got)} predicates -> {result}")


def _score(doc: dict[str, Any], cands: dict[str, list[str]]) -> dict[str, dict[str, int]]:
    files = doc["files"]
    out: dict[str, dict[str, int]] = {}
    for kind, _ in [*PREDICATES, ("all", "")]:
        out.setdefault(kind, {"predicates": 0, "pairs": 0, "match_free": 0, "excluded": 0, "false": 0})
    for kind, pred in PREDICATES:
        truth, kept = set(doc["truth"][pred]), set(cands[pred])
        for k in (kind, "all"):
            s = out[k]
            s["predicates"] += 1
            for f in files:
                s["pairs"] += 1
                if f not in truth:
                    s["match_free"] += 1
                    s["excluded"] += f not in kept
                elif f not in kept:
                    s["false"] += 1
    return out


def report(out: Path, results: list[Path]) -> None:
    doc = json.loads((out / "truth.json").read_text())
    scores = [(r.name, _score(doc, json.loads(r.read_text())["candidates"])) for r in results]
    print(f"{doc['rows']:,} rows, {len(doc['files'])} files, {len(PREDICATES)} predicates")
    print("| kind | predicates | pairs | match-free | " + " | ".join(f"excluded ({n})" for n, _ in scores) + " | false prunes |")
    print("|---|---:|---:|---:|" + "---:|" * len(scores) + "---:|")
    for kind in ["partition", "plain", "mixed", "opaque", "variant", "all"]:
        first = scores[0][1][kind]
        cells = [f"{s[kind]['excluded']:,} ({100 * s[kind]['excluded'] / max(1, s[kind]['match_free']):.0f} %)" for _, s in scores]
        false = " / ".join(str(s[kind]["false"]) for _, s in scores)
        print(f"| {kind} | {first['predicates']} | {first['pairs']:,} | {first['match_free']:,} | " + " | ".join(cells) + f" | {false} |")
    if len(scores) == 2:
        print("\nper predicate (match-free pairs excluded, before → after):")
        before, after = (json.loads(r.read_text())["candidates"] for r in results)
        files = set(doc["files"])
        for kind, pred in PREDICATES:
            free = files - set(doc["truth"][pred])
            b = len(free - set(before[pred]))
            a = len(free - set(after[pred]))
            if a != b:
                print(f"  [{kind}] {pred}: {b} → {a} of {len(free)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("phase", choices=["write", "plan", "absent", "report"])
    ap.add_argument("results", nargs="*", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--result", type=Path)
    ap.add_argument("--rows", type=int, default=147_696)
    ap.add_argument("--files", type=int, default=60)
    ap.add_argument("--seed", type=int, default=34)
    ap.add_argument("--reuse", action="store_true", help="keep a table already written under --out")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    if a.phase == "write":
        write(a.out, a.rows, a.files, a.seed, a.reuse)
    elif a.phase == "plan":
        plan(a.out, a.result or a.out / "result.json")
    elif a.phase == "absent":
        absent(a.out, a.results[0], a.result or a.out / "absent.json")
    else:
        report(a.out, a.results)


if __name__ == "__main__":
    main()
