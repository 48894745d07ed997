r"""Non-private online submodular minimization by projected subgradient descent (Hazan-Kale).

The baselines of the private learners: online (sub)gradient descent (Zinkevich 2003) on the
Lovász extensions over the cube, :math:`x_{t+1} = \mathrm{clip}(x_t - \eta\, g_t, 0, 1)`, which uses
only the current subgradient (where FTAL uses the sum of all past ones).

* :class:`HazanKale` (full information): threshold rounding and the exact chain subgradient.
  With :math:`\eta = \sqrt n/(G\sqrt T)`, :math:`G = 4M` (Lemma 3 of Cardoso and Cummings 2018:
  :math:`\|g\|_2 \le \|g\|_1 \le 4M`) and diameter :math:`\sqrt n`, the regret is at most
  :math:`G\sqrt{nT} = 4M\sqrt{nT}`.
* :class:`BanditHazanKale` (bandit): the exploration distribution and the **corrected** one-point
  estimator of Cardoso and Cummings (the one printed by Hazan and Kale is not unbiased; footnote
  2 of Cardoso and Cummings). Expected regret at most
  :math:`n/(2\eta) + \tfrac{\eta}{2} T G_\gamma^2 + 2\gamma M T` with
  :math:`G_\gamma^2 = 4M^2(n+1)^2/\gamma \ge \mathbb{E}\|\hat g\|^2` (exact second moment of the
  estimator), minimised by :math:`\eta = \sqrt n/(G_\gamma \sqrt T)` and
  :math:`\gamma = \min(1, ((n+1)\sqrt n/(2\sqrt T))^{2/3})`: :math:`O(n M T^{2/3})`, Hazan and
  Kale's rate. (These constants follow from the standard projected-OGD bound with this estimator;
  Hazan and Kale's own constants are for their estimator.)

Neither learner is private (:attr:`~dpsubmod.online.Learner.privacy` is ``None``).

References
----------
E. Hazan and S. Kale, "Online submodular minimization", JMLR 13, 2012 (NIPS 2009). M. Zinkevich,
"Online convex programming and generalized infinitesimal gradient ascent", ICML 2003.
A. Cardoso and R. Cummings, arXiv 2018, Algorithm 2 and Lemmas 4-6.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Any

import numpy as np

from ..._guarantee import RegretGuarantee, regret_guarantee
from ..._rng import RNGLike, as_generator
from ..._validation import check_real
from ...errors import ValidationError
from ...functions.base import SetFunction
from .._checks import check_gamma, check_x1, resolve_gamma
from ..protocol import Learner
from ..tags import LearnerTags
from .bounds import COST_UNITS, bandit_hazan_kale_bound, hazan_kale_bound
from .onepoint import (
    chain_order,
    chain_subgradient,
    chain_values,
    chain_weights,
    exploration_probabilities,
    one_point_gradient,
    sample_index,
)


def _descend(x: np.ndarray, eta: float, g: np.ndarray) -> np.ndarray:
    """The projected step ``clip(x - eta g, 0, 1)``.

    A tiny ``M`` makes the default step overflow (to inf): each coordinate with a nonzero
    (estimated) subgradient then goes to the face of the cube its sign points to, the limit of
    the update as ``eta`` grows, and the others stay where they are (never ``inf * 0``)."""
    with np.errstate(over="ignore", invalid="ignore"):  # inf * 0 is caught just below
        step = eta * g
    if np.isfinite(step).all():  # eta * 0 = 0 here: the same step as below
        return np.clip(x - step, 0.0, 1.0)
    step = np.zeros_like(x)
    moved = g != 0
    with np.errstate(over="ignore"):
        step[moved] = eta * g[moved]
    return np.clip(x - step, 0.0, 1.0)


class _OGDBase(Learner):
    sense = "min"
    # The subclasses' tags say assumption="oblivious": the bounds are stated for a sequence
    # fixed in advance (as for the private learners).

    @abstractmethod
    def _resolve(self) -> dict[str, Any]:
        """Every parameter after defaults were resolved."""

    @property
    def iterate(self) -> np.ndarray:
        """The current point ``x_t`` of the cube."""
        self._ensure_state()
        return self._x.copy()

    @property
    def last_gradient(self) -> np.ndarray | None:
        """The (sub)gradient or one-point estimate of the last update (None before round 1)."""
        self._ensure_state()
        return None if self._g_last is None else self._g_last.copy()

    def _reset(self) -> None:
        super()._reset()
        self._params = self._resolve()
        self._rng = as_generator(self.rng)
        n = int(self.n)
        self._x = np.zeros(n) if self.x1 is None else np.array(self.x1, dtype=np.float64)
        self._g_last: np.ndarray | None = None


class HazanKale(_OGDBase):
    r"""Online submodular minimization, full information, by projected subgradient descent on the
    Lovász extension (Hazan and Kale 2012). **Not private.**

    Round ``t``: play :math:`S_t = \{i : x_t(i) \ge U\}`, :math:`U \sim U(0, 1]`; observe
    :math:`f_t`; :math:`x_{t+1} = \mathrm{clip}(x_t - \eta g_t, 0, 1)` with the chain subgradient
    :math:`g_t` of the Lovász extension at :math:`x_t`. Regret :math:`\le 4M\sqrt{nT}` with the
    default step.

    Parameters
    ----------
    n : int
        Ground-set size.
    T : int
        Horizon (sets the default step).
    M : float
        Bound on :math:`|f_t(S)|`.
    eta : float, optional
        Step size; default :math:`\sqrt n/(4M\sqrt T)`.
    x1 : array-like, optional
        First iterate (default 0, the empty set).
    rng : int, Generator, SeedSequence or None, default=None
        Rounding randomness, resolved when the state is built.
    """

    _tags = LearnerTags(private=False, feedback="full", problem="minimization",
                        assumption="oblivious", backends=())

    def __init__(self, n: int, T: int, *, M: float, eta: float | None = None, x1: object = None,
                 rng: RNGLike = None):
        self._check_common(n, T, "HazanKale")
        check_real(M, "M", low=0.0, low_open=True, caller="HazanKale")
        if eta is not None:
            check_real(eta, "eta", low=0.0, low_open=True, caller="HazanKale")
        check_x1(x1, n, "HazanKale")
        self.n = n
        self.T = T
        self.M = M
        self.eta = eta
        self.x1 = x1
        self.rng = rng
        self._finish_construction(HazanKale)

    def _resolve(self) -> dict[str, Any]:
        n, T, M = int(self.n), int(self.T), float(self.M)
        eta = math.sqrt(n) / (4.0 * M * math.sqrt(T)) if self.eta is None else float(self.eta)
        return {"n": n, "T": T, "M": M, "eta": eta}

    def _guarantee(self) -> RegretGuarantee:
        """Projected online gradient descent (Zinkevich 2003) on the Lovász extensions:
        ``n / (2 eta) + 8 M^2 eta T``, ``4 M sqrt(n T)`` at the default step."""
        p = self.resolved_params
        n, T, M = p["n"], p["T"], p["M"]
        return regret_guarantee(hazan_kale_bound(n, T, M, p["eta"]), 2.0 * M * T,
                                units=COST_UNITS.format(M=M),
                                theorem="Hazan and Kale (2012), full information (Zinkevich's "
                                        "bound with the chain subgradient's norm <= 4M)")

    def _select(self) -> np.ndarray:
        u = 1.0 - float(self._rng.random())
        return self._x >= u

    def _update(self, f: SetFunction) -> None:  # type: ignore[override]
        g = chain_subgradient(f, self._x)
        self._g_last = g
        self._x = _descend(self._x, self._params["eta"], g)

    def expected_value(self, f: SetFunction) -> float:
        """The Lovász extension at ``x_t`` (non-private diagnostic; uncounted)."""
        self._require_pending("expected_value")
        order = chain_order(self._x)
        return float(chain_weights(self._x, order) @ chain_values(f, order, count=False))


class BanditHazanKale(_OGDBase):
    r"""Online submodular minimization with bandit feedback by projected gradient descent on
    one-point estimates (Hazan and Kale 2012, with the corrected estimator of Cardoso and Cummings
    2018). **Not private.**

    Round ``t``: draw chain set :math:`B_k` of :math:`x_t` with probability
    :math:`\rho_k = (1-\gamma)\mu_k + \gamma/(n+1)`, play it, observe :math:`y = f_t(B_k)`, and
    step :math:`x_{t+1} = \mathrm{clip}(x_t - \eta \hat g_t, 0, 1)` with the one-point estimate
    :math:`\hat g_t` (:mod:`dpsubmod.online.minimization.onepoint`). Expected regret
    :math:`O(nMT^{2/3})`.

    Parameters
    ----------
    n, T, M, x1, rng
        As in :class:`HazanKale`.
    gamma : float, optional
        Exploration probability; default :math:`\min(1, ((n+1)\sqrt n / (2\sqrt T))^{2/3})`
        (minimiser of the bound in the module docstring). Values above 1 are clipped to 1 with a
        warning.
    eta : float, optional
        Step size; default :math:`\sqrt{n\gamma}/(2M(n+1)\sqrt T)`.
    """

    _tags = LearnerTags(private=False, feedback="bandit", problem="minimization",
                        assumption="oblivious", backends=())

    def __init__(self, n: int, T: int, *, M: float, gamma: float | None = None,
                 eta: float | None = None, x1: object = None, rng: RNGLike = None):
        self._check_common(n, T, "BanditHazanKale")
        check_real(M, "M", low=0.0, low_open=True, caller="BanditHazanKale")
        if gamma is not None:
            check_gamma(gamma, "BanditHazanKale")
        if eta is not None:
            check_real(eta, "eta", low=0.0, low_open=True, caller="BanditHazanKale")
        check_x1(x1, n, "BanditHazanKale")
        self.n = n
        self.T = T
        self.M = M
        self.gamma = gamma
        self.eta = eta
        self.x1 = x1
        self.rng = rng
        gamma = self._gamma(warn=False)
        if not math.isfinite(2.0 * float(M) * (int(n) + 1) / gamma):
            raise ValidationError(
                f"The 'M' parameter of BanditHazanKale is {M!r}: the one-point estimate, up to "
                f"2 M (n + 1) / gamma = 2 * {M!r} * {int(n) + 1} / {gamma:.4g}, overflows. "
                "Rescale the costs so that M is a moderate number (divide them by M and pass "
                "M=1)."
            )
        self._finish_construction(BanditHazanKale)

    def _gamma(self, *, warn: bool = True) -> float:
        n, T = int(self.n), int(self.T)
        default = ((n + 1) * math.sqrt(n) / (2.0 * math.sqrt(T))) ** (2.0 / 3.0)
        return resolve_gamma(self.gamma, default, "BanditHazanKale",
                             "((n+1) sqrt(n) / (2 sqrt(T)))^(2/3)", warn=warn)

    def _resolve(self) -> dict[str, Any]:
        n, T, M = int(self.n), int(self.T), float(self.M)
        gamma = self._gamma()
        if self.eta is None:
            eta = math.sqrt(n * gamma) / (2.0 * M * (n + 1) * math.sqrt(T))
        else:
            eta = float(self.eta)
        return {"n": n, "T": T, "M": M, "gamma": gamma, "eta": eta}

    def _guarantee(self) -> RegretGuarantee:
        """``n / (2 eta) + eta T G^2 / 2 + 2 gamma M T`` with ``G^2 = 4 M^2 (n+1)^2 / gamma``,
        the estimator's second moment (module docstring)."""
        p = self.resolved_params
        n, T, M = p["n"], p["T"], p["M"]
        return regret_guarantee(bandit_hazan_kale_bound(n, T, M, p["eta"], p["gamma"]),
                                2.0 * M * T, units=COST_UNITS.format(M=M),
                                theorem="Hazan and Kale (2012), bandit (projected gradient "
                                        "descent on the corrected one-point estimate)")

    def _select(self) -> np.ndarray:
        x = self._x
        order = chain_order(x)
        rho = exploration_probabilities(chain_weights(x, order), self._params["gamma"])
        u, v = self._rng.random(2)
        k = sample_index(rho, float(u))
        self._draw = (order, rho, k, 1 if v < 0.5 else -1)
        mask = np.zeros(x.size, dtype=bool)
        mask[order[:k]] = True
        return mask

    def _update(self, y: float) -> None:  # type: ignore[override]
        order, rho, k, xi = self._draw
        ghat = one_point_gradient(order, rho, k, y, xi)
        self._g_last = ghat
        self._x = _descend(self._x, self._params["eta"], ghat)

    def expected_value(self, f: SetFunction) -> float:
        """``sum_k rho_k f(B_k)`` (non-private diagnostic; uncounted)."""
        self._require_pending("expected_value")
        order, rho, _, _ = self._draw
        return float(rho @ chain_values(f, order, count=False))
