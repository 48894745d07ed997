r"""Batching around a non-private bandit learner: private against any stream, with a regret bound
against oblivious adversaries (the batching reduction of Asi, Raman and Talwar, ICML 2025).

The ``T`` rounds are cut into :math:`N = \lfloor T / B \rfloor` batches of ``B`` rounds (``B``
public, from ``T``, the inner learner and ``epsilon``); the fewer than ``B`` rounds left at the
end replay the last batch's set and feed nothing. In batch ``j`` every round plays the set
:math:`S_j` the inner learner selected; at the batch's end the batch's mean reward (each value
clipped to the inner learner's range :math:`[lo, hi]`, of width :math:`w = hi - lo`) is
released with Laplace noise of scale :math:`w / (B \epsilon)`
(:func:`~dpsubmod.privacy.additive.laplace`, sensitivity :math:`w / B`), shrunk towards the
middle of the range by :math:`s = w / (w + 2c)`, clipped to the range, and given to the inner
learner as its round-``j`` feedback (:func:`inner_feedback`).

Privacy. Each round's value enters exactly one noisy batch mean, the batches are fixed by the
round index, and the played sets are post-processing of the noisy means and of the inner
learner's own (public) randomness: the sequence of played sets is epsilon-DP by parallel
composition, neighbours differing in one round's function, for any stream.

Regret (oblivious adversary). Batch ``j`` faces the fixed function :math:`F_j`, the mean of its
rounds' functions, and the inner learner observes :math:`F_j(S_j) + Z_j` with :math:`Z_j` drawn
independently of its play: it faces the oblivious sequence :math:`G_j = F_j + Z_j`. With
probability at least :math:`1 - 1/N` every :math:`|Z_j| \le c = 2 (w / (B\epsilon)) \ln N`; then
no clip binds and the inner learner sees :math:`s(G_j - mid) + mid`, whose regret is ``s`` times
the batch sequence's (constant offsets cancel in the regret against the best fixed set of the
normalized functions). So, with :math:`R(N)` the inner learner's own bound for ``N`` rounds,

.. math::

    E[\text{regret}] \le B \Big(1 + \frac{4 \ln N}{B\epsilon}\Big) R(N) + 2 \alpha w B,

the last term paying for the failure event (probability :math:`1/N`) and the rounds after the
last batch. :func:`batch_length` minimises it over ``B``. When :math:`R` grows as
:math:`N^{2/3}` the minimiser is about :math:`8 \ln N / \epsilon`.

References
----------
H. Asi, V. Raman and K. Talwar, "Private online learning via lazy algorithms", ICML 2025
(batching a non-private learner, the noisy batch means, and the reduction of the regret).
F. McSherry, "Privacy integrated queries", SIGMOD 2009 (parallel composition).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import numpy as np

from .._guarantee import RegretGuarantee, regret_guarantee
from .._rng import RNGLike, as_generator
from .._validation import check_int
from ..errors import ParameterTypeError, ValidationError
from ..privacy.additive import Laplace
from ..privacy.plan import PrivacyPlan
from ._checks import check_finite_epsilon
from ._plans import check_backend, learner_backend, run_plan, tree_backend
from .protocol import Learner
from .tags import NOISE_BACKENDS, LearnerTags

#: The neighbouring relation of the statement.
NEIGHBOURING = ("function streams differing in one round's function (replaced by any other; "
                "each value is clipped to the inner learner's range, so any replacement moves "
                "one batch mean by at most the range's width / B)")
PARALLEL_RULE = ("parallel composition over disjoint batches (each round's value enters "
                 "exactly one noisy batch mean; McSherry 2009)")


def noise_margin(width: float, B: int, N: int, epsilon: float) -> float:
    r"""The margin :math:`c = 2 (w / (B\epsilon)) \ln N` that all ``N`` batches' Laplace noises
    stay within with probability at least :math:`1 - 1/N` (union bound on
    :math:`P(|Z| > c) = e^{-c B\epsilon / w}`); 0 for a single batch."""
    if N <= 1:
        return 0.0
    return 2.0 * float(width) / (B * float(epsilon)) * math.log(N)


def inner_feedback(noisy_mean: float, lo: float, hi: float, margin: float) -> float:
    """The value the inner learner receives: the noisy batch mean shrunk towards the middle of
    ``[lo, hi]`` by ``w / (w + 2 margin)`` (so ``[lo - margin, hi + margin]`` maps onto the
    range), then clipped to the range (post-processing of the release)."""
    mid, w = 0.5 * (lo + hi), hi - lo
    y = mid + (float(noisy_mean) - mid) * w / (w + 2.0 * margin)
    return min(max(y, lo), hi)


def _bound(B: int, T: int, epsilon: float, inner_bound: float, ratio: float,
           width: float) -> float:
    N = T // B
    return (B * (1.0 + noise_margin(width, B, N, epsilon) * 2.0 / width) * inner_bound
            + 2.0 * ratio * width * B)


def batch_length(T: int, epsilon: float, inner_bound: Any, *, ratio: float = 1.0,
                 width: float = 1.0) -> int:
    r"""The batch length minimising the stated bound (module docstring) over ``B`` in
    ``[1, T]``; ``inner_bound(N)`` is the inner learner's own regret bound for ``N`` rounds.

    >>> batch_length(20000, 1.0, lambda N: 9.3 * N ** (2 / 3), ratio=1 - 1 / math.e)
    59
    """
    cands = sorted({int(b) for b in np.unique(np.round(np.geomspace(1, T, 200)))} | {1})
    best, best_b = math.inf, 1
    for b in cands:
        v = _bound(b, T, epsilon, inner_bound(T // b), ratio, width)
        if v < best:
            best, best_b = v, b
    return best_b


class BatchedPrivateBandit(Learner):
    r"""A non-private bandit learner of the library made epsilon-DP by batches: each batch plays
    the inner learner's set, and the inner learner sees only the batch's noisy mean reward.

    See the module docstring for the scheme, its privacy and its bound.

    Privacy: ``epsilon``-DP for the sequence of played sets, neighbours differing in one round's
    function, by parallel composition (each round's value enters exactly one noisy batch mean,
    of sensitivity ``w / B``), for any stream.

    Guarantee (oblivious adversary; :attr:`guarantee`): ``B (1 + 4 ln N / (B epsilon)) R(N) +
    2 alpha w B`` with ``R(N)`` the inner learner's own bound for ``N = T // B`` rounds, in its
    units (its ``(1 - 1/e)``-regret for the Streeter-Golovin bandit, its regret for bandit
    Hazan-Kale). Vacuous when that reaches the trivial regret; the seed bandit learners'
    bounds make it vacuous at ``n = 12, k = 3, epsilon = 1`` up to ``T = 10^5``.

    Parameters
    ----------
    learner : Learner
        A non-private bandit learner of the library (:class:`BanditOnlineGreedy`,
        :class:`BanditHazanKale`, ...), built for the whole horizon ``T``; it is a template,
        never played: each run plays a clone with ``T = N`` (its defaults tuned for the
        ``N`` batches) and a seed drawn from ``rng``. Its range: rewards in ``[0, 1]`` for a
        maximization learner, costs in ``[-M, M]`` for a minimization learner.
    epsilon : float
        Privacy budget of each batch's release, and of the whole run; finite, ``> 0``.
    batch : int, optional
        Rounds per batch ``B``, ``1 <= B <= T``. Default: :func:`batch_length` at the public
        ``(T, epsilon)`` and the inner learner's bound, or, when that bound is vacuous at every
        length, its minimiser for a bound of order :math:`N^{2/3}` (59 for
        :class:`BanditOnlineGreedy` at ``n = 12, k = 3, T = 20000, epsilon = 1``). On the Uber
        stream of the docs shorter batches (20) earn more.
    shrink : bool, default=True
        Shrink the noisy means towards the middle of the range before clipping them
        (:func:`inner_feedback`), which keeps the inner learner's feedback unbiased when no
        clip binds and is what the stated bound needs. ``False`` only clips them: the inner
        learner's steps are larger (on the Uber stream of the docs, with batches of 20 rounds
        around ``BanditOnlineGreedy(gamma=0.03)``, it earns 0.267 per round at ``T = 20000``
        against 0.257 with the shrink), but no regret bound is stated (vacuous).
        The privacy is the same.
    backend : {None, "numpy", "secure", "opendp"} or NoiseBackend, default=None
        Sampler of the Laplace noise.
        ``None`` (the default): ``"secure"`` without ``rng``, a seeded ``"numpy"`` simulation
        with one (:func:`~dpsubmod.privacy.backends.choose_backend`).
    rng : int, Generator, SeedSequence or None, default=None
        Resolved when the state is built: the noise (numpy backend) and the inner clone's seed.
    budget : Budget or None, default=None
        Charged the whole run's guarantee at construction, before anything is released, again
        by :meth:`reset` after play and by every clone.

    Raises
    ------
    ValidationError
        ``learner`` is private (it spends its own budget: wrap its non-private version) or
        takes full information.

    References
    ----------
    H. Asi, V. Raman and K. Talwar, "Private online learning via lazy algorithms", ICML 2025.

    Examples
    --------
    >>> from dpsubmod.functions import Modular
    >>> from dpsubmod.online import BanditOnlineGreedy, run
    >>> inner = BanditOnlineGreedy(4, 4000, 2, gamma=0.2)
    >>> learner = BatchedPrivateBandit(inner, epsilon=1.0, batch=20, rng=0)
    >>> trace = run(learner, [Modular([0.05, 0.5, 0.4, 0.05])] * 4000, rng=0)
    >>> trace.privacy.epsilon, learner.resolved_params["batches"]
    (1.0, 200)
    """

    _tags = LearnerTags(private=True, feedback="bandit", problem=("minimization", "maximization"),
                        assumption="oblivious", backends=NOISE_BACKENDS)

    def __init__(self, learner: Any, *, epsilon: float, batch: int | None = None,
                 shrink: bool = True, backend: Any = None, rng: RNGLike = None,
                 budget: Any = None):
        self.learner = learner
        self.epsilon = epsilon
        self.batch = batch
        self.shrink = shrink
        self.backend = learner_backend(self, backend, rng, type(self).__name__)
        self.rng = rng
        self.budget = budget
        self._check_params()
        self._finish_construction(BatchedPrivateBandit)

    # The ground set, horizon and sense are the inner learner's.
    @property
    def n(self) -> int:  # type: ignore[override]
        return int(self.learner.n)

    @property
    def T(self) -> int:  # type: ignore[override]
        return int(self.learner.T)

    @property
    def sense(self) -> str:  # type: ignore[override]
        return str(self.learner.sense)

    @property
    def k(self) -> Any:
        """The inner learner's constraint (its ``k``), for the comparator of the harness."""
        return getattr(self.learner, "constraint", None) or getattr(self.learner, "k", None)

    # -- validation and public calibration ----------------------------------------------------
    def _check_params(self) -> None:
        name = type(self).__name__
        if not isinstance(self.learner, Learner):
            raise ParameterTypeError(
                f"The 'learner' parameter of {name} must be a dpsubmod online Learner (a "
                f"non-private bandit learner such as BanditOnlineGreedy); got "
                f"{type(self.learner).__name__}.")
        inner = type(self.learner).__name__
        if self.learner.tags().feedback != "bandit":
            raise ValidationError(
                f"The 'learner' parameter of {name} is {inner}, a full-information learner; "
                "batching releases one noisy mean reward per batch, so it wraps a bandit "
                "learner (BanditOnlineGreedy, BanditHazanKale, ...).")
        if self.learner.privacy is not None or getattr(self.learner, "budget", None) is not None:
            raise ValidationError(
                f"The 'learner' parameter of {name} is {inner}, which is private and would "
                "spend its own budget on the noisy means; wrap its non-private version (e.g. "
                "BanditOnlineGreedy instead of NaiveBanditDP).")
        check_finite_epsilon(self.epsilon, name)
        if self.batch is not None:
            check_int(self.batch, "batch", low=1, high=self.T, caller=name,
                      fix=f"batch is the number of rounds per batch, 1 <= batch <= T={self.T}.")
        if not isinstance(self.shrink, bool):
            raise ParameterTypeError(
                f"The 'shrink' parameter of {name} must be True or False; got "
                f"{type(self.shrink).__name__}.")
        check_backend(self.backend, name)
        self._range()
        self._B()  # the inner learner's clone at T // B is built (and refused) now

    def _range(self) -> tuple[float, float]:
        """The inner learner's feedback range: rewards in ``[0, 1]``, costs in ``[-M, M]``."""
        if self.sense == "max":
            return 0.0, 1.0
        M = getattr(self.learner, "M", None)
        if M is None:
            raise ValidationError(
                f"The 'learner' parameter of {type(self).__name__} is a minimization learner "
                "without a cost bound M; wrap a learner whose costs lie in [-M, M].")
        return -float(M), float(M)

    def _ratio(self) -> float:
        return 1.0 - 1.0 / math.e if self.sense == "max" else 1.0

    def _inner_guarantee(self, N: int) -> Any:
        """The inner learner's own guarantee for ``N`` rounds (public parameters only). Its
        warnings (a default clipped at this horizon) were shown once at construction."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.learner.clone(T=max(1, N), rng=0).guarantee

    def _inner_bound(self, N: int) -> float:
        g = self._inner_guarantee(N)
        return math.inf if g is None else float(g.bound)

    def _B(self) -> int:
        if "_batch" not in self.__dict__:
            if self.batch is not None:
                B = int(self.batch)
            else:
                B = self._default_batch()
            # Shown once, here: what the inner learner says of its defaults at T // B rounds.
            self.learner.clone(T=self.T // B, rng=0)
            self._batch = B
        return self._batch

    def _default_batch(self) -> int:
        """The minimiser of the stated bound; when that bound is vacuous at every batch length
        (the inner learner's bound then says nothing, and capped terms make its minimiser
        meaningless), the minimiser with ``R(N) = N^{2/3}``, the order of the library's bandit
        learners' bounds (about ``8 ln N / epsilon``)."""
        lo, hi = self._range()
        w, T, eps = hi - lo, self.T, float(self.epsilon)
        B = batch_length(T, eps, self._inner_bound, ratio=self._ratio(), width=w)
        trivial = self._ratio() * w * T if self.sense == "max" else w * T
        if _bound(B, T, eps, self._inner_bound(T // B), self._ratio(), w) < trivial:
            return B
        return batch_length(T, eps, lambda N: N ** (2.0 / 3.0), ratio=self._ratio(), width=w)

    def _batch_sensitivity(self, B: int) -> float:
        """Sensitivity of a batch mean: one of its ``B`` clipped values moves it by at most
        ``w / B``."""
        lo, hi = self._range()
        return (hi - lo) / B

    def _guarantee(self) -> RegretGuarantee:
        lo, hi = self._range()
        w, T, B = hi - lo, self.T, self._B()
        g = self._inner_guarantee(T // B)
        units = g.units if g is not None else "regret"
        trivial = self._ratio() * w * T if self.sense == "max" else w * T
        if not self.shrink:
            return regret_guarantee(math.inf, trivial, units=units, theorem=(
                "batching with shrink=False: the noisy means are only clipped, which biases "
                "the inner learner's feedback; no regret bound is derived"),
                assumption="oblivious")
        bound = (math.inf if g is None else
                 _bound(B, T, float(self.epsilon), float(g.bound), self._ratio(), w))
        return regret_guarantee(bound, trivial, units=units, theorem=(
            "oblivious adversary, batching (Asi, Raman and Talwar 2025): B (1 + 4 ln N / "
            f"(B epsilon)) R(N) + 2 alpha w B with R the bound of {type(self.learner).__name__} "
            "for N = T // B rounds"), assumption="oblivious")

    # -- privacy ------------------------------------------------------------------------------
    def _privacy_plan(self) -> PrivacyPlan:
        return self._memo_plan(self._build_plan)  # type: ignore[return-value]

    def _noise(self, B: int, rng: Any) -> Laplace:
        """The mechanism of a batch mean's release: Laplace noise at ``epsilon`` on a mean of
        sensitivity ``w / B``."""
        return Laplace(epsilon=float(self.epsilon), sensitivity=self._batch_sensitivity(B),
                       **tree_backend(self.backend, rng))

    def _build_plan(self) -> PrivacyPlan:
        eps, B = float(self.epsilon), self._B()
        N = self.T // B
        # calibrated only, never drawn from: a numpy backend here needs no seed
        ev = dataclasses.replace(
            self._noise(B, 0).privacy_map()._times(N),
            note=f"one noisy batch mean per batch ({N} batches of {B} rounds), sensitivity "
                 f"{self._batch_sensitivity(B):.6g}; disjoint rounds")
        return run_plan(type(self).__name__, [ev], composition=PARALLEL_RULE,
                        guarantee=(eps, 0.0), neighbouring=NEIGHBOURING,
                        backend=self.backend, rng=self.rng)

    # -- play ---------------------------------------------------------------------------------
    def _reset(self) -> None:
        super()._reset()
        B = self._B()
        N = self.T // B
        inner_seed, noise_rng = as_generator(self.rng).spawn(2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # shown once at construction
            self._inner = self.learner.clone(T=N, rng=inner_seed)
        self._mechanism = self._noise(B, noise_rng)
        self._allowance = self._run_allowance()
        lo, hi = self._range()
        self._margin = (noise_margin(hi - lo, B, N, float(self.epsilon)) if self.shrink
                        else 0.0)
        self._sum = 0.0
        self._in_batch = 0
        self._current: tuple[int, ...] = ()
        self._params = {"n": self.n, "T": self.T, "epsilon": float(self.epsilon),
                        "batch": B, "batches": N, "tail_rounds": self.T - N * B,
                        "noise_scale": self._batch_sensitivity(B) / float(self.epsilon),
                        "margin": self._margin, "range": (lo, hi),
                        "learner": repr(self._inner)}

    def _select(self) -> np.ndarray:
        if self._in_batch == 0 and self._inner.t < self._inner.horizon:
            self._current = self._inner.select()
        mask = np.zeros(self.n, dtype=bool)
        mask[list(self._current)] = True
        return mask

    def _update(self, value: float) -> None:  # type: ignore[override]
        B = self._B()
        if self._inner.t >= self._inner.horizon:
            return  # the tail after the last batch: replays the last set, feeds nothing
        lo, hi = self._range()
        self._sum += min(max(float(value), lo), hi)
        self._in_batch += 1
        if self._in_batch == B:
            noisy = self._mechanism.release(self._sum / B, budget=self._allowance)
            self._inner.update(inner_feedback(noisy, lo, hi, self._margin))
            self._sum, self._in_batch = 0.0, 0
