"""The ``shredcat`` command line.

Scripts run it in loops, so start-up stays cheap: this module imports only argparse; each
command's module (and pyarrow, SQLAlchemy, FastAPI, PySpark behind it) is imported when that
command runs.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# command -> module in service.cli that defines `add_arguments(parser)` and `run(args) -> int`.
COMMANDS: dict[str, tuple[str, str]] = {
    "stats": ("stats", "Print the fully shredded Variant paths of Parquet files, one JSON object per line."),
    "register": ("register", "Extract Parquet files and commit them to a table as one snapshot."),
    "files": ("files", "List the live files of a table."),
    "global-stats": ("global_stats", "Print a table's global Variant stats (DuckLake's JSON)."),
    "tables": ("tables", "List the tables with their file counts, rows and bytes."),
    "prune": ("prune", "Print the candidate files of a table for a predicate (Variant paths, plain and partition columns)."),
    "verify": ("verify", "Re-extract a table's files and report stored stats that differ from the files."),
    "refresh": (
        "refresh",
        "Add plain-column statistics and partition values to live files that have none (after an upgrade).",
    ),
    "serve": ("serve", "Run the REST API server (uvicorn)."),
    "migrate": ("migrate", "Create or upgrade the catalog database schema."),
    "backfill": ("backfill", "Register an existing lake of Parquet files, extracting on Spark executors."),
    "ducklake": ("ducklake", "Export a table as a DuckLake catalog that DuckDB attaches (ducklake export)."),
}


#: The commands that read the SHREDCAT_* settings (backfill talks to a server with its own flags).
SETTINGS_COMMANDS = frozenset(COMMANDS) - {"backfill"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shredcat",
        description="Catalog of shredded Parquet Variant statistics: extract, register, merge, prune.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        importlib.import_module(f"service.cli.{module}").add_arguments(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    module = importlib.import_module(f"service.cli.{COMMANDS[args.command][0]}")
    from service.cli._common import check_settings
    from service.errors import SettingsError

    if sys.stdout is None and args.command != "serve":
        # Started with its output closed (`>&-`): Python would drop every line without a word.
        print(f"shredcat {args.command}: standard output is closed", file=sys.stderr)
        return 1
    try:
        if args.command in SETTINGS_COMMANDS:
            check_settings(args)  # first: a bad SHREDCAT_* value is exit 2 whatever the command does
        return int(module.run(args) or 0)
    except SettingsError as e:
        print(f"shredcat {args.command}: {e.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `shredcat stats ... | head` closes the pipe early: not an error.
        return 0
    except OSError as e:
        # Commands translate their own I/O errors; what is left is writing the output (a full
        # disk): one line, not a traceback. A commit already made stays made.
        print(f"shredcat {args.command}: cannot write the output: {e.strerror or e}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
