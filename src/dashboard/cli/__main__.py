"""``python -m dashboard.cli``: the ``paper-dashboard`` command."""

from dashboard.cli.main import main

raise SystemExit(main())
