"""What every subcommand shares: loading with a progress bar, writing output, warnings.

It imports the loaders when a command loads (the parser, `--help` and the commands that read
no profile do without numpy and the model)."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from profsight import paths
from profsight.errors import ProfsightError, UsageError
from profsight.lazy import regex

if TYPE_CHECKING:
    from profsight.loaders.progress import Progress
    from profsight.model.profile import Profile
    from profsight.model.text_profile import TextProfile

#: Files larger than this get a progress bar while they load.
PROGRESS_THRESHOLD = 32 << 20


def terminal_width(fallback: int = 120) -> int:
    """The terminal's columns: ``COLUMNS``, else standard output's terminal, else `fallback`
    (what ``shutil.get_terminal_size`` reads, without importing `shutil`, which brings bz2
    and lzma: ~2 ms of every run)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else fallback


class OutputError(ProfsightError):
    """An output that must not be written (it is an input, or exists without --force)."""


@contextmanager
def rich_bar(count: Any) -> Iterator[Any]:
    """A bar on standard error: description, bar, `count` (a rich column), time left.

    It has no refresh thread (``auto_refresh=False``): a thread would keep the loader from
    forking its second decoding process and the job's pool from forking its workers; the
    caller redraws it on each update (``refresh()``)."""
    from rich.console import Console
    from rich.progress import BarColumn, TimeRemainingColumn
    from rich.progress import Progress as Bar

    with Bar(
        "[progress.description]{task.description}",
        BarColumn(),
        count,
        TimeRemainingColumn(),
        console=Console(stderr=True, highlight=False),
        transient=True,
        auto_refresh=False,
    ) as bar:
        yield bar


@contextmanager
def progress_bar(path: str, enabled: bool) -> Iterator[Progress]:
    if not enabled:
        from profsight.loaders.progress import no_progress

        yield no_progress
        return
    from rich.progress import DownloadColumn

    with rich_bar(DownloadColumn()) as bar:
        tasks: dict[str, object] = {}

        def update(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(f"{phase} {paths.name(path)}", total=total)
            bar.update(tasks[phase], completed=done, total=total)
            bar.refresh()

        yield update


def load_profile(path: str, args: argparse.Namespace) -> Profile | TextProfile:
    from profsight.loaders import load

    show = getattr(args, "progress", None)
    if show is None:
        try:
            show = sys.stderr.isatty() and os.path.getsize(path) > PROGRESS_THRESHOLD
        except OSError:
            show = False
    with progress_bar(path, bool(show)) as progress:
        profile = load(path, progress)
    for diag in profile.diagnostics:
        warn(f"{path}: {diag}")
    return profile


def warn_analysis(path: str, profile: Profile | TextProfile) -> None:
    """Print the warnings the analysis adds about the input (ranges that overlap without
    nesting, device work linked to no op) beyond what loading printed; its info notes stay
    in the reports."""
    from profsight.model.diagnostics import Level

    for diag in profile.warnings[len(profile.diagnostics) :]:
        if diag.level is Level.WARNING:
            warn(f"{path}: {diag}")


def warn(message: str) -> None:
    print(f"profsight: {message}", file=sys.stderr)


def write_output(text: str | bytes, output: str | None, inputs: list[str], force: bool) -> None:
    """Print `text`, or write it to `output`: never over an input, over a file only with force."""
    if output is None or output == "-":
        if isinstance(text, bytes):
            sys.stdout.buffer.write(text)
        else:
            sys.stdout.write(text)
        return
    target = paths.pure(output)  # (as pathlib spells it, without its ~3-5 ms of imports)
    for source in inputs:
        try:
            if os.path.exists(target) and os.path.samefile(target, source):
                raise OutputError(f"{output}: is an input; refusing to overwrite it")
        except OSError:
            continue
    if os.path.exists(target) and not force:
        raise OutputError(f"{output}: already exists (use --force to replace it)")
    folder = paths.parent(target)
    if not os.path.isdir(folder):
        raise OutputError(f"{output}: the folder {folder} does not exist")
    tmp = target + ".tmp"
    try:
        with open(tmp, "wb") as fh:
            fh.write(text if isinstance(text, bytes) else text.encode("utf-8"))
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OutputError(f"{output}: cannot be written ({exc.strerror or exc})") from exc


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", help="write to this file instead of stdout")
    parser.add_argument("--force", action="store_true", help="replace an existing output file")
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar while loading (default: for large files on a terminal)",
    )


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


_SIZE = regex(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}


def byte_size(text: str) -> int:
    """``2GB``, ``500MB``, ``1.5g``, ``800000000``: bytes (decimal units)."""
    m = _SIZE.match(text)
    if m is None or float(m.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"must be a size such as 2GB or 500MB, not {text!r}")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])


def percent(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 100.0:
        raise argparse.ArgumentTypeError(f"must be a percentage from 0 to 100, not {value:g}")
    return value


def format_from(args: argparse.Namespace, suffixes: dict[str, str], default: str) -> str:
    """``--format``, else the output file's suffix (none: `default`; one the command does not
    write: a usage error naming those it does), else `default`."""
    if args.format:
        return str(args.format)
    if args.output and args.output != "-":
        suffix = paths.suffix(args.output).lower()
        if not suffix:
            return default
        if suffix not in suffixes:
            known = ", ".join(sorted(suffixes))
            raise UsageError(
                f"{args.output}: profsight does not write {suffix} files; name the output "
                f"{known}, or choose the format with --format"
            )
        return suffixes[suffix]
    return default
