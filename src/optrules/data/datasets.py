"""Bundled datasets (sources in ``bundled/SOURCES.md``)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # (annotations only: pandas is imported where a command reads a table)
    import pandas as pd

# pandas and the binarizer (scikit-learn) are imported by the loaders: the command line lists the
# datasets in its help without them


@dataclass
class Dataset:
    name: str
    X: pd.DataFrame
    y: np.ndarray
    target: str
    description: str
    source: str
    classes: tuple = ("no", "yes")
    extra: dict = field(default_factory=dict)


def _bundled_csv(filename: str, sep: str = ",") -> pd.DataFrame:
    import pandas as pd

    with resources.files("optrules.data").joinpath("bundled", filename).open("rb") as handle:
        return pd.read_csv(handle, compression="gzip", sep=sep)


COMPAS_SOURCE = (
    "ProPublica compas-analysis, compas-scores-two-years.csv "
    "(github.com/propublica/compas-analysis @ bafff5da)"
)

# Appendix E of Angelino et al. (2018): the bins of feature sets A and B.
COMPAS_BINS = {
    "age": [18, 21, 23, 26, 46],  # 18-20, 21-22, 23-25, 26-45, >45
    "juvenile-felonies": [1],  # 0, >0
    "juvenile-misdemeanors": [1],
    "juvenile-crimes": [1],
    "priors": [1, 2, 4],  # 0, 1, 2-3, >3
}


#: the rows of :func:`load_compas`: CORELS's (the paper's 6,907) or ProPublica's analysis's (6,172)
COMPAS_ROWS = ("corels", "propublica")


def load_compas(feature_set: str = "A", rows: str = "corels") -> Dataset:
    """ProPublica COMPAS two-year recidivism with the CORELS paper's features (Appendix E).

    Rows (``rows="corels"``): the 6,907 of 7,214 that have no missing screening/jail data
    (``days_b_screening_arrest``, ``c_jail_in`` and ``c_jail_out`` present), which is the paper's count;
    ``rows="propublica"``: the 6,172 ProPublica's own analysis keeps (charge within 30 days of the
    screening, a known recidivism outcome, no ordinary traffic offence, a score). Feature set A: sex, age
    (18-20, 21-22, 23-25, 26-45, >45), juvenile felonies, misdemeanors and crimes (0, >0; crimes = felonies
    + misdemeanors + other juvenile counts) and priors (0, 1, 2-3, >3); set B adds race
    (African-American, Caucasian, Hispanic, Other; Asian and Native American fall into Other).
    Target ``two_year_recid``. The columns hold readable category labels, so the default
    :class:`~optrules.data.binarize.Binarizer` one-hot encodes them into ``age=18-20``, ``priors>3``, ...
    """
    import pandas as pd

    from .binarize import cut

    feature_set = str(feature_set).upper()
    if feature_set not in ("A", "B"):
        raise ValueError(f"feature_set must be 'A' or 'B', got {feature_set!r}")
    if rows not in COMPAS_ROWS:
        raise ValueError(f"rows must be one of {', '.join(COMPAS_ROWS)}, got {rows!r}")
    raw = _bundled_csv("compas-scores-two-years.csv.gz")
    if rows == "corels":
        raw = raw[raw["days_b_screening_arrest"].notna() & raw["c_jail_in"].notna() & raw["c_jail_out"].notna()]
    else:
        raw = raw[raw["days_b_screening_arrest"].between(-30, 30) & (raw["is_recid"] != -1)
                  & (raw["c_charge_degree"] != "O") & (raw["score_text"] != "N/A")]
    raw = raw.reset_index(drop=True)
    numeric = pd.DataFrame(
        {
            "age": raw["age"],
            "juvenile-felonies": raw["juv_fel_count"],
            "juvenile-misdemeanors": raw["juv_misd_count"],
            "juvenile-crimes": raw["juv_fel_count"] + raw["juv_misd_count"] + raw["juv_other_count"],
            "priors": raw["priors_count"],
        }
    )
    X = pd.DataFrame({"sex": raw["sex"].astype(object)})
    for column, edges in COMPAS_BINS.items():
        X[column] = cut(numeric[column], edges)
    if feature_set == "B":
        race = raw["race"].astype(object)
        X["race"] = race.where(race.isin(["African-American", "Caucasian", "Hispanic"]), "Other")
    return Dataset(
        name=f"compas-{feature_set}" + ("" if rows == "corels" else f"-{rows}"),
        X=X,
        y=raw["two_year_recid"].to_numpy(dtype=np.int8),
        target="two_year_recid",
        description=f"ProPublica COMPAS, two-year recidivism, CORELS feature set {feature_set}"
                    + ("" if rows == "corels" else ", ProPublica's rows"),
        source=COMPAS_SOURCE,
        extra={
            "decile_score": raw["decile_score"].to_numpy(),
            "score_text": raw["score_text"].to_numpy(dtype=object),
            "race": raw["race"].to_numpy(dtype=object),
        },
    )


BANK_SOURCE = "UCI Bank Marketing, bank-full.csv (Moro, Cortez and Rita 2014; CC BY 4.0)"
BANK_CATEGORICAL = ["job", "marital", "education", "default", "housing", "loan", "contact", "poutcome"]


def load_bank_marketing() -> Dataset:
    """UCI bank marketing (45,211 calls, 5,289 subscriptions) with the falling-rule-list paper's items.

    The columns are 0/1 items, so the default binarizer keeps them as they are:
    age in [17,30), [30,40), [40,50), [50,60), [60,100); balance in [1000,2000); campaign = 1, = 2, >= 3;
    previous = 0, >= 2; and every raw value of job, marital, education, default, housing, loan, contact
    and poutcome (``job=management``, ...). The paper lists these items without saying whether it
    also had ``previous = 1`` or other balance ranges; we take the list as written (43 items).
    Target: ``y`` = yes.
    """
    import pandas as pd

    raw = _bundled_csv("bank-full.csv.gz", sep=";")
    items = {}
    for lo, hi in [(17, 30), (30, 40), (40, 50), (50, 60), (60, 100)]:
        items[f"age=[{lo},{hi})"] = raw["age"].between(lo, hi - 1)
    items["balance=[1000,2000)"] = raw["balance"].between(1000, 1999)
    items["campaign=1"] = raw["campaign"] == 1
    items["campaign=2"] = raw["campaign"] == 2
    items["campaign>=3"] = raw["campaign"] >= 3
    items["previous=0"] = raw["previous"] == 0
    items["previous>=2"] = raw["previous"] >= 2
    for column in BANK_CATEGORICAL:
        for value in sorted(raw[column].astype(str).unique()):
            items[f"{column}={value}"] = raw[column].astype(str) == value
    X = pd.DataFrame({name: values.to_numpy(dtype=bool) for name, values in items.items()})
    return Dataset(
        name="bank-marketing",
        X=X,
        y=(raw["y"] == "yes").to_numpy(dtype=np.int8),
        target="y",
        description="UCI bank marketing (bank-full), the falling rule list paper's items",
        source=BANK_SOURCE,
    )


CAR_SOURCE = "UCI Car Evaluation (Bohanec and Rajkovic, 1988), car.data (github.com/Rader09/dataset @ af153714)"
CAR_COLUMNS = ["buying", "maint", "doors", "persons", "lug_boot", "safety"]


def load_car_evaluation() -> Dataset:
    """UCI Car Evaluation: 1,728 cars, six ordinal attributes, four classes (unacc, acc, good, vgood).

    A multi-class example: every attribute is categorical (``doors=5more``, ``safety=high``, ...).
    """
    import pandas as pd

    with resources.files("optrules.data").joinpath("bundled", "car.data.gz").open("rb") as handle:
        raw = pd.read_csv(handle, compression="gzip", header=None, names=CAR_COLUMNS + ["class"], dtype=str)
    return Dataset(
        name="car",
        X=raw[CAR_COLUMNS],
        y=raw["class"].to_numpy(dtype=object),
        target="class",
        description="UCI car evaluation, 4 classes (multi-class example)",
        source=CAR_SOURCE,
        classes=("acc", "good", "unacc", "vgood"),
    )


DATASETS = {
    "compas": (load_compas, "ProPublica COMPAS two-year recidivism, CORELS features (set A; B adds race; "
                            "compas-A-propublica: ProPublica's 6,172 rows)"),
    "bank": (load_bank_marketing, "UCI bank marketing, the falling rule list paper's items"),
    "car": (load_car_evaluation, "UCI car evaluation, 4 classes (multi-class rule lists)"),
}


def load_dataset(name: str) -> Dataset:
    """Load a bundled dataset by name (``compas``, ``compas-A``, ``compas-B``, ``compas-B-propublica``: the
    parts after the name are the loader's arguments in order)."""
    base, *variant = str(name).split("-")
    if base not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; bundled: {sorted(DATASETS)}")
    loader = DATASETS[base][0]
    if len(variant) > len(inspect.signature(loader).parameters):
        raise ValueError(f"unknown dataset {name!r}: {base} has no variants" if not inspect.signature(loader).parameters
                         else f"unknown dataset {name!r}: too many parts")
    return loader(*variant)
