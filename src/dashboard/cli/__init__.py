"""The ``paper-dashboard`` command: `main` builds the parser from one module per command."""
