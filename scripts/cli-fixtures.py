"""Writes the fixtures of `batchtok encode`'s tests (__test__/fixtures/cli/).

- docs.parquet: documents in a Parquet file written by pyarrow (two row groups, zstd pages, a
  `text` column beside an `id` column), so the CLI's Parquet reader is tested on a file from the
  reference writer rather than from itself.
- pages.parquet: the same column in one row group of many small pages (gzip; a dictionary for
  the first pages, plain values once it is full), which the CLI reads a page at a time.
- pages-v2.parquet: the same as pages.parquet in data pages of version 2 (levels before the
  compressed values) under snappy.
- docs-brotli.parquet, docs-lz4.parquet, docs-snappy.parquet, docs-none.parquet: the column under
  the other codecs pyarrow writes.
- docs-delta-length.parquet, docs-delta-bytes.parquet: the column in the other two value
  encodings of a byte array, DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY (parquet-mr's writer,
  in its version 2 format, falls back to the latter once a string column's dictionary is full).
  Arrow's other string types
  (large_string, string_view, a dictionary of strings) are left out: pyarrow writes their pages
  as it writes docs-snappy.parquet's.
- uuid.parquet: a UUID column, which the CLI encodes as the text hyparquet gives it.
- not-utf8.parquet: a byte-array column with no string annotation, whose fourth value is not
  UTF-8.
- nested.parquet: the texts as the `text` field of a struct column `meta` beside `id`: a column
  that holds a group, and a field that is no top-level column.
- docs.jsonl.zst: the same documents as JSONL (`{"id": …, "content": …}`), compressed by the
  zstandard package, since Node 20's zlib has no zstd compressor.
- frames.jsonl.zst: the same JSONL as several zstd frames back to back, a skippable one among
  them (`zstd_frames`).
- megatron-read.json: batchtok's Megatron-LM output for docs.parquet, read back by an
  independent reader (numpy, following the layout of Megatron-LM's
  megatron/core/datasets/indexed_dataset.py), for a uint16 and an int32 vocabulary: the header
  fields, every document's ids as that reader sees them, and the sha256 of both files. The test
  checks these ids against the addon's encodeBatch, and that the CLI still writes the same bytes.

Run by scripts/gen-fixtures.sh in its virtualenv, after `npm run build` (the CLI needs the addon).
"""

from __future__ import annotations

import hashlib
import json
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy
import pyarrow
import pyarrow.parquet
import zstandard

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "__test__" / "fixtures" / "cli"
# The first texts of the parity fixture up to a length: every class of text, newlines included,
# small enough to commit the ids.
DOCUMENTS = 120
DOCUMENT_CHARS = 300
# Megatron-LM's DType codes (indexed_dataset.py) for the two element types batchtok writes.
DTYPES = {8: numpy.uint16, 4: numpy.int32}
INDEX_MAGIC = b"MMIDIDX\x00\x00"
ENCODINGS = ["r50k_base", "o200k_base"]


def documents() -> tuple[list[int], list[str]]:
    """The chosen texts' indices in texts.json, and the texts."""
    cases = json.loads((ROOT / "__test__" / "fixtures" / "texts.json").read_text("utf-8"))["cases"]
    chosen = [i for i, case in enumerate(cases) if len(case["text"]) <= DOCUMENT_CHARS][:DOCUMENTS]
    return chosen, [cases[i]["text"] for i in chosen]


def write_inputs(docs: list[str]) -> None:
    table = pyarrow.table({"id": list(range(len(docs))), "text": docs})
    pyarrow.parquet.write_table(table, OUT / "docs.parquet", row_group_size=len(docs) // 2 + 1, compression="zstd")
    for name, compression, page_version in [("pages.parquet", "gzip", "1.0"), ("pages-v2.parquet", "snappy", "2.0")]:
        pyarrow.parquet.write_table(
            table,
            OUT / name,
            row_group_size=len(docs),
            data_page_size=512,
            write_batch_size=8,
            dictionary_pagesize_limit=2048,
            compression=compression,
            data_page_version=page_version,
        )
    for codec in ["brotli", "lz4", "snappy", "none"]:
        pyarrow.parquet.write_table(table.select(["text"]), OUT / f"docs-{codec}.parquet", compression=codec)
    for name, encoding in [("delta-length", "DELTA_LENGTH_BYTE_ARRAY"), ("delta-bytes", "DELTA_BYTE_ARRAY")]:
        pyarrow.parquet.write_table(
            table.select(["text"]),
            OUT / f"docs-{name}.parquet",
            use_dictionary=False,
            column_encoding={"text": encoding},
            compression="snappy",
        )
    uuids = [bytes(range(i, i + 16)) for i in range(3)]
    pyarrow.parquet.write_table(pyarrow.table({"text": pyarrow.array(uuids, type=pyarrow.uuid())}), OUT / "uuid.parquet")
    values = [text.encode("utf-8") for text in docs[:6]]
    values[3] = b"caf\xe9"
    binary = pyarrow.table({"text": pyarrow.array(values, type=pyarrow.binary())})
    pyarrow.parquet.write_table(binary, OUT / "not-utf8.parquet")
    nested = pyarrow.table({"id": list(range(3)), "meta": [{"text": text} for text in docs[:3]]})
    pyarrow.parquet.write_table(nested, OUT / "nested.parquet")
    lines = "".join(json.dumps({"id": i, "content": text}, ensure_ascii=False) + "\n" for i, text in enumerate(docs))
    (OUT / "docs.jsonl.zst").write_bytes(zstandard.ZstdCompressor(level=3).compress(lines.encode("utf-8")))
    (OUT / "frames.jsonl.zst").write_bytes(zstd_frames(lines.encode("utf-8")))


def zstd_frames(data: bytes) -> bytes:
    """`data` as a zstd stream of several frames, as files joined with `cat` and pzstd's output
    are: a frame with its content size and a checksum, a skippable frame, a frame written as a
    stream (no content size, so a window descriptor), and a frame at a high level."""
    third = len(data) // 3
    first = zstandard.ZstdCompressor(level=3, write_checksum=True).compress(data[:third])
    skippable = struct.pack("<II", 0x184D2A53, 5) + b"notes"
    streamed = zstandard.ZstdCompressor(level=1, write_content_size=False).compressobj()
    second = streamed.compress(data[third : 2 * third]) + streamed.flush()
    last = zstandard.ZstdCompressor(level=19, write_checksum=True).compress(data[2 * third :])
    return first + skippable + second + last


def read_megatron(prefix: Path) -> dict:
    """Reads an indexed dataset the way Megatron-LM's _IndexReader and _MMapBinReader do."""
    index = (prefix.with_suffix(".idx")).read_bytes()
    assert index[:9] == INDEX_MAGIC, "bad header"
    (version,) = struct.unpack("<Q", index[9:17])
    (code,) = struct.unpack("<B", index[17:18])
    sequence_count, document_count = struct.unpack("<QQ", index[18:34])
    offset = 34
    lengths = numpy.frombuffer(index, dtype=numpy.int32, count=sequence_count, offset=offset)
    offset += lengths.nbytes
    pointers = numpy.frombuffer(index, dtype=numpy.int64, count=sequence_count, offset=offset)
    offset += pointers.nbytes
    document_indices = numpy.frombuffer(index, dtype=numpy.int64, count=document_count, offset=offset)
    offset += document_indices.nbytes
    assert offset == len(index), "trailing bytes in the index"
    dtype = DTYPES[code]
    data = numpy.memmap(prefix.with_suffix(".bin"), dtype=numpy.uint8, mode="r")
    ids = []
    for d in range(document_count - 1):
        for s in range(document_indices[d], document_indices[d + 1]):
            sequence = numpy.frombuffer(data, dtype=dtype, count=int(lengths[s]), offset=int(pointers[s]))
            ids.append([int(i) for i in sequence])
    return {
        "version": version,
        "dtypeCode": code,
        "sequenceCount": sequence_count,
        "documentCount": document_count,
        "ids": ids,
        "binSha256": hashlib.sha256(prefix.with_suffix(".bin").read_bytes()).hexdigest(),
        "idxSha256": hashlib.sha256(index).hexdigest(),
    }


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    chosen, docs = documents()
    write_inputs(docs)
    results = {"cases": chosen, "command": {}, "read": {}}
    with tempfile.TemporaryDirectory() as work:
        for encoding in ENCODINGS:
            prefix = Path(work) / encoding
            args = ["encode", "docs.parquet", "--encoding", encoding, "--append-eos", "-q"]
            subprocess.run(
                ["node", str(ROOT / "cli" / "batchtok.js"), *args, "-o", str(prefix)],
                cwd=OUT,
                check=True,
            )
            results["command"][encoding] = args
            results["read"][encoding] = read_megatron(prefix)
    versions = {"numpy": numpy.__version__, "pyarrow": pyarrow.__version__, "zstandard": zstandard.__version__}
    results["versions"] = versions
    (OUT / "megatron-read.json").write_text(json.dumps(results, separators=(",", ":")) + "\n", "utf-8")
    print(f"wrote {OUT.relative_to(ROOT)} with {versions}", file=sys.stderr)


if __name__ == "__main__":
    main()
