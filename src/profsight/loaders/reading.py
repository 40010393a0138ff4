"""Reading an input file into memory: plain or gzip, tolerant of a gzip stream cut short."""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass, replace
from io import BufferedReader
from pathlib import Path

from profsight.errors import InputError
from profsight.loaders.progress import Progress, no_progress

GZIP_MAGIC = b"\x1f\x8b"
#: Byte order marks of UTF-16 text (Windows PowerShell's ``>`` writes UTF-16 LE with one).
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_CHUNK = 8 << 20


@dataclass(frozen=True)
class RawInput:
    data: bytearray
    """The (decompressed) content. Mutable so that the decoder can frame chunks in place."""
    compressed: bool
    gzip_truncated: bool
    """The gzip stream ended early: `data` is what could be decompressed."""
    size_on_disk: int


def read_input(path: Path, progress: Progress = no_progress) -> RawInput:
    """The bytes of `path`, decompressed when it is gzip. Never writes anything."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            head = fh.read(2)
            fh.seek(0)
            if head != GZIP_MAGIC:
                return RawInput(_read_plain(fh, size, progress), False, False, size)
            data, truncated = _read_gzip(fh, size, progress, str(path))
            return RawInput(data, True, truncated, size)
    except IsADirectoryError:
        raise InputError(str(path), "is a directory, not a profiler output file") from None
    except FileNotFoundError:
        raise InputError(str(path), "no such file") from None
    except PermissionError:
        raise InputError(str(path), "permission denied") from None
    except MemoryError:
        raise InputError(str(path), "too large to read into memory") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot be read ({exc.strerror or exc})") from None


def _read_plain(fh: BufferedReader, size: int, progress: Progress) -> bytearray:
    data = bytearray(size)
    view = memoryview(data)
    done = 0
    while done < size:
        n = fh.readinto(view[done : done + _CHUNK])
        if not n:
            break
        done += n
        progress("read", done, size)
    view.release()
    if done < size:  # the file shrank while we read it
        del data[done:]
    return data


def _read_gzip(
    fh: BufferedReader, size: int, progress: Progress, source: str
) -> tuple[bytearray, bool]:
    out = bytearray()
    decomp = zlib.decompressobj(zlib.MAX_WBITS | 16)
    done = 0
    try:
        while chunk := fh.read(_CHUNK):
            done += len(chunk)
            while chunk:
                out += decomp.decompress(chunk)
                if decomp.eof and decomp.unused_data:
                    # concatenated gzip members: start the next one
                    chunk = decomp.unused_data
                    decomp = zlib.decompressobj(zlib.MAX_WBITS | 16)
                else:
                    chunk = b""
            progress("read", done, size)
    except zlib.error as exc:
        if not out:
            raise InputError(source, f"is not a valid gzip file ({exc})") from None
        return out, True
    out += decomp.flush()
    return out, not decomp.eof


def as_utf8(raw: RawInput, source: str) -> RawInput:
    """`raw` with UTF-16 text (it starts with a byte order mark) turned into UTF-8."""
    if raw.data[:2] not in UTF16_BOMS:
        return raw
    try:
        text = bytes(raw.data).decode("utf-16")
    except UnicodeDecodeError as exc:
        raise InputError(source, f"starts as UTF-16 text but is not ({exc.reason})") from None
    return replace(raw, data=bytearray(text.encode("utf-8")))
