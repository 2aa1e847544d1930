"""Runs of the web app: uploaded tables, a queue of fits worked off by background threads, live progress.

A run is validated when it is submitted (target column, classes, missing values, parameters), so that
mistakes come back at once as a message; it then waits in a FIFO queue. Worker threads fit one run
each; the estimator's progress callback records trace points and raises ``KeyboardInterrupt`` when the
run is cancelled, which the search turns into a clean stop with its best model and certified gap. Any
error inside a fit ends that run as ``failed`` with its message; the worker goes on with the next.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import queue
import threading
import time
import traceback
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

QUEUED, RUNNING, DONE, FAILED, CANCELLED = "queued", "running", "done", "failed", "cancelled"
FINISHED = (DONE, FAILED, CANCELLED)

MODELS = ("rulelist", "frl", "ruleset")


class InputError(ValueError):
    """Something the user can fix: shown on the page as it is."""


@dataclass
class Table:
    name: str
    frame: pd.DataFrame


def read_csv_upload(name: str, content: bytes, max_bytes: int) -> pd.DataFrame:
    """A DataFrame from an uploaded CSV, or an InputError saying why not."""
    if len(content) > max_bytes:
        raise InputError(f"{name} is {len(content) / 2**20:.1f} MB, over the limit of {max_bytes / 2**20:.1f} MB "
                         "(start the server with a larger --max-upload-mb)")
    if not content.strip():
        raise InputError(f"{name} is empty")
    if b"\x00" in content[:8192]:
        raise InputError(f"{name} is not a CSV file (it looks binary)")
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError:
        try:
            text = content.decode("latin-1")
        except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes any byte
            raise InputError(f"{name} is not a text file") from None
    try:  # the separator among the usual ones; a single column gives the sniffer nothing: comma
        sep = csv.Sniffer().sniff(text[:65536], delimiters=",;\t|").delimiter
    except csv.Error:
        sep = ","
    try:
        frame = pd.read_csv(io.StringIO(text), sep=sep)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, csv.Error) as error:
        raise InputError(f"{name} is not a readable CSV file: {error}") from None
    if frame.shape[1] < 2:
        raise InputError(f"{name} has {frame.shape[1]} column: a CSV with a target column and at least one "
                         "feature column is needed (is the separator a comma, semicolon or tab?)")
    if frame.shape[0] < 2:
        raise InputError(f"{name} has {frame.shape[0]} data row(s): nothing to learn from")
    return frame


def _number(params: dict, key: str, default, kind=float, low=None, high=None, allow_none=False):
    value = params.get(key, default)
    if value in (None, "") and allow_none:
        return None
    try:
        value = kind(value)
    except (TypeError, ValueError):
        raise InputError(f"{key} must be a number, got {value!r}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{key} must be finite")
    if (low is not None and value < low) or (high is not None and value > high):
        raise InputError(f"{key} must lie in [{low}, {high}], got {value}")
    return value


def build_estimator(model: str, params: dict, progress):
    """The estimator a run fits, from the form's parameters (validated here, with clear messages)."""
    from ..estimators import FallingRuleListClassifier, RuleListClassifier, RuleSetClassifier

    if model not in MODELS:
        raise InputError(f"unknown model family {model!r}; choose one of {', '.join(MODELS)}")
    time_limit = _number(params, "time_limit", 60.0, float, 0.1, 24 * 3600)
    missing = "category" if params.get("missing_as_category") else "error"
    max_card = _number(params, "max_card", 2, int, 1, 3)
    if model == "rulelist":
        regularization = _number(params, "regularization", 0.01, float, 0.0, 0.999)
        class_weight = params.get("class_weight") or None
        if class_weight not in (None, "balanced"):
            raise InputError("class_weight must be empty or 'balanced'")
        return RuleListClassifier(regularization=regularization, max_card=max_card, time_limit=time_limit,
                                  class_weight=class_weight, missing=missing, verbose=progress)
    if model == "frl":
        return FallingRuleListClassifier(
            w=_number(params, "w", 3.0, float, 1e-6, 1e6), C=_number(params, "C", 1e-4, float, 0.0, 1.0),
            soft=bool(params.get("soft")), time_limit=time_limit, max_card=max_card, missing=missing,
            verbose=progress, random_state=0,
        )
    return RuleSetClassifier(
        complexity=_number(params, "complexity", 20.0, float, 2.0, 1000.0),
        max_degree=_number(params, "max_degree", 3, int, 1, 10), time_limit=time_limit,
        pricing_time_limit=min(time_limit, 10.0), missing=missing, verbose=progress,
    )


@dataclass
class Run:
    id: int
    source: str
    target: str
    model: str
    params: dict
    status: str = QUEUED
    submitted: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    points: list = field(default_factory=list)  # live trace points
    message: str = ""
    result: dict | None = None
    cancel_requested: bool = False
    X: pd.DataFrame | None = field(default=None, repr=False)
    y: np.ndarray | None = field(default=None, repr=False)

    def summary(self) -> dict:
        return {
            "id": self.id, "source": self.source, "target": self.target, "model": self.model, "params": self.params,
            "status": self.status, "message": self.message, "submitted": self.submitted, "started": self.started,
            "finished": self.finished, "n_points": len(self.points),
            "last": self.points[-1] if self.points else None,
        }


class RunManager:
    """Tables, runs and the worker threads that fit them."""

    def __init__(self, workers: int = 1, max_upload_bytes: int = 50 * 2**20, max_runs_kept: int = 200,
                 max_uploads_kept: int = 20):
        self.max_upload_bytes = max_upload_bytes
        self.max_runs_kept = max_runs_kept
        self.max_uploads_kept = max_uploads_kept
        self.tables: dict[str, Table] = {}
        self.runs: dict[int, Run] = {}
        self._ids = itertools.count(1)
        self._table_ids = itertools.count(1)
        self._lock = threading.Lock()
        self._queue: queue.Queue[Run | None] = queue.Queue()
        self._workers = [threading.Thread(target=self._work, name=f"optrules-run-{k}", daemon=True)
                         for k in range(max(1, int(workers)))]
        for worker in self._workers:
            worker.start()

    # -- tables ----------------------------------------------------------------------------------------
    def add_upload(self, name: str, content: bytes) -> tuple[str, Table]:
        frame = read_csv_upload(name, content, self.max_upload_bytes)
        key = f"upload-{next(self._table_ids)}"
        table = Table(name, frame)
        with self._lock:
            self.tables[key] = table
            # uploads live in memory: keep the newest (a queued or running run holds its own data)
            uploads = [k for k in self.tables if k.startswith("upload-")]
            for old in uploads[: max(0, len(uploads) - self.max_uploads_kept)]:
                del self.tables[old]
        return key, table

    def table(self, key: str) -> Table:
        from ..data.datasets import DATASETS, load_dataset

        if key in self.tables:
            return self.tables[key]
        if key.startswith("dataset:") and key.split(":", 1)[1] in DATASETS:
            data = load_dataset(key.split(":", 1)[1])
            labels = np.asarray(data.y)
            if np.issubdtype(labels.dtype, np.integer):
                labels = np.asarray(data.classes, dtype=object)[labels]
            table = Table(data.description, data.X.assign(**{data.target: labels}))
            with self._lock:
                self.tables[key] = table
            return table
        raise InputError(f"no such table {key!r}: upload a CSV or pick a bundled dataset")

    # -- runs ------------------------------------------------------------------------------------------
    def submit(self, source: str, target: str, model: str, params: dict) -> Run:
        """Validate now (clear message on the page), fit later (queued)."""
        from ..data.binarize import Binarizer
        from ..data.validation import check_target

        table = self.table(source)
        if not target or target not in table.frame.columns:
            raise InputError(f"no column {target!r} in {table.name}; columns: {', '.join(map(str, table.frame.columns))}")
        X, y = table.frame.drop(columns=[target]), table.frame[target]
        build_estimator(model, params, None)  # parameters
        try:
            check_target(y, len(X), binary=model != "rulelist")
            Binarizer(missing="category" if params.get("missing_as_category") else "error").fit(X)
        except ValueError as error:
            hint = " (tick 'treat missing values as a category', or clean the file)" if "missing" in str(error) else ""
            raise InputError(f"{error}{hint}") from None
        run = Run(next(self._ids), table.name, target, model, dict(params), X=X, y=y.to_numpy())
        with self._lock:
            self.runs[run.id] = run
            self._forget_old_runs()
        self._queue.put(run)
        return run

    def cancel(self, run_id: int) -> Run:
        run = self.get(run_id)
        with self._lock:
            if run.status == QUEUED:
                run.status, run.finished, run.message = CANCELLED, time.time(), "cancelled before it started"
            elif run.status == RUNNING:
                run.cancel_requested = True
        return run

    def get(self, run_id: int) -> Run:
        if run_id not in self.runs:
            raise KeyError(run_id)
        return self.runs[run_id]

    def _forget_old_runs(self) -> None:
        finished = [r for r in self.runs.values() if r.status in FINISHED]
        for run in sorted(finished, key=lambda r: r.id)[: max(0, len(self.runs) - self.max_runs_kept)]:
            del self.runs[run.id]

    def shutdown(self) -> None:
        for run in list(self.runs.values()):
            if run.status in (QUEUED, RUNNING):
                self.cancel(run.id)
        for _ in self._workers:
            self._queue.put(None)

    # -- the workers -----------------------------------------------------------------------------------
    def _work(self) -> None:
        while True:
            run = self._queue.get()
            if run is None:
                return
            with self._lock:
                if run.status != QUEUED:  # cancelled while waiting
                    continue
                run.status, run.started = RUNNING, time.time()
            try:
                self._fit(run)
            except Exception as error:  # a failed run must never take the worker down
                run.message = f"{type(error).__name__}: {error}"
                run.status = FAILED
                traceback.print_exc()
            finally:
                run.finished = time.time()
                run.X = run.y = None  # the table stays in self.tables; the run needs no copy

    def _fit(self, run: Run) -> None:
        last = [0.0]

        def progress(trace, counters):
            if run.cancel_requested:
                raise KeyboardInterrupt  # the search stops cleanly with its best model and gap
            now = time.perf_counter()
            if now - last[0] < 0.1 or not len(trace):
                return
            last[0] = now
            run.points.append(_point(trace, -1, counters))

        estimator = build_estimator(run.model, run.params, progress)
        estimator.fit(run.X, run.y)
        certificate = getattr(estimator, "certificate_", None)
        if certificate is not None and len(certificate.trace):
            run.points.append(_point(certificate.trace, -1, {
                "nodes_expanded": certificate.counters.get("nodes_expanded", certificate.counters.get("iterations", 0)),
                "queue": sum(certificate.trace.queue_by_length[-1])}))
        model = estimator.rule_list_
        notes = _data_notes(estimator)
        run.result = {
            "text": str(model),
            "certificate": certificate.to_dict() if certificate is not None else None,
            "certificate_text": (str(certificate) if certificate is not None else "not certified (Monte-Carlo search)")
                                + ("\n\n" + notes if notes else ""),
            "training_accuracy": float(estimator.score(run.X, run.y)),
            "n_rules": len(model),
            "classes": [str(c) for c in estimator.classes_],
            "model": model.to_dict(),
        }
        if certificate is not None:
            run.result["model"]["certificate"] = certificate.to_dict()
        run.status = CANCELLED if run.cancel_requested else DONE
        if run.cancel_requested:
            run.message = "cancelled: the best model found so far is shown with its certified gap"
        elif certificate is not None:
            run.message = ("certified optimal" if certificate.is_optimal
                           else f"{certificate.status}: gap {certificate.gap:.6f} to the best possible")


def _data_notes(estimator) -> str:
    """What the fit decided about the data: columns left out as identifiers, how antecedents were mined."""
    lines = []
    dropped = getattr(estimator.binarizer_, "dropped_columns_", {})
    if dropped:
        lines.append("left out as row identifiers: " + "; ".join(f"{c} ({why})" for c, why in dropped.items()))
    report = getattr(getattr(estimator, "antecedents_", None), "report", None)
    if report is not None:
        lines.append(str(report))
    return "\n".join(lines)


def _point(trace, i: int, counters: dict) -> dict:
    """One trace point as strict JSON (a non-finite value, e.g. log10 of an empty remaining space, is None)."""
    def finite(value):
        return float(value) if math.isfinite(value) else None

    return {
        "time": trace.time[i], "objective": finite(trace.objective[i]), "lower_bound": finite(trace.lower_bound[i]),
        "queue": int(counters.get("queue", 0)), "expanded": int(counters.get("nodes_expanded", 0)),
        "log10_remaining": finite(trace.log10_remaining[i]),
    }
