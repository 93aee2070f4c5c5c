"""``python -m voxmetrics``: see :mod:`voxmetrics.cli`."""

import sys

from voxmetrics.cli import main

sys.exit(main())
