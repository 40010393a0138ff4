"""Reading an input file: plain or gzip, block by block, tolerant of a gzip stream cut short.

`open_input` gives an `Input`: the decompressed content read in blocks, so that a trace
of any size is decoded without its whole text in memory (`loaders.kineto`). `read_input`
reads everything at once, for the small inputs (printed tables, reports) that need it.
"""

from __future__ import annotations

import io
import os
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

import msgspec
from msgspec.structs import replace

from profsight.errors import InputError
from profsight.loaders.progress import Progress, no_progress
from profsight.paths import pure

GZIP_MAGIC = b"\x1f\x8b"
#: Byte order marks of UTF-16 text (Windows PowerShell's ``>`` writes UTF-16 LE with one).
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
BLOCK = 8 << 20
"""The most bytes read from the disk at a time (and the most a gzip stream is inflated by
at once)."""
GZIP_BLOCK = 1 << 20
MIN_READ = 64 << 10
"""The least read from the disk at a time: a read takes what was asked, no more, so that
the decoder's window is the only copy of the bytes it has not decoded yet."""


class RawInput(msgspec.Struct, frozen=True):
    data: bytearray
    """The (decompressed) content. Mutable so that the decoder can frame chunks in place."""
    compressed: bool
    gzip_truncated: bool
    """The gzip stream ended early: `data` is what could be decompressed."""
    size_on_disk: int


class Input:
    """The decompressed content of a file (or of bytes in memory), read in blocks.

    `read` returns up to `n` bytes (fewer only at the end); `truncated` is set once a gzip
    stream turned out to end early (what it held up to there is returned). Progress is
    reported as bytes of the file on disk read ("read" phase).
    """

    def __init__(
        self,
        fh: BinaryIO,
        size_on_disk: int,
        source: str,
        progress: Progress = no_progress,
        path: str | os.PathLike[str] | None = None,
    ) -> None:
        self._fh = fh
        self.size_on_disk = size_on_disk
        self.source = source
        self.path = path
        """The file itself, where other processes may read parts of it (plain files)."""
        self._progress = progress
        head = fh.read(2)
        self.compressed = head == GZIP_MAGIC
        self.truncated = False
        self._decomp = zlib.decompressobj(zlib.MAX_WBITS | 16) if self.compressed else None
        self._member_started = False
        self._pending = bytearray(b"" if self.compressed else head)
        self._gz_in: bytes = head if self.compressed else b""
        self._done = len(head)
        self._eof = False
        self.position = 0
        """Decompressed bytes returned so far."""

    @classmethod
    def from_bytes(cls, data: bytes | bytearray, source: str = "<memory>") -> Input:
        return cls(io.BytesIO(bytes(data)), len(data), source)

    @property
    def seekable(self) -> bool:
        """Plain files: another process may read a range of them itself."""
        return not self.compressed and self.path is not None

    def seek(self, position: int) -> None:
        """Go to `position` of a plain file (see `seekable`)."""
        self._fh.seek(position)
        self._done = position  # progress: the part before is read by another process
        self._pending.clear()
        self._eof = False
        self.position = position

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> Input:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read(self, n: int = BLOCK) -> bytes | bytearray:
        """Up to `n` bytes; fewer only at the end (b"" once everything was read)."""
        self._fill_to(n)
        if len(self._pending) <= n:
            out, self._pending = self._pending, bytearray()
        else:
            out = self._pending[:n]
            del self._pending[:n]
        self.position += len(out)
        return out

    def peek(self, n: int) -> bytes:
        """The next `n` bytes (fewer at the end), left to be read."""
        self._fill_to(n)
        return bytes(self._pending[:n])

    def _fill_to(self, n: int) -> None:
        while len(self._pending) < n and not self._eof:
            want = min(max(n - len(self._pending), MIN_READ), BLOCK)
            if self._decomp is None:
                self._fill_plain(want)
            else:
                self._fill_gzip(want)

    def read_all(self) -> bytearray:
        out = bytearray()
        while block := self.read(BLOCK):
            out += block
        return out

    def _disk_read(self, n: int) -> bytes:
        block = self._fh.read(n)
        self._done += len(block)
        self._progress("read", min(self._done, self.size_on_disk), self.size_on_disk)
        return block

    def _fill_plain(self, want: int) -> None:
        block = self._disk_read(want)
        self._pending += block
        self._eof = not block

    def _fill_gzip(self, want: int) -> None:
        """Inflate at most `want` bytes more: memory stays bounded whatever the ratio."""
        if not self._gz_in:
            self._gz_in = self._disk_read(GZIP_BLOCK)
            if not self._gz_in:
                self._end_gzip()
                return
        decomp = self._decomp
        assert decomp is not None
        try:
            self._pending += decomp.decompress(self._gz_in, want)
        except zlib.error as exc:
            if not self.position and not self._pending:
                raise InputError(self.source, f"is not a valid gzip file ({exc})") from None
            self.truncated = self._eof = True  # what came before the damage is kept
            return
        self._member_started = True
        if decomp.eof:  # concatenated gzip members: the next one starts after this one
            self._gz_in = decomp.unused_data
            self._decomp = zlib.decompressobj(zlib.MAX_WBITS | 16)
            self._member_started = False
        else:
            self._gz_in = decomp.unconsumed_tail

    def _end_gzip(self) -> None:
        decomp = self._decomp
        assert decomp is not None
        self._pending += decomp.flush()
        self.truncated = self._member_started and not decomp.eof
        self._eof = True


def open_input(path: str | os.PathLike[str], progress: Progress = no_progress) -> Input:
    """`path` opened for reading in blocks. Never writes anything."""
    source = path = pure(path)  # (named as pathlib names it: "x.json", not "./x.json")
    with read_errors(source):
        size = os.path.getsize(path)
        fh = open(path, "rb")  # noqa: SIM115 (the Input owns and closes it)
        try:
            return Input(fh, size, source, progress, path)
        except BaseException:
            fh.close()
            raise


def read_input(path: str | os.PathLike[str], progress: Progress = no_progress) -> RawInput:
    """The bytes of `path`, decompressed when it is gzip. Never writes anything."""
    with open_input(path, progress) as stream, read_errors(stream.source):
        data = stream.read_all()
        return RawInput(data, stream.compressed, stream.truncated, stream.size_on_disk)


@contextmanager
def read_errors(source: str) -> Iterator[None]:
    """OS errors of reading `source` as one `InputError` line."""
    try:
        yield
    except IsADirectoryError:
        raise InputError(source, "is a directory, not a profiler output file") from None
    except FileNotFoundError:
        raise InputError(source, "no such file") from None
    except PermissionError:
        raise InputError(source, "permission denied") from None
    except MemoryError:
        raise InputError(source, "too large to read into memory") from None
    except OSError as exc:
        raise InputError(source, f"cannot be read ({exc.strerror or exc})") from None


def as_utf8(raw: RawInput, source: str) -> RawInput:
    """`raw` with UTF-16 text (it starts with a byte order mark) turned into UTF-8."""
    if raw.data[:2] not in UTF16_BOMS:
        return raw
    try:
        text = bytes(raw.data).decode("utf-16")
    except UnicodeDecodeError as exc:
        raise InputError(source, f"starts as UTF-16 text but is not ({exc.reason})") from None
    return replace(raw, data=bytearray(text.encode("utf-8")))
