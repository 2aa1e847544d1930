"""Figures: execution traces of the search (the CORELS paper's Figures 14, 16 and 18) and the Rashomon set."""

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


def plot_rashomon(rashomon, X=None, y=None, group=None, members=None, max_members: int = 100_000, top: int = 15,
                  title: str | None = None, budget=None):
    """The Rashomon set at a glance, one panel each: members by objective (R*, R* + epsilon and, when a
    budget stopped the enumeration, the objective below which it is complete); the share of members
    using each feature (the ``top`` most used; the optimal list's in a darker colour); predictive
    multiplicity, the rows of ``X`` (default: the training rows) by the share of members that predict
    them differently from the optimal list; with ``X`` and ``y``, model class reliance ranges per column; with
    ``group`` (a column of ``X`` or one value per
    row, two classes), the ranges of each group's rates. Ranges are drawn as bars from the smallest to
    the largest value over the members with a dot at the optimal list's. ``members``: analyse these
    (e.g. ``rashomon.sample(10_000)``) instead of every member; ``budget`` (an
    :class:`optrules.budget.Budget`): the analyses' time and stop request, as in each analysis (a panel of
    an analysis cut short shows what it read, and its title says so). Returns the figure."""
    import matplotlib.pyplot as plt

    panels = ["objectives", "features", "multiplicity"]
    if X is not None and y is not None:
        panels.append("reliance")
        if group is not None:
            panels.append("rates")
    rows = (len(panels) + 1) // 2
    fig, axes = plt.subplots(rows, 2, figsize=(13, 4.8 * rows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    axes = dict(zip(panels, axes.flat))
    _plot_objectives(rashomon, axes["objectives"])
    usage = rashomon.feature_usage(members, max_members).head(top)
    _plot_shares(axes["features"], usage)
    multiplicity = rashomon.multiplicity(X, members, max_members, budget=budget)
    _plot_disagreement(axes["multiplicity"], multiplicity)
    scopes = [multiplicity["scope"]]
    if "reliance" in axes:
        reliance = rashomon.reliance(X, y, members, max_members, budget=budget)
        scopes.append(reliance.attrs["scope"])
        reliance = reliance.head(top)
        _plot_ranges(axes["reliance"], reliance["column"].astype(str), reliance,
                     "increase in error when the column is permuted")
    if "rates" in axes:
        rates = rashomon.group_rates(X, y, group, members, max_members, budget=budget)
        scopes.append(rates.attrs["scope"])
        short = {"positive_rate": "positive", "false_positive_rate": "FPR", "false_negative_rate": "FNR"}
        labels = [f"{row.group}: {short[row.rate]}" for row in rates.itertuples()]
        _plot_ranges(axes["rates"], labels, rates, f"rate over the members (by {group if isinstance(group, str) else 'group'})")
    from .corels.rashomon_analysis import scope_note

    note = scope_note(*scopes)
    fig.suptitle(title or f"{rashomon.size:,} rule lists within {rashomon.epsilon:.4g} of R* = {rashomon.optimum:.6f}"
                 + ("" if rashomon.complete else f" (complete below {rashomon.complete_below:.6f})")
                 + (f"\nanalyses not exact: {note}" if note else ""))
    fig.tight_layout(rect=(0, 0, 1, 0.97))  # (room for the title)
    return fig


def _plot_objectives(rashomon, ax) -> None:
    edges, counts = rashomon.objective_histogram()
    ax.stairs(counts, edges, fill=True, color="#457b9d")
    ax.axvline(rashomon.optimum, color="#1d3557", linestyle="--", label="R*")
    ax.axvline(rashomon.threshold, color="#e07a1f", linestyle="--", label="R* + epsilon")
    if not rashomon.complete and rashomon.complete_below < rashomon.threshold:
        ax.axvline(rashomon.complete_below, color="#c1121f", linestyle=":", label="complete below")
    if counts.max(initial=0) > 100 * max(1, counts[counts > 0].min(initial=1)):
        ax.set_yscale("log")
    ax.set_xlabel("objective")
    ax.set_ylabel("members")
    ax.legend(fontsize="small", loc="upper left")


def _plot_shares(ax, usage) -> None:
    positions = np.arange(len(usage))[::-1]
    colours = np.where(usage["in_optimal_list"], "#1d3557", "#a8dadc")
    ax.barh(positions, usage["share"], color=colours)
    ax.set_yticks(positions, usage["feature"], fontsize="small")
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of members using the feature (dark: in the optimal list)")


def _plot_disagreement(ax, multiplicity: dict) -> None:
    disagreement = np.asarray(multiplicity["disagreement"], dtype=float)
    disagreement = disagreement[np.isfinite(disagreement)]  # (the rows an analysis on a row sample read)
    ax.hist(disagreement, bins=np.linspace(0, 1, 21), color="#457b9d")
    ax.set_yscale("log")
    ax.set_xlabel("share of members predicting the row differently from the optimal list")
    ax.set_ylabel("rows")
    ax.set_title(f"ambiguity {multiplicity['ambiguity']:.1%}, discrepancy {multiplicity['discrepancy']:.1%}",
                 fontsize="medium")


def _plot_ranges(ax, labels, frame, xlabel: str) -> None:
    positions = np.arange(len(frame))[::-1]
    low, high = frame["min"].to_numpy(float), frame["max"].to_numpy(float)
    ax.hlines(positions, low, high, color="#457b9d", linewidth=6, alpha=0.7, label="range over the members")
    ax.plot(frame["optimal"].to_numpy(float), positions, "o", color="#1d3557", label="optimal list")
    ax.set_yticks(positions, list(labels), fontsize="small")
    ax.set_xlabel(xlabel)
    ax.legend(fontsize="small")


def plot_fairness_frontier(frontier, X_test=None, y_test=None, ax=None):
    """A :class:`~optrules.fairness.frontier.FairnessFrontier`: the certified objective (and, with test data,
    the test error) against the achieved unfairness, a point per bound; returns the axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    rows = frontier.table(X_test, y_test)
    unfair = [r["unfairness"] for r in rows]
    ax.plot(unfair, [r["objective"] for r in rows], "o-", label="training objective (certified)")
    if X_test is not None:
        ax.plot(unfair, [1 - r["test_accuracy"] for r in rows], "s--", label="test error")
    ax.set_xlabel(f"{frontier.metric.replace('_', ' ')} gap of the optimum")
    ax.set_ylabel("objective / error")
    ax.legend()
    return ax
