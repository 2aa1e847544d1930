"""Runs of the web app: uploaded tables, a queue of fits worked off by background threads, live progress.

A run is validated when it is submitted (target column, classes, missing values, parameters), so that
mistakes come back at once as a message; it then waits in a FIFO queue. Worker threads fit one run
each; the estimator's progress callback records trace points and answers ``STOP`` when the run is
cancelled, which every stage turns into a clean stop with its best model and certified gap. Any
error inside a fit ends that run as ``failed`` with its message; the worker goes on with the next.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import math
import queue
import threading
import time
import traceback
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..budget import STOP, Budget
from ..families import family, with_rashomon_sets
from ..parameters import BINARIZER_PARAMETERS, MAX_CARD, MAX_MEMORY, TIME_LIMIT, in_megabytes
from ..solve import ProgressEvent
from .uploads import UploadStore

QUEUED, RUNNING, DONE, FAILED, CANCELLED = "queued", "running", "done", "failed", "cancelled"
FINISHED = (DONE, FAILED, CANCELLED)

PREVIEW_ROWS = 8
PREVIEW_COLUMNS = 40  # the preview's columns; every name is listed (the page picks the target among them)
PREVIEW_CELL_CHARS = 120  # a longer cell is cut in the preview
#: runs waiting in the queue at most; one more is refused (429) until some finish or are cancelled
MAX_QUEUED_RUNS = 100
#: a table the web app takes: at most this many columns, each name at most this long (the page lists
#: them all; the command line and Python take wider tables)
MAX_COLUMNS = 10_000
MAX_NAME_CHARS = 500
#: how long checking a run's table when it is submitted may take; what is not checked by then is
#: checked by the fit, which says so in the run's message
SUBMIT_CHECK_SECONDS = 2.0
PARSED_UPLOADS_KEPT = 2  # parsed tables in memory; the others are read from disk again when needed
FITTED_KEPT = 2  # fitted rule lists kept for their Rashomon sets; older ones are fitted again when asked
RASHOMON_MEMBERS_SHOWN = 10  # sets of rules a Rashomon run shows (the best, or a uniform sample's best)
RASHOMON_MEMBERS_ANALYSED = 10_000  # above this, the analysis is of a uniform sample


class InputError(ValueError):
    """Something the user can fix: shown on the page as it is; ``status``: the HTTP status to answer."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


@dataclass
class Table:
    name: str
    frame: pd.DataFrame


def read_csv_upload(name: str, path) -> pd.DataFrame:
    """A DataFrame from an uploaded CSV file on disk, or an InputError saying why not."""
    from ..data.tables import TableError, read_table

    try:
        frame = read_table(path, name=name, max_columns=MAX_COLUMNS)
    except TableError as error:
        raise InputError(f"{error}{' (the command line and Python take wider tables)' * ('columns, more' in str(error))}") from None
    long_name = next((str(c) for c in frame.columns if len(str(c)) > MAX_NAME_CHARS), None)
    if long_name is not None:
        raise InputError(f"{name} has a column name of {len(long_name):,} characters; the web app takes names of at most "
                         f"{MAX_NAME_CHARS} (the command line and Python take longer ones)")
    if frame.shape[1] < 2:
        raise InputError(f"{name} has {frame.shape[1]} column: a CSV with a target column and at least one "
                         "feature column is needed (is the separator a comma, semicolon or tab?)")
    if frame.shape[0] < 2:
        raise InputError(f"{name} has {frame.shape[0]} data row(s): nothing to learn from")
    return frame


#: column names the page offers as the target (compared without case); a table with none of them gets no
#: target chosen for it: the last column is a fare or a port as often as a class (the CLI asks --target too)
TARGET_NAMES = ("target", "label", "class", "outcome", "y")


def suggested_target(frame: pd.DataFrame) -> str | None:
    """The column named like a target (:data:`TARGET_NAMES`; the last such), or None: the user chooses."""
    return next((str(c) for c in reversed(frame.columns) if str(c).strip().lower() in TARGET_NAMES), None)


def describe_table(key: str, table: Table) -> dict:
    """What the page shows of a table: size, columns, the target it offers (None: the user chooses),
    where values are missing, the first rows."""
    frame = table.frame
    head = frame.iloc[:PREVIEW_ROWS, :PREVIEW_COLUMNS]
    return {
        "key": key, "name": table.name, "n_rows": int(frame.shape[0]), "columns": [str(c) for c in frame.columns],
        "target": suggested_target(frame),
        "missing": {str(c): int(n) for c, n in frame.isna().sum().items() if n},
        "preview_columns": int(head.shape[1]),
        "preview": [[_shown(value) for value in row] for row in head.itertuples(index=False, name=None)],
    }


def _shown(value):
    """A preview cell as strict JSON: missing is None, an infinite number its text, long text cut."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    if isinstance(value, (float, np.floating)) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str) and len(value) > PREVIEW_CELL_CHARS:
        return value[:PREVIEW_CELL_CHARS] + "\u2026"
    return value.item() if isinstance(value, np.generic) else value


MAX_TIME_LIMIT = 24 * 3600.0


def memory_limits_mb() -> tuple[float, float]:
    """A run's default memory budget and the largest one may ask for (MB): the estimators' default,
    and the machine's memory."""
    from ..budget import default_memory_budget, physical_memory

    return default_memory_budget() / 2**20, physical_memory() / 2**20


def common_form() -> tuple:
    """The settings of every run: budgets, features per rule, thresholds, negations, missing values."""
    from ..families import Parameter

    default_mb, most_mb = memory_limits_mb()
    binarizing = {entry.name: entry for entry in BINARIZER_PARAMETERS}
    # each from its one declaration, narrowed to what a public server's run can finish
    return (
        Parameter.of(TIME_LIMIT, "Time limit (s)", TIME_LIMIT.default, 0.1, MAX_TIME_LIMIT),
        Parameter.of(in_megabytes(MAX_MEMORY), "Memory limit (MB)", round(default_mb), 16, round(most_mb)),
        Parameter.of(MAX_CARD, "Features per rule", None, 1, 3, kind="integer"),  # empty: the family's (auto, 2)
        Parameter.of(binarizing["thresholds"], "Numeric thresholds", binarizing["thresholds"].default,
                     choices=(("boosted", "where a boosted reference splits"), ("quantile", "at quantiles"),
                              ("both", "both"))),
        # the families' defaults differ (rule lists and sets: with negations; falling lists: without)
        Parameter.of(binarizing["negations"], "Negated features", "", kind="choice",
                     choices=(("", "the family's default"), ("with", "with negations"), ("without", "without"))),
        # (a flag of the page's: missing='category' or 'error')
        Parameter("missing_as_category", "treat missing values as a category", "flag", True),
    )


def build_estimator(model: str, params, progress):
    """The estimator a run fits, from the form's parameters (validated here, with clear messages)."""
    from ..families import ParameterError

    try:
        chosen = family(model)
    except ValueError as error:
        raise InputError(str(error)) from None
    if not isinstance(params, dict):
        raise InputError(f"params must be an object of named parameters, got {type(params).__name__}")
    try:
        params = chosen.with_current_names(params)  # the old names (C, max_degree), for a release
    except ParameterError as error:
        raise InputError(str(error)) from None
    common_parameters = tuple(chosen.common_field(parameter) for parameter in common_form())
    allowed = [parameter.name for parameter in common_parameters + chosen.form]
    unknown = sorted(str(k) for k in params if k not in allowed)
    if unknown:
        raise InputError(f"{', '.join(unknown)}: not a parameter of {model} (it takes {', '.join(allowed)})")
    try:
        time_limit, max_memory, max_card, thresholds, negations, missing_as_category = (
            p.read(params) for p in common_parameters)
        common = {"time_limit": time_limit, "max_memory": int(max_memory * 2**20), "thresholds": thresholds,
                  "missing": "category" if missing_as_category else "error", "verbose": progress}
        if max_card is not None:  # left empty: the family's own default
            common["max_card"] = max_card
        if negations is not None:  # likewise (rule lists and rule sets: with, falling lists: without)
            common["negations"] = negations == "with"
        return chosen.estimator_from_form(params, common)
    except ParameterError as error:
        raise InputError(str(error)) from None


def rashomon_form() -> tuple:
    """The settings of a Rashomon set run (beside the group column): how near, and its budgets."""
    from ..families import Parameter

    time_limit, max_memory = common_form()[:2]
    return (Parameter("epsilon_percent", "Within this % of the optimum", "number", 1.0, 0.0, 100.0),
            time_limit, max_memory)


def _described_class(estimator, y):
    """A rule set's ``pos_label`` as typed in the form, turned into the target's class of that text."""
    text = getattr(estimator, "pos_label", None)
    if text is None:
        return estimator
    from ..data.validation import class_named

    try:
        return estimator.set_params(pos_label=class_named(text, y))
    except ValueError as error:
        raise InputError(f"pos_label: {error}") from None


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
    table: str = ""  # the table's key: an upload stays on disk while a run waiting or running needs it
    points: list = field(default_factory=list)  # live trace points
    message: str = ""
    result: dict | None = None
    cancel_requested: bool = False
    kind: str = "fit"  # or "rashomon": the near-optimal lists of the fit of run ``parent``
    parent: int | None = None
    fit_params: dict = field(default_factory=dict)  # a Rashomon run's: its parent's, to fit again if need be
    sensitive: str = ""  # the column of the groups a fairness constraint compares (not a feature)

    def summary(self) -> dict:
        return {
            "id": self.id, "kind": self.kind, "parent": self.parent, "table": self.table,
            "source": self.source, "target": self.target, "model": self.model, "params": self.params,
            "sensitive": self.sensitive, "status": self.status, "message": self.message, "submitted": self.submitted,
            "started": self.started,
            "finished": self.finished, "n_points": len(self.points),
            "last": self.points[-1] if self.points else None,
        }


class RunManager:
    """Tables, runs and the worker threads that fit them.

    Uploads live on disk (:class:`UploadStore`, at most ``max_upload_bytes`` each and
    ``max_upload_total_bytes`` in all, the newest ``max_uploads_kept``); the last few parsed ones stay
    in memory. A run keeps only its table's key, so a queue of runs holds no copies of the data."""

    def __init__(self, workers: int = 1, max_upload_bytes: int = 50 * 2**20, max_runs_kept: int = 200,
                 max_uploads_kept: int = 20, max_upload_total_bytes: int | None = None):
        self.uploads = UploadStore(max_upload_bytes, max_upload_total_bytes or 10 * max_upload_bytes,
                                   max_uploads_kept)
        self.max_runs_kept = max_runs_kept
        self.runs: dict[int, Run] = {}
        self._datasets: dict[str, Table] = {}
        self._names: dict[str, str] = {}  # upload key -> the file's name
        self._info: dict[str, dict] = {}  # table key -> what the page shows of it
        self._parsed: dict[str, Table] = {}  # the newest parsed uploads, oldest first
        self._fitted: dict[int, object] = {}  # the newest fitted rule lists by run, oldest first
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._queue: queue.Queue[Run | None] = queue.Queue()
        self._workers = [threading.Thread(target=self._work, name=f"optrules-run-{k}", daemon=True)
                         for k in range(max(1, int(workers)))]
        for worker in self._workers:
            worker.start()

    @property
    def max_upload_bytes(self) -> int:
        return self.uploads.max_file_bytes

    # -- tables ----------------------------------------------------------------------------------------
    async def receive_upload(self, content_type: str, chunks) -> dict:
        """Stream an upload to disk and parse it: the table's info (InputError / UploadRefused if not)."""
        key, name, _ = await self.uploads.receive(content_type, chunks, self._pinned, self._forget_table)
        try:  # parsing and describing grow with the table: off the event loop, which serves everyone
            return await asyncio.to_thread(self._parse_upload, key, name)
        except InputError:
            self.uploads.remove(key)
            raise

    def _parse_upload(self, key: str, name: str) -> dict:
        table = Table(name, read_csv_upload(name, self.uploads.path(key)))
        info = describe_table(key, table)
        with self._lock:
            self._names[key] = name
            self._remember(key, table)
            self._info[key] = info
        return info

    def _remember(self, key: str, table: Table) -> None:
        self._parsed.pop(key, None)
        self._parsed[key] = table
        while len(self._parsed) > PARSED_UPLOADS_KEPT:
            del self._parsed[next(iter(self._parsed))]

    def _forget_table(self, key: str) -> None:
        """An upload was deleted from disk: forget what was known of it."""
        for known in (self._names, self._info, self._parsed):
            known.pop(key, None)

    def _pinned(self) -> set[str]:
        return {run.table for run in list(self.runs.values()) if run.status in (QUEUED, RUNNING)}

    def table(self, key: str) -> Table:
        """The table of an upload (parsed again from disk if it left memory) or of a bundled dataset."""
        from ..data.datasets import DATASETS, load_dataset

        with self._lock:
            if key in self._parsed:
                table = self._parsed.pop(key)
                self._parsed[key] = table
                return table
            if key in self._datasets:
                return self._datasets[key]
        if key in self.uploads and key in self._names:
            table = Table(self._names[key], read_csv_upload(self._names[key], self.uploads.path(key)))
            with self._lock:
                self._remember(key, table)
            return table
        if key.startswith("dataset:") and key.split(":", 1)[1] in DATASETS:
            data = load_dataset(key.split(":", 1)[1])
            labels = np.asarray(data.y)
            if np.issubdtype(labels.dtype, np.integer):
                labels = np.asarray(data.classes, dtype=object)[labels]
            table = Table(data.description, data.X.assign(**{data.target: labels}))
            with self._lock:
                self._datasets[key] = table
            return table
        raise InputError(f"no such table {key!r}: upload a CSV or pick a bundled dataset")

    def table_info(self, key: str) -> dict:
        if key not in self._info:
            info = describe_table(key, self.table(key))
            with self._lock:
                self._info[key] = info
        return self._info[key]

    # -- runs ------------------------------------------------------------------------------------------
    def _check_queue_room(self) -> None:
        waiting = sum(run.status == QUEUED for run in list(self.runs.values()))
        if waiting >= MAX_QUEUED_RUNS:
            raise InputError(f"{waiting} runs are waiting already: wait for some to finish, or cancel some", 429)

    def submit(self, source: str, target: str, model: str, params: dict, sensitive: str = "") -> Run:
        """Validate now (clear message on the page), fit later (queued). ``sensitive``: the column of the two
        groups a fairness constraint compares (not a feature), with the form's ``fairness`` set."""
        self._check_queue_room()
        from ..data.binarize import Binarizer
        from ..data.validation import check_target

        estimator = build_estimator(model, params, None)  # parameters first: they need no table
        table = self.table(source)
        if not target or target not in table.frame.columns:
            raise InputError(f"no column {target!r} in {table.name}; columns: {', '.join(map(str, table.frame.columns))}")
        X, y = _features_and_target(table.frame, target, _checked_sensitive(estimator, table.frame, target, sensitive))
        _described_class(estimator, y)
        try:
            chosen = family(model)
            check_target(y, len(X), binary=not chosen.multiclass, why_binary=chosen.estimator.why_binary)
            deadline = time.monotonic() + SUBMIT_CHECK_SECONDS
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (a check: the fit warns of what it finds)
                Binarizer(missing="category" if params.get("missing_as_category") else "error").fit(
                    X, should_stop=lambda: time.monotonic() > deadline)
        except ValueError as error:
            hint = " (tick 'treat missing values as a category', or clean the file)" if "missing" in str(error) else ""
            raise InputError(f"{error}{hint}") from None
        return self._enqueue(Run(next(self._ids), table.name, target, model, dict(params), table=source,
                                 sensitive=sensitive))

    def submit_rashomon(self, parent_id, params) -> Run:
        """Queue the enumeration of every rule list within ``epsilon_percent`` % of a finished rule-list
        run's optimum; ``group``: a feature column whose rates are compared over the lists."""
        self._check_queue_room()
        parent = self._parent(parent_id)
        if parent.kind != "fit" or not family(parent.model).rashomon or parent.status != DONE:
            raise InputError("the Rashomon set is enumerated from a finished rule-list run (model family "
                             + ", ".join(with_rashomon_sets()) + ")")
        if parent.sensitive:
            raise InputError("the Rashomon set of a fit under a fairness constraint is not available yet: fit "
                             "without the constraint, and compare the groups' rates over its Rashomon set")
        settings = _settings(params, rashomon_form(), "group", "a Rashomon set")
        group = params.get("group") or ""
        columns = [str(c) for c in self.table(parent.table).frame.columns if str(c) != parent.target]
        if not isinstance(group, str) or (group and group not in columns):
            raise InputError(f"group must be a feature column ({', '.join(columns)}) or empty, got {group!r}")
        return self._enqueue(Run(next(self._ids), parent.source, parent.target, parent.model,
                                 {**settings, "group": group}, table=parent.table, kind="rashomon", parent=parent.id,
                                 fit_params=dict(parent.params)))

    def submit_frontier(self, parent_id, params) -> Run:
        """Queue the certified optimum under each bound of ``params["bounds"]`` (numbers in [0, 1], or their
        text separated by commas) of a finished fit under a fairness constraint: the trade-off curve."""
        self._check_queue_room()
        parent = self._parent(parent_id)
        if parent.kind != "fit" or not parent.sensitive or parent.status != DONE:
            raise InputError("the trade-off curve is drawn from a finished fit under a fairness constraint")
        settings = _settings(params, frontier_form(), "bounds", "a trade-off curve")
        settings["bounds"] = _frontier_bounds(params.get("bounds"))
        return self._enqueue(Run(next(self._ids), parent.source, parent.target, parent.model, settings,
                                 table=parent.table, kind="frontier", parent=parent.id, fit_params=dict(parent.params),
                                 sensitive=parent.sensitive))

    def _parent(self, parent_id) -> Run:
        try:
            return self.get(int(parent_id))
        except (KeyError, TypeError, ValueError):
            raise InputError(f"no run {parent_id!r}") from None

    def _enqueue(self, run: Run) -> Run:
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
        self.uploads.close()

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
                {"rashomon": self._rashomon, "frontier": self._frontier}.get(run.kind, self._fit)(run)
            except KeyboardInterrupt:
                # an interrupt that a fit let through ends the run, never the worker: a rule-list run
                # cancelled while its kernel compiled (when the cancel raised it) killed the worker's
                # thread, and the run stayed "running" and the queue behind it waited for ever
                run.status = CANCELLED if run.cancel_requested else FAILED
                run.message = ("cancelled before the fit had a model" if run.cancel_requested
                               else "interrupted before the fit had a model")
            except Exception as error:  # a failed run must never take the worker down
                run.message = f"{type(error).__name__}: {error}"
                run.status = FAILED
                traceback.print_exc()
            finally:
                run.finished = time.time()

    @staticmethod
    def _progress(run: Run):
        """The estimator's progress callback: records trace points, and asks a cancelled run to stop."""
        last = [0.0]

        def progress(trace, event):
            if run.cancel_requested:
                return STOP  # the search stops cleanly with its best model and gap
            now = time.perf_counter()
            if now - last[0] < 0.1 or not len(trace):
                return
            last[0] = now
            run.points.append(_point(trace, -1, event))

        return progress

    def _keep_fitted(self, run_id: int, estimator) -> None:
        with self._lock:
            self._fitted[run_id] = estimator
            while len(self._fitted) > FITTED_KEPT:
                del self._fitted[next(iter(self._fitted))]

    def _rashomon(self, run: Run) -> None:
        # one time limit for the whole run, reading the table included: the enumeration has its share, the
        # analysis what is left; a cancel stops either (between the analysis's blocks of members)
        from ..corels.rashomon_analysis import ENUMERATION_SHARE

        limit, started = run.params["time_limit"], time.perf_counter()

        def left(share: float = 1.0):
            return None if limit is None else max(1e-3, share * (limit - (time.perf_counter() - started)))

        frame = self.table(run.table).frame
        X, y = frame.drop(columns=[run.target]), frame[run.target].to_numpy()
        progress = self._progress(run)
        with self._lock:
            estimator = self._fitted.get(run.parent)
        if estimator is None:  # it left memory: the same fit again (deterministic)
            estimator = _described_class(build_estimator(run.model, run.fit_params, progress), y).fit(X, y)
            if run.cancel_requested:
                run.status, run.message = CANCELLED, "cancelled while fitting the rule list again"
                return
            started = time.perf_counter()  # (the fit again had its own time limit)
        estimator = copy.copy(estimator)  # (the kept fit may serve two runs at once: each its own callback)
        estimator.set_params(verbose=progress)
        rashomon = estimator.rashomon_set(run.params["epsilon_percent"] / 100, relative=True,
                                          time_limit=left(ENUMERATION_SHARE),
                                          max_memory=int(run.params["max_memory"] * 2**20))
        if not math.isfinite(rashomon.optimum):
            raise InputError(f"the enumeration stopped ({rashomon.status}) before reaching any rule list: raise the "
                             "time or memory limit, or fit with fewer antecedents (features per rule 1)")
        budget = Budget(left(), hook=lambda: STOP if run.cancel_requested else None)
        run.result = describe_rashomon(rashomon, X, y, run.params["group"] or None, budget)
        run.status = CANCELLED if run.cancel_requested else DONE
        run.message = (f"{rashomon.size:,} rule lists, certified complete" if rashomon.complete else
                       f"{rashomon.size:,} rule lists, stopped on its {rashomon.status}: complete below objective "
                       f"{rashomon.complete_below:.9f}")

    def _frontier(self, run: Run) -> None:
        from ..fairness.frontier import fairness_frontier

        fit_params = {**run.fit_params, "time_limit": run.params["time_limit"], "max_memory": run.params["max_memory"]}
        estimator = build_estimator(run.model, fit_params, self._progress(run))
        frame = self.table(run.table).frame
        X, y = _features_and_target(frame, run.target, run.sensitive)
        y = y.to_numpy()
        frontier = fairness_frontier(_described_class(estimator, y), X, y, frame[run.sensitive], run.params["bounds"],
                                     should_stop=lambda: run.cancel_requested)
        run.result = describe_frontier(frontier, X, y)
        run.status = CANCELLED if run.cancel_requested else DONE
        proven = sum(point["status"] == "optimal" for point in run.result["points"])
        run.message = (f"{len(run.result['points'])} of {len(run.params['bounds'])} bounds, {proven} certified optimal"
                       + ("; cancelled: the bounds done are shown" if run.cancel_requested else ""))

    def _fit(self, run: Run) -> None:
        estimator = build_estimator(run.model, run.params, self._progress(run))
        frame = self.table(run.table).frame
        X, y = _features_and_target(frame, run.target, run.sensitive)
        y = y.to_numpy()
        _described_class(estimator, y).fit(X, y, **({"sensitive": frame[run.sensitive]} if run.sensitive else {}))
        certificate = getattr(estimator, "certificate_", None)
        if certificate is not None and len(certificate.trace):
            work, unit = certificate.work
            run.points.append(_point(certificate.trace, -1, ProgressEvent.from_trace(
                certificate.trace, work, unit, sum(certificate.trace.queue_by_length[-1]))))
        model = estimator.rule_list_
        notes = _data_notes(estimator)
        run.result = {
            "text": str(model),
            "certificate": certificate.to_dict() if certificate is not None else None,
            "certificate_text": (str(certificate) if certificate is not None else "not certified (Monte-Carlo search)")
                                + ("\n\n" + notes if notes else ""),
            "training_accuracy": float(np.mean(estimator.predict(X) == y)),  # not score: no sort of text labels
            "n_rules": len(model),
            "classes": [str(c) for c in estimator.classes_],
            "model": model.to_dict(),
        }
        if certificate is not None:
            run.result["model"]["certificate"] = certificate.to_dict()
        run.status = CANCELLED if run.cancel_requested else DONE
        if family(run.model).rashomon and run.status == DONE:
            self._keep_fitted(run.id, estimator)
        if run.cancel_requested:
            run.message = "cancelled: the best model found so far is shown with its certified gap"
        elif certificate is not None:
            fitted = family(run.model).fit_text(estimator)  # (rule sets: mistakes, and the gap in accuracy points)
            run.message = (certificate.statement if isinstance(certificate.counters.get("proven"), str)
                           else "certified optimal" if certificate.is_optimal
                           else f"{certificate.status}: gap {certificate.gap:.6f} to the best possible") + (
                               f"; {fitted}" if fitted else "")


def _settings(params, form, extra: str, noun: str) -> dict:
    """The settings of ``form`` read from ``params`` (``extra``: a key read by the caller), or a clear error."""
    from ..families import ParameterError

    if not isinstance(params, dict):
        raise InputError(f"params must be an object of named parameters, got {type(params).__name__}")
    allowed = [parameter.name for parameter in form] + [extra]
    unknown = sorted(str(k) for k in params if k not in allowed)
    if unknown:
        raise InputError(f"{', '.join(unknown)}: not a setting of {noun} (it takes {', '.join(allowed)})")
    try:
        return {parameter.name: parameter.read(params) for parameter in form}
    except ParameterError as error:
        raise InputError(str(error)) from None


def frontier_form() -> tuple:
    """The settings of a trade-off curve's run (beside its bounds): each bound's budgets."""

    time_limit, max_memory = common_form()[:2]
    return (replace(time_limit, label="Time limit of each bound's fit (s)", default=TIME_LIMIT.default / 4), max_memory)


#: the most bounds one curve may ask for (each may search for its time limit)
MAX_FRONTIER_BOUNDS = 20


def _frontier_bounds(given) -> list[float]:
    """The bounds of a trade-off curve: a list of numbers, or their text separated by commas or spaces (each in
    [0, 1], at most :data:`MAX_FRONTIER_BOUNDS`); none given: 0.01 to 0.10."""
    from ..fairness.frontier import DEFAULT_BOUNDS
    from ..fairness.metrics import check_max_unfairness

    if given is None or given == "":
        return list(DEFAULT_BOUNDS)
    items = given.replace(",", " ").split() if isinstance(given, str) else given
    if not isinstance(items, list) or not items or len(items) > MAX_FRONTIER_BOUNDS:
        raise InputError(f"bounds must be 1 to {MAX_FRONTIER_BOUNDS} numbers in [0, 1], got {str(given)[:80]!r}")
    try:
        if any(isinstance(item, bool) or not isinstance(item, (int, float, str)) for item in items):
            raise ValueError("each bound is a number")
        return sorted({float(check_max_unfairness(item)) for item in items})
    except ValueError as error:
        raise InputError(f"bounds: {error}") from None


def describe_frontier(frontier, X, y) -> dict:
    """What the page shows of a trade-off curve, as strict JSON: a point per bound (its certified optimum,
    the achieved unfairness, the training accuracy, the list's text)."""
    rows = frontier.table(X, y)
    for row, point in zip(rows, frontier.points):
        row["training_accuracy"] = row.pop("test_accuracy")
        row["text"] = str(point.model.rule_list_)
    return _strict({"kind": "frontier", "metric": frontier.metric, "text": repr(frontier), "points": rows})


def _checked_sensitive(estimator, frame: pd.DataFrame, target: str, sensitive) -> str:
    """``sensitive`` (a column of ``frame`` holding two groups) when the estimator has a fairness constraint,
    "" when neither is set; a clear error when one is set without the other, or the column is wrong."""
    if not isinstance(sensitive, str):
        raise InputError(f"sensitive must be a column name (text), got {type(sensitive).__name__}")
    fairness = estimator.get_params().get("fairness")
    if bool(fairness) != bool(sensitive):
        raise InputError("a fairness constraint needs the sensitive column (the two groups it compares), and the "
                         "sensitive column needs a fairness constraint" if "fairness" in estimator.get_params() else
                         "a sensitive column is for a fairness constraint, which this model family does not take")
    if not sensitive:
        return ""
    if sensitive not in frame.columns or sensitive == target:
        raise InputError(f"sensitive must be a column other than the target, got {sensitive!r}")
    from ..fairness.metrics import check_sensitive

    try:
        check_sensitive(frame[sensitive].to_numpy(dtype=object), len(frame))
    except ValueError as error:
        raise InputError(f"sensitive column {sensitive!r}: {error}") from None
    return sensitive


def _features_and_target(frame: pd.DataFrame, target: str, sensitive: str = ""):
    """The features (every column but the target and the sensitive one) and the target of ``frame``."""
    return frame.drop(columns=[target] + ([sensitive] if sensitive else [])), frame[target]


def describe_rashomon(rashomon, X, y, group: str | None, budget: Budget | None = None) -> dict:
    """What the page shows of a Rashomon set, as strict JSON: its size and certificate, members by
    objective, the best members, the features they use, predictive multiplicity and (two classes, a
    ``group`` column) the ranges of group rates (the GROUPS_SHOWN most frequent values, the others
    pooled); analyses of a uniform sample above RASHOMON_MEMBERS_ANALYSED members, within ``budget`` (its
    time and its cancel: ``analysis`` says what they read when that cut them short)."""
    from ..corels.rashomon_analysis import GROUPS_SHOWN, scope_note

    sampled = rashomon.size > RASHOMON_MEMBERS_ANALYSED
    if sampled:  # (drawing 10,000 members of a large set takes seconds: half the time left at most)
        with contextlib.nullcontext() if budget is None else budget.holding_back(0.5):
            chosen = rashomon.sample(RASHOMON_MEMBERS_ANALYSED, 0, budget)
    else:
        chosen = list(rashomon)
    # lists that differ only in order are shown once, with their number of orderings
    groups = rashomon.permutation_groups(chosen)[:RASHOMON_MEMBERS_SHOWN]
    shown = [(min(group, key=lambda m: m.objective), len(group)) for group in groups]
    edges, counts = rashomon.objective_histogram()
    multiplicity = rashomon.multiplicity(X, chosen, budget=budget)
    usage = rashomon.feature_usage(chosen).head(20)
    rates = (rashomon.group_rates(X, y, group, chosen, max_groups=GROUPS_SHOWN, budget=budget)
             if group and len(rashomon.classes) == 2 else None)
    return _strict({
        "kind": "rashomon",
        "text": repr(rashomon),
        "size": rashomon.size, "optimum": rashomon.optimum, "epsilon": rashomon.epsilon,
        "threshold": rashomon.threshold, "complete": rashomon.complete, "status": rashomon.status,
        "complete_below": rashomon.complete_below, "mined_all_rules": bool(rashomon.mined_all_rules),
        "counters": rashomon.counters,
        "histogram": {"edges": edges.tolist(), "counts": counts.tolist()},
        "analysed": len(chosen), "sampled": sampled,
        "members": [{"text": str(m), "objective": m.objective, "rules": m.n_rules, "orderings": n} for m, n in shown],
        "features": usage.to_dict("records"),
        "multiplicity": {key: multiplicity[key] for key in ("ambiguity", "discrepancy", "members")},
        "analysis": scope_note(multiplicity["scope"], None if rates is None else rates.attrs["scope"]),
        "group": group, "rates": None if rates is None else rates.to_dict("records"),
    })


def _strict(value):
    """``value`` with numpy scalars made plain and non-finite numbers made None (browsers reject NaN)."""
    if isinstance(value, dict):
        return {str(k): _strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


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


def _point(trace, i: int, event: ProgressEvent) -> dict:
    """One trace point as strict JSON (a non-finite value, e.g. log10 of an empty remaining space, is None)."""
    return _strict({
        "time": float(trace.time[i]), "objective": float(trace.objective[i]), "lower_bound": float(trace.lower_bound[i]),
        "queue": event.queue, "expanded": event.work, "unit": event.unit,  # ("expanded": the work, in its unit)
        "log10_remaining": float(trace.log10_remaining[i]),
    })
