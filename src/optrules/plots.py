"""Figures: execution traces of the search (the CORELS paper's Figures 14, 16 and 18)."""

from __future__ import annotations

import numpy as np


def plot_trace(trace, axes=None, title: str | None = None):
    """Three panels against time (log axis): best objective and lower bound; queue size by prefix length;
    log10 of the remaining search space. ``trace`` is a Trace or a Certificate. Returns the figure."""
    import matplotlib.pyplot as plt

    trace = getattr(trace, "trace", trace)
    if not len(trace):
        raise ValueError("the trace is empty")
    t = np.maximum(np.asarray(trace.time), 1e-4)
    if axes is None:
        fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    else:
        fig = axes[0].figure
    ax = axes[0]
    ax.step(t, trace.objective, where="post", label="best objective")
    ax.step(t, trace.lower_bound, where="post", label="lower bound")
    ax.set_xscale("log")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("objective")
    ax.legend()
    ax = axes[1]
    longest = max(len(q) for q in trace.queue_by_length)
    queue = np.zeros((len(trace), longest))
    for i, q in enumerate(trace.queue_by_length):
        queue[i, : len(q)] = q
    for length in range(longest):
        if queue[:, length].any():
            ax.plot(t, queue[:, length], label=f"length {length}")
    ax.set_xscale("log")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("queued prefixes")
    ax.legend(fontsize="small")
    ax = axes[2]
    remaining = np.asarray(trace.log10_remaining)
    ax.plot(t[np.isfinite(remaining)], remaining[np.isfinite(remaining)])
    ax.set_xscale("log")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("log10 remaining search space")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
