"""The data layer: binarize, mine antecedents, packed bitsets, reference formats, bundled datasets."""

from .binarize import Binarizer, Feature, cut
from .datasets import Dataset, load_compas, load_dataset
from .mine import Antecedents, mine_antecedents

__all__ = ["Antecedents", "Binarizer", "Dataset", "Feature", "cut", "load_compas", "load_dataset", "mine_antecedents"]
