"""Compiled building blocks shared by the branch-and-bound searches: bit tricks, the priority queue,
prefixes stored as parent-pointer chains, the state's layout and steps, dominance maps, compaction; one
module each, every name importable from here. numba's on-disk cache notices edits to a function's own
file only: each module, and each kernel that inlines from this package, drops its cache when any file
of the package changed (:func:`drop_stale_cache` over the package's folder)."""

from .batches import (  # noqa: F401
    BATCH_RECORDS,
    MAX_BATCH,
    batch_slots,
    two_compilations,
)
from .cache import (  # noqa: F401
    drop_stale_cache,
)
from .compaction import (  # noqa: F401
    _is_kept,
    _new_id,
    find_remaining_set,
    map_refill,
    mark_kept_nodes,
    move_kept,
    renumber_kept,
)
from .counting import (  # noqa: F401
    _PACK_MASK,
    _PACK_SHIFT,
    _planes_total,
    class_sums,
    count_children,
    counts_of,
    live_word_list,
    popcount,
    trailing_zeros,
    unpack_counts,
    weighted_count,
)
from .heap import (  # noqa: F401
    _before,
    _sift_down,
    heap_pop,
    heap_push,
    prefix_of,
    rebuild_uncaptured,
)
from .layout import (  # noqa: F401
    Counting,
    Frontier,
    Progress,
    Tree,
    Workspace,
    slot_row,
    workspace,
)
from .maps import (  # noqa: F401
    _FNV_PRIME,
    FNV_OFFSET,
    fnv_step,
    map_rehash,
    remaining_set_hash,
    same_remaining_set,
    spread_bits,
)
from .state import (  # noqa: F401
    BEST_LEN,
    DOMINATED,
    DROPPED,
    DROPPED_FLOOR,
    EXPANDED,
    HEAP_SIZE,
    IMPROVED,
    INSERTIONS,
    KEPT_A_CHILD,
    LB_EVALS,
    LEAVES_RESOLVED,
    MAP_COUNT,
    MAP_LOAD_DENOMINATOR,
    MAP_LOAD_NUMERATOR,
    MAX_LENGTH,
    MAX_QUEUE,
    MEMORY_FULL,
    MEMORY_TIGHT,
    N_FLOAT_STATE,
    N_INT_STATE,
    N_NODES,
    NEED_ROOM,
    POPS_DONE,
    QUEUE_EMPTY,
    REEXPANDED,
    SET_ASIDE,
    add_child,
    drop_child,
    free_room,
    mark_prefix,
    needs_room,
    new_node,
    queue_node,
    record_incumbent,
)
