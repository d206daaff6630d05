"""What an idempotency key stores of its commit's result: bounded whatever the commit's size.

A key replays only for the same request (its hash matches, whatever the order of its paths), so
the result's path lists need not be stored: each is a selection of the request's own paths (files
added, unchanged or restated among the files given; removed or missing among the paths to
remove). The stored form is the snapshot id, one category per distinct path in sorted order,
run-length encoded (``a`` added, ``u`` unchanged, ``r`` restated; ``x`` removed, ``m`` missing),
the counts, and a sha256 of the result's lists, checked when they are rebuilt. A replay lists the
paths in the order of the replaying request (the original's, when it is the same request sent
again). A 10,000-path removal whose paths were all missing stores
some 150 bytes where the full result took 20 MB; at worst (alternating categories) about 3 bytes
per path. Results stored whole by earlier versions still replay.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence

from service.catalog.results import CommitResult
from service.errors import InvalidStatsError

_FORM = 2
_RUN = re.compile(r"([aurxm])(\d+)")


def _digest(r: CommitResult) -> str:
    """Of the snapshot and each list's distinct paths, in sorted order."""
    lists = [sorted(set(x)) for x in (r.added, r.unchanged, r.restated, r.removed, r.missing)]
    return hashlib.sha256(json.dumps([r.snapshot_id, lists], ensure_ascii=False).encode("utf-8")).hexdigest()


def _runs(categories: Sequence[str]) -> str:
    out: list[str] = []
    i = 0
    while i < len(categories):
        j = i
        while j < len(categories) and categories[j] == categories[i]:
            j += 1
        out.append(f"{categories[i]}{j - i}")
        i = j
    return "".join(out)


def _expand(runs: str, n: int) -> list[str]:
    out: list[str] = []
    pos = 0
    for m in _RUN.finditer(runs):
        if m.start() != pos:
            raise ValueError("bad runs")
        pos = m.end()
        out.extend(m.group(1) * int(m.group(2)))
        if len(out) > n:
            raise ValueError("more categories than paths")
    if pos != len(runs) or len(out) != n:
        raise ValueError("runs do not cover the paths")
    return out


def encode(r: CommitResult, files: Sequence[str], removing: Sequence[str]) -> str:
    """The stored form of ``r``, the result of committing ``files`` and removing ``removing``."""
    restated, unchanged = set(r.restated), set(r.unchanged)
    cats = ["r" if p in restated else "u" if p in unchanged else "a" for p in sorted(set(files))]
    removed = set(r.removed)
    gone = ["x" if p in removed else "m" for p in sorted(set(removing))]
    stored = json.dumps(
        {
            "form": _FORM,
            "snapshot_id": r.snapshot_id,
            "files": _runs(cats),
            "remove": _runs(gone),
            "counts": [len(r.added), len(r.unchanged), len(r.restated), len(r.removed), len(r.missing)],
            "sha256": _digest(r),
        }
    )
    # Rebuilt here once: a result this form cannot restate exactly is a bug, never a wrong replay.
    if decode(stored, files, removing) != CommitResult(
        r.snapshot_id, r.added, r.unchanged, replayed=True, restated=r.restated, removed=r.removed, missing=r.missing
    ):
        raise AssertionError("a commit result that its stored form does not restate")
    return stored


def _select(paths: Sequence[str], category: dict[str, str], wanted: str) -> tuple[str, ...]:
    return tuple(p for p in paths if category[p] == wanted)


def decode(text: str, files: Sequence[str], removing: Sequence[str]) -> CommitResult:
    """The result stored as ``text`` (this form or the full one of earlier versions), replayed."""
    try:
        d = json.loads(text)
        if d.get("form") != _FORM:
            return CommitResult(
                d["snapshot_id"],
                tuple(d["added"]),
                tuple(d["unchanged"]),
                replayed=True,
                restated=tuple(d.get("restated", ())),  # absent from results stored before restatement
                removed=tuple(d.get("removed", ())),  # absent when the commit removed nothing
                missing=tuple(d.get("missing", ())),
            )
        distinct_files, distinct_removing = sorted(set(files)), sorted(set(removing))
        cats = dict(zip(distinct_files, _expand(d["files"], len(distinct_files)), strict=True))
        gone = dict(zip(distinct_removing, _expand(d["remove"], len(distinct_removing)), strict=True))
        r = CommitResult(
            d["snapshot_id"],
            _select(files, cats, "a"),
            _select(files, cats, "u"),
            replayed=True,
            restated=_select(files, cats, "r"),
            removed=_select(removing, gone, "x"),
            missing=_select(removing, gone, "m"),
        )
        if _digest(r) != d["sha256"]:
            raise ValueError("the rebuilt result differs from the one stored")
        return r
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise InvalidStatsError(f"stored idempotency result is corrupt: {e}") from None
