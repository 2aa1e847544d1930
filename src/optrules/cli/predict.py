"""``optrules predict``: a saved model's predictions (and probabilities, explanations) on a table."""

from __future__ import annotations

import numpy as np
from rich.console import Console
from rich.markup import escape

from ..escape import printable
from .common import _check_output, _load_saved, _print, _read_table, _saved_target, _write_table


def cmd_predict(args, console: Console) -> int:
    import pandas as pd

    _check_output(args.output)
    model = _load_saved(args.model_file)
    frame = _read_table(args.data, args.sep, args.encoding, not args.no_header)
    frame.columns = [str(c) for c in frame.columns]
    target, target_name = None, args.target
    if target_name is None:  # the training target, when the file has it and the model does not read it
        target_name = _saved_target(args.model_file, frame.columns, model)
        if target_name is not None:
            console.print(f"[dim]{escape(printable(repr(target_name)))}, the training target, is read as the "
                          "target (not a feature); --target names another column[/]")
    if target_name:
        if target_name not in frame.columns:
            raise SystemExit(f"error: no column {target_name!r} in {args.data}")
        target = frame.pop(target_name)
    sensitive = _saved_target(args.model_file, frame.columns, model, key="sensitive")
    if sensitive is not None:  # the groups a fairness constraint compared: not a feature
        frame.pop(sensitive)
    out = pd.DataFrame({"prediction": model.predict(frame)})
    if args.proba:
        proba = model.predict_proba(frame)
        for j, label in enumerate(model.classes):
            out[f"P({label})"] = proba[:, j]
    if args.explain:
        out["rule"] = model.explain(frame)["condition"].to_numpy()
    if args.output:
        _write_table(out, args.output)
        console.print(f"{len(out)} predictions written to {args.output}")
    else:
        _print(console, out.to_csv(index=False).rstrip("\n"))
    if target is not None:
        accuracy = float(np.mean(out["prediction"].astype(str).to_numpy() == target.astype(str).to_numpy()))
        console.print(f"accuracy against {escape(printable(repr(target_name)))}: {accuracy:.4f}")
    return 0


def _add_predict_command(commands) -> None:
    predict = commands.add_parser(
        "predict", help="predict with a saved model (JSON from 'fit -o')",
        description="Apply a saved model to a CSV/Parquet file with the columns it was trained on.",
    )
    predict.add_argument("model_file", help="model JSON written by 'optrules fit -o'")
    predict.add_argument("data", help="CSV (or .parquet) file to predict")
    predict.add_argument("--output", "-o", help="write predictions to this CSV (or .parquet) file (default: print)")
    predict.add_argument("--proba", action="store_true", help="add one probability column per class")
    predict.add_argument("--explain", action="store_true", help="add the rule that decided each row")
    predict.add_argument("--target", help="a column of true labels to drop from the input and score against "
                         "(default: the training target column named in the model file, when the table has it)")
    predict.add_argument("--sep", default=None, help="CSV separator (default: detected)")
    predict.add_argument("--encoding", default="utf-8", help="text encoding of the CSV (default utf-8)")
    predict.add_argument("--no-header", action="store_true", help="the CSV has no header line (columns x0, x1, ...)")
    predict.set_defaults(handler=cmd_predict)
