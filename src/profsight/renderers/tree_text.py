"""The call tree in the terminal: one line per node, total and self time, device time."""

from __future__ import annotations

import msgspec
from rich.text import Text
from rich.tree import Tree

from profsight.model.tree import CallTree, TreeNode
from profsight.renderers.console import render_to_text
from profsight.units import short_time

_MAX_NAME = 90
_STYLES = {
    "annotation": "bold cyan",
    "cpu_op": "default",
    "python": "magenta",
    "runtime": "yellow",
    "driver": "yellow",
    "kernel": "green",
    "memcpy": "green",
    "memset": "green",
    "thread": "bold",
    "root": "bold",
}


def _label(node: TreeNode, cpu_ref: float, dev_ref: float, device_name: str) -> Text:
    name = node.name if len(node.name) <= _MAX_NAME else node.name[: _MAX_NAME - 1] + "…"
    text = Text()
    if node.is_device:
        text.append("⇢ ", style="green")
    text.append(name, style=_STYLES.get(node.kind, "default"))
    if node.calls > 1:
        text.append(f"  ×{node.calls}", style="dim")
    if node.is_device:
        text.append(f"  {device_name} {short_time(node.device_total_us)}", style="green")
        return text
    share = node.cpu_total_us * 100 / cpu_ref if cpu_ref else 0.0
    text.append(f"  CPU {short_time(node.cpu_total_us)} ({share:.1f}%)")
    text.append(f" self {short_time(node.cpu_self_us)}", style="dim")
    if node.device_total_us > 0:
        dshare = node.device_total_us * 100 / dev_ref if dev_ref else 0.0
        text.append(
            f"  {device_name} {short_time(node.device_total_us)} ({dshare:.1f}%)", style="green"
        )
        if node.device_self_us > 0:
            text.append(f" self {short_time(node.device_self_us)}", style="dim green")
    return text


def render_tree_text(
    tree: CallTree, width: int = 120, color: bool = False, device_name: str = "CUDA"
) -> str:
    text = render_to_text(tree_renderable(tree, device_name), width=width, color=color)
    if tree.cut_at is not None:
        text += f"(the tree nests deeper than {tree.cut_at} levels; deeper levels are not shown)\n"
    return text


def tree_renderable(tree: CallTree, device_name: str = "CUDA") -> Tree:
    root = tree.root
    cpu_ref, dev_ref = root.cpu_total_us, root.device_total_us
    view = Tree(_label(root, cpu_ref, dev_ref, device_name), guide_style="dim")

    def add(parent: Tree, node: TreeNode) -> None:
        for child in node.children:
            add(parent.add(_label(child, cpu_ref, dev_ref, device_name)), child)

    add(view, root)
    return view


def render_tree_json(tree: CallTree) -> str:
    doc = {"schema": "profsight/tree/1", "cut_at": tree.cut_at, "root": tree.root.to_dict()}
    return msgspec.json.format(msgspec.json.encode(doc).decode(), indent=2) + "\n"
