"""The data layer: binarize, mine antecedents, packed bitsets, reference formats, bundled datasets."""

from optrules._lazy import lazy_exports

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

__getattr__ = lazy_exports('optrules.data', _EXPORTS)
