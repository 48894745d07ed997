"""dpsubmod: differentially private submodular optimization.

The entry points are :func:`maximize` (offline maximization by any registered method; see
:func:`list_methods`), :func:`maximize_ksubmodular`, the user's privacy :class:`Budget` (one per
data set, passed as ``budget=`` to every private call) and the subpackages: ``functions`` (set
functions with declared sensitivity), ``constraints`` (matroids, knapsack), ``privacy``
(mechanisms, accounting, auditing), ``offline``, ``online``, ``polytopes``, ``extensions``,
``datasets`` and ``experiments``.
"""

from ._version import __version__
from .errors import BudgetExceededError, DPSubmodError
from .offline import list_methods, maximize, maximize_ksubmodular
from .privacy import Budget

__all__ = ["maximize", "maximize_ksubmodular", "list_methods", "Budget", "DPSubmodError",
           "BudgetExceededError", "__version__"]
