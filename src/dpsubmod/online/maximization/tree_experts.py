r"""Tree-aggregated private experts: full information, a regret bound against adaptive
adversaries (Agarwal and Singh 2017, Algorithm 1, in each of the ``k`` experts of Streeter and
Golovin's online greedy).

The ``k`` ordered experts are those of :class:`~dpsubmod.online.FIDP`: expert ``i`` learns the
element to add to the choices of experts ``1..i-1``, and is fed the marginal gains
:math:`g_t^i(a) = f_t(S_t^{i-1} + a) - f_t(S_t^{i-1})`, clipped to ``[0, 1]``. Instead of a
Hedge whose every draw is charged as an exponential mechanism, each expert plays Hedge (the
entropic FTRL on the simplex) over **noisy cumulative gains** released by one tree-aggregation
counter (:class:`~dpsubmod.privacy.tree_aggregator.TreeAggregator`) of dimension ``k n``:

.. math::

    x_t^i(a) \propto \exp\big(\eta\,\tilde G_{t-1}^i(a)\big), \qquad
    \tilde G_{t-1} = \sum_{s < t} g_s + Z_{t-1},

and draws :math:`a_t^i` from :math:`x_t^i` restricted to the elements experts ``1..i-1`` did
not draw, with public randomness. The draws are post-processing of the counter's releases.

Privacy. Neighbouring streams differ in one round's function. That round's ``k x n`` gain
matrix (each entry clipped to ``[0, 1]``) moves by at most 1 in every entry: ``k n`` in l1 norm
and :math:`\sqrt{k n}` in l2 norm, whatever the functions. The counter is calibrated to that
sensitivity of the whole ``k n`` vector (Laplace: l1; Gaussian: l2). Later rounds' gains depend
on the earlier played sets, which are released outputs: given the same released history, the
neighbouring streams feed the same items to the counter in every other round, so each node
release is a Laplace (Gaussian) mechanism of that sensitivity on the nodes containing the
changed round and of sensitivity 0 on the others. Adaptive composition over the at most
:math:`\lfloor\log_2 T\rfloor + 1` released nodes containing it gives the counter's guarantee
(pure for Laplace; for Gaussian the node mechanisms compose as one Gaussian mechanism of l2
sensitivity :math:`\sqrt{L k n}`, Dong, Roth and Su 2022, which is what the counter is
calibrated to). The played sets are post-processing.

Regret (adaptive adversaries). Let :math:`\hat x_t^i` be the noise-free Hedge iterate on the
true gains. Hedge's regret bound :math:`\ln n/\eta + \eta T/8` holds for every gain sequence,
including one chosen adaptively. The entropic regularizer is 1-strongly convex in l1, so
:math:`\|x_t^i - \hat x_t^i\|_1 \le \eta\|Z_{t-1}^i\|_\infty`, and with gains in ``[0, 1]``
the expected gain of the drawn element (the draw is fresh given the past, and restricting to
undrawn elements never lowers it, since a drawn element's marginal gain is 0) is at least
:math:`\langle g_t^i, \hat x_t^i\rangle - \eta\|Z_{t-1}^i\|_\infty`. The noise is drawn
independently of the data, so :math:`E\|Z_{t-1}^i\|_\infty` does not depend on the adversary.
Summing over the ``k`` experts (Streeter and Golovin; Perez-Salazar and Cummings 2021,
Proposition 3), the expected :math:`(1 - 1/e)`-regret against an adaptive adversary is at most

.. math::

    k\Big(\frac{\ln n}{\eta} + \frac{\eta T}{8}
    + \eta\sum_{t=1}^{T-1} E\|Z_t\|_\infty\Big),

with :math:`E\|Z_t\|_\infty \le \sqrt{2 v_t \ln(2n)}` for Gaussian noise and
:math:`\le \sqrt{n v_t}` otherwise, :math:`v_t` the per-coordinate variance of the prefix noise
after ``t`` items. With :math:`\eta = \sqrt{\ln n/T}` this is
:math:`O(k\sqrt{T\ln n}\,(1 + \sigma\sqrt{\log T\,\log n}))`: sublinear in ``T``, but vacuous
at small ``T`` (the node noise :math:`\sigma` grows like :math:`\sqrt{k n \log T}/\epsilon`).

References
----------
N. Agarwal and K. Singh, "The price of differential privacy for online learning", ICML 2017,
Algorithm 1 and Theorem 3.1. T.-H. H. Chan, E. Shi and D. Song, "Private and continual release
of statistics", ACM TISSEC 2011. J. Dong, A. Roth and W. Su, "Gaussian differential privacy",
JRSS-B 2022. M. Streeter and D. Golovin, "An online algorithm for maximizing submodular
functions", NIPS 2008. O. Perez-Salazar and R. Cummings, "Differentially private online
submodular maximization", AISTATS 2021.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import logsumexp

from ..._guarantee import RegretGuarantee, regret_guarantee
from ..._rng import RNGLike, as_generator
from ..._validation import check_delta, check_int, check_real
from ...errors import ValidationError
from ...functions.base import SetFunction
from ...privacy.plan import PrivacyPlan
from ...privacy.tree_aggregator import TreeAggregator
from .._checks import check_finite_epsilon
from .._plans import check_backend, learner_backend, run_plan, tree_backend, tree_event
from ..protocol import Learner
from ..tags import NOISE_BACKENDS, LearnerTags
from .experts import (
    EXPECTED_VALUE_MAX_TUPLES,
    REWARD_UNITS,
    clip01,
    masks_of,
    tuple_probabilities,
    tuples_of,
    weighted_values,
)

#: Node-noise families of :class:`PrivateTreeExperts`.
TREE_EXPERTS_NOISES = ("gaussian", "laplace")

NEIGHBOURING = ("function streams differing in one round's function (replaced by any other; "
                "marginal gains are clipped to [0, 1], so one round moves each of the k n "
                "gains fed to the counter by at most 1)")


class PrivateTreeExperts(Learner):
    r"""Private online submodular maximization with full information against adaptive
    adversaries: ``k`` ordered Hedge experts over tree-aggregated noisy cumulative gains.

    Round ``t``: expert ``i`` in turn draws :math:`a_t^i` from
    :math:`x_t^i(a) \propto \exp(\eta\tilde G_{t-1}^i(a))` restricted to the elements experts
    ``1..i-1`` did not draw, where :math:`\tilde G_{t-1}` is the counter's noisy sum of the
    earlier rounds' marginal gains; play :math:`S_t = \{a_t^1, \dots, a_t^k\}`; observe
    :math:`f_t` and feed the ``k x n`` clipped marginal gains to the counter (module docstring).

    Privacy: ``epsilon``-DP (``noise="laplace"``) or ``(epsilon, delta)``-DP
    (``noise="gaussian"``) for the sequence of played sets, neighbours differing in one round's
    function, for any stream: one tree-aggregation counter of dimension ``k n`` calibrated to
    the l1 (``k n``) or l2 (:math:`\sqrt{k n}`) sensitivity of one round's whole gain matrix.

    Guarantee (:attr:`guarantee`; monotone submodular :math:`f_t \in [0, 1]`,
    :math:`f_t(\emptyset) = 0`, **adaptive** adversary: :math:`f_t` may depend on the sets
    played before round ``t``): expected :math:`(1 - 1/e)`-regret at most
    :math:`k(\ln n/\eta + \eta T/8 + \eta\sum_{t<T} E\|Z_t\|_\infty)` (module docstring), marked
    vacuous when it is not below :math:`(1 - 1/e)T` (as at ``T = 2000``, ``n = 12``, ``k = 3``,
    ``epsilon = 1``: the bound is loose, and the learner earns more than the bound says; see the
    docs).

    Parameters
    ----------
    n : int
        Ground-set size.
    T : int
        Horizon (the counter's size and the default learning rate depend on it).
    k : int
        Cardinality budget, ``1 <= k <= n``.
    epsilon : float
        Privacy budget of the whole run; finite, ``> 0``.
    delta : float, default=0.0
        Required ``> 0`` with ``noise="gaussian"`` (the default); must be 0 with
        ``noise="laplace"``.
    noise : {"gaussian", "laplace"}, default="gaussian"
        Node noise of the counter. Gaussian noise, calibrated to the l2 sensitivity
        :math:`\sqrt{k n}`, is far smaller than Laplace noise at the l1 sensitivity ``k n``.
    eta : float, optional
        Hedge learning rate; default :math:`\sqrt{\ln n/T}` (the noise-free tuning).
    honaker : bool, default=True
        Use Honaker's estimator for the prefix sums (same privacy, lower variance).
    backend : {None, "numpy", "secure", "opendp"} or NoiseBackend, default=None
        The counter's noise backend.
        ``None`` (the default): ``"secure"`` without ``rng``, a seeded ``"numpy"`` simulation
        with one (:func:`~dpsubmod.privacy.backends.choose_backend`).
    rng : int, Generator, SeedSequence or None, default=None
        Resolved when the state is built: the counter's noise (numpy backend) and the draws.
    budget : Budget or None, default=None
        Charged the whole run's guarantee (:attr:`privacy`) at construction, before anything is
        released (:class:`~dpsubmod.errors.BudgetExceededError` when it does not fit; then
        nothing changes), again by :meth:`reset` after play and by every clone.

    References
    ----------
    N. Agarwal and K. Singh, "The price of differential privacy for online learning", ICML 2017.
    M. Streeter and D. Golovin, "An online algorithm for maximizing submodular functions",
    NIPS 2008.

    Examples
    --------
    >>> from dpsubmod.functions import Modular
    >>> from dpsubmod.online import run
    >>> stream = [Modular([0.05, 0.45, 0.1, 0.4])] * 200
    >>> learner = PrivateTreeExperts(4, T=200, k=1, epsilon=1.0, delta=1e-6, rng=0)
    >>> trace = run(learner, stream, comparator=None, rng=0)
    >>> trace.privacy.epsilon, trace.privacy.delta
    (1.0, 1e-06)
    """

    _tags = LearnerTags(private=True, feedback="full", problem="maximization",
                        assumption="adaptive", backends=NOISE_BACKENDS)

    sense = "max"

    def __init__(self, n: int, T: int, k: int, *, epsilon: float, delta: float = 0.0,
                 noise: str = "gaussian", eta: float | None = None, honaker: bool = True,
                 backend: Any = None, rng: RNGLike = None, budget: Any = None):
        self.n = n
        self.T = T
        self.k = k
        self.epsilon = epsilon
        self.delta = delta
        self.noise = noise
        self.eta = eta
        self.honaker = honaker
        self.backend = learner_backend(self, backend, rng, type(self).__name__, noise)
        self.rng = rng
        self.budget = budget
        self._check_params()
        self._finish_construction(PrivateTreeExperts)

    # -- validation and public calibration ----------------------------------------------------
    def _check_params(self) -> None:
        name = type(self).__name__
        self._check_common(self.n, self.T, name)
        check_int(self.k, "k", low=1, high=int(self.n), caller=name,
                  fix="k is the cardinality budget, 1 <= k <= n.")
        check_finite_epsilon(self.epsilon, name)
        check_delta(self.delta, caller=name)
        if self.noise not in TREE_EXPERTS_NOISES:
            raise ValidationError(
                f"The 'noise' parameter of {name} must be one of {TREE_EXPERTS_NOISES}; got "
                f"{self.noise!r}.")
        if self.noise == "gaussian" and float(self.delta) <= 0.0:
            raise ValidationError(
                f"noise='gaussian' in {name} gives (epsilon, delta)-DP and needs delta > 0; "
                "pass delta (e.g. delta=1e-6) or use noise='laplace'.")
        if self.noise == "laplace" and float(self.delta) != 0.0:
            raise ValidationError(
                f"noise='laplace' in {name} is pure epsilon-DP and takes no delta; pass "
                "delta=0.0, or noise='gaussian' to use delta.")
        if self.eta is not None:
            check_real(self.eta, "eta", low=0.0, low_open=True, caller=name,
                       fix="eta is the Hedge learning rate, a positive number (default "
                           "sqrt(ln n / T)).")
            if math.isinf(float(self.eta)):
                raise ValidationError(
                    f"The 'eta' parameter of {name} must be finite; got {self.eta!r}.")
        if not isinstance(self.honaker, bool):
            raise ValidationError(
                f"The 'honaker' parameter of {name} must be True or False; got "
                f"{self.honaker!r}.")
        check_backend(self.backend, name)

    def _eta(self) -> float:
        if self.eta is not None:
            return float(self.eta)
        return math.sqrt(math.log(max(int(self.n), 2)) / int(self.T))

    def _sensitivity(self) -> float:
        """Sensitivity of one round's ``k x n`` clipped gain matrix: every entry moves by at
        most 1, so ``k n`` in l1 (Laplace) and ``sqrt(k n)`` in l2 (Gaussian)."""
        d = int(self.k) * int(self.n)
        return float(d) if self.noise == "laplace" else math.sqrt(d)

    def _counter(self, rng: Any, budget: Any = None) -> TreeAggregator:
        return TreeAggregator(int(self.T), int(self.k) * int(self.n), noise=self.noise,
                              sensitivity=self._sensitivity(), epsilon=float(self.epsilon),
                              delta=float(self.delta), honaker=self.honaker, budget=budget,
                              **tree_backend(self.backend, rng))

    def _guarantee(self) -> RegretGuarantee:
        n, T, k, eta = int(self.n), int(self.T), int(self.k), self._eta()
        # Only public parameters: the counter is calibrated, never fed (its variance is known).
        tree = self._counter(0)
        c = math.sqrt(2.0 * math.log(2 * n)) if self.noise == "gaussian" else math.sqrt(n)
        noise = c * float(np.sqrt(self._prefix_variances(tree)).sum())
        bound = k * (math.log(max(n, 2)) / eta + eta * T / 8.0 + eta * noise)
        return regret_guarantee(bound, (1.0 - 1.0 / math.e) * T, units=REWARD_UNITS, theorem=(
            "adaptive adversary: per expert, Hedge's regret ln n / eta + eta T / 8 on the true "
            "gains plus eta sum_t E||Z_t||_inf for the counter's prefix noise (the entropic "
            "regularizer's stability; Agarwal and Singh 2017), summed over the k experts "
            "(Streeter and Golovin 2008)"), assumption="adaptive")

    def _prefix_variances(self, tree: TreeAggregator) -> np.ndarray:
        """``tree.noise_variance(t)`` for ``t = 1 .. T - 1``, vectorized over ``t``."""
        t = np.arange(1, int(self.T), dtype=np.int64)
        per_level = np.array([tree.noise_variance(1 << h) for h in range(tree.levels)])
        bits = (t[:, None] >> np.arange(tree.levels)[None, :]) & 1
        return bits @ per_level

    # -- privacy ------------------------------------------------------------------------------
    def _privacy_plan(self) -> PrivacyPlan:
        return self._memo_plan(lambda: run_plan(  # type: ignore[return-value]
            type(self).__name__,
            [tree_event(int(self.T), int(self.k) * int(self.n), noise=self.noise,
                        sensitivity=self._sensitivity(), epsilon=float(self.epsilon),
                        delta=float(self.delta), backend=self.backend)],
            neighbouring=NEIGHBOURING, backend=self.backend, rng=self.rng))

    # -- play ---------------------------------------------------------------------------------
    def _reset(self) -> None:
        super()._reset()
        gen = as_generator(self.rng)
        tree_rng, self._draw_rng = gen.spawn(2)
        self._tree = self._counter(tree_rng, budget=self._run_allowance())
        n, k = int(self.n), int(self.k)
        self._noisy = np.zeros((k, n))
        self._a = np.zeros(k, dtype=int)
        self._params = {"n": n, "T": int(self.T), "k": k, "epsilon": float(self.epsilon),
                        "delta": float(self.delta), "noise": self.noise, "eta": self._eta(),
                        "honaker": self.honaker, "levels": self._tree.levels,
                        "scale": self._tree.scale, "sensitivity": self._sensitivity()}

    def _log_probabilities(self) -> np.ndarray:
        """Each expert's Hedge log-probabilities over the noisy sums (before restriction)."""
        w = self._eta() * self._noisy
        return w - logsumexp(w, axis=1, keepdims=True)

    def _select(self) -> np.ndarray:
        n, k, eta = int(self.n), int(self.k), self._eta()
        self._log_probs = self._log_probabilities() \
            if n ** k <= EXPECTED_VALUE_MAX_TUPLES else None
        free = np.ones(n, dtype=bool)
        for i in range(k):
            w = eta * self._noisy[i]
            w = np.where(free, w, -np.inf)
            p = np.exp(w - w[free].max())
            p /= p.sum()
            a = int(self._draw_rng.choice(n, p=p))
            self._a[i] = a
            free[a] = False
        mask = np.zeros(n, dtype=bool)
        mask[self._a] = True
        return mask

    def _update(self, f: SetFunction) -> None:  # type: ignore[override]
        k, n = int(self.k), int(self.n)
        st = f.state()
        G = np.empty((k, n))
        for i in range(k):
            G[i] = st.gains()
            st.add(int(self._a[i]))
        # A non-finite gain counts as 0 (declared rule, the same for every row): raising here
        # would make the run's outcome depend on one private function.
        G = clip01(np.nan_to_num(G, nan=0.0, posinf=1.0, neginf=0.0))
        self._tree.update(G.ravel())
        self._noisy = self._tree.prefix().reshape(k, n)

    def expected_value(self, f: SetFunction) -> float | None:
        """Exact :math:`E[f(S_t)]` over this round's draws given the counter's releases
        (non-private diagnostic; uncounted); ``None`` when :math:`n^k` exceeds 1024."""
        if getattr(self, "_log_probs", None) is None:
            return None
        n, k = int(self.n), int(self.k)
        tup = tuples_of(n, k)
        return weighted_values(f, masks_of(tup, n),
                               tuple_probabilities(self._log_probs, tup, True))
