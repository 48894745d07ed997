r"""The Frank-Wolfe machinery shared by the online Meta-Frank-Wolfe learners: ``K`` online linear
optimizers over a polytope, the Frank-Wolfe path, oblivious rounding of the played point, and the
multilinear gradients fed back (Chen, Hassani and Karbasi 2018).

Round ``t``: read the oracles' points :math:`v_t^1..v_t^K`, build the path :math:`x_t^{(0)} = 0`,
:math:`x_t^{(k)} = x_t^{(k-1)} + v_t^k / K`, play a rounding of :math:`x_t = x_t^{(K)}`
(:func:`~dpsubmod.polytopes.round_point`), then feed oracle ``k`` the gradient of the round's
multilinear extension at :math:`x_t^{(k-1)}`, clipped to ``[0, bound]``
(:func:`~dpsubmod.extensions.multilinear_gradients`: all ``K`` points in one call). See
:mod:`dpsubmod.online.maximization.meta_frank_wolfe` for the learners and their guarantees.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Any

import numpy as np

from ..._guarantee import RegretGuarantee, regret_guarantee
from ..._rng import RNGLike, as_generator
from ..._validation import check_int, check_real
from ...errors import ValidationError
from ...extensions._closed_forms import closed_gradients, has_closed_form
from ...extensions.multilinear import multilinear_gradients, multilinear_value
from ...functions.base import SetFunction
from ...polytopes.region import Region, as_region
from ...polytopes.rounding import round_point
from ..protocol import Learner
from .fw_bounds import frank_wolfe_bias

#: Gradient methods accepted (passed to :func:`~dpsubmod.extensions.multilinear_gradients`).
GRADIENT_METHODS = ("auto", "exact", "sampling")

#: The neighbouring relation of the learners.
NEIGHBOURING = ("function streams differing in one round's function (replaced by any other "
                "function; multilinear gradients clipped to [0, bound])")


def batch_gradient(f: SetFunction, X: np.ndarray, *, method: str = "auto",
                   n_samples: int = 200, rng: RNGLike = None) -> np.ndarray:
    r"""Gradients of the multilinear extension of ``f`` at every row of ``X`` (shape ``(K, n)``),
    counted as ``K n`` evaluations: :func:`~dpsubmod.extensions.multilinear_gradients` on the
    rows clipped to the cube (closed forms vectorised over the rows where the family has one,
    row by row with ``method``, ``n_samples`` and ``rng`` otherwise)."""
    X = np.clip(np.asarray(X, dtype=np.float64), 0.0, 1.0)
    return multilinear_gradients(f, X, method=method, n_samples=n_samples,  # type: ignore[arg-type]
                                 rng=rng)


class FrankWolfeLearner(Learner):
    """K online linear optimizers, the Frank-Wolfe path, rounding and gradients."""

    sense = "max"
    # The subclasses' tags say assumption="oblivious": the FTRL oracles' analysis takes the
    # functions fixed in advance (Sadeghi and Fazel 2021; Chen, Hassani and Karbasi 2018).

    def __init__(self, n: int, T: int, constraint: object, *, K: int | str | None, bound: float,
                 gradient: str, n_samples: int, rng: RNGLike, caller: str):
        """Store and check the parameters every Frank-Wolfe learner takes (``caller`` names the
        learner in errors); the subclass stores and checks its own after this."""
        self.n = n
        self.T = T
        self.constraint = constraint
        self.K = K
        self.bound = bound
        self.gradient = gradient
        self.n_samples = n_samples
        self.rng = rng
        self._check_common(self.n, self.T, caller)
        as_region(self.constraint, self.n)
        if isinstance(self.constraint, Region):
            raise ValidationError(
                f"Pass the constraint itself (int k, Matroid or Knapsack) to {caller}, not a "
                "Region, so run() can compute the comparator."
            )
        if isinstance(self.K, str):
            if self.K != "paper":
                raise ValidationError(
                    f"The 'K' parameter of {caller} must be a positive int, 'paper' or None "
                    f"(tuned); got {self.K!r}."
                )
        elif self.K is not None:
            check_int(self.K, "K", low=1, caller=caller)
        check_real(self.bound, "bound", low=0.0, low_open=True, caller=caller,
                   fix="bound is a public m_F >= max_t max_e F_t({e}) (1 for functions in "
                       "[0, 1]).")
        if self.gradient not in GRADIENT_METHODS:
            raise ValidationError(
                f"The 'gradient' parameter of {caller} must be one of {GRADIENT_METHODS}; got "
                f"{self.gradient!r}."
            )
        check_int(self.n_samples, "n_samples", low=2, caller=caller)
        self._finish_construction(FrankWolfeLearner)

    def _paper_K(self) -> int:
        r"""The theorem's number of Frank-Wolfe steps (``K="paper"``): :math:`\lceil\sqrt
        T\rceil`."""
        return max(1, math.ceil(math.sqrt(int(self.T))))

    def _default_K(self) -> int:
        """The number of steps when ``K`` is None (subclasses tune it to the budget)."""
        return self._paper_K()

    def _K(self) -> int:
        if self.K == "paper":
            return self._paper_K()
        return int(self.K) if self.K is not None else self._default_K()

    def _public_region(self) -> Region:
        return as_region(self.constraint, self.n)

    def _fw_guarantee(self, oracle_regret: float, K: int, theorem: str) -> RegretGuarantee:
        """Lemma 7: the oracles' average regret plus the Frank-Wolfe bias; vacuous at the
        ``(1 - 1/e)``-regret of playing nothing, ``(1 - 1/e) T R_1 m_F``."""
        reg = self._public_region()
        T, m = int(self.T), float(self.bound)
        bound = oracle_regret + frank_wolfe_bias(T, K, reg.l1_radius, m)
        units = f"(1 - 1/e)-regret of the multilinear extensions (singletons <= {m:g})"
        return regret_guarantee(bound, (1.0 - 1.0 / math.e) * T * reg.l1_radius * m,
                                units=units, theorem=theorem)

    def _reset(self) -> None:
        super()._reset()
        self._region = as_region(self.constraint, self.n)
        gen = as_generator(self.rng)
        self._oracle_rng, self._round_rng, self._grad_rng = gen.spawn(3)
        self._params = self._resolve()
        # the oracles draw through this run's allowance, never the user's budget again
        self._allowance = self._run_allowance()
        self._build_oracles()
        self._x = np.zeros(int(self.n))
        self._path: np.ndarray | None = None

    @abstractmethod
    def _resolve(self) -> dict[str, Any]:
        """Every parameter after defaults were resolved."""

    @abstractmethod
    def _build_oracles(self) -> None:
        """Create the K online linear optimizers."""

    @abstractmethod
    def _points(self) -> tuple[np.ndarray, list | None]:
        """The K oracles' current points (and their vertex decompositions, if any)."""

    @abstractmethod
    def _feed(self, G: np.ndarray) -> None:
        """Give each oracle its gradient (row k of ``G``)."""

    def _select(self) -> np.ndarray:
        V, decs = self._points()
        K = V.shape[0]
        # Frank-Wolfe path from 0 with step 1/K: x^(k) = sum_{j<k} v_j / K.
        path = np.zeros_like(V)
        if K > 1:
            path[1:] = np.cumsum(V[:-1], axis=0) / K
        self._path = np.clip(path, 0.0, 1.0)
        x = V.sum(axis=0) / K
        self._x = x
        dec = None
        if decs is not None:
            sets, weights = [], []
            for S_list, w in decs:
                sets.extend(S_list)
                weights.extend((np.asarray(w) / K).tolist())
            dec = (sets, np.asarray(weights))
        return round_point(self._region, x, decomposition=dec, rng=self._round_rng)

    def _gradients(self, f: SetFunction) -> np.ndarray:
        # A NaN or infinite value of f makes the contraction warn; the result is refused below.
        with np.errstate(invalid="ignore", over="ignore"):
            if self.gradient != "sampling" and has_closed_form(f):
                # The path is finite and in the cube by construction (clipped in _select), and
                # the protocol checked f: the closed form without multilinear_gradients'
                # re-checks of both, the same numbers and the same count.
                G = closed_gradients(f, self._path)
                f.evaluations += self._path.size
            else:
                G = batch_gradient(f, self._path, method=self.gradient,
                                   n_samples=int(self.n_samples), rng=self._grad_rng)
        if not np.isfinite(G).all():
            raise ValidationError(
                f"The 'feedback' function given to {type(self).__name__}.update gave non-finite "
                "gradients; every f_t must be finite on all sets."
            )
        return np.clip(G, 0.0, float(self.bound))

    def _update(self, f: SetFunction) -> None:  # type: ignore[override]
        self._feed(self._gradients(f))

    @property
    def point(self) -> np.ndarray:
        """The fractional point :math:`x_t` of the last :meth:`select` (released: it is
        post-processing of the oracles' outputs)."""
        self._ensure_state()
        return self._x.copy()

    def fractional_value(self, f: SetFunction) -> float:
        """The multilinear extension of ``f`` at the last played point :math:`x_t` (non-private
        diagnostic, uncounted evaluations): a lower bound on :math:`E[f(S_t)]` for matroids."""
        ev = f.evaluations
        v = float(multilinear_value(f, self._x, method="auto", rng=0).estimate)
        f.evaluations = ev
        return v

    def expected_value(self, f: SetFunction) -> float | None:
        """Exact :math:`E[f(S_t)]` over the rounding for the box (the multilinear extension at
        :math:`x_t`); ``None`` for the other regions, where the pipage and swap roundings only
        give :math:`E[f(S_t)] \\ge f(x_t)` (see :meth:`fractional_value`)."""
        if self._region.kind == "box":
            return self.fractional_value(f)
        return None
