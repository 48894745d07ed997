r"""What the private online submodular-minimization learners share (Cardoso and Cummings
2018): the setting, the neighbouring relation, the calibration of the counter, and the base class
that checks the arguments, resolves the parameters and plans the run.

Both learners relax each round's submodular cost :math:`f_t : 2^{[n]} \to [-M, M]` to its Lovász
extension :math:`\hat f_t` on the cube :math:`K = [0, 1]^n`, regularise it to the ``H``-strongly
convex :math:`\hat f_t(x) + \frac H2 \|x - c\|^2` (``c = 0`` in the paper; the centre of the cube
by default for :class:`~dpsubmod.online.SubmodPFTAL`), and run :class:`~dpsubmod.online.PFTAL`
on it: the (sub)gradients :math:`z_t = g_t + H (x_t - c)` enter a tree-aggregation counter with l2
("high-dimensional") Laplace noise, and the next iterate is
:math:`x_{t+1} = \mathrm{clip}(\bar x_t - v_t/(tH), 0, 1)`.

* :class:`~dpsubmod.online.SubmodPFTAL` (full information, Algorithm 1; in
  :mod:`~dpsubmod.online.minimization.pftal`) rounds :math:`x_t` by one uniform threshold (no
  expected loss: :math:`\mathbb{E} f_t(S_t) = \hat f_t(x_t)`) and feeds the chain subgradient
  :math:`g_t` of :math:`\hat f_t` at :math:`x_t` (``n + 1`` evaluations of ``f_t``).
* :class:`~dpsubmod.online.BanditSubmodPFTAL` (bandit, Algorithm 2; in
  :mod:`~dpsubmod.online.minimization.bandit_pftal`) plays a chain set of :math:`x_t` drawn from the
  exploration distribution and feeds the corrected one-point estimate
  (:mod:`dpsubmod.online.minimization.onepoint`); it evaluates ``f_t`` once, at the played set.

Neighbouring relation: two cost sequences are neighbours when they differ in one function
:math:`f_t` (replaced by any other submodular function with range :math:`[-M, M]`). The output is
the whole sequence of played sets (and the iterates, which are post-processing of the counter).

Calibration (the sound readings of the errata; every value can be overridden):

* full information: the counter is calibrated to the l2 sensitivity of one round's input at a
  common point, :math:`\|g_t - g'_t\|_2 \le 4\sqrt2\,M` (each chain vector has
  :math:`\|g\|_2^2 \le \|g\|_\infty \|g\|_1 \le 2M \cdot 4M`; the :math:`H x_t` part cancels).
  ``calibration="conservative"`` uses the looser :math:`8M` (:math:`\|g\|_1 \le 4M`, Lemma 3).
  The paper calibrates to the Lipschitz bound :math:`L = 4M + H\sqrt n` instead, which is not
  ``epsilon``-DP for the small ``H`` its own theorem needs (it gives only
  :math:`\varepsilon \cdot 4\sqrt2 M / L`); ``calibration="paper"`` is accepted only where it
  keeps the requested epsilon (:math:`L \ge 4\sqrt2 M`), and refused otherwise.
* bandit: the one-point estimate is as large as :math:`2M(n+1)/\gamma`, so the sensitivity is
  :math:`4M(n+1)/\gamma` (tight for :math:`n \ge 2`); the paper's :math:`L = 4M + 2H\sqrt n` makes
  Theorem 8 false (it gives only :math:`\varepsilon \cdot 4M(n+1)/(\gamma L)`), so
  ``calibration="paper"`` is refused unless :math:`L` reaches the sensitivity.
* the defaults of ``H`` (and of the bandit's ``gamma``) are each learner's, in its module.
* with ``clip=True`` (default) the learners enforce the assumptions the sensitivity rests on:
  the chain vector is rescaled to norm :math:`\le \Delta/2` (full information) and the observed
  value is clipped to :math:`[-M, M]` (bandit). Both are no-ops on valid inputs and keep the
  guarantee when a user's function is not submodular or leaves its declared range.
* :attr:`~dpsubmod.online.protocol.RoundProtocol.guarantee` states the explicit Theorem 7 / 9
  bound at the run's parameters, marked vacuous when it exceeds the trivial :math:`2MT`.

``epsilon=math.inf`` switches the noise off: non-private FTAL on the regularised extensions, the
baseline that isolates the cost of privacy. Those runs are **not private** (``privacy`` is None).

Privacy is stated for the whole run before round 1 (``privacy``: one tree-aggregation event), and
a learner built with ``budget=`` is charged that run at construction, before anything is
released; the inner PFTAL counter draws through the run's allowance, so the budget is charged
once per run.

References
----------
A. Cardoso and R. Cummings, "Differentially private online submodular optimization", arXiv 2018
(AISTATS 2019 as "Differentially private online submodular minimization"), Algorithms 1 and 2,
Theorems 6-9. A. Smith and A. Thakurta, NIPS 2013 (PFTAL). E. Hazan and S. Kale, JMLR 2012.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Any

import numpy as np

from ..._rng import RNGLike, as_generator
from ..._validation import check_real, is_noise_off
from ...errors import ValidationError
from ...privacy.plan import PrivacyPlan
from ...privacy.tree_aggregator import TreeAggregator
from .._checks import check_privacy_args, check_x1
from .._plans import check_backend, check_spend, learner_backend, run_plan, tree_backend
from ..oco.pftal import PFTAL
from ..protocol import Learner

#: Valid ``calibration`` values of the learners.
CALIBRATIONS = {
    "SubmodPFTAL": ("sound", "conservative", "paper"),
    "BanditSubmodPFTAL": ("sound", "paper"),
}

_NEIGHBOURING = ("cost sequences differing in one function f_t (any submodular function with "
                 "range [-M, M])")


def _check_calibration(calibration: object, noise: object, caller: str) -> None:
    valid = CALIBRATIONS[caller]
    if not isinstance(calibration, str) or calibration not in valid:
        raise ValidationError(
            f"The 'calibration' parameter of {caller} must be one of {valid}; got "
            f"{calibration!r}."
        )
    if calibration == "paper" and noise != "l2laplace":
        raise ValidationError(
            f"calibration='paper' of {caller} reproduces the paper's l2-Laplace tree; it needs "
            f"noise='l2laplace' (got {noise!r})."
        )


def _listing(names: list[str]) -> str:
    """``'a'``, ``'a' and 'b'``, ``'a', 'b' and 'c'``."""
    quoted = [repr(n) for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


class _SubmodBase(Learner):
    """Shared machinery: the constructor's checks, parameter resolution, the PFTAL core, the
    privacy plan."""

    sense = "min"
    #: The learner's name in error messages and in :data:`CALIBRATIONS` (kept by subclasses).
    _caller: str

    def __init__(self, n: int, T: int, *, M: float, epsilon: float, H: float | str | None,
                 calibration: str, sensitivity: float | None, clip: bool, x1: object, noise: str,
                 delta: float, rng: RNGLike, budget: Any, backend: Any):
        # the defaults are the public classes' (their signatures are what users read)
        caller = self._caller
        self._check_common(n, T, caller)
        check_real(M, "M", low=0.0, low_open=True, caller=caller)
        _check_h(H, caller, allow_tuned=True)
        self._check_own_args(caller, int(n))
        _check_calibration(calibration, noise, caller)
        check_privacy_args(epsilon, sensitivity, 1.0, noise, delta, caller)
        check_x1(x1, n, caller)
        self.n = n
        self.T = T
        self.M = M
        self.epsilon = epsilon
        self.H = H
        self.calibration = calibration
        self.sensitivity = sensitivity
        self.clip = clip
        self.x1 = x1
        self.noise = noise
        self.delta = delta
        self.rng = rng
        self.budget = budget
        self.backend = learner_backend(self, backend, rng, caller, noise)
        check_backend(backend, caller, noise)
        self._check_spend(self._resolve(warn=False))
        self._finish_construction(_SubmodBase)

    @property
    def noise_off(self) -> bool:
        """Whether the noise is off (``epsilon=inf``): the run is then not private."""
        return is_noise_off(self.epsilon)

    def _check_own_args(self, caller: str, n: int) -> None:
        """Check the arguments a subclass stored before calling the shared constructor (none
        here; ``n`` is the checked ground-set size); they are checked after ``H`` and before
        ``calibration``."""

    @abstractmethod
    def _resolve(self, *, warn: bool = True) -> dict[str, Any]:
        """Every parameter after defaults were resolved (warnings about clipped defaults only
        with ``warn``)."""

    def _check_spend(self, p: dict[str, Any]) -> None:
        """State the run's plan from the resolved parameters ``p``, refusing a calibration that
        spends more than ``epsilon``, or whose derived parameters leave floating-point range
        (before anything is charged or drawn)."""
        self._check_derived(p)
        if p["noise_off"]:
            return
        try:  # a calibration the counter refuses fails here, not at play, by our names
            self._memo_plan(lambda: self._plan_of(p))
        except ValidationError as err:
            # the node scale (or the Gaussian sigma behind it) left floating-point range
            if "outside floating-point range" not in str(err):
                raise
            self._refuse(p, "sensitivity", "a tree counter whose node-noise scale (from "
                         "epsilon and the sensitivity) is outside floating-point range",
                         epsilon=True)
        check_spend(
            type(self).__name__, p["epsilon_effective"], p["epsilon"], parameter="calibration",
            fix=f"calibration={self.calibration!r} calibrates the counter to "
                f"{p['calibrated_sensitivity']:.6g}, below the sensitivity "
                f"{p['sensitivity_needed']:.6g} of one round's input; use "
                "calibration='sound' (or pass a larger H, which raises the paper's bound).")

    def _check_derived(self, p: dict[str, Any]) -> None:
        """The counter's ``H``, sensitivity and gradient bound come from ``M`` (and ``gamma``,
        ``H`` or ``sensitivity`` when given); refuse them, by the user's parameter, when they
        underflow to 0 or overflow to inf (the iterate ``v / (t H)`` and the noise scale would
        be undefined)."""
        derived = [("H", p["H"], "H"), ("lipschitz", p["lipschitz"], "H")]
        if not p["noise_off"]:
            derived.append(("calibrated_sensitivity", p["calibrated_sensitivity"],
                            "sensitivity"))
        for key, v, own in derived:
            if not 0.0 < v < math.inf:
                # the default H (hence the gradient bound) of a private run depends on epsilon
                self._refuse(p, own, f"the derived {key}={v!r}, outside floating-point range: "
                             "the counter's iterate and noise would be undefined",
                             epsilon=own == "H" and not p["noise_off"])

    def _refuse(self, p: dict[str, Any], own: str, what: str, *, epsilon: bool) -> None:
        """Refuse by the user's parameters behind a derived quantity: ``own`` when given, else
        ``M`` and ``gamma`` (bandit feedback, when given); ``epsilon`` too when it enters."""
        given = getattr(self, own, None) is not None and not isinstance(getattr(self, own), str)
        names = [own] if given else ["M"]
        if epsilon and not (given and own == "H"):
            names.append("epsilon")
        if not given and getattr(self, "gamma", None) is not None:
            names.append("gamma")
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in names)
        larger = " or ".join(f"a larger {n}" for n in names[1:])
        fix = ((f"Pass a moderate {own}" if given else
                "Rescale the costs so that M is a moderate number (divide them by M and pass "
                "M=1)") + (f", or pass {larger}." if larger else "."))
        raise ValidationError(
            f"The {_listing(names)} parameter{'s' if len(names) > 1 else ''} of "
            f"{type(self).__name__} ({shown}) give{'' if len(names) > 1 else 's'} {what}. {fix}"
        )

    def _counter(self, p: dict[str, Any], *, rng: Any, budget: Any = None) -> TreeAggregator:
        """The run's tree-aggregation counter over the cube's ``n`` coordinates, calibrated to
        ``p["calibrated_sensitivity"]`` (arguments checked by the constructor)."""
        return TreeAggregator._from_checked(
            int(self.T), int(self.n), noise=self.noise,
            sensitivity=p["calibrated_sensitivity"], epsilon=float(self.epsilon),
            delta=float(self.delta), budget=budget, **tree_backend(self.backend, rng))

    def _plan_of(self, p: dict[str, Any]) -> PrivacyPlan:
        """The whole run's plan: one use of the counter, whose event its privacy map states
        (built on a seed of its own: nothing is drawn)."""
        counter = self._counter(p, rng=0)
        return run_plan(type(self).__name__, [counter.privacy_map()],
                        neighbouring=_NEIGHBOURING, backend=self.backend, rng=self.rng)

    def _privacy_plan(self) -> PrivacyPlan | None:
        """The counter's one tree-aggregation event; ``None`` when the noise is off."""
        if self.noise_off:
            return None
        return self._memo_plan(lambda: self._plan_of(self._resolve(warn=False)))

    def _first_point(self, p: dict[str, Any]) -> np.ndarray:
        """The first iterate: ``x1``, else the origin."""
        return np.zeros(int(self.n)) if self.x1 is None else np.array(self.x1, dtype=np.float64)

    def _reset(self) -> None:
        super()._reset()
        p = self._resolve()
        self._params = p
        gen = as_generator(self.rng)
        noise_rng, play_rng = gen.spawn(2)
        off = p["noise_off"]
        # The counter draws through this run's allowance, never charging the user's budget
        # again; the arguments were checked, and the plan stated, by the constructor.
        tree = None if off else self._counter(p, rng=noise_rng, budget=self._run_allowance())
        self._oco = PFTAL._running(
            int(self.n), int(self.T), H=p["H"], epsilon=self.epsilon,
            sensitivity=None if off else p["calibrated_sensitivity"], x1=self._first_point(p),
            noise=self.noise, delta=self.delta, backend=self.backend, rng=noise_rng, tree=tree)
        self._play_rng = play_rng
        self._x = self._oco.point()
        self._g_last: np.ndarray | None = None

    @property
    def iterate(self) -> np.ndarray:
        """The current point ``x_t`` of the cube (released: post-processing of the counter)."""
        self._ensure_state()
        return self._oco.point()

    @property
    def prefix(self) -> np.ndarray:
        """The counter's last noisy prefix sum :math:`v_t` (released; zeros before round 1)."""
        self._ensure_state()
        return self._oco.prefix

    @property
    def last_gradient(self) -> np.ndarray | None:
        """The data-dependent vector fed at the last update, before :math:`H x_t` and the noise
        were added: the (clipped) chain subgradient or one-point estimate. **Not private**: a
        diagnostic for tests and experiments. ``None`` before the first update."""
        self._ensure_state()
        return None if self._g_last is None else self._g_last.copy()


def _check_h(H: object, caller: str, *, allow_tuned: bool) -> None:
    if H is None:
        return
    if isinstance(H, str):
        if H == "paper" or (allow_tuned and H == "tuned"):
            return
        raise ValidationError(
            f"The 'H' parameter of {caller} must be a positive float, 'paper'"
            + (", 'tuned'" if allow_tuned else "") + f" or None; got {H!r}."
        )
    check_real(H, "H", low=0.0, low_open=True, caller=caller)
