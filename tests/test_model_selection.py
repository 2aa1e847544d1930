"""Regularization path and cross-validated lambda, serially, in processes and on a Dask cluster."""

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold, cross_val_score

from optrules.data.datasets import load_car_evaluation, load_compas
from optrules.estimators import RuleListClassifier
from optrules.model_selection import RuleListCV, regularization_path


@pytest.fixture(scope="module")
def compas():
    data = load_compas()
    return data.X, data.y


def test_path_matches_independent_fits(compas):
    X, y = compas
    lambdas = [0.005, 0.02, 0.01, 0.05]
    path = regularization_path(X, y, lambdas, RuleListClassifier(max_card=2))
    assert [p.regularization for p in path] == [0.05, 0.02, 0.01, 0.005]
    for point in path:
        alone = RuleListClassifier(regularization=point.regularization, max_card=2).fit(X, y)
        assert point.certificate.status == alone.certificate_.status == "optimal"
        assert point.certificate.objective == pytest.approx(alone.certificate_.objective, abs=1e-12)
        assert (point.estimator.predict(X) == alone.predict(X)).mean() > 0.95
    # smaller lambda: never fewer rules, never a worse training error
    n_rules = [p.n_rules for p in path]
    errors = [p.certificate.objective - p.regularization * p.n_rules for p in path]
    assert n_rules == sorted(n_rules)
    assert all(a >= b - 1e-12 for a, b in zip(errors, errors[1:]))


def test_path_multiclass_weighted():
    data = load_car_evaluation()
    path = regularization_path(data.X, data.y, [0.05, 0.01], RuleListClassifier(max_card=1, class_weight="balanced"))
    assert all(p.certificate.status == "optimal" for p in path)
    assert path[1].n_rules >= path[0].n_rules


def test_cross_validated_lambda(compas):
    X, y = compas
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    model = RuleListCV([0.05, 0.01, 0.005], RuleListClassifier(max_card=1), cv=cv, n_jobs=2).fit(X, y)
    results = model.cv_results_
    assert list(results["regularization"]) == [0.05, 0.01, 0.005]
    # the fold scores are those of independent fits on the same splits
    for j, lam in enumerate(results["regularization"]):
        direct = cross_val_score(RuleListClassifier(regularization=lam, max_card=1), X, y, cv=cv)
        assert np.allclose([results[f"split{k}_test_score"][j] for k in range(4)], direct, atol=0.01)
    assert model.regularization_ == results["regularization"][int(np.argmax(results["mean_test_score"]))]
    assert model.certificate_.status == "optimal"
    assert model.score(X, y) > 0.6
    assert (results["certified_fraction"] == 1.0).all()
    simple = RuleListCV([0.05, 0.01, 0.005], RuleListClassifier(max_card=1), cv=cv, one_standard_error=True).fit(X, y)
    assert simple.regularization_ >= model.regularization_
    with pytest.raises(ValueError, match="lambda"):
        RuleListCV([2.0]).fit(X, y)


def test_folds_side_by_side_are_capped_by_the_cores(compas, monkeypatch):
    """--n-jobs 100 on a small machine starts at most cores-many fold processes, and each fold's search
    takes its share of the cores (folds x threads <= cores); under a cluster's backend the workers count."""
    import joblib

    import optrules.model_selection as model_selection
    from optrules.bnb import threads_for
    from optrules.budget import available_cores

    started = []

    class Recording(joblib.Parallel):
        def __init__(self, n_jobs=None, **options):
            started.append(n_jobs)
            super().__init__(n_jobs=n_jobs, **options)

    threads = []
    original = model_selection._sharing_cores

    def recording_share(base, side_by_side):
        each = original(base, side_by_side)
        threads.append(threads_for(each.get_params()["n_jobs"]))
        return each

    monkeypatch.setattr(model_selection, "Parallel", Recording)
    monkeypatch.setattr(model_selection, "_sharing_cores", recording_share)
    X, y = compas
    cores = available_cores()
    with joblib.parallel_config(backend="threading"):  # (threads: the test sees each fold's estimator)
        RuleListCV([0.02], RuleListClassifier(max_card=1), cv=4, n_jobs=100).fit(X, y)
    assert started == [min(4, cores)]
    assert len(threads) == 1 and threads[0] * min(4, cores) <= cores
    assert model_selection.folds_side_by_side(100, 8) == min(8, cores)
    assert model_selection.folds_side_by_side(None, 8) == 1 and model_selection.folds_side_by_side(-1, 3) == min(3, cores)

    class ClusterBackend(joblib.parallel.ThreadingBackend):  # a backend that is not this machine's
        pass
    joblib.register_parallel_backend("a-cluster", ClusterBackend)
    with joblib.parallel_config(backend="a-cluster"):
        assert model_selection.folds_side_by_side(100, 8) == 8


def test_cross_validation_on_a_dask_cluster(compas):
    """The folds run as tasks on a real dask.distributed LocalCluster (worker processes on loopback)."""
    distributed = pytest.importorskip("distributed")
    import joblib

    X, y = compas
    cv = StratifiedKFold(3, shuffle=True, random_state=1)
    serial = RuleListCV([0.02, 0.01], RuleListClassifier(max_card=1), cv=cv).fit(X, y)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        assert all(address.startswith("tcp://127.0.0.1") for address in client.scheduler_info()["workers"])
        with distributed.get_task_stream(client) as tasks, joblib.parallel_config(backend="dask"):
            on_cluster = RuleListCV([0.02, 0.01], RuleListClassifier(max_card=1), cv=cv, n_jobs=-1).fit(X, y)
        assert len(tasks.data) >= 3  # the three folds ran as cluster tasks
        assert len({task["worker"] for task in tasks.data}) >= 1
    for key in ("mean_test_score", "mean_n_rules"):
        assert np.allclose(on_cluster.cv_results_[key], serial.cv_results_[key])
    assert on_cluster.regularization_ == serial.regularization_


def test_cross_validated_rule_set_complexity_and_class():
    """RuleSetCV's fold scores are those of independent fits on the same splits; it picks the best mean
    (ties and one-standard-error: the smaller bound), refits with it, and with pos_labels="both" also
    chooses the class the set describes."""
    import pandas as pd

    from optrules.estimators import RuleSetClassifier
    from optrules.model_selection import RuleSetCV

    rng = np.random.default_rng(5)
    n = 240
    X = pd.DataFrame({"a": rng.choice(list("xyz"), n), "b": rng.choice(list("pq"), n), "c": rng.integers(0, 9, n)})
    y = np.where((((X["a"] == "x") & (X["b"] == "p")) | (X["c"] > 6)) ^ (rng.random(n) < 0.08), "yes", "no")
    base = RuleSetClassifier(max_degree=2, time_limit=20)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    model = RuleSetCV([6, 2], base, pos_labels="both", cv=cv, thresholds=None).fit(X, y)
    results = model.cv_results_
    assert list(results["complexity"]) == [2, 2, 6, 6] and list(results["pos_label"]) == ["no", "yes"] * 2
    for j in range(4):
        params = {"complexity": results["complexity"][j], "pos_label": results["pos_label"][j]}
        direct = cross_val_score(RuleSetClassifier(max_degree=2, time_limit=20, **params), X, y, cv=cv)
        assert np.allclose([results[f"split{k}_test_score"][j] for k in range(3)], direct)
    best = int(np.argmax(results["mean_test_score"]))
    assert model.best_params_ == {"complexity": results["complexity"][best], "pos_label": results["pos_label"][best]}
    assert model.rule_set_.complexity <= model.best_params_["complexity"]
    assert model.rule_set_.describes == list(model.classes_).index(model.best_params_["pos_label"])
    assert (results["mean_complexity"] <= results["complexity"]).all()
    simple = RuleSetCV([6, 2], base, cv=cv, one_standard_error=True, thresholds=None).fit(X, y)
    assert simple.best_params_["complexity"] <= RuleSetCV([6, 2], base, cv=cv, thresholds=None).fit(
        X, y).best_params_["complexity"]
    with pytest.raises(ValueError, match="complexities"):
        RuleSetCV([-1], base).fit(X, y)
    # the base rate (bound 0: the empty set) is a candidate like any other; on pure noise it wins
    noise = np.where(np.random.default_rng(2).random(n) < 0.25, "yes", "no")
    chance = RuleSetCV([0, 6], base, pos_labels="both", cv=cv, thresholds=None).fit(X, noise)
    scores = chance.cv_results_["mean_test_score"]
    assert list(chance.cv_results_["complexity"][:2]) == [0, 0] and scores[0] != scores[1]
    assert max(scores[:2]) == pytest.approx(np.mean(noise == "no"), abs=0.01)  # predicting "no" everywhere
    if chance.best_params_["complexity"] == 0:
        assert (chance.predict(X) == "no").all()
    with pytest.raises(ValueError, match="not classes"):
        RuleSetCV([4], base, pos_labels=["maybe"]).fit(X, y)
    # sample weights reach every fold's fit, its score and the refit: each fold's scores are those of a
    # weighted fit scored with the test rows' weights
    weights = np.random.default_rng(1).integers(1, 4, n).astype(float)
    weighted = RuleSetCV([6, 2], base, cv=cv, thresholds=None).fit(X, y, sample_weight=weights)
    for j, complexity in enumerate(weighted.cv_results_["complexity"]):
        for k, (train, test) in enumerate(cv.split(X, y)):
            fold = RuleSetClassifier(max_degree=2, time_limit=20, complexity=complexity).fit(
                X.iloc[train], y[train], sample_weight=weights[train])
            assert weighted.cv_results_[f"split{k}_test_score"][j] == pytest.approx(
                fold.score(X.iloc[test], y[test], sample_weight=weights[test]))
    refit = RuleSetClassifier(max_degree=2, time_limit=20, **weighted.best_params_).fit(X, y, sample_weight=weights)
    assert weighted.certificate_.objective == pytest.approx(refit.certificate_.objective)


def test_cross_validated_rule_set_chooses_its_space_of_thresholds():
    """RuleSetCV's default tries a boosted estimator's space and the larger one that holds it (boosted
    thresholds and quantiles), smallest first at each bound: each fold's score is an independent fit's
    with that space, and the refit takes the space chosen. A quantile estimator is tried as it is; an
    unknown space is refused."""
    import pandas as pd

    from optrules.estimators import RuleSetClassifier
    from optrules.model_selection import RuleSetCV

    rng = np.random.default_rng(11)
    n = 300
    X = pd.DataFrame({"u": rng.normal(size=n), "v": rng.normal(size=n), "k": rng.choice(list("ab"), n)})
    # an oblique boundary: a space of more thresholds can follow it with more conditions
    y = ((X["u"] + 0.7 * X["v"] > 0.3) ^ (rng.random(n) < 0.05)).astype(int).to_numpy()
    base = RuleSetClassifier(max_degree=2, time_limit=20)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    model = RuleSetCV([3, 9], base, cv=cv).fit(X, y)
    results = model.cv_results_
    assert list(results["complexity"]) == [3, 3, 9, 9]
    assert list(results["thresholds"]) == ["boosted", "both"] * 2
    for j in range(4):
        params = {"complexity": results["complexity"][j], "thresholds": results["thresholds"][j]}
        direct = cross_val_score(RuleSetClassifier(max_degree=2, time_limit=20, **params), X, y, cv=cv)
        assert np.allclose([results[f"split{k}_test_score"][j] for k in range(3)], direct)
    best = int(np.argmax(results["mean_test_score"]))
    assert model.best_params_ == {"complexity": results["complexity"][best], "thresholds": results["thresholds"][best]}
    assert model.best_estimator_.thresholds == model.best_params_["thresholds"]
    quantile = RuleSetCV([3], RuleSetClassifier(max_degree=2, time_limit=20, thresholds="quantile"), cv=cv).fit(X, y)
    assert list(quantile.cv_results_["thresholds"]) == ["quantile"] and "thresholds" not in quantile.best_params_
    listed = RuleSetCV([3], base, cv=cv, thresholds=["quantile", "boosted"]).fit(X, y)
    assert list(listed.cv_results_["thresholds"]) == ["quantile", "boosted"]
    with pytest.raises(ValueError, match="thresholds must be"):
        RuleSetCV([3], base, thresholds=["deciles"]).fit(X, y)
