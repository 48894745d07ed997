"""The Gaussian calibrations in their module: the mechanism calibrates from the values its
constructor checked (same sigma as the public functions, epsilon validated once on its path),
and the pure-DP calibrations and the selection mechanisms load no scipy."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest

import dpsubmod
from dpsubmod.errors import ValidationError
from dpsubmod.functions import FacilityLocation
from dpsubmod.privacy import Gaussian, gaussian
from dpsubmod.privacy.gaussian_calibration import gaussian_sigma, gaussian_sigma_zcdp
from scripts import load_script


@pytest.fixture(scope="module")
def tracer():
    yield load_script("benchmarks/trace_privacy_path.py")
    del sys.modules["trace_privacy_path"]


@pytest.mark.parametrize("calibration", ["analytic", "classic", "zcdp"])
def test_the_mechanism_and_the_function_calibrate_alike(calibration):
    for eps, delta, sens in itertools.product([1e-3, 0.5, 0.9, 4.0], [1e-12, 1e-6, 0.2],
                                              [0.1, 1.0, 7.0]):
        if calibration == "classic" and eps >= 1.0:
            with pytest.raises(ValidationError, match="epsilon < 1.*calibration='analytic'"):
                Gaussian(sensitivity=sens, epsilon=eps, delta=delta, calibration=calibration)
            continue
        mech = Gaussian(sensitivity=sens, epsilon=eps, delta=delta, calibration=calibration)
        assert mech.sigma == gaussian_sigma(sensitivity=sens, epsilon=eps, delta=delta,
                                            calibration=calibration)
    assert Gaussian(sensitivity=2.0, rho=0.3).sigma == gaussian_sigma_zcdp(0.3, 2.0)


@pytest.mark.parametrize("calibration", ["analytic", "classic", "zcdp"])
def test_the_gaussian_validates_epsilon_once(tracer, calibration):
    # the free function builds the mechanism, which checks its arguments; the calibration it
    # runs takes the checked values
    t = tracer.trace(lambda: gaussian(1.0, epsilon=0.5, delta=1e-6, sensitivity=1.0, rng=0,
                                      calibration=calibration))
    assert t.first_draw is not None
    assert t.epsilon_validations == 1, t.epsilon_checks


def test_the_analytic_gaussian_route_of_a_method_validates_epsilon_at_most_twice(tracer):
    # maximize checks the user's epsilon; the step mechanism's constructor is the second check
    rng = np.random.default_rng(0)
    f = FacilityLocation.from_records(rng.random((50, 2)), rng.random((8, 2)), bandwidth=0.1)
    t = tracer.trace(lambda: dpsubmod.maximize(f, 3, "dpcg", epsilon=1.0, delta=1e-6, rng=0,
                                               steps=3, noise="gaussian",
                                               gaussian_calibration="analytic"))
    assert t.first_draw is not None
    assert t.epsilon_validations <= 2, t.epsilon_checks


def test_pure_dp_calibration_selection_and_laplace_load_no_scipy():
    # the modules of the select path (the permute-and-flip law's quadrature, off that path,
    # imports scipy.special at its module's top)
    code = ("import sys\nimport dpsubmod.privacy.calibration, dpsubmod.privacy.selection, "
            "dpsubmod.privacy.kov\n"
            "from dpsubmod.privacy import exponential_mechanism_probabilities, kov_composition\n"
            "from dpsubmod.privacy import laplace, l2_laplace\n"
            "laplace(0.0, epsilon=1.0, sensitivity=1.0, rng=0)\n"
            "l2_laplace([0.0, 0.0], epsilon=1.0, sensitivity=1.0, rng=0)\n"
            "exponential_mechanism_probabilities([0.0, 1.0, 2.0], epsilon=1.0, sensitivity=1.0)\n"
            "kov_composition(0.1, 50, 1e-6)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
