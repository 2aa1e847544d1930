"""Generated raw tables that look like a user's own CSV: mixed types, identifiers, missing values.

Used by the tests and the raw-data benchmark to judge defaults on data nobody tuned them to: the
shapes vary with the seed (how many distinct values, how skewed, which columns are missing).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

_WORDS = ("north", "south", "east", "west", "alpha", "beta", "gamma", "delta", "river", "hill", "park", "lake",
          "stone", "field", "wood", "bay", "port", "glen", "mill", "ford")


def _zipf_labels(rng, n_rows: int, n_values: int, prefix: str) -> np.ndarray:
    """Category labels with a skewed (Zipf-like) frequency, as real categorical columns have."""
    weights = 1.0 / np.arange(1, n_values + 1) ** rng.uniform(0.8, 1.4)
    labels = np.array([f"{prefix}{rng.choice(_WORDS)}{k}" for k in range(n_values)], dtype=object)
    return labels[rng.choice(n_values, size=n_rows, p=weights / weights.sum())]


def make_mixed_table(n_rows: int = 5000, n_numeric: int = 15, n_text: int = 5, missing_rate: float = 0.02,
                     seed: int = 0, target: str = "outcome", n_binary: int = 0) -> pd.DataFrame:
    """A raw table of ``n_numeric`` numeric, ``n_text`` text and ``n_binary`` yes/no columns (``b0``,
    ``b1``, ..., each yes at its own rate) plus a binary ``target``.

    Among the numeric columns: a row identifier (``id``, unique per row), continuous measurements that
    are nearly unique per row, integer counts, and scores with a few hundred values; among the text
    columns: a unique customer code (an identifier too), a free-text note almost unique per row, and
    categories of 2 to a few hundred skewed values. Some numeric and text columns miss ``missing_rate``
    of their values. The target depends on a few columns through a short rule list, with 10% noise.
    """
    rng = np.random.default_rng(seed)
    columns: dict[str, np.ndarray] = {}
    numeric_makers = [
        lambda: np.arange(1, n_rows + 1),  # identifier
        lambda: rng.integers(18, 90, n_rows),  # age
        lambda: np.round(rng.lognormal(10, 0.8, n_rows), 2),  # income: nearly unique
        lambda: np.round(rng.normal(1500, 3000, n_rows), 2),  # balance
        lambda: rng.poisson(rng.uniform(0.5, 4), n_rows),  # counts
        lambda: rng.integers(300, 851, n_rows),  # score
        lambda: np.round(rng.uniform(0, 1, n_rows), 4),  # ratio
        lambda: rng.integers(0, 3000, n_rows),  # days
        lambda: np.round(rng.gamma(2.0, 15.0, n_rows), 1),  # duration
        lambda: rng.binomial(1, rng.uniform(0.1, 0.5), n_rows),  # flag
    ]
    for j in range(n_numeric):
        name = "id" if j == 0 else f"num{j}"
        maker = numeric_makers[0] if j == 0 else numeric_makers[1 + (j - 1) % (len(numeric_makers) - 1)]
        columns[name] = maker().astype(np.float64) if j and j % 3 == 0 else maker()
    text_makers = [
        lambda: np.array([f"C{v:07d}" for v in rng.permutation(10**6)[:n_rows]], dtype=object),  # identifier
        lambda: np.array([f"{rng.choice(_WORDS)} {rng.choice(_WORDS)} {rng.integers(10**5)}" for _ in range(n_rows)],
                         dtype=object),  # free text
        lambda: _zipf_labels(rng, n_rows, 2, "g"),
        lambda: _zipf_labels(rng, n_rows, int(rng.integers(5, 12)), "r"),
        lambda: _zipf_labels(rng, n_rows, int(rng.integers(30, 60)), "o"),
        lambda: _zipf_labels(rng, n_rows, int(rng.integers(150, 400)), "c"),
    ]
    for j in range(n_text):
        name = ("code", "note")[j] if j < 2 else f"text{j}"
        maker = text_makers[j] if j < len(text_makers) else text_makers[2 + (j - 2) % (len(text_makers) - 2)]
        columns[name] = maker()
    for j in range(n_binary):
        columns[f"b{j}"] = np.where(rng.random(n_rows) < rng.uniform(0.05, 0.5), "yes", "no")
    frame = pd.DataFrame(columns)
    # a short hidden rule list decides the target
    score = np.zeros(n_rows)
    numeric_names = [c for c in frame.columns if c != "id" and pd.api.types.is_numeric_dtype(frame[c])]
    for name in rng.choice(numeric_names, size=min(3, len(numeric_names)), replace=False):
        values = frame[name].to_numpy(dtype=np.float64)
        score += (values > np.quantile(values, rng.uniform(0.3, 0.8))) * rng.uniform(0.5, 1.5)
    text_names = [c for c in frame.columns if c.startswith("text")]
    if text_names:
        column = frame[text_names[0]]
        score += (column == column.mode()[0]).to_numpy() * 1.0
    positive = score > np.quantile(score, 0.6)
    flip = rng.random(n_rows) < 0.1
    frame[target] = np.where(positive ^ flip, "yes", "no")
    for name in list(frame.columns)[1:-1:4]:  # a few columns miss values
        mask = rng.random(n_rows) < missing_rate
        if pd.api.types.is_integer_dtype(frame[name]):
            frame[name] = frame[name].astype("float64")
        frame.loc[mask, name] = np.nan
    return frame


def make_noisy_table(n_rows: int = 1000, n_columns: int = 20, categorical_share: float = 0.6,
                     noise: float = 0.2, missing_rate: float = 0.0, seed: int = 0,
                     target: str = "outcome") -> pd.DataFrame:
    """A table shaped like the credit and census tables users bring: ``n_columns`` columns, about
    ``categorical_share`` of them categorical with 3-12 skewed levels, the others numeric (ages,
    amounts, durations, small counts); a binary ``target`` from a score spread over many columns (each
    category level and each numeric column adds its own weight, as in a real risk score), with
    ``noise`` of the labels flipped at random; ``missing_rate`` of a third of the columns' values missing.
    Rows are nearly all distinct, so no bound can lean on duplicate rows."""
    rng = np.random.default_rng(seed)
    n_categorical = int(round(categorical_share * n_columns))
    columns: dict[str, np.ndarray] = {}
    score = np.zeros(n_rows)
    for j in range(n_categorical):
        levels = int(rng.integers(3, 13))
        codes = rng.choice(levels, size=n_rows, p=_skewed(rng, levels))
        columns[f"cat{j}"] = np.array([f"L{j}_{k}" for k in range(levels)], dtype=object)[codes]
        score += rng.normal(0, 0.5, levels)[codes] * (rng.random() < 0.6)
    numeric_makers = [
        lambda: rng.integers(18, 80, n_rows).astype(np.float64),  # age
        lambda: np.round(rng.lognormal(8, 0.9, n_rows), 0),  # amount
        lambda: rng.integers(4, 73, n_rows).astype(np.float64),  # duration in months
        lambda: rng.poisson(rng.uniform(0.3, 3), n_rows).astype(np.float64),  # counts
        lambda: np.round(rng.normal(40, 12, n_rows), 1),  # hours, scores
    ]
    for j in range(n_columns - n_categorical):
        values = numeric_makers[j % len(numeric_makers)]()
        columns[f"num{j}"] = values
        if rng.random() < 0.6:
            ranks = (np.argsort(np.argsort(values)) + 0.5) / n_rows
            score += rng.normal(0, 0.8) * (ranks > rng.uniform(0.2, 0.8))
    frame = pd.DataFrame(columns)
    positive = score > np.quantile(score, rng.uniform(0.55, 0.75))
    flip = rng.random(n_rows) < noise
    frame[target] = np.where(positive ^ flip, "bad", "good")
    if missing_rate > 0:
        for name in list(frame.columns)[:-1:3]:
            frame.loc[rng.random(n_rows) < missing_rate, name] = np.nan
    return frame


def _skewed(rng, levels: int) -> np.ndarray:
    """Level frequencies of one categorical column: skewed, each level at least 1 % of the rows."""
    weights = 1.0 / np.arange(1, levels + 1) ** rng.uniform(0.3, 1.2)
    weights = np.maximum(weights / weights.sum(), 0.01)
    return weights / weights.sum()
