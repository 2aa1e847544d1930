"""optrules: provably optimal, human-readable rule models with certificates."""

from .data import Antecedents, Binarizer, load_compas, load_dataset, mine_antecedents
from .certificate import Certificate
from .estimators import RuleListClassifier
from .models import Rule, RuleList

__version__ = "0.1.0"
__all__ = [
    "Antecedents", "Binarizer", "Certificate", "Rule", "RuleList", "RuleListClassifier",
    "load_compas", "load_dataset", "mine_antecedents",
]
