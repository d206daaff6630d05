"""The planner's statements as SQLAlchemy Core, built from their shapes.

A *shape* is a nested tuple naming a statement family and what decides its SQL: the tables and
columns, the operators, the literals of the partial indexes' predicates, and the **positions** of
its values in the plan's list of bound values (:class:`~.sql.Binds`), never the values. Each
family here is a pure function from its shape to Core (:func:`build`), so the compiled string kept
for a shape (:func:`~.sql.run`) can only be what that shape builds, whatever values it runs with.

The spellings that carry the plans' speed are Core here too: ``OFFSET 0`` fences (a literal, so
that PostgreSQL cannot flatten the subquery), the unary ``+`` that keeps a column out of SQLite's
index choice, ``= ANY(ARRAY(...))`` on PostgreSQL, the points' arrays unnested and joined
``LATERAL``, ``CROSS JOIN`` (SQLite's fixed join order), and comparisons with literals written as
the partial indexes' predicates (``value_count > 0``). Tables and columns are lightweight
``table()``/``column()`` objects without types: a typed column would make psycopg's compiler cast
each parameter, which the measured statements did not."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from sqlalchemy import (
    ARRAY,
    DOUBLE_PRECISION,
    BigInteger,
    and_,
    any_,
    bindparam,
    case,
    cast,
    column,
    exists,
    false,
    func,
    literal_column,
    not_,
    or_,
    select,
    table,
    true,
    union,
)
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql import operators
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ColumnElement, UnaryExpression
from sqlalchemy.sql.selectable import Join, TableClause

#: A statement's (or a part's) shape: ``(family, ...)``, hashable; see the module's docstring.
Shape = tuple[Any, ...]
#: The FROM objects in scope, by the alias the shapes name them with.
Env = Mapping[str, Any]


def _table(name: str, *columns: str) -> TableClause:
    return table(name, *(column(c) for c in columns))


_STATS_COLUMNS = (
    "data_file_id", "path_id", "begin_snapshot", "end_snapshot", "value_count", "null_count", "contains_nan",
    "min_num", "max_num", "min_real", "max_real", "min_bin", "max_bin",
)  # fmt: skip
FILES = _table(
    "ducklake_data_file", "data_file_id", "table_id", "path", "file_size_bytes", "record_count",
    "begin_snapshot", "end_snapshot",
)  # fmt: skip
STATS = {
    name: _table(name, *_STATS_COLUMNS) for name in ("ducklake_file_variant_stats", "ducklake_file_column_stats")
}
OBJECTS = _table("shredcat_file_object", "data_file_id", "shape_id")
ZONES = _table(
    "shredcat_stats_zone", "path_id", "zone", "files", "value_count", "min_num", "max_num", "min_real", "max_real",
    "contains_nan",
)  # fmt: skip
PATHS = _table(
    "shredcat_variant_path", "path_id", "table_id", "column_id", "variant_path", "shredded_type", "live_file_count",
    "max_width_num", "max_width_real", "live_nan_files", "live_nan_unknown_files", "live_min_unknown_files",
    "live_max_unknown_files", "live_min_keyless_files", "live_max_keyless_files", "live_value_count",
)  # fmt: skip

#: Literals written into the SQL, as the partial indexes' predicates and the fences spell them.
#: Every LIMIT here has an OFFSET: SQLite's compiler adds ``OFFSET ?`` (an anonymous parameter) to
#: a LIMIT without one; a literal ``OFFSET 0`` changes no plan (a subquery holding a LIMIT is
#: neither flattened nor pulled up either way: checked by bench/planner_sql_explain.py) and
#: leaves every parameter the plan's.
ZERO: ColumnElement[Any] = literal_column("0")
ONE: ColumnElement[Any] = literal_column("1")


class CrossJoin(Join):
    """``left CROSS JOIN right``: SQLite keeps the left table the outer loop (Core's joins have an
    ``ON`` clause, which SQLite may reorder)."""

    inherit_cache = True

    def __init__(self, left: Any, right: Any) -> None:
        super().__init__(left, right, true())


@compiles(CrossJoin)
def _cross_join(join: CrossJoin, compiler: SQLCompiler, **kw: Any) -> str:
    kw["asfrom"] = True
    return f"{join.left._compiler_dispatch(compiler, **kw)} CROSS JOIN {join.right._compiler_dispatch(compiler, **kw)}"


def p(i: int) -> Any:
    """The bind parameter of the plan's ``i``-th value."""
    return bindparam(f"p{i}")


def plus(c: Any) -> ColumnElement[Any]:
    """``+c``: the same value, but no longer a column SQLite's index choice considers."""
    return UnaryExpression(c, operator=operators.custom_op("+"))


def build(shape: Shape, env: Env | None = None) -> Any:
    """The Core of ``shape`` (a statement, a SELECT to nest, or a condition), its aliases
    resolved in ``env``."""
    return _FAMILIES[shape[0]](shape, env or {})


def _col(env: Env, alias: str, name: str) -> Any:
    return env[alias].c[name]


# --- conditions ------------------------------------------------------------------------------

_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "<": operators.lt,
    "<=": operators.le,
    ">": operators.gt,
    ">=": operators.ge,
    "=": operators.eq,
    "<>": operators.ne,
}


def _and(s: Shape, env: Env) -> Any:
    return and_(*(build(x, env) for x in s[1:]))


def _or(s: Shape, env: Env) -> Any:
    return or_(*(build(x, env) for x in s[1:]))


def _cmp(s: Shape, env: Env) -> Any:
    """``("cmp", alias, column, plus, op, i)``: ``[+]alias.column op :p{i}``."""
    _, alias, name, plussed, op, i = s
    c = _col(env, alias, name)
    return _OPS[op](plus(c) if plussed else c, p(i))


def _count_is(s: Shape, env: Env) -> Any:
    """``("count", alias, column, op)``: ``alias.column op 0`` (``value_count > 0``, as the
    partial indexes' predicates are written)."""
    _, alias, name, op = s
    return _OPS[op](_col(env, alias, name), ZERO)


def _not_null(s: Shape, env: Env) -> Any:
    """``("nn", alias, column, plus)``."""
    _, alias, name, plussed = s
    c = _col(env, alias, name)
    return (plus(c) if plussed else c).is_not(None)


def _nan(s: Shape, env: Env) -> Any:
    c = _col(env, s[1], "contains_nan")
    return or_(c.is_(None), c)


def _unkeyed(s: Shape, env: Env) -> Any:
    """``("unkeyed", alias, family)``: a row with a key missing."""
    _, alias, fam = s
    return or_(_col(env, alias, f"min_{fam}").is_(None), _col(env, alias, f"max_{fam}").is_(None))


def _not_all_in(s: Shape, env: Env) -> Any:
    """``("notall", alias, family, positions)``: a row whose values are not all among the keys."""
    _, alias, fam, ids = s
    mn, mx = _col(env, alias, f"min_{fam}"), _col(env, alias, f"max_{fam}")
    return or_(mn.is_(None), mx.is_(None), mn != mx, mn.not_in([p(i) for i in ids]))


def _live(s: Shape, env: Env) -> Any:
    """``("live", alias)``: a current row; ``("live", alias, i)``: a row live at snapshot ``:p{i}``."""
    end = _col(env, s[1], "end_snapshot")
    if len(s) == 2:
        return end.is_(None)
    at = p(s[2])
    return and_(_col(env, s[1], "begin_snapshot") <= at, or_(end.is_(None), end > at))


def _constant(s: Shape, env: Env) -> Any:
    return true() if s[1] else false()


def _in(s: Shape, env: Env) -> Any:
    """``("in", alias, select)``: ``alias.data_file_id IN (select)``."""
    return _col(env, s[1], "data_file_id").in_(build(s[2], env))


def _in_values(s: Shape, env: Env) -> Any:
    """``("in_values", alias, column, positions)``."""
    _, alias, name, ids = s
    return _col(env, alias, name).in_([p(i) for i in ids])


def _row_exists(s: Shape, env: Env) -> Any:
    """``("row_exists", table, outer, pid, live, test, per_file)``: ``outer``'s file has a stats
    row for path ``:p{pid}`` passing ``test``; ``per_file``: fenced (``LIMIT 1 OFFSET 0``), so
    that PostgreSQL keeps it a lookup per outer file instead of a semi-join."""
    _, name, outer, pid, live, test, per_file = s
    st = STATS[name].alias("s")
    inner = {**env, "s": st}
    q = select(ONE).select_from(st).where(
        st.c.data_file_id == _col(env, outer, "data_file_id"), st.c.path_id == p(pid), build(live, inner), build(test, inner)
    )
    return exists(q.limit(ONE).offset(ZERO) if per_file else q)


def _no_row(s: Shape, env: Env) -> Any:
    """``("no_row", table, outer, pids, per_file)``: ``outer``'s file has no stats row on the paths."""
    _, name, outer, pids, per_file = s
    s2 = STATS[name].alias("s2")
    q = select(ONE).select_from(s2).where(
        s2.c.data_file_id == _col(env, outer, "data_file_id"), s2.c.path_id.in_([p(i) for i in pids])
    )
    return not_(exists(q.limit(ONE).offset(ZERO) if per_file else q))


def _not_lacking(s: Shape, env: Env) -> Any:
    """``("not_lacking", outer, shape ids)``: no object of ``outer``'s file is of a shape lacking
    the key."""
    _, outer, ids = s
    o = OBJECTS.alias("o")
    return not_(
        exists(
            select(ONE)
            .select_from(o)
            .where(o.c.data_file_id == _col(env, outer, "data_file_id"), o.c.shape_id.in_([p(i) for i in ids]))
        )
    )


def _path_exists(s: Shape, env: Env) -> Any:
    """``("path_exists", table, pid, fail)``: a live row of path ``:p{pid}`` fails ``fail``."""
    _, name, pid, fail = s
    st = STATS[name].alias("s")
    inner = {**env, "s": st}
    return exists(select(ONE).select_from(st).where(st.c.path_id == p(pid), st.c.end_snapshot.is_(None), build(fail, inner)))


# --- SELECTs of data_file_ids ----------------------------------------------------------------


def _all_files(s: Shape, env: Env) -> Any:
    """``("all_files", tid, live, *more)``: the table's live files ``f`` [passing ``more``]."""
    _, tid, live, *more = s
    f = FILES.alias("f")
    inner = {**env, "f": f}
    return select(f.c.data_file_id).where(f.c.table_id == p(tid), build(live, inner), *(build(m, inner) for m in more))


def _empty(s: Shape, env: Env) -> Any:
    f = FILES.alias("f")
    return select(f.c.data_file_id).where(false())


def _having(s: Shape, env: Env) -> Any:
    """``("having", shape ids, tid, live, *more)``: the live files whose object is of one of the
    shapes, read shape by shape (``CROSS JOIN``: see :func:`~.absent.maybe_having`)."""
    _, ids, tid, live, *more = s
    o, f = OBJECTS.alias("o"), FILES.alias("f")
    inner = {**env, "f": f, "o": o}
    return (
        select(f.c.data_file_id)
        .select_from(CrossJoin(o, f))
        .where(
            o.c.shape_id.in_([p(i) for i in ids]),
            f.c.data_file_id == o.c.data_file_id,
            f.c.table_id == p(tid),
            build(live, inner),
            *(build(m, inner) for m in more),
        )
    )


def _branch(s: Shape, env: Env) -> Any:
    """``("branch", table, pid, live, test)``: the files whose row of path ``:p{pid}`` passes."""
    _, name, pid, live, test = s
    st = STATS[name].alias("s")
    inner = {**env, "s": st}
    return select(st.c.data_file_id).where(st.c.path_id == p(pid), build(live, inner), build(test, inner))


def _point_join(s: Shape, env: Env) -> Any:
    """``("point_join", table, family, keys, floors, pid, live)``: PostgreSQL's join of a long
    point list's ``(key, floor)`` arrays with the path's rows, the rows a fenced LATERAL subquery
    (:meth:`~.clauses.RowClauses.point_join`)."""
    _, name, fam, keys, floors, pid, live = s
    kind = ARRAY(BigInteger) if fam == "num" else ARRAY(DOUBLE_PRECISION)
    pt = func.unnest(cast(p(keys), kind), cast(p(floors), kind)).table_valued("k", "floor").render_derived(name="pt")
    st = STATS[name].alias("s")
    mn, mx = st.c[f"min_{fam}"], st.c[f"max_{fam}"]
    rows = (
        select(st.c.data_file_id)
        .where(
            st.c.path_id == p(pid),
            build(live, {**env, "s": st}),
            st.c.value_count > ZERO,
            mn <= pt.c.k,
            mn >= pt.c.floor,
            mx >= pt.c.k,
        )
        .offset(ZERO)
        .lateral("x")
    )
    return select(rows.c.data_file_id).select_from(pt.join(rows, true()))


def _union(s: Shape, env: Env) -> Any:
    """``("union", prefix, *selects)``: each SELECT as a subquery named ``{prefix}{i}``, unioned."""
    _, prefix, *parts = s
    subs = [build(x, env).subquery(f"{prefix}{i}") for i, x in enumerate(parts)]
    return union(*(select(q.c.data_file_id) for q in subs))


def _drive(s: Shape, env: Env) -> Any:
    """``("drive", driver, *tests)``: the driver's candidates ``d`` passing every test."""
    _, driver, *tests = s
    d = build(driver, env).subquery("d")
    inner = {**env, "d": d}
    return select(d.c.data_file_id).where(*(build(t, inner) for t in tests))


# --- statements ------------------------------------------------------------------------------


def _file_rows(f: Any) -> Any:
    """A page's rows: id, path, size, record count."""
    return select(f.c.data_file_id, f.c.path, f.c.file_size_bytes, f.c.record_count)


def _files_of(s: Shape, env: Env) -> Any:
    """``("files_of", any, ids)``: the page rows of the files ``ids`` selects, in id order;
    ``any``: PostgreSQL's ``= ANY(ARRAY(ids))`` (an index lookup each), else ``IN (ids)``."""
    _, use_any, ids = s
    f = FILES.alias("f")
    sub = build(ids, env)
    match = f.c.data_file_id == any_(func.array(sub.scalar_subquery())) if use_any else f.c.data_file_id.in_(sub)
    return _file_rows(f).where(match).order_by(f.c.data_file_id)


def _page_ids(s: Shape, env: Env) -> Any:
    """``("page_ids", candidates, plus, after, limit)``: the next ids of the set plan's candidates
    ``c`` (``plus``: the id kept out of SQLite's index choice)."""
    _, cand, plussed, after, limit = s
    c = build(cand, env).subquery("c")
    fid = plus(c.c.data_file_id) if plussed else c.c.data_file_id
    return select(c.c.data_file_id).distinct().where(fid > p(after)).order_by(fid).limit(p(limit)).offset(ZERO)


def _window(s: Shape, env: Env) -> Any:
    """``("window", table, columns, pid, live, after, upto, window)``: a key's next rows in file
    order, fenced (``OFFSET 0``) so that a test over them cannot pull the key indexes in."""
    _, name, columns, pid, live, after, upto, window = s
    st = STATS[name].alias("s")
    inner = {**env, "s": st}
    return (
        select(*(st.c[c] for c in columns))
        .where(
            st.c.path_id == p(pid),
            build(live, inner),
            st.c.data_file_id > p(after),
            st.c.data_file_id <= p(upto),
        )
        .order_by(st.c.data_file_id)
        .limit(p(window)).offset(ZERO)
    )


def _scan_ids(s: Shape, env: Env) -> Any:
    """``("scan_ids", window, test, limit)``: the window's rows ``s`` passing ``test``."""
    _, window, test, limit = s
    rows = build(window, env).subquery("s")
    return (
        select(rows.c.data_file_id)
        .where(build(test, {**env, "s": rows}))
        .order_by(rows.c.data_file_id)
        .limit(p(limit)).offset(ZERO)
    )


def _window_count(s: Shape, env: Env) -> Any:
    """``("window_count", alias, rows)``: how many rows ``rows`` holds, and its last id."""
    q = build(s[2], env).subquery(s[1])
    return select(func.count(), func.max(q.c.data_file_id))


def _span(s: Shape, env: Env) -> Any:
    """``("span", tid, live, start, window)``: the next ``window`` live files ``f2`` after ``start``."""
    _, tid, live, start, window = s
    f2 = FILES.alias("f2")
    return (
        select(f2.c.data_file_id)
        .where(f2.c.table_id == p(tid), build(live, {**env, "f2": f2}), f2.c.data_file_id > p(start))
        .order_by(f2.c.data_file_id)
        .limit(p(window)).offset(ZERO)
    )


def _walk(s: Shape, env: Env) -> Any:
    """``("walk", tid, live, start, span, test, limit)``: the live files ``f`` after ``start`` up to
    the span's last one that pass ``test``."""
    _, tid, live, start, span, test, limit = s
    f = FILES.alias("f")
    inner = {**env, "f": f}
    w = build(span, env).subquery("w")
    return (
        _file_rows(f)
        .where(
            f.c.table_id == p(tid),
            build(live, inner),
            f.c.data_file_id > p(start),
            f.c.data_file_id <= select(func.max(w.c.data_file_id)).scalar_subquery(),
            build(test, inner),
        )
        .order_by(f.c.data_file_id)
        .limit(p(limit)).offset(ZERO)
    )


def _next_files(s: Shape, env: Env) -> Any:
    """``("next_files", tid, live, after, limit)``: the next live files."""
    _, tid, live, after, limit = s
    f = FILES.alias("f")
    return (
        _file_rows(f)
        .where(f.c.table_id == p(tid), build(live, {**env, "f": f}), f.c.data_file_id > p(after))
        .order_by(f.c.data_file_id)
        .limit(p(limit)).offset(ZERO)
    )


def _path_rows(s: Shape, env: Env) -> Any:
    """``("path_rows", table id, column id, path)``: a key's dictionary rows."""
    _, tid, cid, path = s
    v = PATHS
    return select(
        v.c.path_id,
        v.c.shredded_type,
        v.c.live_file_count,
        v.c.max_width_num,
        v.c.max_width_real,
        v.c.live_nan_files + v.c.live_nan_unknown_files,
        v.c.live_min_unknown_files + v.c.live_max_unknown_files + v.c.live_min_keyless_files + v.c.live_max_keyless_files,
        v.c.live_value_count,
    ).where(v.c.table_id == p(tid), v.c.column_id == p(cid), v.c.variant_path == p(path))


def _side_counts(s: Shape, env: Env) -> Any:
    """``("side_counts", table, pid, lo, hi, limit)``: a string range's rows on each key index,
    each counted up to ``limit`` (:meth:`~.clauses.RowClauses.narrow_side`)."""
    _, name, pid, lo, hi, limit = s

    def count(key: str, op: str, i: int) -> Any:
        st = STATS[name].alias("s")
        rows = (
            select(ONE)
            .select_from(st)
            .where(st.c.path_id == p(pid), st.c.end_snapshot.is_(None), _OPS[op](st.c[key], p(i)))
            .limit(literal_column(str(int(limit)))).offset(ZERO)
            .subquery()
        )
        return select(func.count()).select_from(rows).scalar_subquery()

    return select(count("min_bin", "<=", hi), count("max_bin", ">=", lo))


def _any_row(s: Shape, env: Env) -> Any:
    """``("any_row", *probes)``: whether any probe finds a row."""
    return select(or_(*(build(x, env) for x in s[1:])))


def _count_upto(s: Shape, env: Env) -> Any:
    """``("count_upto", driver, cap)``: the driver's candidates, counted up to ``:p{cap}``."""
    _, driver, cap = s
    d = build(driver, env).subquery("d")
    return select(func.count()).select_from(select(ONE).select_from(d).limit(p(cap)).offset(ZERO).subquery("p"))


def _sums_of(f: Any) -> Any:
    return select(func.count(), func.coalesce(func.sum(f.c.record_count), ZERO), func.coalesce(func.sum(f.c.file_size_bytes), ZERO))


def _sums(s: Shape, env: Env) -> Any:
    """``("sums", files)``: the count, records and bytes of the files ``files`` selects."""
    f = FILES.alias("f")
    return _sums_of(f).where(f.c.data_file_id.in_(build(s[1], env)))


def _sums_joined(s: Shape, env: Env) -> Any:
    """``("sums_joined", files)``: the same, the files joined (at a past snapshot)."""
    a = build(s[1], env).subquery("a")
    f = FILES.alias("f")
    return _sums_of(f).select_from(a.join(f, f.c.data_file_id == a.c.data_file_id))


def _not_candidate(s: Shape, env: Env) -> Any:
    """``("not_candidate", candidates)``: ``f`` is not among the candidates (an anti-join:
    :func:`~.explain.not_a_candidate`)."""
    c = build(s[1], env).subquery("c")
    return not_(exists(select(ONE).select_from(c).where(c.c.data_file_id == _col(env, "f", "data_file_id"))))


def _listed(s: Shape, env: Env) -> Any:
    """``("listed", columns, tests, limit, offset)``: the files ``f`` passing every test, in id
    order; ``columns``: ``rows`` (a page's), ``paths`` (ids and paths) or ``ids``; ``offset`` None
    for none."""
    _, columns, tests, limit, offset = s
    f = FILES.alias("f")
    inner = {**env, "f": f}
    picked = {"rows": (f.c.data_file_id, f.c.path, f.c.file_size_bytes, f.c.record_count), "paths": (f.c.data_file_id, f.c.path)}
    q: Any = select(*picked.get(columns, (f.c.data_file_id,))).where(*(build(t, inner) for t in tests))
    if limit is not None:
        q = q.order_by(f.c.data_file_id).limit(p(limit)).offset(ZERO)
    return q if offset is None else q.offset(p(offset))


def _zone_runs(s: Shape, env: Env) -> Any:
    """``("zone_runs", pid, zone, test, share)``: the runs of consecutive zones of path ``:p{pid}``
    from zone ``:p{zone}`` whose summary passes ``test``, each with its files and (``share``: a
    ``("share", ...)`` shape, or None) the files estimated to pass (:func:`~.zones.zone_runs`)."""
    _, pid, zone, test, share = s
    z = ZONES.alias("s")
    inner = {**env, "s": z}
    part = ZERO if share is None else build(share, inner)
    q = (
        select(
            z.c.zone,
            z.c.files,
            part.label("share"),
            (z.c.zone - func.row_number().over(order_by=z.c.zone)).label("run"),
        )
        .where(z.c.path_id == p(pid), z.c.zone >= p(zone), build(test, inner))
        .subquery("q")
    )
    return (
        select(func.min(q.c.zone), func.max(q.c.zone), func.sum(q.c.files), func.sum(q.c.files * q.c.share))
        .group_by(q.c.run)
        .order_by(ONE)
    )


def _share(s: Shape, env: Env) -> Any:
    """``("share", family, lo, hi)``: the part of a zone's ``[min, max]`` within the range (a
    bound's position, or None for an open side), as evenly spread values would fill it; 1 where
    the bounds tell nothing. In double precision: a difference of two int64 keys may not fit."""
    _, fam, lo, hi = s
    mn, mx = _col(env, "s", f"min_{fam}"), _col(env, "s", f"max_{fam}")
    zmin, zmax = cast(mn, DOUBLE_PRECISION), cast(mx, DOUBLE_PRECISION)
    step: ColumnElement[Any] = literal_column("1" if fam == "num" else "0")

    def within(edge: Any, beyond: str, i: int | None) -> Any:
        return edge if i is None else case((_OPS[beyond](edge, p(i)), edge), else_=p(i))

    part = (within(zmax, "<", hi) - within(zmin, ">", lo) + step) / (zmax - zmin + step)
    return case(
        (or_(mn.is_(None), mx.is_(None), mx <= mn), literal_column("1.0")),
        (part < ZERO, literal_column("0.0")),
        (part > ONE, literal_column("1.0")),
        else_=part,
    )


_FAMILIES: dict[str, Callable[[Shape, Env], Any]] = {
    "and": _and,
    "or": _or,
    "cmp": _cmp,
    "count": _count_is,
    "nn": _not_null,
    "nan": _nan,
    "unkeyed": _unkeyed,
    "notall": _not_all_in,
    "live": _live,
    "constant": _constant,
    "in": _in,
    "in_values": _in_values,
    "row_exists": _row_exists,
    "no_row": _no_row,
    "not_lacking": _not_lacking,
    "path_exists": _path_exists,
    "all_files": _all_files,
    "empty": _empty,
    "having": _having,
    "branch": _branch,
    "point_join": _point_join,
    "union": _union,
    "drive": _drive,
    "files_of": _files_of,
    "page_ids": _page_ids,
    "window": _window,
    "scan_ids": _scan_ids,
    "window_count": _window_count,
    "span": _span,
    "walk": _walk,
    "next_files": _next_files,
    "path_rows": _path_rows,
    "side_counts": _side_counts,
    "any_row": _any_row,
    "count_upto": _count_upto,
    "sums": _sums,
    "sums_joined": _sums_joined,
    "not_candidate": _not_candidate,
    "listed": _listed,
    "zone_runs": _zone_runs,
    "share": _share,
}


# --- what a row test reads -------------------------------------------------------------------

def row_columns(shape: Shape) -> Iterator[str]:
    """The columns of the row ``s`` a row test reads (a key scan reads only some)."""
    head = shape[0]
    if head in ("and", "or"):
        for x in shape[1:]:
            yield from row_columns(x)
    elif head in ("cmp", "nn", "count"):
        yield shape[2]
    elif head == "nan":
        yield "contains_nan"
    elif head in ("unkeyed", "notall"):
        yield from (f"min_{shape[2]}", f"max_{shape[2]}")
    elif head != "constant":
        raise ValueError(f"not a row test: {head}")
