"""dpsubmod: differentially private submodular optimization.

The entry points are :func:`maximize` (offline maximization by any registered method; see
:func:`list_methods`), :func:`maximize_ksubmodular`, the user's privacy :class:`Budget` (one per
data set, passed as ``budget=`` to every private call) and the subpackages: ``functions`` (set
functions with declared sensitivity), ``constraints`` (matroids, knapsack), ``privacy``
(mechanisms, accounting, auditing), ``offline``, ``online``, ``polytopes``, ``extensions``,
``datasets`` and ``experiments``. Each loads on first use (PEP 562), so ``import dpsubmod`` is
cheap and a program pays only for the parts it uses.
"""

from ._lazy import lazy_exports
from ._version import __version__
from .errors import BudgetExceededError, DPSubmodError

__all__ = ["maximize", "maximize_ksubmodular", "list_methods", "Budget", "DPSubmodError",
           "BudgetExceededError", "__version__"]

#: Where each exported name is defined; it loads on first use.
_WHERE = {
    "offline.registry": ("maximize", "maximize_ksubmodular", "list_methods"),
    "privacy.budget": ("Budget",),
}

__getattr__, __dir__ = lazy_exports(
    __name__, _WHERE,
    modules=("functions", "constraints", "privacy", "offline", "online", "polytopes",
             "extensions", "datasets", "experiments", "tasks", "estimators", "cli"))
