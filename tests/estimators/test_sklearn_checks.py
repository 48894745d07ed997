"""scikit-learn's estimator checks on both selectors, with the failures by design named.

The expected failures come from :func:`dpsubmod.estimators.expected_failed_checks`, which the
estimators' docstrings list, and are strict xfails on the numpy backend (scikit-learn >= 1.8):
a check that starts passing fails the suite, so the list cannot go stale.

* ``PrivateFeatureSelector``: none.
* ``PrivateFacilityLocationSelector``: ``check_transformer_general`` (twice, the second on
  read-only memmapped data), ``check_transformer_data_not_an_array``,
  ``check_methods_subset_invariance``, ``check_methods_sample_order_invariance``, and the
  pandas output checks ``check_set_output_transform_pandas`` and
  ``check_global_output_transform_pandas``: its ``transform`` returns the chosen public
  candidates (``n_candidates_to_select`` rows), not one row per record, as apricot's
  ``transform`` returns the chosen rows, and these checks assume one output row per input row.
* On the secure backend (the default), also ``check_fit_idempotent``: the noise comes from the
  operating system, which ``random_state`` does not seed, so two fits may choose differently.
  It is not strict there, since two fits sometimes agree by chance.

scikit-learn skips its array-API check itself unless ``SCIPY_ARRAY_API=1`` is set.
"""

from __future__ import annotations

import inspect
import warnings

import pytest

pytest.importorskip("sklearn")

import sklearn.utils.estimator_checks as sk_checks  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from dpsubmod.estimators import (  # noqa: E402
    PrivateFacilityLocationSelector,
    PrivateFeatureSelector,
    expected_failed_checks,
)

# Public inputs that suit every data set the checks draw (any number of columns, values of a
# few units): bins on a fixed range, and a grid of 2 points per axis on the same range.
SEEDED = [
    PrivateFeatureSelector(backend="numpy", bins=3, bounds=(-3.0, 3.0)),
    PrivateFeatureSelector(backend="numpy", bins="categorical"),  # declared integer codes
    PrivateFacilityLocationSelector(2, grid=2, bounds=(-3.0, 3.0), backend="numpy"),
]
SECURE = [
    PrivateFeatureSelector(bins=3, bounds=(-3.0, 3.0), backend="secure"),
    PrivateFacilityLocationSelector(2, grid=2, bounds=(-3.0, 3.0), backend="secure"),
]

# xfail_strict arrived in scikit-learn 1.8; older releases (the tested floor) run non-strict.
STRICT = ({"xfail_strict": True}
          if "xfail_strict" in inspect.signature(parametrize_with_checks).parameters else {})
LENIENT = {"xfail_strict": False} if STRICT else {}

#: Checks that parametrize_with_checks does not generate but that hold for any transformer
#: with feature names and set_output; run here explicitly.
EXTRA = ["check_set_output_transform", "check_set_output_transform_pandas",
         "check_global_output_transform_pandas", "check_dataframe_column_names_consistency",
         "check_transformer_get_feature_names_out",
         "check_transformer_get_feature_names_out_pandas", "check_get_feature_names_out_error",
         "check_estimators_unfitted", "check_inplace_ensure_writeable"]


@parametrize_with_checks(SEEDED, expected_failed_checks=expected_failed_checks, **STRICT)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)


@parametrize_with_checks(SECURE, expected_failed_checks=expected_failed_checks, **LENIENT)
def test_sklearn_estimator_checks_secure_backend(estimator, check):
    with warnings.catch_warnings():
        # the checks seed random_state; the secure backend says it does not use it
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)


@pytest.mark.parametrize("estimator", SEEDED, ids=repr)
@pytest.mark.parametrize("name", EXTRA)
def test_set_output_and_feature_name_checks(estimator, name):
    reason = expected_failed_checks(estimator).get(name)
    check = getattr(sk_checks, name)
    with warnings.catch_warnings():
        # The feature-name checks fit on a DataFrame and transform an array (and the reverse)
        # on purpose, and scikit-learn warns about the mismatch it is testing.
        warnings.filterwarnings("ignore", "X (does not have valid|has) feature names",
                                UserWarning)
        if reason is None:
            check(type(estimator).__name__, estimator)
            return
        with pytest.raises(Exception):  # noqa: B017 - a failure by design, of any kind
            check(type(estimator).__name__, estimator)


def test_every_expected_failure_is_a_real_check():
    for est in SEEDED + SECURE:
        for name in expected_failed_checks(est):
            assert callable(getattr(sk_checks, name, None)), name
