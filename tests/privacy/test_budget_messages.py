"""A refusal and a statement say what is left in the user's terms: the budget described (no
Python repr), rho only under the zCDP rule, and "nothing is left" when the budget is spent."""

from __future__ import annotations

import numpy as np
import pytest

from dpsubmod.errors import BudgetExceededError
from dpsubmod.privacy import Budget, FileBudget
from dpsubmod.privacy.additive import laplace
from dpsubmod.privacy.gaussian_mechanism import gaussian


def refusal(budget, **kw):
    with pytest.raises(BudgetExceededError) as info:
        laplace(0.0, sensitivity=1.0, budget=budget, rng=0, **kw)
    return str(info.value)


def test_a_spent_budget_says_nothing_is_left():
    b = Budget(1.0)
    laplace(0.0, epsilon=1.0, sensitivity=1.0, budget=b, rng=0)
    text = refusal(b, epsilon=0.5)
    assert "nothing is left" in text and "at most epsilon 0" not in text
    assert "Lower the release's epsilon" not in text  # no release can fit: no such advice
    assert "Budget(" not in text and "The budget (epsilon 1, delta 0, basic composition)" in text
    assert "nothing is left" in b.statement() and "at most epsilon 0 " not in b.statement()


def test_a_budget_with_room_says_what_fits():
    b = Budget(1.0)
    laplace(0.0, epsilon=0.6, sensitivity=1.0, budget=b, rng=0)
    text = refusal(b, epsilon=0.5)
    assert "left: one more release of at most epsilon 0.4 fits" in text
    assert "Lower the release's epsilon" in text and "nothing is left" not in text


def test_rho_is_shown_only_under_the_zcdp_rule():
    basic = Budget(0.5, 1e-6)
    with pytest.raises(BudgetExceededError) as info:
        gaussian(np.zeros(2), epsilon=0.9, delta=1e-7, sensitivity=1.0, budget=basic, rng=0)
    assert "rho" not in str(info.value)
    zcdp = Budget(0.5, 1e-6, composition="zcdp")
    with pytest.raises(BudgetExceededError) as info:
        gaussian(np.zeros(2), rho=0.5, sensitivity=1.0, budget=zcdp, rng=0)
    assert "rho" in str(info.value)


def test_a_budget_file_is_named_by_its_file_and_data_set(tmp_path):
    path = tmp_path / "rides-budget.json"
    FileBudget.create(path, 1.0, dataset="rides")
    fb = FileBudget(path, dataset="rides")
    laplace(0.0, epsilon=1.0, sensitivity=1.0, budget=fb, rng=0)
    text = refusal(fb, epsilon=0.1)
    assert "FileBudget(" not in text
    assert "The budget file rides-budget.json of data set 'rides'" in text
    assert "nothing is left" in text and "never reset" in text
