"""Corpus readers: any dump of paper abstracts becomes one table of papers plus a load report.

All corpus file I/O lives in this package (`dashboard.corpus` is its public face). `load(paths)`
reads files and folders, `load_uploads(files)` reads (file name, bytes) pairs; both return a
`LoadResult` with the paper table (columns in `dashboard.schema`) and a `LoadReport` saying, per
file, how many papers were read, which records were skipped and why, and what looked odd. Bad
input never raises: it becomes a `Problem` naming the file and the place (``line 12``, ``record 5``,
``row 7``, ``paragraph 3 (line 9)``, or ``""`` for the file).

Formats: `registry.FORMATS`, one entry per format (its file name endings, its description, its
reader); ``.gz`` on any of them, or gzip content, is decompressed first. The help texts, the error
messages and docs/reference/formats.md are written from it. A new format is one reader module and
one entry there (docs/development/extending.md).

Known exports (Paper Copilot, Mini-Conf, OpenReview v1/v2, the arXiv snapshot, Semantic Scholar, Papers
with Code, BibTeX) are read through the one field map (`readers.fields`) and record shapes
(`readers.shapes`); venue and year come from the record, then the file name, then a header line, and the
report says which (`LoadReport.venue_year_sources`). Field names are matched case-insensitively (see
`FIELD_ALIASES`); a record's ``labels`` dict is
searched too (``labels.primary_area`` and so on). Text fields are kept as read except for surrounding
whitespace, line ends (made ``\n``) and control characters other than tab and newline (made spaces).

Limits (module constants, read at call time, so a caller may raise them before a load)
    MAX_INPUT_BYTES        per file after decompression; larger files are refused
    MAX_COMPRESSION_RATIO  gzip output/input ratio above which, past RATIO_CHECK_BYTES of output, a
                           file is refused as a decompression bomb (real corpora compress 3-10x)
    MAX_JSON_DEPTH         deeper JSON nesting is refused before `json.loads` sees it
    MAX_ABSTRACT_CHARS     a longer abstract is not an abstract (a whole paper, a log, a merged dump):
                           the record is SKIPPED with a message, never truncated, so it cannot swamp
                           the topics and term counts
    MAX_FIELD_CHARS        other text fields (title, URLs, venue...) are truncated to this, with a warning
    MAX_LIST_ITEMS         authors/keywords lists are cut to this many items, with a warning
    MAX_PROBLEMS_PER_FILE  each file lists at most this many skipped records and warnings, then a count

Modules
    load        the entry points (`load`, `load_uploads`, `digest_paths`, `digest_uploads`, `input_files`)
    registry    the formats: `FORMATS`, the suffix map, the format lists people read
    bounded     bytes in: size limits, gzip, decoding, binary refusal; `Content` handed to a reader
    safexml     the one hardened XML parser setup (no DTDs, no entities, bounded depth)
    limits      every limit above
    report      `LoadReport`, `FileReport`, `Problem`, `LoadResult`
    fields      the declarative field map (aliases -> column, splitters) and value normalising
    shapes      nested record shapes flattened (OpenReview notes, ...)
    venues      venue and year from text
    table       records -> the raw paper table
    paragraphs, jsonfile, delimited, parquet, excel (with workbook, its streaming .xlsx parser), bibtex:
                one module per format family
"""
