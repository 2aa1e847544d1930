"""``python -m optrules.cli``: as the console script (:mod:`optrules._entry`)."""

import sys

from .._entry import INTERRUPTED_STATUS, leave_at_once
from . import main

status = main()
if status == INTERRUPTED_STATUS:
    leave_at_once(status)
sys.exit(status)
