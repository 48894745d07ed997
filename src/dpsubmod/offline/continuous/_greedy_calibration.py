"""Private continuous greedy's numbers, all computed from public parameters before a run:
the per-step calibration, the stated utility gap of Algorithm 1, and the cover and subsample
sizes of Algorithm 2 (the paper's defaults, and the refusal of a run too large to finish).

The algorithms and their privacy are described in
:mod:`dpsubmod.offline.continuous.continuous_greedy` (Rafiey and Yoshida 2020); this module holds
their calibration so that the algorithms' module stays readable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ... import privacy as mech
from ..._validation import check_delta, check_epsilon, check_int, check_real
from ...errors import ValidationError
from ...privacy._inputs import _div_down
from ...privacy.composition import check_composition
from ...privacy.split import _split


@dataclass(frozen=True)
class ContinuousGreedyCalibration:
    """The privacy calibration of one run of private continuous greedy.

    Attributes
    ----------
    epsilon_step : float
        Privacy cost of one step (pure DP; also ``epsilon_step``-bounded-range).
    weight : float
        :math:`\\epsilon'`: a step draws ``y`` with probability proportional to
        ``exp(weight * score(y))``.
    gradient_sensitivity : float
        Per-coordinate bound ``s`` on the change of the gradient (``2 Delta`` or ``Delta``).
    score_sensitivity : float
        Bound on the change of one candidate's score: ``rank * s`` plus the layer width.
    composition : str
        The rule composing the ``steps`` steps into the total budget.
    steps : int
    delta : float
        The delta of the run's statement (0 under basic composition).
    """

    epsilon_step: float
    weight: float
    gradient_sensitivity: float
    score_sensitivity: float
    composition: str
    steps: int
    delta: float = 0.0


def continuous_greedy_calibration(epsilon: float, delta: float = 0.0, *, steps: int, rank: int,
                                  gradient_sensitivity: float, composition: str = "auto",
                                  layer_width: float = 0.0) -> ContinuousGreedyCalibration:
    """Per-step budget and exponential-mechanism weight of private continuous greedy.

    Parameters
    ----------
    epsilon, delta : float
        Total budget of the run.
    steps : int
        Number of steps ``T``.
    rank : int
        Matroid rank ``r`` (every candidate direction has l1 norm ``r``).
    gradient_sensitivity : float
        Per-coordinate gradient sensitivity ``s``: ``2 Delta`` in the general data model,
        ``Delta`` for monotone records.
    composition : {"auto", "basic", "advanced", "kov", "zcdp"}, default="auto"
        How the steps share the budget (:func:`~dpsubmod.privacy.split.split_budget`).
    layer_width : float, default=0
        Width ``w`` of Algorithm 2's score layers (0: no quantization). Quantized scores move
        by less than ``r s + w``.

    Returns
    -------
    ContinuousGreedyCalibration
        ``weight = epsilon_step / (2 (r s + w))``, rounded down.

    Examples
    --------
    >>> cal = continuous_greedy_calibration(1.0, steps=4, rank=2, gradient_sensitivity=0.1)
    >>> round(cal.epsilon_step, 6), round(cal.weight, 6)
    (0.25, 0.625)
    """
    caller = "continuous_greedy_calibration"
    epsilon = check_epsilon(epsilon, caller=caller)
    delta = check_delta(delta, caller=caller)
    steps = check_int(steps, "steps", low=1, caller=caller)
    rank = check_int(rank, "rank", low=1, caller=caller)
    s = check_real(gradient_sensitivity, "gradient_sensitivity", low=0.0, low_open=True,
                   caller=caller)
    w = check_real(layer_width, "layer_width", low=0.0, caller=caller)
    cal = _calibration(epsilon, delta, steps=steps, rank=rank, gradient_sensitivity=s,
                       composition=check_composition(composition, caller), layer_width=w,
                       caller=caller)
    # a score sensitivity that overflows is refused here; a run refuses it when it builds its
    # mechanism
    mech.exponential_mechanism_weight(cal.epsilon_step, cal.score_sensitivity)
    return cal


def _calibration(epsilon: float, delta: float, *, steps: int, rank: int,
                 gradient_sensitivity: float, composition: str, layer_width: float,
                 caller: str) -> ContinuousGreedyCalibration:
    """:func:`continuous_greedy_calibration` of validated arguments (a run's public entry
    validated them)."""
    split = _split(epsilon, delta, steps, composition, True, caller)
    score_sens = rank * gradient_sensitivity + layer_width
    # as exponential_mechanism_weight: epsilon / (2 * score sensitivity), rounded down
    weight = _div_down(split.epsilon_step, 2 * score_sens)
    return ContinuousGreedyCalibration(split.epsilon_step, weight, gradient_sensitivity,
                                       score_sens, split.composition, steps, split.delta)


def continuous_greedy_utility_gap(*, epsilon_step: float, rank: int, steps: int,
                                  gradient_sensitivity: float, log_n_bases: float,
                                  value_bound: float, cover_size: int = 1) -> float:
    r"""Additive term of Algorithm 1's guarantee with the base-average cover (expectation).

    With exact gradients, :math:`E[F(S)] \ge (1 - 1/e)\,\mathrm{OPT} - \text{gap}` where

    .. math::

        \text{gap} = \frac{m \ln|\mathcal B|}{\epsilon'} + \frac{m_F r^2}{2T},
        \qquad \epsilon' = \frac{\epsilon_{step}}{2 r s}.

    Derivation (continuous greedy with the Gibbs bound of the exponential mechanism): a step's
    expected score is at least :math:`\max_B \langle 1_B, g\rangle - \ln(|\mathcal B|^m)/\epsilon'`
    (the Gibbs distribution maximises :math:`\epsilon' E[q] + H`, and :math:`H \le
    m \ln|\mathcal B|`), and :math:`\max_B \langle 1_B, \nabla f(x)\rangle \ge \mathrm{OPT} - f(x)`
    for monotone submodular ``F``; the smoothness of ``f`` along a step of l1 length
    :math:`r/T` costs at most :math:`m_F r^2 / (2T^2)` (Sadeghi and Fazel 2021, Lemma 2:
    :math:`L \le m_F = \max_e F(\{e\})`); the recursion over ``T`` steps and swap rounding
    (:math:`E[F(S)] \ge f(x_T)`) give the bound. It is the ``rho = 0`` form of the paper's
    Theorem 3.3 (seed 004 notes, Section 2.8), whose :math:`O(\Delta r |E| \ln|E| / \epsilon^3)`
    term it replaces.

    Parameters
    ----------
    epsilon_step : float
    rank : int
    steps : int
    gradient_sensitivity : float
    log_n_bases : float
        :math:`\ln|\mathcal B|` (at most :math:`\ln\binom{n}{r}`).
    value_bound : float
        :math:`m_F`, a bound on :math:`\max_e F(\{e\})`.
    cover_size : int, default=1

    Returns
    -------
    float
    """
    weight = epsilon_step / (2.0 * rank * gradient_sensitivity)
    return cover_size * log_n_bases / weight + value_bound * rank**2 / (2.0 * steps)


def _layers_defaults(n: int, r: int, eps_step: float) -> tuple[int, int]:
    """The paper's cover size and subsample size (Theorem 4.6, corrected mu = e^eps - 1).

    ``rho = eps / sqrt(n)`` gives ``m = ceil(r / rho^2)`` bases per cover point (Maurey's
    bound ``E||y - x||^2 <= r / m``); ``lambda = 1 / sqrt(n)``, ``theta = 1 / n^2`` and
    ``L = ceil(r / ln(1 + mu)) + 1 = ceil(r / eps) + 1`` layers give the Hoeffding sample size
    ``N = ceil(ln(2 L / theta) / (2 lambda^2))``.
    """
    # at a tiny per-step epsilon these are astronomically large (or infinite): returned as
    # floats, for _check_layers_work to refuse
    sq = eps_step * eps_step  # not **: a float power raises OverflowError
    m = max(1, math.ceil(r * n / sq)) if sq > 0 and r * n / sq < 1e300 else math.inf
    layers = r / eps_step + 1 if eps_step > 0 else math.inf
    N = math.ceil(math.log(2.0 * layers * n**2) * n / 2.0) if math.isfinite(layers) else math.inf
    return m, max(1, N)


#: The most base elements Algorithm 2 may draw in one run (``T N m r``): beyond, the run would
#: take hours and its arrays would not fit in memory.
_LAYERS_MAX_WORK = 2 * 10**8


def _check_layers_work(T: int, N: float, m: float, r: int, n: int, cover_size: object,
                       n_subsample: object, caller: str) -> None:
    """Refuse, before anything is charged or drawn, a run too large to finish."""
    work = float(T) * float(N) * float(m) * float(r)
    if work <= _LAYERS_MAX_WORK and float(N) * n <= _LAYERS_MAX_WORK:
        return
    if cover_size is None or n_subsample is None:
        which = ("'cover_size'" if cover_size is None else "") + (
            " and " if cover_size is None and n_subsample is None else "") + (
            "'n_subsample'" if n_subsample is None else "")
        cause = (f"the paper's default {which} at this 'epsilon' (per step) give cover_size="
                 f"{m:.3g} and n_subsample={N:.3g}")
    else:
        cause = f"cover_size={m} and n_subsample={N}"
    raise ValidationError(
        f"{caller}: {cause}, so one run would draw about {work:.3g} base elements (the limit "
        f"is {_LAYERS_MAX_WORK:.0e}). Pass smaller cover_size= and n_subsample=, a larger "
        "epsilon, or use method='private_continuous_greedy'."
    )
