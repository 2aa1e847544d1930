"""optrules: provably optimal, human-readable rule models with certificates.

Names are imported on first use, so that the search core loads without pandas or scikit-learn.
"""

from optrules._lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "Antecedents": "optrules.data.mine",
    "Binarizer": "optrules.data.binarize",
    "Certificate": "optrules.certificate",
    "FallingRuleList": "optrules.frl.model",
    "FallingRuleListClassifier": "optrules.frl.estimator",
    "fairness_frontier": "optrules.fairness.frontier",
    "load_bank_marketing": "optrules.data.datasets",
    "load_car_evaluation": "optrules.data.datasets",
    "regularization_path": "optrules.corels.model_selection",
    "RuleListCV": "optrules.corels.model_selection",
    "RuleSetCV": "optrules.rulesets.model_selection",
    "load_model": "optrules.models",
    "Rule": "optrules.models",
    "RuleList": "optrules.corels.model",
    "RuleListClassifier": "optrules.corels.estimator",
    "RuleSet": "optrules.rulesets.model",
    "RuleSetClassifier": "optrules.rulesets.estimator",
    "load_compas": "optrules.data.datasets",
    "load_dataset": "optrules.data.datasets",
    "mine_antecedents": "optrules.data.mine",
    "read_table": "optrules.data.tables",
    "STOP": "optrules.budget",
}
__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports('optrules', _EXPORTS)
