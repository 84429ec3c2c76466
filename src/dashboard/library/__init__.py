"""The library: reading lists and notes that last, in one SQLite file, with import and export."""
