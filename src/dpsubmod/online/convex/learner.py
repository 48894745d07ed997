r"""Projection-free bandit convex optimization over polytopes, private and not.

The learners play points of a polytope ``K`` (reached through its linear-optimization oracle)
against convex losses :math:`f_t` (:mod:`dpsubmod.online.convex.losses`) and see only the
scalar :math:`f_t(x_t)` at the played point (bandit feedback). Each round a learner commits with
:meth:`BanditConvexLearner.select` (a point) and is told the loss value with
:meth:`BanditConvexLearner.update`; :func:`dpsubmod.online.convex.harness.run_convex` plays a
learner against a loss stream and measures its regret.

The learners (:class:`~dpsubmod.online.convex.learner.BanditConvexLearner` subclasses):

* :class:`PrivateBandit` (:mod:`~dpsubmod.online.convex.private_bandit`): Algorithm 1 of Ene,
  Nguyen and Vladu (AAAI 2021), ``epsilon``-DP (Laplace or l2-Laplace tree noise) or
  ``(epsilon, delta)``-DP (Gaussian) with the sound readings of the paper's errata; with
  ``epsilon=math.inf`` it is the non-private version of the same algorithm (**not private**).
* :class:`GarberKretzu` (:mod:`~dpsubmod.online.convex.baselines`): blocked bandit gradient
  descent with Frank-Wolfe "infeasible projections", a reconstruction of Garber and Kretzu
  (AISTATS 2020) (**not private**).
* :class:`FlaxmanKalaiMcMahan` (:mod:`~dpsubmod.online.convex.baselines`): projected bandit
  gradient descent (Flaxman, Kalai and McMahan, SODA 2005) on a box or a simplex, where the
  Euclidean projection is cheap (**not private**).

Geometry shared by all three
----------------------------
The one-point estimator :math:`\hat g = (d/\zeta) f(x + \zeta u)\,u`, ``u`` uniform on the unit
sphere of the direction space ``V`` of ``K``'s affine hull (``d = dim V``), is unbiased for the
gradient of the ball-smoothed loss :math:`\hat f(x) = \mathbb{E}_{v \in B_V} f(x + \zeta v)`
(Flaxman et al., Lemma 1; Ene et al., Lemma 2.2), projected on ``V``. For a lower-dimensional
``K`` (base polytopes lie in ``x(V) = f(V)``) smoothing inside the hull keeps queries in it and
``d`` replaces the ambient ``n`` everywhere (the paper treats full-dimensional ``K`` only).

``mode`` chooses where queries may go:

* ``"shrink"`` (default, Ene et al. App. D, assumption A5'): with a certified relative ball
  ``B(c, r)`` in ``K`` (:func:`dpsubmod.polytopes.inner_ball`) and ``alpha = zeta / r <= 1``,
  the learner runs on :math:`f'_t(x) = f_t(c + (1-\alpha)(x - c))` and plays
  :math:`y_t = c + (1-\alpha)(\tilde x + \zeta u_t - c)`, a convex combination of
  :math:`\tilde x`, :math:`c + r u_t` and ``c``, hence **always in K**. Cost: at most
  :math:`L \zeta D / r` extra loss per round. When ``zeta > r`` (small ``T`` or a thin ``K``)
  ``zeta`` is clipped to ``r / 2`` with a warning, which keeps feasibility but leaves the
  paper's regime (``zeta <= r`` needs ``T >= d^2 (D / r)^4``).
* ``"extend"`` (the paper's main text, assumption A5): the losses are defined beyond ``K``
  (linear and quadratic losses are), the centres stay in ``K`` and the played points
  :math:`\tilde x + \zeta u_t` may leave it by ``zeta`` (inside the affine hull).

References
----------
A. Ene, H. L. Nguyen and A. Vladu, "Projection-free bandit optimization with privacy
guarantees", AAAI 2021, Algorithm 1, Lemmas 2.2, 3.1, 5.1, 5.4, App. D.
D. Garber and B. Kretzu, "Improved regret bounds for projection-free bandit convex
optimization", AISTATS 2020.
A. D. Flaxman, A. T. Kalai and H. B. McMahan, "Online convex optimization in the bandit setting:
gradient descent without a gradient", SODA 2005.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Any, ClassVar

import numpy as np

from ..._validation import check_real
from ...errors import ParameterTypeError
from ..protocol import RoundProtocol
from .geometry import Exploration
from .losses import ConvexLoss


class BanditConvexLearner(RoundProtocol):
    """Base class of bandit convex learners over a polytope (loss minimization).

    The protocol of :class:`~dpsubmod.online.Learner` with points instead of sets: each round
    :meth:`select` returns the point to play (a float array of shape ``(n,)``), then
    :meth:`update` takes the finite loss value at that point. The base class enforces it
    (alternation, at most ``T`` rounds, finite feedback), checked before any state changes.
    Parameters are public and untouched; all state is private and built by ``_reset()`` on the
    first :meth:`select` or an explicit :meth:`reset`; :meth:`clone` builds a fresh learner
    (``clone(rng=seed)`` for an independent replica).

    Subclasses store ``polytope``, ``T`` and ``rng`` among their parameters and implement
    ``_reset`` (calling ``super()._reset()`` first), ``_select() -> point``, ``_update(value)``
    and ``_exploration()``.
    """

    sense: ClassVar[str] = "min"
    # The subclasses' tags say assumption="oblivious": Ene, Nguyen and Vladu (2021) assume
    # the losses do not react to the exploration.
    _feedback_hint: ClassVar[str] = "update(value) with the loss at the played point"

    @property
    def dim(self) -> int:
        """Ambient dimension ``n`` of the played points."""
        return int(self.polytope.dim)  # type: ignore[attr-defined]

    def select(self) -> np.ndarray:
        """This round's point (before the loss is revealed).

        Raises
        ------
        ValidationError
            ``select`` called twice without ``update``.
        StreamLengthError
            All ``T`` rounds were played.
        """
        self._open_round()
        x = np.asarray(self._select(), dtype=float)
        self._pending = True
        self._last = x
        return x.copy()

    def update(self, value: float) -> None:
        """The loss ``f_t(x_t)`` at the point returned by the last :meth:`select`.

        Raises
        ------
        ValidationError
            No pending selection, or a non-finite value.
        ParameterTypeError
            The value is not a real number (bandit feedback is a scalar, never the function).
        """
        self._check_pending()
        name = type(self).__name__
        if isinstance(value, ConvexLoss):
            raise ParameterTypeError(
                f"{name} is a bandit learner: update() takes the float value f_t(x_t), not the "
                "loss function."
            )
        v = check_real(value, "value", caller=f"{name}.update")
        self._update(v)
        self._close_round()

    def exploration(self) -> Exploration | None:
        """The law of the point of the current round, between :meth:`select` and
        :meth:`update`: ``center + radius * u`` with ``u`` uniform on the unit sphere of
        ``span(basis)``.

        A **non-private diagnostic** for experiments: the harness combines it with the round's
        loss (:meth:`~dpsubmod.online.convex.losses.ConvexLoss.sphere_mean`) into the expected
        loss over the learner's own draw, which has the same mean as the observed loss and a
        smaller variance. ``None`` when unavailable.
        """
        self._ensure_state()
        if not self._pending:
            return None
        return self._exploration()

    def _exploration(self) -> Exploration | None:
        return None

    @abstractmethod
    def _select(self) -> np.ndarray: ...

    @abstractmethod
    def _update(self, value: float) -> None: ...

    @property
    def epsilon_spent(self) -> float:
        """The epsilon of the whole run's guarantee (:attr:`privacy`), ``inf`` for a learner
        without guarantee."""
        rep = self.privacy
        return math.inf if rep is None else float(rep.epsilon)

    @property
    def resolved_params(self) -> dict[str, Any]:
        """Every parameter after defaults were resolved (to reproduce a run)."""
        return {k: v for k, v in self._resolved.items()  # type: ignore[attr-defined]
                if k != "geometry"}
