"""``profsight``: entry point. ``main(argv) -> int`` is testable in-process.

Exit codes: 0 done; 1 an input could not be read; 2 bad usage; 3 an output was refused;
4 an internal error (a bug: please report it; ``PROFSIGHT_DEBUG=1`` shows the traceback);
5 a budget was broken (``profsight check``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any, Final

from profsight import __version__
from profsight.cli.common import OutputError, terminal_width
from profsight.cli.exit_codes import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_OUTPUT,
    EXIT_USAGE,
)
from profsight.errors import InputError, UsageError
from profsight.lazy import resolve

#: Each command's module (``add_parser(subparsers)``, ``run(args)``), imported when the command
#: line names it, or all of them for the list of commands.
COMMANDS: Final = {
    name: f"profsight.cli.commands.{name}:add_parser"
    for name in ("explain", "job", "table", "tree", "diff", "check", "slice", "demo", "tune", "mcp")
}


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's own, its width read by `terminal_width` (argparse's imports `shutil`, and
    every parser builds one as it declares its arguments)."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
        **options: Any,  # (what later Pythons pass besides: prefix_chars, color)
    ) -> None:
        width = terminal_width(80) - 2 if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width, **options)


class _Parser(argparse.ArgumentParser):
    """An argument parser with `_HelpFormatter` by default (the commands' parsers too)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser. Where `argv` starts with a command, only that command's
    module is imported and its arguments declared (the others' cost a small input's run
    ~3 ms); the list of commands, for ``--help`` or a misspelt one, has them all."""
    parser = _Parser(
        prog="profsight",
        description="Explains PyTorch / Lightning profiler output.",
    )
    parser.add_argument("--version", action="version", version=f"profsight {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    words = list(sys.argv[1:] if argv is None else argv)
    named = COMMANDS.get(words[0]) if words else None
    for target in (named,) if named is not None else COMMANDS.values():
        resolve(target)(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return int(args.run(args))
    except InputError as exc:
        print(f"profsight: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except UsageError as exc:
        print(f"profsight: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OutputError as exc:
        print(f"profsight: error: {exc}", file=sys.stderr)
        return EXIT_OUTPUT
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:
        if os.environ.get("PROFSIGHT_DEBUG"):
            raise
        print(
            f"profsight: internal error: {type(exc).__name__}: {exc} "
            "(a bug in profsight; rerun with PROFSIGHT_DEBUG=1 for details and report it)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
