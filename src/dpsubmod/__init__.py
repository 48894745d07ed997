"""dpsubmod: differentially private submodular optimization.

The entry points are :func:`maximize` (offline maximization by any registered method; see
:func:`list_methods`) and the subpackages: ``functions`` (set functions with declared
sensitivity), ``constraints`` (matroids, knapsack), ``privacy`` (mechanisms, accounting,
auditing), ``offline``, ``online``, ``polytopes``, ``extensions``, ``datasets`` and
``experiments``.
"""

from .errors import DPSubmodError
from .offline import list_methods, maximize

__version__ = "0.1.0"

__all__ = ["maximize", "list_methods", "DPSubmodError", "__version__"]
