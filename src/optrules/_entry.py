"""The ``optrules`` console script. Its clock starts before the command line module and its libraries
are imported (1.5-3 s), so that a fit's time budget counts the whole command, as documented."""

import os
import sys
import time

#: the exit status of a command Ctrl-C stopped (the shell's 128 + SIGINT)
INTERRUPTED_STATUS = 130


def main() -> int:
    started = time.perf_counter()
    from .cli import main as run_command

    status = run_command(started=started)
    if status == INTERRUPTED_STATUS:
        leave_at_once(status)
    return status


def leave_at_once(status: int) -> None:
    """End the process now, its output flushed: after Ctrl-C the user waits on the exit, and what is
    left to do is the interpreter's teardown of numba's, LLVM's and pandas' state (0.3-0.5 s measured)
    and any kernel still compiling in its thread (seconds on a first fit; the next run compiles it
    again). The model and every file were written and synced before (``optrules.files``)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more can reach it
            pass
    os._exit(status)
