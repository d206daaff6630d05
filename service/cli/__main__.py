"""``python -m service.cli``: the same as the ``shredcat`` script."""

import sys

from service.cli import main

sys.exit(main())
