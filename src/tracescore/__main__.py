"""`python -m tracescore`."""

from tracescore.cli import main

raise SystemExit(main())
