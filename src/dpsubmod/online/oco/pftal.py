r"""Private Follow the Approximate Leader: private online convex optimization over a convex set.

PFTAL (Smith and Thakurta 2013; Algorithm 4 in Cardoso and Cummings 2018, Appendix A) plays
points :math:`x_t` of a convex compact set :math:`X \subset \mathbb{R}^d` against ``H``-strongly
convex losses :math:`f_t`. After round ``t`` it feeds the gradient
:math:`z_t = \nabla f_t(x_t)` to a continual-release counter (tree aggregation, the binary
mechanism) that returns a noisy prefix sum :math:`v_t \approx \sum_{j \le t} z_j`, and plays

.. math::

    x_{t+1} = \arg\min_{x \in X}\; v_t^\top x + \frac{H}{2}\sum_{j \le t} \|x - x_j\|^2
            = \Pi_X\Bigl(\bar x_t - \frac{v_t}{tH}\Bigr),
    \qquad \bar x_t = \frac1t \sum_{j \le t} x_j,

the closed form following from :math:`\sum_j \|x - x_j\|^2 = t\|x - \bar x_t\|^2 + \text{const}`
(the Euclidean projection :math:`\Pi_X` is a clip for the cube :math:`[0, 1]^d`, the default).

Privacy. The released points are post-processing of the counter's outputs, so the run is
``epsilon``-DP for the neighbouring relation "one loss :math:`f_t` replaced by another" whenever
the counter is calibrated to the **l2 sensitivity** :math:`\Delta \ge \sup \|z_t - z'_t\|_2` of one
round's input at a common point. With only a gradient bound ``G`` this is :math:`\Delta = 2G`
(Cardoso and Cummings 2018 calibrate the tree to ``G`` itself, which is ``2 epsilon``-DP; see the
errata); problem-specific learners pass a tighter :math:`\Delta` (the regulariser's gradient
:math:`H x_t` is the same for neighbours and cancels).

Regret (Smith and Thakurta 2013, Theorem 5 of Cardoso and Cummings): for ``H``-strongly convex,
``L``-Lipschitz losses, :math:`\mathbb{E}[\text{Regret}] = O(d (L + H D)^2 \log^{2.5} T /
(\varepsilon H))` with ``D`` the diameter of ``X``; without noise FTAL has regret
:math:`2(L + HD)^2 \ln T / H` (Hazan, Agarwal and Kale 2007).

References
----------
A. Smith and A. Thakurta, "(Nearly) optimal algorithms for private online learning in
full-information and bandit settings", NIPS 2013. A. Cardoso and R. Cummings, "Differentially
private online submodular optimization", arXiv 2018, Algorithms 3 and 4, Theorems 4 and 5.
T.-H. H. Chan, E. Shi and D. Song, "Private and continual release of statistics", ACM TISSEC 2011.
E. Hazan, A. Agarwal and S. Kale, "Logarithmic regret algorithms for online convex
optimization", Machine Learning 69, 2007.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._rng import RNGLike, as_generator
from ..._validation import check_finite, check_int, check_real, is_noise_off
from ...errors import GroundSetMismatchError, ParameterTypeError, StreamLengthError, ValidationError
from ...polytopes.projections import project_box
from ...privacy.plan import PrivacyPlan
from ...privacy.tree_aggregator import TreeAggregator
from .._checks import check_privacy_args, clip_norm
from .._plans import check_backend, learner_backend, run_plan, tree_backend
from ..protocol import OnlineBase
from ..tags import NOISE_BACKENDS, LearnerTags

_FLOAT_MAX = float(np.finfo(np.float64).max)


#: The neighbouring relation of a PFTAL run.
NEIGHBOURING = "loss sequences differing in one loss f_t"


class PFTAL(OnlineBase):
    r"""Private Follow the Approximate Leader (Smith and Thakurta 2013; Algorithm 4 of Cardoso and
    Cummings 2018), for ``H``-strongly convex losses over a convex set with a Euclidean projection.

    Use: read :meth:`point` (``x_t``), then call :meth:`update` with the gradient
    :math:`\nabla f_t(x_t)` of the round's loss (the regulariser included, if the loss is a
    regularised one). Points are released; gradients never are.

    Parameters
    ----------
    dim : int
        Dimension ``d`` of the domain.
    T : int
        Horizon: the number of gradients the counter will accept.
    H : float
        Strong-convexity parameter of every loss (> 0).
    epsilon : float
        Privacy parameter of the whole run (pure DP for ``noise="l2laplace"`` or ``"laplace"``).
        ``math.inf`` switches the noise off: the counter returns exact prefix sums and the run is
        **not private** (non-private FTAL; :attr:`privacy` is then ``None``).
    sensitivity : float, optional
        Sensitivity :math:`\Delta` of one round's gradient between neighbouring loss sequences,
        evaluated at the same point, in the norm of the noise (l1 for ``noise="laplace"``, l2
        otherwise). The counter is calibrated to it.
    lipschitz : float, optional
        A bound ``G`` on the gradients' norm (l1 for ``noise="laplace"``, l2 otherwise). When
        given, every gradient is rescaled to norm at most ``G`` before it enters the counter (a
        no-op for ``G``-Lipschitz losses, so the guarantee holds even for losses that break the
        bound), and ``sensitivity`` defaults to ``2 G``. One of ``sensitivity`` and
        ``lipschitz`` is required unless ``epsilon=inf``.
    project : callable, optional
        Euclidean projection onto the domain, ``project(y) -> x``; the cube :math:`[0, 1]^d` when
        omitted (:func:`project_box`).
    x1 : array-like of float, optional
        First point (must lie in the domain); ``project(0)`` when omitted.
    noise : {"l2laplace", "laplace", "gaussian"}, default="l2laplace"
        Node noise of the counter. ``"l2laplace"`` is the paper's; ``"laplace"`` (per-coordinate,
        calibrated by the counter to an l1 bound) and ``"gaussian"`` (needs ``delta > 0``) are
        the counter's alternatives.
    delta : float, default=0.0
        Only for ``noise="gaussian"``.
    rng : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Noise randomness, resolved when the state is built (first :meth:`point`/:meth:`update` or
        :meth:`reset`), so an integer seed replays the same run after ``reset()`` or ``clone()``.
    backend : {"numpy", "secure", "opendp"}, NoiseBackend or None, default=None
        Noise backend of the counter (:func:`~dpsubmod.privacy.backends.resolve_backend`):
        ``"secure"`` draws exact discrete node noise on a grid, through OpenDP when it is
        installed, with items summed in integer grid units; ``"opendp"`` requires OpenDP. Grid
        backends need ``noise="laplace"`` or ``"gaussian"``; they ignore ``rng``.
        ``None`` (the default): ``"secure"`` without ``rng`` (``"numpy"`` for l2-Laplace
        noise), a seeded ``"numpy"`` simulation with one
        (:func:`~dpsubmod.privacy.backends.choose_backend`).
    budget : Budget or None, default=None
        Charged the whole run's guarantee (:attr:`privacy`) at construction, before anything is
        released (:class:`~dpsubmod.errors.BudgetExceededError` when it does not fit; then
        nothing changes); again by :meth:`reset` after play and by every clone, each a new
        release. Not allowed with ``epsilon=math.inf``.

    Attributes
    ----------
    privacy : PrivacyReport or None
        The whole run's guarantee (one tree-aggregation event), stated before the first
        update; ``None`` when the noise is off.

    Examples
    --------
    Noise off, quadratic losses :math:`\frac12\|x - c\|^2` (``H = 1``): FTAL plays the running
    mean of the targets.

    >>> import numpy as np, math
    >>> oco = PFTAL(2, T=3, H=1.0, epsilon=math.inf)
    >>> for c in ([1.0, 0.0], [0.0, 1.0]):
    ...     x = oco.point()
    ...     _ = oco.update(x - np.array(c))
    >>> oco.point().tolist()
    [0.5, 0.5]
    """

    _tags = LearnerTags(private=True, feedback="full", problem="convex",
                        assumption="oblivious", backends=NOISE_BACKENDS)

    def __init__(self, dim: int, T: int, *, H: float, epsilon: float,
                 sensitivity: float | None = None, lipschitz: float | None = None,
                 project: Callable[[np.ndarray], np.ndarray] | None = None,
                 x1: object = None, noise: str = "l2laplace", delta: float = 0.0,
                 rng: RNGLike = None, budget: Any = None, backend: Any = None):
        caller = "PFTAL"
        check_int(dim, "dim", low=1, caller=caller)
        check_int(T, "T", low=1, caller=caller)
        check_real(H, "H", low=0.0, low_open=True, caller=caller)
        check_privacy_args(epsilon, sensitivity, lipschitz, noise, delta, caller)
        if (sensitivity is None and lipschitz is not None and not is_noise_off(epsilon)
                and not math.isfinite(2.0 * float(lipschitz))):  # type: ignore[arg-type]
            raise ValidationError(
                f"The 'lipschitz' parameter of {caller} ({lipschitz!r}) gives the sensitivity "
                "2 * lipschitz = inf, outside floating-point range; rescale the losses so that "
                "their gradient bound is a moderate number, or pass sensitivity."
            )
        check_backend(backend, caller, noise)
        if project is not None and not callable(project):
            raise ParameterTypeError(
                f"The 'project' parameter of {caller} must be a callable (a Euclidean projection "
                f"onto the domain) or None; got {type(project).__name__}."
            )
        if x1 is not None:
            a = check_finite(x1, "x1", caller=caller, ndim=1)
            if a.shape != (dim,):
                raise GroundSetMismatchError(
                    f"The 'x1' parameter of {caller} must have shape ({dim},); got {a.shape}."
                )
        self.dim = dim
        self.T = T
        self.H = H
        self.epsilon = epsilon
        self.sensitivity = sensitivity
        self.lipschitz = lipschitz
        self.project = project
        self.x1 = x1
        self.noise = noise
        self.delta = delta
        self.rng = rng
        self.budget = budget
        self.backend = learner_backend(self, backend, rng, caller, noise)
        self._finish_construction(PFTAL)

    # -- state --------------------------------------------------------------------------------
    @property
    def noise_off(self) -> bool:
        """Whether the counter is exact (``epsilon=inf``): the run is then not private."""
        return is_noise_off(self.epsilon)

    @property
    def calibrated_sensitivity(self) -> float | None:
        """The l2 sensitivity the counter is calibrated to (``None`` when noise is off)."""
        if self.noise_off:
            return None
        if self.sensitivity is not None:
            return float(self.sensitivity)
        return 2.0 * float(self.lipschitz)  # type: ignore[arg-type]

    def _project(self, y: np.ndarray) -> np.ndarray:
        return project_box(y) if self.project is None else np.asarray(self.project(y), float)

    def _reset(self) -> None:
        if self.x1 is None:
            x = self._project(np.zeros(int(self.dim)))
        else:
            x = np.array(self.x1, dtype=np.float64)
            if np.max(np.abs(self._project(x) - x)) > 1e-12:
                raise ValidationError(
                    "The 'x1' parameter of PFTAL must be a point of the domain (project(x1) == x1)."
                )
        tree = None
        if not self.noise_off:
            tree = self._counter(as_generator(self.rng), budget=self._run_allowance())
        self._start(x, tree)

    def _start(self, x: np.ndarray, tree: TreeAggregator | None) -> None:
        """Start a run at the point ``x`` with the counter ``tree`` (``None``: noise off)."""
        d = int(self.dim)
        self._x = x
        self._xsum = np.zeros(d)
        self._t = 0
        self._tree = tree
        self._exact = np.zeros(d) if tree is None else None
        self._v = np.zeros(d)

    @classmethod
    def _running(cls, dim: int, T: int, *, H: float, epsilon: float,
                 sensitivity: float | None, x1: np.ndarray, noise: str, delta: float,
                 backend: Any, rng: Any, tree: TreeAggregator | None) -> PFTAL:
        """The PFTAL a learner plays through, started at ``x1`` (a point of the cube) with the
        counter ``tree`` (``None`` when the noise is off).

        The learner validated these values at its own public entry, chose the backend, stated
        the run's plan and built ``tree`` on its own allowance: nothing is checked, chosen,
        planned or charged again here. The parameters are stored, and frozen, as the public
        constructor stores them.
        """
        obj = cls.__new__(cls)
        # written to the instance dict: these are stored once, already frozen
        vars(obj).update(dim=dim, T=T, H=H, epsilon=epsilon, sensitivity=sensitivity,
                         lipschitz=None, project=None, x1=x1, noise=noise, delta=delta,
                         rng=rng, budget=None, backend=backend, _backend_given=backend,
                         _frozen=True)
        obj._start(np.array(x1, dtype=np.float64), tree)
        return obj

    def _ensure_state(self) -> None:
        if not hasattr(self, "_x"):
            self._reset()

    @property
    def t(self) -> int:
        """Number of gradients received so far."""
        self._ensure_state()
        return self._t

    def point(self) -> np.ndarray:
        """The current point ``x_t`` (a copy; released, so private to share)."""
        self._ensure_state()
        return self._x.copy()

    @property
    def prefix(self) -> np.ndarray:
        """The last released noisy prefix sum ``v_t`` (zeros before the first update)."""
        self._ensure_state()
        return self._v.copy()

    def update(self, gradient: object) -> np.ndarray:
        """Feed :math:`\\nabla f_t(x_t)` and move to ``x_{t+1}``; returns ``x_{t+1}``.

        Raises
        ------
        ValidationError
            The gradient has the wrong shape or non-finite entries.
        StreamLengthError
            ``T`` gradients were already received.
        """
        self._ensure_state()
        z = check_finite(gradient, "gradient", caller="PFTAL.update", ndim=1).astype(np.float64)
        if z.shape != (int(self.dim),):
            raise GroundSetMismatchError(
                f"The 'gradient' of PFTAL.update must have shape ({self.dim},); got {z.shape}."
            )
        if self._t >= int(self.T):
            raise StreamLengthError(
                f"PFTAL was built for T={self.T} rounds and has received them all; build it "
                "with a larger T."
            )
        if self.lipschitz is not None:
            z = clip_norm(z, float(self.lipschitz), 1 if self.noise == "laplace" else 2)
        return self._step(z)

    def _step(self, z: np.ndarray) -> np.ndarray:
        """Trusted update (learners built on PFTAL call this after their own clipping)."""
        self._land(self._project(self._target(z)))
        return self._x.copy()

    def _target(self, z: np.ndarray) -> np.ndarray:
        """The first half of :meth:`_step`: count ``z`` and return the point to project (a
        learner running several copies projects their targets in one call, then calls
        :meth:`_land` on each)."""
        self._xsum += self._x
        self._t += 1
        if self._tree is None:
            self._exact += z
            self._v = self._exact.copy()
        else:
            self._tree.update(z)
            self._v = np.asarray(self._tree.prefix(), dtype=np.float64)
        t = self._t
        with np.errstate(over="ignore"):
            y = self._xsum / t - self._v / (t * float(self.H))
        # A subnormal H (a tiny bound M) overflows the step to +-inf; the projection of a point
        # that far out is the domain's extreme point in that direction, which a clamp at the
        # float limit keeps while sparing a user's projection the infinities.
        np.clip(y, -_FLOAT_MAX, _FLOAT_MAX, out=y)
        return y

    def _land(self, x: np.ndarray) -> None:
        """The second half of :meth:`_step`: move to the projected point ``x``."""
        self._x = x

    # -- privacy ------------------------------------------------------------------------------
    def _privacy_plan(self) -> PrivacyPlan | None:
        """One tree-aggregation event for the whole run; ``None`` when the noise is off."""
        if self.noise_off:
            return None
        # the counter is built on a seed of its own: nothing is drawn
        return self._memo_plan(lambda: run_plan(
            "PFTAL", [self._counter(0).privacy_map()], neighbouring=NEIGHBOURING,
            backend=self.backend, rng=self.rng))

    def _counter(self, rng: Any, budget: Any = None) -> TreeAggregator:
        """The run's tree-aggregation counter, from the arguments the constructor checked."""
        return TreeAggregator._from_checked(
            int(self.T), int(self.dim), noise=self.noise, sensitivity=self.calibrated_sensitivity,
            epsilon=float(self.epsilon), delta=float(self.delta), budget=budget,
            **tree_backend(self.backend, rng))
