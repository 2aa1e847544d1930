"""The ``optrules`` console script. Its clock starts before the command line module and its libraries
are imported (1.5-3 s), so that a fit's time budget counts the whole command, as documented."""

import time


def main() -> int:
    started = time.perf_counter()
    from .cli import main as run_command

    return run_command(started=started)
