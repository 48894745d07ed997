r"""Differentially private online submodular minimization with full information (Cardoso and
Cummings 2018, Algorithm 1 "SubmodPFTAL").

The setting, the neighbouring relation and the calibration of the counter are stated in
:mod:`~dpsubmod.online.minimization.pftal_base` (shared with the bandit
:class:`~dpsubmod.online.BanditSubmodPFTAL`); the regret bound and the tuned ``H`` in
:mod:`~dpsubmod.online.minimization.bounds`. This learner's own readings:

* the learner regularises towards the centre :math:`c` of the cube,
  :math:`\hat f_t(x) + \frac H2 \|x - c\|^2` with :math:`c = \frac12 \mathbf 1` (``centre``),
  and starts there, so a large ``H`` favours no set: the iterate is
  :math:`x_{t+1} = \mathrm{clip}(c - (G_t + \zeta_t)/(tH), 0, 1)`. The paper's regulariser,
  centred at the origin, pulls the iterate towards the empty set, which costs as much as the
  empty set on a stream whose best fixed set is everything. Centring is a translation of the
  coordinates: the regularised losses are still ``H``-strongly convex, their gradients
  :math:`g_t + H(x - c)` have norm at most :math:`4M + H\sqrt n/2` on the cube, and the
  regularisation costs at most :math:`TH\|x^* - c\|^2/2 \le THn/8`, so each term of the
  explicit Theorem 7 bound (Lemmas 7, 9 and 11, written for the origin with :math:`4M + 2H\sqrt
  n` and :math:`THn/2`) still bounds the centred run's. Privacy does not depend on ``H`` or
  :math:`c`: :math:`H(x_t - c)` is the same for neighbours and cancels, so the counter's
  sensitivity, hence its calibration, is that of the chain subgradient alone.
* ``H`` of a private run defaults to
  :math:`\max(M/\sqrt{nT}, H_\zeta)`, with :math:`H_\zeta` the ``H`` at which the counter's
  noise moves the iterate by a quarter per coordinate on average over the run
  (:func:`~dpsubmod.online.minimization.bounds.noise_scaled_H`, from the public
  :math:`(n, T, \varepsilon)` and the calibrated sensitivity). The floor keeps Theorem 7's
  :math:`\tilde O(n^{3/2} M\sqrt T/\varepsilon)`: the bound at this ``H`` is at most the bound at
  :math:`M/\sqrt{nT}` plus :math:`(8n\ln T + Tn/2) H_\zeta`, polylogarithmic in ``T``. The
  theorem's :math:`M/\sqrt{nT}` alone lets the noise, divided by :math:`tH`, throw the iterate
  to random corners of the cube for most of a run at :math:`\varepsilon = 1`; the minimiser of
  the explicit bound (the previous default,
  :func:`~dpsubmod.online.minimization.bounds.best_submod_pftal_H`) is so large that the
  iterate barely leaves its centre even where the signal is strong. ``H="paper"`` (and
  ``calibration="paper"``) reproduce Algorithm 1 as printed: Theorem 7's
  :math:`H = M/\sqrt{nT}`, the regulariser centred at the origin and :math:`x_1 = 0`; Theorem
  7's printed :math:`O(M\sqrt T/\sqrt n)` drops a factor ``T``, and this reading reproduces the
  claimed :math:`\tilde O(n^{3/2} M \sqrt T / \varepsilon)`. With the noise off the default is
  the theorem's value, centred.

References
----------
A. Cardoso and R. Cummings, "Differentially private online submodular optimization", arXiv 2018
(AISTATS 2019 as "Differentially private online submodular minimization"), Algorithm 1,
Theorems 6 and 7. A. Smith and A. Thakurta, NIPS 2013 (PFTAL).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._guarantee import RegretGuarantee, regret_guarantee
from ..._rng import RNGLike
from ..._validation import check_finite, is_noise_off
from ...errors import GroundSetMismatchError, ValidationError
from ...functions.base import SetFunction
from ...privacy.continual import prefix_noise_sd
from .._checks import clip_norm
from ..tags import NOISE_BACKENDS, LearnerTags
from .bounds import COST_UNITS, noise_scaled_H, submod_pftal_bound
from .onepoint import chain_order, chain_subgradient, chain_values, chain_weights
from .pftal_base import _SubmodBase

_SQRT2 = math.sqrt(2.0)


class SubmodPFTAL(_SubmodBase):
    r"""Private online submodular minimization, full information (Cardoso and Cummings 2018,
    Algorithm 1 "SubmodPFTAL"; PFTAL of Smith and Thakurta 2013 on regularised Lovász extensions).

    Round ``t``: play :math:`S_t = \{i : x_t(i) \ge U\}`, :math:`U \sim U(0, 1]`; observe
    :math:`f_t`; feed :math:`g_t + H (x_t - c)` (the chain subgradient of the Lovász extension
    at :math:`x_t`, ``n + 1`` evaluations, and the gradient of the regulariser centred at
    ``c``) to the tree counter; move to
    :math:`x_{t+1} = \mathrm{clip}(\bar x_t - v_t/(tH), 0, 1) = \mathrm{clip}(c - v'_t/(tH),
    0, 1)`, :math:`v'_t` the counter's noisy sum of the :math:`g_j`.

    Guarantee: ``epsilon``-DP (pure) for the sequence of played sets, neighbours differing in one
    function, for costs with range :math:`[-M, M]` (enforced by ``clip``). Expected regret
    :math:`\tilde O(n^{3/2} M \sqrt T/\varepsilon)` (Theorem 7, corrected reading; see the
    module docstring and the errata); without noise :math:`O(M\sqrt{nT}\log T)`. The run's
    explicit bound is :attr:`guarantee`.

    Parameters
    ----------
    n : int
        Ground-set size.
    T : int
        Horizon (the counter and the defaults depend on it).
    M : float
        Public bound on :math:`|f_t(S)|` for every ``t`` and ``S``.
    epsilon : float
        Privacy parameter of the whole run; ``math.inf`` switches the noise off (**not private**).
    H : float, "paper" or "tuned", optional
        Strong-convexity parameter. Default (private run): :math:`\max(M/\sqrt{nT},
        H_\zeta)`, with :math:`H_\zeta` the value at which the counter's noise moves the
        iterate by a quarter per coordinate on average over the run
        (:func:`~dpsubmod.online.minimization.bounds.noise_scaled_H`); with the noise off:
        Theorem 7's :math:`M/\sqrt{nT}`. ``"paper"``: Theorem 7's :math:`M/\sqrt{nT}` with the
        paper's regulariser centred at the origin (Algorithm 1 as printed; also the default
        with ``calibration="paper"``). ``"tuned"`` uses :math:`\sqrt{2a/(nT)}` with
        :math:`a = 72 M^2 \ln T + 48 n M \Delta \ln^{2.5} T/\varepsilon`, the minimiser of the
        regret bound assembled from the paper's lemmas (assumes :math:`H\sqrt n \le M`;
        :math:`\ln T` is floored at 1). Privacy does not depend on ``H``.
    centre : float or array-like of shape (n,), optional
        Centre :math:`c` of the regulariser :math:`\frac H2\|x - c\|^2`, a point of the cube
        (a number is repeated over the coordinates). Default: 0.5, the middle of the cube,
        which favours no set; 0 (the paper's origin, which pulls the iterate towards the empty
        set) with ``H="paper"`` or ``calibration="paper"``. Privacy does not depend on it.
    calibration : {"sound", "conservative", "paper"}, default="sound"
        Sensitivity :math:`\Delta` of the counter: :math:`4\sqrt2 M`, :math:`8M`, or the paper's
        :math:`L = 4M + H\sqrt n`, which is refused (:class:`~dpsubmod.errors.ValidationError`
        at construction) when :math:`L < 4\sqrt2 M`: the run would then be only
        :math:`\varepsilon \cdot 4\sqrt2 M/L`-DP.
    sensitivity : float, optional
        Override of :math:`\Delta`. With ``clip=True`` chain vectors are rescaled to norm
        :math:`\le \Delta/2`, so the guarantee holds for any input.
    clip : bool, default=True
        Enforce the sensitivity by rescaling chain vectors (no-op on valid inputs). With
        ``clip=False`` privacy holds only for submodular costs within :math:`[-M, M]`, and an
        explicit ``sensitivity`` is trusted as given.
    x1 : array-like, optional
        First iterate (default the regulariser's centre: 1/2, or 0 with ``H="paper"``).
    noise : {"l2laplace", "laplace", "gaussian"}, default="l2laplace"
        Node noise of the counter (see :class:`~dpsubmod.online.PFTAL`). With ``"laplace"`` the
        sensitivities are l1 norms: the default becomes :math:`8M` (:math:`\|g\|_1 \le 4M`,
        Lemma 3) and chain vectors are clipped in l1 norm; ``"gaussian"`` gives
        ``(epsilon, delta)``-DP.
    delta : float, default=0.0
        Only for ``noise="gaussian"``.
    rng : int, Generator, SeedSequence or None, default=None
        Randomness (counter noise and rounding come from two children spawned from it), resolved
        when the state is built.
    budget : Budget or None, default=None
        Charged the whole run's guarantee at construction, before anything is released
        (:class:`~dpsubmod.errors.BudgetExceededError` when it does not fit; then nothing
        changes), and again by :meth:`reset` after play and by every clone (each a new
        release). Not allowed with ``epsilon=math.inf``.
    backend : {"numpy", "secure", "opendp"}, NoiseBackend or None, default=None
        Noise backend of the counter (:func:`~dpsubmod.privacy.backends.resolve_backend`):
        ``"secure"`` draws exact discrete node noise on a grid (through OpenDP when it is
        installed); ``"opendp"`` requires OpenDP. Grid backends need ``noise="laplace"`` or
        ``"gaussian"``, and draw no noise from ``rng``.
        ``None`` (the default): ``"secure"`` without ``rng`` (``"numpy"`` for l2-Laplace
        noise), a seeded ``"numpy"`` simulation with one
        (:func:`~dpsubmod.privacy.backends.choose_backend`).

    Examples
    --------
    >>> import math
    >>> from dpsubmod.functions import Modular
    >>> learner = SubmodPFTAL(2, T=51, M=1.0, epsilon=math.inf, rng=0)
    >>> for t in range(50):
    ...     S = learner.select()
    ...     learner.update(Modular([-0.5, 0.5]))
    >>> learner.select()      # learned: element 0 lowers the cost, element 1 raises it
    (0,)
    """

    _tags = LearnerTags(private=True, feedback="full", problem="minimization",
                        assumption="oblivious", backends=NOISE_BACKENDS)

    _caller = "SubmodPFTAL"

    def __init__(self, n: int, T: int, *, M: float, epsilon: float, H: float | str | None = None,
                 centre: object = None, calibration: str = "sound",
                 sensitivity: float | None = None, clip: bool = True, x1: object = None,
                 noise: str = "l2laplace", delta: float = 0.0, rng: RNGLike = None,
                 budget: Any = None, backend: Any = None):
        # stored first: _check_own_args checks it between H and calibration, so that the
        # first bad argument in signature order is the one named
        self.centre = centre
        super().__init__(n, T, M=M, epsilon=epsilon, H=H, calibration=calibration,
                         sensitivity=sensitivity, clip=clip, x1=x1, noise=noise, delta=delta,
                         rng=rng, budget=budget, backend=backend)
        self._finish_construction(SubmodPFTAL)

    def _check_own_args(self, caller: str, n: int) -> None:
        c = self.centre
        if c is None:
            return
        a = check_finite(c, "centre", caller=caller)
        if a.ndim > 1 or (a.ndim == 1 and a.shape != (n,)):
            raise GroundSetMismatchError(
                f"The 'centre' parameter of {caller} must be a number or have shape ({n},); "
                f"got shape {a.shape}."
            )
        if a.size and (a.min() < 0 or a.max() > 1):
            raise ValidationError(
                f"The 'centre' parameter of {caller} must lie in the cube [0, 1]^n (0.5: its "
                f"centre, 0: the paper's origin); got values in [{a.min():g}, {a.max():g}]."
            )

    def _paper_mode(self) -> bool:
        """Whether the run reproduces Algorithm 1 as printed (``H="paper"`` or
        ``calibration="paper"``): the regulariser is then centred at the origin."""
        return self.H == "paper" or self.calibration == "paper"

    def _resolve(self, *, warn: bool = True) -> dict[str, Any]:
        n, T, M = int(self.n), int(self.T), float(self.M)
        off = is_noise_off(self.epsilon)
        l1 = self.noise == "laplace"
        # Sensitivity of one round's chain vector between neighbours (same x_t, same chain):
        # ||g - g'||_2 <= 2 * 2 sqrt(2) M and ||g - g'||_1 <= 2 * 4M.
        sound = 8.0 * M if l1 else 4.0 * _SQRT2 * M
        base = {"sound": sound, "conservative": 8.0 * M}
        theorem = off or (self.calibration == "paper" and self.sensitivity is None)
        if self.H == "paper" or (self.H is None and theorem):
            H = M / math.sqrt(n * T)
        elif self.H is None:
            c = float(self.sensitivity) if self.sensitivity is not None else base[
                self.calibration]
            H = max(M / math.sqrt(n * T), noise_scaled_H(T, self._noise_sd(c)))
        elif self.H == "tuned":
            lt = max(1.0, math.log(T))
            delta_h = self.sensitivity if self.sensitivity is not None else base.get(
                self.calibration, sound)
            a = 72.0 * M * M * lt
            if not off:
                a += 48.0 * n * M * float(delta_h) * lt ** 2.5 / float(self.epsilon)
            H = math.sqrt(2.0 * a / (n * T))
        else:
            H = float(self.H)
        lipschitz = 4.0 * M + H * math.sqrt(n)
        if self.sensitivity is not None:
            cal = float(self.sensitivity)
        elif self.calibration == "paper":
            cal = lipschitz
        else:
            cal = base[self.calibration]
        if self.clip:
            # Rescaling every chain vector to norm <= G makes ||g - g'|| <= 2G for any input.
            gclip = cal / 2.0 if self.calibration != "paper" or self.sensitivity is not None \
                else sound / 2.0
            needed = 2.0 * gclip
        else:
            gclip = None
            needed = cal if self.sensitivity is not None else sound
        eps_eff = math.inf if off else float(self.epsilon) * max(1.0, needed / cal)
        if self.centre is None:
            centre = np.full(n, 0.0 if self._paper_mode() else 0.5)
        else:
            centre = np.broadcast_to(np.asarray(self.centre, dtype=np.float64), (n,)).copy()
        return {
            "n": n, "T": T, "M": M, "H": H, "centre": centre,
            "x1": centre.copy() if self.x1 is None else np.array(self.x1, dtype=np.float64),
            "lipschitz": lipschitz,
            "calibration": self.calibration if self.sensitivity is None else "user",
            "norm": "l1" if l1 else "l2", "calibrated_sensitivity": cal,
            "sensitivity_needed": needed, "gradient_clip": gclip, "noise_off": off,
            "epsilon": float(self.epsilon), "epsilon_effective": eps_eff,
        }

    def _noise_sd(self, sensitivity: float) -> float:
        """The largest per-coordinate standard deviation of the counter's noise in a prefix sum
        (all tree levels), from the public ``(n, T, epsilon, delta, noise)`` and the calibrated
        sensitivity; 0 when the counter refuses them (the constructor then refuses the run by
        the parameters behind the counter's noise, not by the derived ``H``)."""
        try:
            return prefix_noise_sd(int(self.T), int(self.n), noise=self.noise,
                                   sensitivity=sensitivity, epsilon=float(self.epsilon),
                                   delta=float(self.delta))
        except ValidationError:
            return 0.0

    def _guarantee(self) -> RegretGuarantee:
        """Theorem 7's explicit bound at the run's ``H`` and calibration (module
        :mod:`~dpsubmod.online.minimization.bounds`)."""
        p = self.resolved_params
        n, T, M = p["n"], p["T"], p["M"]
        bound = submod_pftal_bound(n, T, M, p["H"], p["calibrated_sensitivity"],
                                   math.inf if p["noise_off"] else p["epsilon"])
        return regret_guarantee(bound, 2.0 * M * T, units=COST_UNITS.format(M=M),
                                theorem="Cardoso and Cummings (2018), Theorem 7 (explicit "
                                        "reading: Lemmas 7, 9 and 11)")

    def _first_point(self, p: dict[str, Any]) -> np.ndarray:
        # the regulariser's minimiser (the centre) unless x1 is given
        return np.array(p["x1"], dtype=np.float64)

    def _select(self) -> np.ndarray:
        self._x = self._oco.point()
        u = 1.0 - float(self._play_rng.random())  # U in (0, 1]: x_i = 0 is never chosen
        return self._x >= u

    def _update(self, f: SetFunction) -> None:  # type: ignore[override]
        g = chain_subgradient(f, self._x)
        if self._params["gradient_clip"] is not None:
            g = clip_norm(g, self._params["gradient_clip"], 1 if self.noise == "laplace" else 2)
        self._g_last = g
        # The regulariser (H/2)||x - centre||^2 adds H (x_t - centre): the same for neighbours
        # (x_t is released), so the counter's sensitivity is that of g alone.
        z = g + self._params["H"] * (self._x - self._params["centre"])
        if np.isfinite(z).all():
            # The protocol already enforces the horizon the copy was built with, and z has the
            # copy's shape: its trusted step skips the public update's checks.
            self._oco._step(z)
        else:  # the public update refuses it, with its own message
            self._oco.update(z)

    def expected_value(self, f: SetFunction) -> float:
        """The Lovász extension at ``x_t``: the exact expected cost of the threshold rounding
        (non-private diagnostic; uncounted)."""
        self._require_pending("expected_value")
        order = chain_order(self._x)
        return float(chain_weights(self._x, order) @ chain_values(f, order, count=False))
