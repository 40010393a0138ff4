"""``profsight mcp``: serve the commands to a coding assistant (Model Context Protocol, stdio)."""

from __future__ import annotations

import argparse

from profsight.errors import UsageError

HELP = "serve explain, table, tree, diff, check and slice to a coding assistant (MCP, stdio)"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "mcp",
        help=HELP,
        description=HELP + ". An assistant starts it itself (see the docs for its config); "
        "it reads requests on standard input until the assistant closes it.",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        from profsight.integrations import mcp_server
    except ModuleNotFoundError as exc:
        if exc.name is None or not exc.name.startswith(("mcp", "pydantic", "anyio")):
            raise
        raise UsageError(
            "profsight mcp needs the Model Context Protocol SDK: pip install 'profsight[mcp]'"
        ) from None
    mcp_server.run()
    return 0
