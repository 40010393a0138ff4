"""A path as text, spelled as `pathlib.PurePosixPath` spells it, without importing pathlib
(which brings `urllib.parse` and `ipaddress`: ~3-5 ms of every run's start-up)."""

from __future__ import annotations

import os


def pure(path: str | os.PathLike[str]) -> str:
    """``str(PurePosixPath(path))``: repeated and trailing separators and ``.`` parts dropped,
    ``..`` kept (a link's ``..`` is not its folder's: nothing is resolved)."""
    text = os.fspath(path)
    parts = [part for part in text.split("/") if part not in ("", ".")]
    joined = "/".join(parts)
    if text.startswith("/"):
        return (
            "//" + joined if text.startswith("//") and not text.startswith("///") else "/" + joined
        )
    return joined or "."


def name(path: str | os.PathLike[str]) -> str:
    """``PurePosixPath(path).name``: the last part ("" for ``.`` and ``/``)."""
    last = pure(path).rpartition("/")[2]
    return "" if last == "." else last


def parent(path: str | os.PathLike[str]) -> str:
    """``str(PurePosixPath(path).parent)``."""
    text = pure(path)
    root = text[: len(text) - len(text.lstrip("/"))]  # "", "/" or "//"
    rest = text[len(root) :]
    if not rest or rest == ".":
        return text
    head = rest.rpartition("/")[0]
    return root + head if head else (root or ".")


def suffix(path: str | os.PathLike[str]) -> str:
    """``PurePosixPath(path).suffix``: from the last dot of the name, where that dot is neither
    its first nor its last character."""
    last = name(path)
    i = last.rfind(".")
    return last[i:] if 0 < i < len(last) - 1 else ""
