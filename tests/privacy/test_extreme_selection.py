"""Selection mechanisms at the edge of floating point: no leaked warning, the limit law, and a
weight beyond float range refused by the samplers and their exact laws alike."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpsubmod.errors import ValidationError
from dpsubmod.privacy import (
    exponential_mechanism,
    exponential_mechanism_probabilities,
    permute_and_flip,
    permute_and_flip_probabilities,
)


def test_exponential_mechanism_at_a_huge_epsilon_picks_the_max_quietly():
    # weight * gap overflows to -inf here: the limit law puts all mass on the maximum.
    scores = np.array([0.0, 2.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        picks = {exponential_mechanism(scores, epsilon=1e308, range_sensitivity=1.0, rng=s)
                 for s in range(20)}
    assert picks == {1}


# epsilon / sensitivity overflows to inf, or underflows to 0: the exact law would be NaN (inf
# times a zero gap) or uniform, neither of which the sampler draws.
OUT_OF_RANGE = [
    ({"epsilon": 1e308, "sensitivity": 1e-10}, "sensitivity"),
    ({"epsilon": 1e-200, "sensitivity": 1e200}, "sensitivity"),
    ({"epsilon": 1e308, "sensitivity": 1e-10, "monotonic": True}, "sensitivity"),
    ({"epsilon": 1e-300, "sensitivity": 1e300, "backend": "secure"}, "sensitivity"),
]
LAWS = [(exponential_mechanism_probabilities, exponential_mechanism),
        (permute_and_flip_probabilities, permute_and_flip)]


@pytest.mark.parametrize("law, sampler", LAWS, ids=["exponential", "permute_and_flip"])
@pytest.mark.parametrize("kwargs, name", OUT_OF_RANGE)
def test_an_exact_law_refuses_a_weight_outside_float_range_as_its_sampler_does(law, sampler,
                                                                               kwargs, name):
    scores = np.array([0.0, 2.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValidationError) as err:
            law(scores, **kwargs)
    msg = str(err.value)
    assert msg.startswith(f"{law.__name__}: the weight computed from epsilon and {name} is ")
    assert f"Rescale the query (or its {name})" in msg
    # the sampler refuses the same arguments in the same words
    with pytest.raises(ValidationError, match=f"the weight computed from epsilon and {name}"):
        sampler(scores, rng=0, **kwargs)


def test_the_exponential_law_names_range_sensitivity_when_that_was_given():
    with pytest.raises(ValidationError, match="computed from epsilon and range_sensitivity is "
                                              "inf.*Rescale the query \\(or its "
                                              "range_sensitivity\\)"):
        exponential_mechanism_probabilities([0.0, 1.0], epsilon=1e308,
                                            range_sensitivity=1e-10)


@pytest.mark.parametrize("law", [exponential_mechanism_probabilities,
                                 permute_and_flip_probabilities])
def test_an_exact_law_at_the_largest_weights_in_range_is_the_limit_law(law):
    # just inside the range on both sides: a point mass on the maximum, and nearly uniform
    scores = np.array([0.0, 2.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sharp = law(scores, epsilon=1e308, sensitivity=1.0, monotonic=True)
        flat = law(scores, epsilon=1e-150, sensitivity=1e150, monotonic=True)
    np.testing.assert_array_equal(sharp, [0.0, 1.0, 0.0])
    np.testing.assert_allclose(flat, 1 / 3, rtol=1e-12)
