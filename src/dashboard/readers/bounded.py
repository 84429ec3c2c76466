"""Bounded byte reading: size limits, gzip (bomb-proof), decoding, binary refusal, and `Content`.

Every limit lives in `dashboard.readers.limits` and is read at call time. Text is decoded as UTF-8
(with or without BOM), UTF-16/32 with a BOM, then cp1252, then latin-1, with a warning for anything
but UTF-8; binary files (PDF, ZIP, images, NUL bytes, control characters) are refused by name. Which
format a file is comes from its name, in `dashboard.readers.registry`.
"""

from __future__ import annotations

import codecs
import re
import zlib
from pathlib import Path, PurePath

from dashboard.readers import limits, registry
from dashboard.readers.load_report import FileLog, FileRefused

# Control characters that mark a file as binary (C1 \x80-\x9f are not counted: real text decoded from
# cp1252/latin-1 has some, while binary data is caught by its NUL and C0 bytes)
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_BINARY_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF", "a PDF"),
    (b"PK\x03\x04", "a ZIP archive or Office document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"PAR1", "a Parquet file"),
    (b"\x7fELF", "a program"),
    (b"BZh", "a bzip2 archive"),
    (b"\xfd7zXZ", "an xz archive"),
    (b"7z\xbc\xaf", "a 7-Zip archive"),
    (b"SQLite format 3", "an SQLite database"),
    (b"\xd0\xcf\x11\xe0", "an old Office document (.xls/.doc)"),
)
_GZIP_MAGIC = b"\x1f\x8b"
_UNICODE_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_BE)


class Content:
    """One file's bytes on their way to its reader: as they are, or decoded to text once.

    A reader asks for what it parses: `data` (binary formats, XML that declares its own encoding) or
    `text()` (decoded as this module decodes, control characters refused). Decoding drops the bytes,
    so a big file is held once as bytes or once as text, not both while its records are parsed.
    """

    def __init__(self, name: str, data: bytes | bytearray, log: FileLog) -> None:
        self.name = name
        self._data: bytes | bytearray | None = data
        self._text: str | None = None
        self._log = log
        self.encoding: str | None = None

    @property
    def suffix(self) -> str:
        """The file name's ending, lower-cased, ``.gz`` looked through: ``.md`` for ``notes.md.gz``."""
        name = self.name[:-3] if self.name.lower().endswith(".gz") else self.name
        return PurePath(name).suffix.lower()

    @property
    def data(self) -> bytes | bytearray:
        """The file's bytes (decompressed); gone once `text()` was asked for."""
        if self._data is None:
            raise RuntimeError("the bytes were dropped when the text was decoded")
        return self._data

    def starts_with_bom(self) -> bool:
        """True when the bytes begin with a Unicode byte order mark (UTF-8, UTF-16 or UTF-32)."""
        return self.data.startswith(_UNICODE_BOMS)

    def text(self) -> str:
        """The file as text, decoded once (see the module), binary and control-character files refused."""
        if self._text is None:
            self._text, self.encoding = _decode(self.data, self._log)
            self._data = None
            _refuse_control_characters(self._text)
        return self._text


def _read_file(path: Path) -> bytes:
    try:
        if not path.exists():  # it was there when the load started
            raise FileRefused(f"no such file or folder: {path}")
        if not path.is_file():
            raise FileRefused(f"not a regular file: {path}")
        size = path.stat().st_size
        if size > limits.MAX_INPUT_BYTES:
            raise FileRefused(_too_large(size))
        with path.open("rb") as handle:
            # one byte past the size: the buffer is allocated at this size, and a file that grew
            # since stat() is still bounded
            data = handle.read(size + 1)
    except OSError as error:
        raise FileRefused(f"cannot read {path}: {error.strerror or error}") from None
    return _bounded_bytes(data)


def _bounded_bytes(data: bytes) -> bytes:
    if len(data) > limits.MAX_INPUT_BYTES:
        raise FileRefused(_too_large(len(data)))
    return bytes(data)


def _too_large(size: int, when: str = "") -> str:
    return (
        f"file is {_size(size)}{when}, above the {_size(limits.MAX_INPUT_BYTES)} limit "
        "(split it, or raise dashboard.corpus.MAX_INPUT_BYTES)"
    )


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _upload_name(name: object, n: int) -> str:
    # The name is only a label: keep the last path component, one printable line, short. It is never
    # opened. Bidi overrides go too: "evil\u202etxt.exe" would show as "evilexe.txt".
    text = _CONTROL.sub("", str(name)).replace("\\", "/").rsplit("/", 1)[-1]
    text = " ".join(_NOT_IN_LABELS.sub(" ", text).split())[:200]
    return text if text.strip(".") else f"upload-{n}"


_NOT_IN_LABELS = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def _gunzip(data: bytes | bytearray, log: FileLog) -> bytes | bytearray:
    """Stream-decompress gzip (all members) within MAX_INPUT_BYTES and MAX_COMPRESSION_RATIO.

    Output is produced 1 MiB at a time, so a bomb is refused after limits.RATIO_CHECK_BYTES of output
    rather than after filling memory. A truncated or corrupt stream keeps what came before, with a
    warning; the records cut in half are then reported by the format's reader.
    """
    out = bytearray()
    view = memoryview(data)
    decompressor = zlib.decompressobj(wbits=31)
    consumed = 0  # compressed bytes used so far, for the ratio
    position = 0
    while True:
        chunk_in = view[position : position + (1 << 20)]
        try:
            chunk = decompressor.decompress(chunk_in, 1 << 20)
            while True:
                out += chunk
                unread = len(decompressor.unconsumed_tail) + len(decompressor.unused_data)
                _check_growth(len(out), consumed + len(chunk_in) - unread)
                if not decompressor.unconsumed_tail:
                    break
                chunk = decompressor.decompress(decompressor.unconsumed_tail, 1 << 20)
        except zlib.error as error:
            if not out:
                raise FileRefused(
                    f"not a valid gzip file ({error}): download it again, or give it uncompressed"
                ) from None
            log.warn("", f"gzip data is corrupt after {_size(len(out))} ({error}); read what came before")
            return out
        if decompressor.eof:
            unused = len(decompressor.unused_data)
            position += len(chunk_in) - unused
            consumed = position
            rest = view[position:]
            if bytes(rest[:2]) == _GZIP_MAGIC:  # another member follows (concatenated .gz files)
                decompressor = zlib.decompressobj(wbits=31)
                continue
            if bytes(rest).strip(b"\0"):
                log.warn("", f"{_size(len(rest))} of data after the end of the gzip stream ignored")
            return out
        position += len(chunk_in)
        consumed = position
        if position >= len(data):
            break
    if not out:
        raise FileRefused("gzip file is truncated before any data: nothing to read (download it again)")
    log.warn("", f"gzip file is truncated (stream ends early after {_size(len(out))}); read what came before")
    return out


def _check_growth(size: int, consumed: int) -> None:
    if size > limits.MAX_INPUT_BYTES:
        raise FileRefused(
            f"decompresses to more than the {_size(limits.MAX_INPUT_BYTES)} limit: refused "
            "(raise dashboard.corpus.MAX_INPUT_BYTES to read it)"
        )
    if size > limits.RATIO_CHECK_BYTES and size > limits.MAX_COMPRESSION_RATIO * max(consumed, 1):
        raise FileRefused(
            f"compression ratio above {limits.MAX_COMPRESSION_RATIO}:1 "
            f"({_size(size)} from {_size(consumed)}): "
            "refused as a likely decompression bomb (raise dashboard.corpus.MAX_COMPRESSION_RATIO if the "
            "file is genuine)"
        )


def _decode(data: bytes | bytearray, log: FileLog) -> tuple[str, str]:
    """Bytes -> text: UTF-8 (with/without BOM), UTF-16/32 with BOM, then cp1252, then latin-1."""
    for bom, codec, label in (
        (codecs.BOM_UTF32_LE, "utf-32", "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32", "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig", "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16", "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16", "utf-16"),
    ):
        if data.startswith(bom):
            try:
                text = data.decode(codec)
            except UnicodeDecodeError as error:
                text = data.decode(codec, errors="replace")
                log.warn("", f"invalid {label} at byte {error.start}: unreadable characters shown as \ufffd")
            if label != "utf-8":
                log.warn("", f"not UTF-8: read as {label.upper()} (byte order mark found)")
            return text, label
    _refuse_binary(data)
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as error:
        bad_at = error.start
        if error.reason == "unexpected end of data" and error.start >= len(data) - 3:
            # a file cut inside its last character (a truncated download): still UTF-8
            log.warn("", "the last character is cut short (truncated file?): dropped")
            return data[: error.start].decode("utf-8"), "utf-8"
    for codec, label in (("cp1252", "cp1252 (Windows Western)"), ("latin-1", "latin-1 (ISO 8859-1)")):
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            continue
        log.warn("", f"not valid UTF-8 (byte {bad_at}): read as {label}; check accented characters")
        return text, codec
    raise AssertionError("latin-1 decodes every byte")  # pragma: no cover


def _refuse_binary(data: bytes | bytearray) -> None:
    head = data[:8192]
    for magic, kind in _BINARY_MAGIC:
        if head.startswith(magic):
            raise _binary(f"looks like {kind}")
    if b"\0" in head:
        raise _binary("contains NUL bytes")


def _binary(reason: str) -> FileRefused:
    return FileRefused(
        f"binary file ({reason}), not text: nothing read; export the abstracts as {registry.format_names()}"
    )


def _refuse_control_characters(text: str) -> None:
    # checked on decoded text: UTF-8 bytes of CJK text fall in 0x80-0x9f, decoded they are letters
    sample = text[:8192]
    if len(_CONTROL.findall(sample)) > max(8, len(sample) // 100):
        raise _binary("full of control characters")
