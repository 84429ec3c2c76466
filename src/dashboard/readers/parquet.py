"""Parquet tables, refused before decoding when dictionary-encoded text would decode too big."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.compute as pc

from dashboard.readers import limits
from dashboard.readers.bounded import Content, _too_large
from dashboard.readers.fields import _require_abstract_column
from dashboard.readers.load_report import FileLog, FileRefused, Record
from dashboard.readers.registry import Parsed


def read_parquet(content: Content, log: FileLog) -> Parsed:
    """The registry's reader for Parquet."""
    return Parsed(_parquet_records(content.data))


def _parquet_records(data: bytes | bytearray) -> list[Record]:
    """The rows of a Parquet file, refused before they are decoded when they would be too big.

    The file's own sizes are not enough: dictionary and run-length encoding let a file of a few
    hundred bytes hold one long text referenced by a million rows (an 847-byte file decoded to
    3 GB). So text columns are read as dictionaries (the compact form) and the size the rows would
    have once decoded is summed from the dictionary entries' lengths before any row is made.
    """
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(io.BytesIO(data))
        metadata = parquet.metadata
        size = sum(metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups))
        if size > limits.MAX_INPUT_BYTES:
            raise FileRefused(_too_large(size, " once decompressed"))
        _require_abstract_column(parquet.schema_arrow.names)
        # A decoded cell takes at least 8 bytes (a number, an offset), however few the file spends on it.
        cells = metadata.num_rows * max(metadata.num_columns, 1)
        if cells * 8 > limits.MAX_INPUT_BYTES:
            raise FileRefused(_too_large(cells * 8, f" once decoded ({metadata.num_rows:,} rows)"))
        leaves = [parquet.schema.column(i) for i in range(metadata.num_columns)]
        texts = [
            leaf.path
            for leaf in leaves
            if leaf.physical_type == "BYTE_ARRAY" and leaf.logical_type.type in _PARQUET_TEXT_TYPES
        ]
        table = pq.ParquetFile(io.BytesIO(data), read_dictionary=texts).read()
        decoded = sum(_decoded_bytes(chunk) for column in table.columns for chunk in column.chunks)
        if decoded > limits.MAX_INPUT_BYTES:
            raise FileRefused(_too_large(decoded, " once decoded"))
        rows = table.to_pylist()
    except FileRefused:
        raise
    except Exception as error:  # pyarrow raises many types for bad bytes; all mean "unreadable"
        raise FileRefused(
            f"not a readable Parquet file ({type(error).__name__}: {str(error)[:200]}): write it again, "
            "or export CSV or JSON Lines"
        ) from None
    return [Record(f"row {n}", n, row) for n, row in enumerate(rows, start=1)]


_PARQUET_TEXT_TYPES = frozenset({"STRING", "NONE", "JSON", "BSON", "ENUM"})


def _decoded_bytes(array: pa.Array) -> int:
    """Bytes `array` would take with every dictionary entry written out where it is used."""
    kind = array.type
    if pa.types.is_dictionary(kind):
        values = array.dictionary
        if (
            pa.types.is_string(values.type)
            or pa.types.is_binary(values.type)
            or pa.types.is_large_string(values.type)
            or pa.types.is_large_binary(values.type)
        ):
            lengths = pc.take(pc.binary_length(values), array.indices)
            return int(pc.sum(lengths).as_py() or 0) + 8 * len(array)
        return _decoded_bytes(values.take(array.indices))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return 8 * len(array) + _decoded_bytes(array.flatten())
    if pa.types.is_map(kind):
        return 8 * len(array) + _decoded_bytes(array.keys) + _decoded_bytes(array.items)
    if pa.types.is_struct(kind):
        return 8 * len(array) + sum(_decoded_bytes(array.field(i)) for i in range(kind.num_fields))
    return int(array.nbytes)
