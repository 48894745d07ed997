"""``dpsubmod.privacy.audit`` is the auditor's module, never the function that shadowed it.

The auditor is exported as ``audit_mechanism``; the module stays callable so the earlier
``from dpsubmod.privacy import audit; audit(...)`` keeps working, and it is loaded only on first
use so that releases do not pay for ``scipy.stats``.
"""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

import dpsubmod.privacy
from dpsubmod.privacy import AuditResult, audit_mechanism, laplace


def _count_query(d, g):
    return laplace(d, epsilon=1.0, sensitivity=1.0, rng=g)


def test_import_as_gives_the_module_and_its_function():
    import dpsubmod.privacy.audit as m

    assert isinstance(m, types.ModuleType)
    assert m.__name__ == "dpsubmod.privacy.audit"
    assert dpsubmod.privacy.audit is m
    assert m.audit_mechanism is audit_mechanism
    # the earlier name inside the module, as the tests and docs of earlier releases import it
    assert m.audit is audit_mechanism
    assert callable(m.exact_check) and callable(m.clopper_pearson)


def test_calling_the_module_runs_the_auditor():
    from dpsubmod.privacy import audit

    via_module = audit(_count_query, 0.0, 1.0, 200, epsilon_claimed=1.0, rng=3)
    direct = audit_mechanism(_count_query, 0.0, 1.0, 200, epsilon_claimed=1.0, rng=3)
    assert isinstance(via_module, AuditResult)
    assert via_module == direct


def test_fresh_interpreter_module_first_and_no_scipy_stats_for_releases():
    # In a fresh interpreter the package __init__ runs first: the shadowing showed exactly there.
    code = (
        "import sys, types\n"
        "import dpsubmod, dpsubmod.tasks\n"
        "assert 'scipy.stats' not in sys.modules, 'releases import the auditor'\n"
        "assert 'dpsubmod.privacy.audit' not in sys.modules\n"
        "import dpsubmod.privacy.audit as m\n"
        "assert isinstance(m, types.ModuleType) and m.__name__ == 'dpsubmod.privacy.audit'\n"
        "from dpsubmod.privacy import audit_mechanism, audit\n"
        "assert audit is m and audit_mechanism is m.audit_mechanism\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'audit_nothing'"):
        dpsubmod.privacy.audit_nothing  # noqa: B018
    assert "audit_mechanism" in dir(dpsubmod.privacy)
