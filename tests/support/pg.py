"""PostgreSQL helpers shared by the fixtures and the operations tests."""

from __future__ import annotations


def psycopg_dsn(url: str) -> str:
    """A libpq DSN for a SQLAlchemy-style URL (psycopg connects without SQLAlchemy)."""
    from sqlalchemy import make_url

    u = make_url(url)
    parts = [f"host={u.host or '127.0.0.1'}", f"port={u.port or 5432}", f"dbname={u.database or 'postgres'}"]
    if u.username:
        parts.append(f"user={u.username}")
    if u.password:
        parts.append(f"password={u.password}")
    return " ".join(parts)


#: What a test could change in a catalog database besides its rows: schemas, relations, columns,
#: constraints, functions, extensions, per-database settings and the migration revision. Equal
#: before and after a test (and its rows emptied) means the database is as freshly cloned.
SHAPE_SQL = """
SELECT md5(coalesce(string_agg(x, E'\\n' ORDER BY x), '')) FROM (
  SELECT 'ns ' || nspname AS x FROM pg_namespace
   WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'
  UNION ALL
  SELECT format('rel %s %s %s', c.relnamespace::regnamespace, c.relname, c.relkind) FROM pg_class c
   JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'
  UNION ALL
  SELECT format('col %s %s %s %s %s', a.attrelid::regclass, a.attname, format_type(a.atttypid, a.atttypmod),
                a.attnotnull, pg_get_expr(d.adbin, d.adrelid))
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
   WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema' AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
  SELECT format('con %s %s %s', conrelid::regclass, conname, pg_get_constraintdef(oid)) FROM pg_constraint
   WHERE connamespace NOT IN (SELECT oid FROM pg_namespace WHERE nspname LIKE 'pg\\_%' OR nspname = 'information_schema')
  UNION ALL
  SELECT 'idx ' || pg_get_indexdef(indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
   WHERE c.relnamespace NOT IN (SELECT oid FROM pg_namespace WHERE nspname LIKE 'pg\\_%' OR nspname = 'information_schema')
  UNION ALL
  SELECT 'trg ' || pg_get_triggerdef(t.oid) FROM pg_trigger t WHERE NOT t.tgisinternal
  UNION ALL
  SELECT 'fn ' || p.oid::regprocedure::text FROM pg_proc p
   WHERE p.pronamespace NOT IN (SELECT oid FROM pg_namespace WHERE nspname LIKE 'pg\\_%' OR nspname = 'information_schema')
  UNION ALL
  SELECT 'ext ' || extname || ' ' || extversion FROM pg_extension
  UNION ALL
  SELECT 'set ' || array_to_string(setconfig, ',') FROM pg_db_role_setting
   WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
  UNION ALL
  SELECT 'rev ' || version_num FROM alembic_version
) shape
"""

#: Tables holding the catalog's rows (all but the migration revision).
DATA_TABLES_SQL = """
SELECT format('%I.%I', schemaname, tablename) FROM pg_tables
 WHERE schemaname NOT LIKE 'pg\\_%' AND schemaname <> 'information_schema' AND tablename <> 'alembic_version'
 ORDER BY 1
"""
