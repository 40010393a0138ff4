"""The call tree in the terminal: one line per node, total and self time, device time."""

from __future__ import annotations

import msgspec
from rich.text import Text
from rich.tree import Tree

from profsight.model.tree import CallTree, TreeNode
from profsight.names import fit_name
from profsight.renderers.console import render_to_text
from profsight.report.view_documents import tree_document
from profsight.units import short_time

_MAX_NAME = 90
#: Columns each level of the tree is indented by (rich's guide, ``├── ``).
_GUIDE = 4
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


def _label(node: TreeNode, cpu_ref: float, dev_ref: float, device_name: str, room: int) -> Text:
    """The node's line: its name cut to what `room` columns leave beside its numbers."""
    numbers = _numbers(node, cpu_ref, dev_ref, device_name)
    text = Text()
    if node.is_device:
        text.append("⇢ ", style="green")
    name = fit_name(node.name, min(_MAX_NAME, room - len(text) - len(numbers)))
    text.append(name, style=_STYLES.get(node.kind, "default"))
    return text + numbers


def _numbers(node: TreeNode, cpu_ref: float, dev_ref: float, device_name: str) -> Text:
    text = Text()
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
    view = tree_renderable(tree, device_name, width=width)
    text = render_to_text(view, width=width, color=color)
    if tree.cut_at is not None:
        text += f"(the tree nests deeper than {tree.cut_at} levels; deeper levels are not shown)\n"
    return text


def tree_renderable(tree: CallTree, device_name: str = "CUDA", width: int = 120) -> Tree:
    """The tree for a console `width` wide: each name cut to fit its line."""
    root = tree.root
    cpu_ref, dev_ref = root.cpu_total_us, root.device_total_us
    view = Tree(_label(root, cpu_ref, dev_ref, device_name, width), guide_style="dim")

    def add(parent: Tree, node: TreeNode, depth: int) -> None:
        room = width - _GUIDE * depth
        for child in node.children:
            label = _label(child, cpu_ref, dev_ref, device_name, room)
            add(parent.add(label), child, depth + 1)

    add(view, root, 1)
    return view


def render_tree_json(tree: CallTree) -> str:
    doc = tree_document(tree)
    return msgspec.json.format(msgspec.json.encode(doc).decode(), indent=2) + "\n"
