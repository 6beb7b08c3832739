"""Allow `python -m firmware_host`."""

import sys

from firmware_host.cli import main

sys.exit(main())
