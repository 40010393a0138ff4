"""A rich console that renders to a string: fixed width, colour only when asked."""

from __future__ import annotations

import io

from rich.console import Console, RenderableType


def render_to_text(renderable: RenderableType, width: int = 120, color: bool = False) -> str:
    buf = io.StringIO()
    console = Console(
        file=buf,
        width=width,
        color_system="truecolor" if color else None,
        force_terminal=color,
        no_color=not color,
        highlight=False,
        emoji=False,
        legacy_windows=False,
    )
    console.print(renderable)
    return buf.getvalue()
