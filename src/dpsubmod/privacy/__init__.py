"""Differential privacy building blocks: mechanisms, noise backends, continual release,
accounting and auditing.

Every public name of the five modules is re-exported here:

* :mod:`~dpsubmod.privacy.mechanisms`: Laplace, Gaussian (classic, analytic, zCDP), l2 Laplace,
  exponential mechanism, report-noisy-max, permute-and-flip, with calibration helpers and
  privacy maps;
* :mod:`~dpsubmod.privacy.backends`: the seeded numpy backend (simulation) and the secure backend
  (exact discrete samplers on a CSPRNG);
* :mod:`~dpsubmod.privacy.continual`: tree aggregation (binary mechanism) for vector streams;
* :mod:`~dpsubmod.privacy.accounting`: the ledger of mechanism uses, composition theorems, the
  budget that refuses overspending, and the privacy report;
* :mod:`~dpsubmod.privacy.audit`: an exact checker and a black-box auditor.
"""

from . import accounting as _accounting
from . import audit as _audit
from . import backends as _backends
from . import continual as _continual
from . import mechanisms as _mechanisms
from .accounting import *  # noqa: F403
from .audit import *  # noqa: F403
from .backends import *  # noqa: F403
from .continual import *  # noqa: F403
from .mechanisms import *  # noqa: F403

# The function audit() shadows the submodule attribute of the same name; import the module
# as ``dpsubmod.privacy.audit`` in a ``from ... import`` statement to reach its other names.
__all__ = [
    *_accounting.__all__,
    *_audit.__all__,
    *_backends.__all__,
    *_continual.__all__,
    *_mechanisms.__all__,
]
