"""Loaders for the UCI datasets of the BRCG paper, read from ``shared/data`` (see its MANIFEST.tsv).

Each returns ``(X DataFrame, y 0/1 array, categorical column names)``. Rows with missing values are
dropped where the paper's sources did (heart: 6 rows with '?', ILPD: 4 rows); mushroom keeps '?' as a
category of stalk-root.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

SHARED = Path(os.environ.get("OPTRULES_SHARED", Path(__file__).resolve().parents[2] / "shared")) / "data"


def _read(path, **kwargs) -> pd.DataFrame:
    return pd.read_csv(SHARED / path, **kwargs)


def banknote():
    d = _read("banknote/data_banknote_authentication.csv", header=None)
    return d.iloc[:, :4].set_axis(["variance", "skewness", "curtosis", "entropy"], axis=1), d[4].to_numpy(), []


def heart():
    names = ["age", "sex", "cp", "trestbps", "chol", "fbs", "restecg", "thalach", "exang", "oldpeak", "slope", "ca", "thal", "num"]
    d = _read("heart_cleveland/processed.cleveland.data", header=None, names=names, na_values="?").dropna()
    categorical = ["cp", "restecg", "slope", "ca", "thal"]
    X = d.drop(columns="num")
    X[categorical] = X[categorical].astype(int).astype(str)
    return X.reset_index(drop=True), (d["num"] > 0).astype(int).to_numpy(), categorical


def ilpd():
    names = ["age", "gender", "tb", "db", "alkphos", "sgpt", "sgot", "tp", "alb", "ag_ratio", "selector"]
    d = _read("ilpd/ILPD.csv", header=None, names=names).dropna().reset_index(drop=True)
    return d.drop(columns="selector"), (d["selector"] == 1).astype(int).to_numpy(), ["gender"]


def ionosphere():
    d = _read("ionosphere/ionosphere.csv", header=None)
    X = d.iloc[:, :34].set_axis([f"a{i}" for i in range(34)], axis=1)
    return X, (d[34] == "g").astype(int).to_numpy(), []


def liver():
    names = ["mcv", "alkphos", "sgpt", "sgot", "gammagt", "drinks", "selector"]
    d = _read("liver_bupa/bupa.csv", header=None, names=names)
    return d.drop(columns="selector"), (d["selector"] == 2).astype(int).to_numpy(), []


def pima():
    d = _read("pima/diabetes.csv", header=None)
    names = ["pregnant", "glucose", "pressure", "skin", "insulin", "bmi", "pedigree", "age"]
    return d.iloc[:, :8].set_axis(names, axis=1), d[8].to_numpy(), []


def tictactoe():
    d = _read("tictactoe/tictactoe.csv", header=None)
    X = d.iloc[:, :9].astype(str).set_axis([f"p{i}" for i in range(9)], axis=1)
    return X, (d[9] == "positive").astype(int).to_numpy(), list(X.columns)


def transfusion():
    d = _read("transfusion/transfusion.csv")
    X = d.iloc[:, :4].set_axis(["recency", "frequency", "monetary", "time"], axis=1)
    return X, d.iloc[:, 4].to_numpy(), []


def wdbc():
    d = _read("wdbc/wdbc.csv", header=None)
    X = d.iloc[:, 2:].set_axis([f"f{i}" for i in range(30)], axis=1)
    return X, (d[1] == "M").astype(int).to_numpy(), []


def mushroom():
    d = _read("mushroom/agaricus-lepiota.data", header=None).astype(str)
    X = d.iloc[:, 1:].set_axis([f"c{i}" for i in range(1, 23)], axis=1)
    return X, (d[0] == "p").astype(int).to_numpy(), list(X.columns)


def bank():
    d = _read("bank_marketing/bank-full.csv", sep=";")
    categorical = ["job", "marital", "education", "default", "housing", "loan", "contact", "month", "poutcome"]
    X = d.drop(columns="y")
    X[categorical] = X[categorical].astype(str)
    return X, (d["y"] == "yes").astype(int).to_numpy(), categorical


DATASETS = {
    "banknote": banknote, "heart": heart, "ilpd": ilpd, "ionosphere": ionosphere, "liver": liver, "pima": pima,
    "tic-tac-toe": tictactoe, "transfusion": transfusion, "wdbc": wdbc, "mushroom": mushroom, "bank-mkt": bank,
}

# the paper's Table 1 (mean 10-fold test accuracy, %): CG, RIPPER, CART
PAPER = {
    "banknote": (99.1, 99.2, 96.8), "heart": (78.9, 79.3, 81.6), "ilpd": (69.6, 69.8, 67.4),
    "ionosphere": (90.0, 88.0, 87.2), "liver": (59.7, 57.1, 55.9), "pima": (74.1, 73.4, 72.1),
    "tic-tac-toe": (100.0, 98.2, 90.1), "transfusion": (77.9, 78.9, 78.7), "wdbc": (94.0, 93.0, 93.3),
    "bank-mkt": (90.0, 89.9, 89.1), "mushroom": (100.0, 100.0, 96.2),
}


def load(name: str):
    X, y, categorical = DATASETS[name]()
    return X, np.asarray(y).astype(int), categorical
