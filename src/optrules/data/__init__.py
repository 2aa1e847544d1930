"""The data layer: binarize, mine antecedents, packed bitsets, reference formats, bundled datasets."""

from importlib import import_module

_EXPORTS = {
    "Antecedents": "optrules.data.mine",
    "mine_antecedents": "optrules.data.mine",
    "Binarizer": "optrules.data.binarize",
    "Feature": "optrules.data.binarize",
    "cut": "optrules.data.binarize",
    "Dataset": "optrules.data.datasets",
    "load_compas": "optrules.data.datasets",
    "load_dataset": "optrules.data.datasets",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'optrules.data' has no attribute {name!r}")
