"""One self-contained HTML page per model: the data, the model and its rules, the certificate and its
gap, the search's trace, and accuracy overall and by group.

No scripts, no external files or fonts: the page opens offline and can be archived beside the model (a
review board, a model register). Every value taken from the data or the model is escaped.
"""

from __future__ import annotations

import datetime
import math

import numpy as np
import pandas as pd

from .escape import html_text

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .5em 0; } td, th { padding: .2em .7em; border-bottom: 1px solid #eee; text-align: left; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: #f6f6f6; padding: .8em; overflow-x: auto; }
.muted { color: #666; } .ok { color: #176a2c; font-weight: 600; } .gap { color: #9a5b00; font-weight: 600; }
"""


def html_report(model, certificate=None, X=None, y=None, groups=None, sample_weight=None,
                title: str = "optrules model", source: str | None = None, frontier=None) -> str:
    """The report page of ``model`` (a RuleList, FallingRuleList or RuleSet) as HTML text.

    ``certificate``: the fit's (status, gap, trace), if any. ``X``, ``y``: the data to describe and score
    the model on (the training data, or held-out data: the page says which it was told, ``source``).
    ``groups``: a DataFrame (or dict of arrays) of columns to break accuracy down by, one row per row of
    ``X`` (they need not be features of the model: ``race`` left out of the features, say).
    ``frontier``: a :class:`~optrules.fairness.frontier.FairnessFrontier` (the trade-off curve), drawn with
    the accuracy of each bound's list on ``X``, ``y``.
    """
    parts = [f"<h1>{html_text(title)}</h1>",
             f"<p class='muted'>{html_text(_family(model))}; written {datetime.datetime.now():%Y-%m-%d %H:%M} "
             f"by optrules {_version()}" + (f"; data: {html_text(source)}" if source else "") + "</p>"]
    if X is not None:
        parts.append(_data_section(X, y, sample_weight))
    parts.append(_model_section(model))
    if certificate is not None:
        parts.append(_certificate_section(certificate))
    if (certificate is not None and "fairness" in certificate.counters) or frontier is not None:
        parts.append(_fairness_section(certificate, frontier, X, y))
    if X is not None and y is not None:
        parts.append(_accuracy_section(model, X, y, groups, sample_weight))
    body = "\n".join(parts)
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{html_text(title)}</title>"
            f"<style>{STYLE}</style></head><body>\n{body}\n</body></html>\n")


def _family(model) -> str:
    """The registry's title of the model's family."""
    from .families import families

    titles = [family.title for family in families().values() if family.model is type(model)]
    return titles[0] if titles else type(model).__name__


def _version() -> str:
    from . import __version__

    return __version__


# -- data ---------------------------------------------------------------------------------------------
def _data_section(X, y, sample_weight) -> str:
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
    rows = []
    for column in frame.columns:
        series = frame[column]
        kind = "number" if pd.api.types.is_numeric_dtype(series) else "text"
        missing = int(series.isna().sum())
        distinct = int(series.nunique(dropna=True))
        rows.append([str(column), kind, f"{distinct:,}", f"{missing:,}" if missing else ""])
    text = f"<p>{frame.shape[0]:,} rows, {frame.shape[1]:,} columns"
    if sample_weight is not None:
        text += f", total weight {float(np.sum(sample_weight)):,.6g}"
    text += ".</p>"
    if y is not None:
        counts = pd.Series(np.asarray(y)).value_counts().sort_index()
        text += "<p>Target: " + ", ".join(f"{html_text(str(label))} {count:,} ({count / len(y):.1%})"
                                          for label, count in counts.items()) + ".</p>"
    return "<h2>Data</h2>" + text + _table(["column", "type", "distinct values", "missing"], rows, numeric=(2, 3))


# -- model --------------------------------------------------------------------------------------------
def _model_section(model) -> str:
    table = model.get_rules()
    columns = [c for c in ("rule", "prediction", "probability", "support", "accuracy") if c in table.columns]
    rows = [[str(k)] + [_cell(row[c]) for c in columns] for k, row in table[columns].iterrows()]
    return (f"<h2>Model</h2><pre>{html_text(str(model))}</pre>"
            + _table(["#"] + columns, rows, numeric=tuple(range(3, len(columns) + 1)))
            + "<p class='muted'>probability: of the predicted class among the training rows the rule decided; "
              "support: those rows; accuracy: the share of them it got right.</p>")


# -- certificate --------------------------------------------------------------------------------------
def _certificate_section(certificate) -> str:
    if isinstance(certificate.counters.get("proven"), str):  # a ladder's: what is proven, over which space
        statement = certificate.statement
        verdict = (f"<p class='{'ok' if certificate.is_optimal else 'gap'}'>{html_text(statement[:1].upper() + statement[1:])}: "
                   f"objective {certificate.objective:.9f}" + ("" if certificate.is_optimal else
                   f", lower bound {certificate.lower_bound:.9f}") + ".</p>")
    elif certificate.is_optimal:
        verdict = ("<p class='ok'>Certified optimal: no model of this family has a lower objective on the "
                   "training data.</p>")
    else:
        verdict = (f"<p class='gap'>Not proven optimal ({html_text(certificate.status)}): the best model found has "
                   f"objective {certificate.objective:.9f}, and no model can go below {certificate.lower_bound:.9f} "
                   f"(gap {certificate.gap:.9f}).</p>")
    counters = [[html_text(str(k)), html_text(_cell(v))] for k, v in certificate.counters.items()
                if isinstance(v, (int, float, str, bool, np.integer, np.floating))]
    text = "<h2>Certificate</h2>" + verdict + _table(
        ["", ""], [["status", html_text(certificate.status)], ["objective", f"{certificate.objective:.9f}"],
                   ["lower bound", f"{certificate.lower_bound:.9f}"], ["gap", f"{certificate.gap:.9f}"]],
        escaped=True)
    if len(certificate.trace):
        text += "<h3>Search</h3>" + trace_svg(certificate.trace)
    return text + "<details><summary>Statistics</summary>" + _table(["counter", "value"], counters,
                                                                    escaped=True) + "</details>"


def trace_svg(trace, width: int = 640, height: int = 240) -> str:
    """The best objective and the lower bound against time, as an inline SVG (steps, like the paper's
    figures; the time axis is logarithmic when the trace spans more than two decades)."""
    times = np.maximum(np.asarray(trace.time, dtype=float), 1e-4)
    objective = np.asarray(trace.objective, dtype=float)
    lower = np.asarray(trace.lower_bound, dtype=float)
    finite = np.concatenate([objective[np.isfinite(objective)], lower[np.isfinite(lower)]])
    if not len(finite):
        return ""
    log_time = times.max() / times.min() > 100
    tx = np.log10(times) if log_time else times
    t0, t1 = float(tx.min()), float(tx.max())
    v0, v1 = float(finite.min()), float(finite.max())
    v0, v1 = (v0 - 0.5, v1 + 0.5) if v1 - v0 < 1e-12 else (v0 - 0.05 * (v1 - v0), v1 + 0.05 * (v1 - v0))
    left, right, top, bottom = 70, 12, 12, 34

    def x(t):
        return left + (width - left - right) * (0.5 if t1 == t0 else (t - t0) / (t1 - t0))

    def y(v):
        return top + (height - top - bottom) * (1 - (v - v0) / (v1 - v0))

    def steps(values):
        points, last = [], None
        for t, v in zip(tx, values):
            if not math.isfinite(v):
                continue
            if last is not None:  # hold the previous value until this time, then move
                points.append(f"L{x(t):.1f},{last:.1f}")
            points.append(f"{'L' if points else 'M'}{x(t):.1f},{y(v):.1f}")
            last = y(v)
        return " ".join(points)

    axis = f"time (s{', log scale' if log_time else ''})"
    labels = (f"<text x='{left - 6}' y='{y(v1) + 4:.1f}' text-anchor='end' font-size='11'>{v1:.4g}</text>"
              f"<text x='{left - 6}' y='{y(v0) + 4:.1f}' text-anchor='end' font-size='11'>{v0:.4g}</text>"
              f"<text x='{left}' y='{height - 18}' font-size='11'>{times.min():.3g}</text>"
              f"<text x='{width - right}' y='{height - 18}' text-anchor='end' font-size='11'>{times.max():.3g}</text>"
              f"<text x='{(left + width - right) / 2}' y='{height - 4}' text-anchor='middle' font-size='12'>{axis}</text>")
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' role='img' "
            "aria-label='best objective and lower bound against time'>"
            f"<rect x='{left}' y='{top}' width='{width - left - right}' height='{height - top - bottom}' "
            "fill='none' stroke='#ccc'/>"
            f"<path d='{steps(objective)}' fill='none' stroke='#1d3557' stroke-width='2'/>"
            f"<path d='{steps(lower)}' fill='none' stroke='#e07a1f' stroke-width='2'/>{labels}</svg>"
            "<p class='muted'><span style='color:#1d3557'>&#9632;</span> best objective "
            "<span style='color:#e07a1f'>&#9632;</span> lower bound</p>")


# -- fairness -----------------------------------------------------------------------------------------
#: a constrained fit's confusion counters (``group_0_true_positives`` ...), as the table shows them
CONFUSION = (("true_positives", "true positives"), ("false_positives", "false positives"),
             ("false_negatives", "false negatives"), ("true_negatives", "true negatives"))


def _fairness_section(certificate, frontier, X, y) -> str:
    """A constrained fit's constraint, the gap its list achieves (exactly) and each group's confusion counts
    (what proves it feasible); with a frontier, the trade-off curve and its table."""
    from fractions import Fraction

    text = "<h2>Fairness</h2>"
    counters = certificate.counters if certificate is not None else {}
    if "fairness" in counters:
        bound, achieved = Fraction(counters["max_unfairness"]), Fraction(counters["unfairness"])
        names = [str(counters.get(f"sensitive_group_{g}", f"group {g}")) for g in (0, 1)]
        text += (f"<p>Constraint: the {html_text(counters['fairness'].replace('_', ' '))} gap between "
                 f"{html_text(names[0])} and {html_text(names[1])} is at most {float(bound):g} ({bound}) on the "
                 f"training rows; this list's is <strong>{float(achieved):.6f}</strong> ({achieved}), from the "
                 "counts below. The certificate's bound holds over every list meeting the constraint, each rule "
                 "predicting either class.</p>")
        rows = [[names[g]] + [_count(counters.get(f"group_{g}_{key}")) for key, _ in CONFUSION] for g in (0, 1)]
        text += _table(["group"] + [label for _, label in CONFUSION], rows, numeric=(1, 2, 3, 4))
    if frontier is not None:
        table = frontier.table(X, y) if X is not None and y is not None else frontier.table()
        text += (f"<h3>The trade-off curve ({html_text(frontier.metric.replace('_', ' '))})</h3>"
                 + frontier_svg(table) + _table(
                     ["bound", "status", "objective", "lower bound", "gap achieved", "rules", "searched"]
                     + (["accuracy"] if X is not None and y is not None else []),
                     [[f"{r['max_unfairness']:g}", r["status"], f"{r['objective']:.6f}", f"{r['lower_bound']:.6f}",
                       f"{r['unfairness']:.4f}", r["rules"], "yes" if r["searched"] else "no (a looser optimum meets it)"]
                      + ([f"{r['test_accuracy']:.4f}"] if "test_accuracy" in r else []) for r in table],
                     numeric=(0, 2, 3, 4, 5, 7)))
    return text


def _count(value) -> str:
    """A confusion count: whole (rows, or whole weights) with separators, else its weight's digits."""
    if value is None:
        return ""
    return f"{int(value):,}" if float(value).is_integer() else f"{float(value):.6g}"


def frontier_svg(rows, width: int = 640, height: int = 260) -> str:
    """The certified objective (and, when the rows have it, the error on the report's data) against the gap
    each bound's optimum achieves, as an inline SVG: a point per bound."""
    xs = [r["unfairness"] for r in rows]
    series = [("certified objective", "#1d3557", "", [r["objective"] for r in rows])]
    if rows and "test_accuracy" in rows[0]:
        series.append(("error on the report's data", "#e07a1f", " stroke-dasharray='5 3'",
                       [1 - r["test_accuracy"] for r in rows]))
    values = [v for *_, ys in series for v in ys]
    left, right, top, bottom = 70, 12, 12, 34

    def scale(lo, hi, start, end):
        lo, hi = (lo - 0.01, hi + 0.01) if hi - lo < 1e-12 else (lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo))
        return lambda v: start + (end - start) * (v - lo) / (hi - lo), lo, hi

    x, *_ = scale(min(xs), max(xs), left, width - right)
    y, y0, y1 = scale(min(values), max(values), height - bottom, top)
    shapes = ""
    for label, color, dash, ys in series:
        path = " ".join(f"{'L' if k else 'M'}{x(a):.1f},{y(b):.1f}" for k, (a, b) in enumerate(zip(xs, ys)))
        shapes += f"<path d='{path}' fill='none' stroke='{color}' stroke-width='2'{dash}/>" + "".join(
            f"<circle cx='{x(a):.1f}' cy='{y(b):.1f}' r='3.5' fill='{color}'/>" for a, b in zip(xs, ys))
    labels = (f"<text x='{left - 6}' y='{top + 10}' text-anchor='end' font-size='11'>{y1:.4g}</text>"
              f"<text x='{left - 6}' y='{height - bottom}' text-anchor='end' font-size='11'>{y0:.4g}</text>"
              f"<text x='{x(min(xs)):.1f}' y='{height - 18}' text-anchor='middle' font-size='11'>{min(xs):.3g}</text>"
              f"<text x='{x(max(xs)):.1f}' y='{height - 18}' text-anchor='middle' font-size='11'>{max(xs):.3g}</text>"
              f"<text x='{(left + width - right) / 2}' y='{height - 4}' text-anchor='middle' font-size='12'>"
              "gap between the groups of each bound's optimum</text>")
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' role='img' "
            "aria-label='objective and error against unfairness'>"
            f"<rect x='{left}' y='{top}' width='{width - left - right}' height='{height - top - bottom}' "
            f"fill='none' stroke='#ccc'/>{shapes}{labels}</svg><p class='muted'>" + " ".join(
                f"<span style='color:{color}'>&#9632;</span> {label}" for label, color, *_ in series) + "</p>")


# -- accuracy -----------------------------------------------------------------------------------------
def group_table(model, X, y, groups=None, sample_weight=None) -> pd.DataFrame:
    """Rows, (weighted) accuracy and, for two classes, the rate predicted positive, the false positive and
    false negative rates (positive: the second class of the model), overall and by each group column."""
    # labels compared as text: a file's 0/1 column and a model's classes 0/1 may differ in type only
    y = np.asarray(y).astype(str)
    predicted = np.asarray(model.predict(X)).astype(str)
    weights = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    binary = len(model.classes) == 2
    positive = str(model.classes[1]) if binary else None
    frames = [("all rows", "", np.ones(len(y), bool))]
    for column, values in (dict(groups) if groups is not None else {}).items():
        values = pd.Series(np.asarray(values, dtype=object)).fillna("(missing)").to_numpy()
        for value in sorted(set(values), key=str):
            frames.append((str(column), str(value), values == value))
    records = []
    for column, value, mask in frames:
        w = weights[mask]
        truth, guess = y[mask], predicted[mask]
        record = {"group": column, "value": value, "rows": int(mask.sum()),
                  "accuracy": _share(w, truth == guess)}
        if binary:
            record["predicted positive"] = _share(w, guess == positive)
            record["false positive rate"] = _share(w[truth != positive], guess[truth != positive] == positive)
            record["false negative rate"] = _share(w[truth == positive], guess[truth == positive] != positive)
        records.append(record)
    return pd.DataFrame(records)


def _share(weights, hits) -> float:
    total = float(np.sum(weights))
    return float(np.sum(weights[hits])) / total if total > 0 else float("nan")


def _accuracy_section(model, X, y, groups, sample_weight) -> str:
    table = group_table(model, X, y, groups, sample_weight)
    rows = [[_cell(v) for v in row] for row in table.itertuples(index=False)]
    note = (f"positive: {html_text(str(model.classes[1]))}; " if len(model.classes) == 2 else "")
    return ("<h2>Accuracy</h2>" + _table(list(table.columns), rows, numeric=tuple(range(2, table.shape[1])))
            + f"<p class='muted'>{note}rates are shares of the group's rows"
            + (" (weighted)" if sample_weight is not None else "") + ".</p>")


# -- helpers ------------------------------------------------------------------------------------------
def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, (float, np.floating)):
        return "" if math.isnan(value) else f"{value:.4f}"
    if isinstance(value, (np.integer, int)) and not isinstance(value, bool):
        return f"{int(value):,}"
    return str(value)


def _table(head, rows, numeric=(), escaped: bool = False) -> str:
    def cell(tag, k, text):
        css = " class='n'" if k in numeric else ""
        return f"<{tag}{css}>{text if escaped else html_text(str(text))}</{tag}>"

    header = "".join(cell("th", k, h) for k, h in enumerate(head)) if any(head) else ""
    body = "".join("<tr>" + "".join(cell("td", k, v) for k, v in enumerate(row)) + "</tr>" for row in rows)
    return f"<table>{'<thead><tr>' + header + '</tr></thead>' if header else ''}<tbody>{body}</tbody></table>"
