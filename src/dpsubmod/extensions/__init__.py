"""Continuous extensions of set functions (Lovász, multilinear) and their rounding."""

from .._lazy import lazy_exports

#: Where each exported name is defined; it loads on first use (PEP 562).
_WHERE = {
    "lovasz": ("lovasz_subgradient", "lovasz_value", "threshold_round",),
    "_closed_forms": ("has_closed_form", "register_closed_form"),
    "multilinear": (
        "MultilinearEstimate", "multilinear_gradient", "multilinear_gradients", "multilinear_value",
    ),
}

__all__ = [name for names in _WHERE.values() for name in names]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
