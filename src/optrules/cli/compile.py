"""``optrules compile``: the compiled kernels made ready ahead of a first fit."""

from __future__ import annotations

import time

from rich.console import Console


# -- compile --------------------------------------------------------------------------------------------
def cmd_compile(args, console: Console) -> int:
    from ..warmup import compile_kernels

    def progress(part: str, seconds: float) -> None:
        console.print(f"{part}: {seconds:.1f} s")

    start = time.perf_counter()
    compile_kernels(large=not args.skip_large, progress=progress, first=args.first)
    console.print(f"compiled kernels cached in {time.perf_counter() - start:.1f} s: later fits start without compiling")
    return 0


def _add_compile_command(commands) -> None:
    compile_ = commands.add_parser(
        "compile", help="compile and cache the search kernels now, so that no later fit waits for it",
        description="Run small fits of every model family so that numba compiles each kernel and caches it "
                    "(beside the installed package, or in NUMBA_CACHE_DIR). A fresh install otherwise compiles "
                    "in its first fits: 10-40 s each. Run it once in an install script or a Docker build, "
                    "on the kind of CPU that will run the fits (the cache is kept per CPU).",
    )
    compile_.add_argument("--skip-large", action="store_true",
                          help="leave out the kernels only large problems take: the two-core kernel of large tables "
                               "and the searches over 65,535+ antecedents (about half the time)")
    compile_.add_argument("--first", action="store_true",
                          help="only what a first session takes: the default rule list on a bundled table and its "
                               "Rashomon set (what `make`'s install runs while the optional extras install)")
    compile_.set_defaults(handler=cmd_compile)
