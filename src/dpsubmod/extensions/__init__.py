"""Continuous extensions of set functions (Lovász, multilinear) and their rounding."""

from .lovasz import lovasz_subgradient as lovasz_subgradient
from .lovasz import lovasz_value as lovasz_value
from .lovasz import threshold_round as threshold_round
from .multilinear import MultilinearEstimate as MultilinearEstimate
from .multilinear import has_closed_form as has_closed_form
from .multilinear import multilinear_gradient as multilinear_gradient
from .multilinear import multilinear_gradients as multilinear_gradients
from .multilinear import multilinear_value as multilinear_value
from .multilinear import register_closed_form as register_closed_form
