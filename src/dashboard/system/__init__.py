"""This machine: usable cores, the process's memory, and the SQLite busy policy."""
