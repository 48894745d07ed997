r"""Non-private bandit convex baselines: Garber and Kretzu's blocked gradient descent with
"infeasible projections" (reconstructed) and Flaxman, Kalai and McMahan's projected bandit
gradient descent. **Not private.**

See :mod:`dpsubmod.online.convex.learner` for the protocol and the shared geometry.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._rng import RNGLike, as_generator
from ..._validation import check_int, check_real
from ...errors import ParameterTypeError, ValidationError
from ...polytopes.explicit import Box, Simplex
from ...polytopes.oracles import Polytope
from ..tags import LearnerTags
from .geometry import (
    Exploration,
    SphereStream,
    check_mode,
    clip_zeta,
    exploration_law,
    make_geometry,
    played_point,
)
from .learner import BanditConvexLearner


class GarberKretzu(BanditConvexLearner):
    r"""Projection-free bandit gradient descent in blocks with Frank-Wolfe "infeasible
    projections", after Garber and Kretzu (AISTATS 2020). **Not private.**

    **Reconstructed.** The seed paper (Ene, Nguyen and Vladu 2021) describes this algorithm
    only as the greedy (online gradient descent) counterpart of its own lazy PrivateBandit, with
    "specific stopping conditions" for the inner conditional-gradient routine; the details
    below follow that description and the standard analysis, not Garber and Kretzu's text:

    * blocks of ``K = ceil(sqrt T)`` rounds; in block ``m`` play points around a fixed centre
      :math:`x_m \in K` (same shrinkage/extension as :class:`PrivateBandit`) and sum the
      one-point estimates :math:`g_m`;
    * at the end of the block, :math:`y = x_m - \eta g_m` and :math:`x_{m+1}` is Frank-Wolfe
      on :math:`\tfrac12\|x - y\|^2` warm-started at :math:`x_m`, stopped when the duality gap
      :math:`\max_{v \in K}\langle x - y, x - v\rangle \le \epsilon_{FW}` (or after
      ``fw_max_steps``). The gap rule gives, for every :math:`z \in K`,
      :math:`\|x_{m+1} - z\|^2 = \|y - z\|^2 - \|x_{m+1} - y\|^2 + 2\langle x_{m+1} - y,
      x_{m+1} - z\rangle \le \|y - z\|^2 + 2\epsilon_{FW}`, so projected-OGD's analysis holds
      with an extra :math:`\epsilon_{FW}/\eta` per block;
    * defaults (derived here, not copied): :math:`\eta = D/(T^{3/4} d^{1/2} L)` and
      :math:`\zeta = D d^{1/2}/T^{1/4}` as in PrivateBandit, and
      :math:`\epsilon_{FW} = D^2/T^{3/4}`, which makes the extra term
      :math:`(T/K)\,\epsilon_{FW}/\eta = D d^{1/2} L T^{1/2}`, below the main term
      (the tolerance ``D^2/sqrt(T)`` that matches the main term's order was about 3 times
      worse in practice on linear losses over a box); the cap of ``4 K`` iterations per block
      keeps the oracle calls ``O(T)``. Expected regret :math:`O(T^{3/4} d^{1/2} L D)`.

    Parameters
    ----------
    polytope : Polytope
    T : int
    lipschitz : float, default=1.0
    diameter : float, optional
    mode : {"shrink", "extend"}, default="shrink"
    eta, zeta : float, optional
    block : int, optional
        Default ``ceil(sqrt T)``.
    fw_tol : float, optional
        :math:`\epsilon_{FW}`; default ``D^2 / T^(3/4)``.
    fw_max_steps : int, optional
        Cap on Frank-Wolfe iterations per block; default ``4 * block``.
    rng : int, Generator, SeedSequence or None, default=None
    """

    _tags = LearnerTags(private=False, feedback="bandit", problem="convex",
                        assumption="oblivious", backends=())

    def __init__(self, polytope: Polytope, T: int, *, lipschitz: float = 1.0,
                 diameter: float | None = None, mode: str = "shrink", eta: float | None = None,
                 zeta: float | None = None, block: int | None = None,
                 fw_tol: float | None = None, fw_max_steps: int | None = None,
                 rng: RNGLike = None):
        self.polytope = polytope
        self.T = T
        self.lipschitz = lipschitz
        self.diameter = diameter
        self.mode = mode
        self.eta = eta
        self.zeta = zeta
        self.block = block
        self.fw_tol = fw_tol
        self.fw_max_steps = fw_max_steps
        self.rng = rng
        self._resolved = self._resolve()
        self._finish_construction(GarberKretzu)

    def _resolve(self) -> dict[str, Any]:
        caller = "GarberKretzu"
        geo = make_geometry(self.polytope, self.diameter, caller)
        T = check_int(self.T, "T", low=1, caller=caller)
        L = check_real(self.lipschitz, "lipschitz", low=0.0, low_open=True, caller=caller)
        mode = check_mode(self.mode, geo.radius, caller)
        d, D = geo.dim, geo.diameter
        K = math.isqrt(T - 1) + 1 if self.block is None else check_int(
            self.block, "block", low=1, high=T, caller=caller)
        eta = D / (T ** 0.75 * math.sqrt(d) * L) if self.eta is None else check_real(
            self.eta, "eta", low=0.0, low_open=True, caller=caller)
        zeta = D * math.sqrt(d) / T ** 0.25 if self.zeta is None else check_real(
            self.zeta, "zeta", low=0.0, low_open=True, caller=caller)
        zeta = clip_zeta(zeta, geo.radius, mode, caller)
        tol = D * D / T ** 0.75 if self.fw_tol is None else check_real(
            self.fw_tol, "fw_tol", low=0.0, caller=caller)
        cap = 4 * K if self.fw_max_steps is None else check_int(
            self.fw_max_steps, "fw_max_steps", low=1, caller=caller)
        _check_step(caller, self, eta=eta, zeta=zeta)
        return {"T": T, "block": K, "eta": eta, "zeta": zeta, "mode": mode,
                "alpha": zeta / geo.radius if mode == "shrink" else 0.0, "fw_tol": tol,
                "fw_max_steps": cap, "lipschitz": L, "diameter": D, "radius": geo.radius,
                "dim": d, "ambient_dim": int(self.polytope.dim), "geometry": geo}

    def _reset(self) -> None:
        super()._reset()
        p = self._resolved
        self._geo = p["geometry"]
        self._spheres = SphereStream(self._geo.basis, as_generator(self.rng))
        self._centre = self._geo.center.copy()
        self._g = np.zeros(p["dim"])
        self._in_block = 0
        self._m = 0
        self._z = np.zeros(p["dim"])
        self._scale = p["dim"] / p["zeta"]
        self._lo_calls = 0
        self._capped = 0

    def _block_length(self) -> int:
        p = self._resolved
        return min(p["block"], p["T"] - self._m * p["block"])

    def _select(self) -> np.ndarray:
        p = self._resolved
        self._z, u = self._spheres.next(self._block_length())
        return played_point(self._geo, p["mode"], p["alpha"], self._centre, p["zeta"], u)

    def _exploration(self) -> Exploration:
        p = self._resolved
        return exploration_law(self._geo, p["mode"], p["alpha"], self._centre, p["zeta"])

    def _update(self, value: float) -> None:
        self._g += (self._scale * value) * self._z
        self._in_block += 1
        if self._in_block == self._block_length():
            p = self._resolved
            y = self._centre - p["eta"] * self._geo.ambient(self._g)
            x = self._centre.copy()
            steps = 0
            while steps < p["fw_max_steps"]:
                grad = x - y
                v = self.polytope.linear_min(grad)
                steps += 1
                d = v - x
                gap = float(-(grad @ d))
                if gap <= p["fw_tol"]:
                    break
                dd = float(d @ d)
                x += (1.0 if dd <= 0.0 else min(1.0, gap / dd)) * d
            else:
                self._capped += 1
            self._lo_calls += steps
            self._centre = x
            self._g = np.zeros(p["dim"])
            self._in_block = 0
            self._m += 1

    @property
    def oracle_calls(self) -> int:
        """Linear-oracle calls made so far."""
        self._ensure_state()
        return self._lo_calls

    @property
    def capped_blocks(self) -> int:
        """Blocks whose Frank-Wolfe loop stopped at ``fw_max_steps`` before the gap rule."""
        self._ensure_state()
        return self._capped


def _check_step(caller: str, learner: Any, **derived: float) -> None:
    """Refuse, by the parameter they come from, a step or smoothing radius that left float
    range (``lipschitz`` or ``bound`` near the ends of it): the iterate would be NaN."""
    for name, v in derived.items():
        if 0.0 < v < math.inf:
            continue
        if getattr(learner, name, None) is not None:
            source = name
        else:
            source = "bound" if getattr(learner, "bound", None) is not None else "lipschitz"
        raise ValidationError(
            f"The '{source}' parameter of {caller} is {getattr(learner, source)!r}: the derived "
            f"{name}={v!r} is outside floating-point range. Rescale the losses so that "
            f"'{source}' is a moderate number, or pass {name}."
        )


def _project_box(y: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.minimum(np.maximum(y, lo), hi)


def _project_simplex(y: np.ndarray, total: float) -> np.ndarray:
    """Euclidean projection onto ``{x >= 0, sum x = total}`` (sort-based; Held, Wolfe and
    Crowder 1974)."""
    # The projection commutes with adding a constant to every coordinate; with the largest at
    # 0 the first test below is ``total > 0``, so a threshold always exists even when huge
    # coordinates cancel in the cumulative sum.
    y = y - y.max()
    s = np.sort(y)[::-1]
    css = np.cumsum(s) - total
    k = np.arange(1, y.size + 1)
    rho = int(np.flatnonzero(s - css / k > 0)[-1])
    return np.maximum(y - css[rho] / (rho + 1.0), 0.0)


class FlaxmanKalaiMcMahan(BanditConvexLearner):
    r"""Projected bandit gradient descent, "gradient descent without a gradient" (Flaxman,
    Kalai and McMahan, SODA 2005), on a :class:`~dpsubmod.polytopes.Box` or
    :class:`~dpsubmod.polytopes.Simplex`. **Not private.** A projection-based reference for the
    projection-free learners.

    Each round: play a point around :math:`x_t` (shrinkage or extension as in
    :class:`PrivateBandit`), form :math:`\hat g_t = (d/\zeta) f_t(\cdot)\,u_t` and step
    :math:`x_{t+1} = \Pi_K(x_t - \eta \hat g_t)` with the exact Euclidean projection (a clip
    for a box; the sort-based projection for a simplex).

    Defaults (from projected online gradient descent on the smoothed losses, Zinkevich 2003,
    with :math:`\|\hat g\| \le G = dB/\zeta`; the constants are derived here, not copied):
    :math:`\eta = D/(G\sqrt T)` and :math:`\zeta = \sqrt{D d B / (L (2 + D/r))}\, T^{-1/4}`
    (``2 + D/r`` becomes ``2`` in ``"extend"`` mode), which balance
    :math:`D G \sqrt T + \zeta T L (2 + D/r)` to :math:`O(\sqrt{d B L D (2 + D/r)}\,T^{3/4})`.

    Parameters
    ----------
    polytope : Box or Simplex
    T : int
    lipschitz : float, default=1.0
    bound : float, optional
        ``B``, a bound on ``|f_t|`` used only to set the step size; default ``L D``.
    diameter : float, optional
    mode : {"shrink", "extend"}, default="shrink"
    eta, zeta : float, optional
    rng : int, Generator, SeedSequence or None, default=None
    """

    _tags = LearnerTags(private=False, feedback="bandit", problem="convex",
                        assumption="oblivious", backends=())

    def __init__(self, polytope: Polytope, T: int, *, lipschitz: float = 1.0,
                 bound: float | None = None, diameter: float | None = None,
                 mode: str = "shrink", eta: float | None = None, zeta: float | None = None,
                 rng: RNGLike = None):
        self.polytope = polytope
        self.T = T
        self.lipschitz = lipschitz
        self.bound = bound
        self.diameter = diameter
        self.mode = mode
        self.eta = eta
        self.zeta = zeta
        self.rng = rng
        self._resolved = self._resolve()
        self._finish_construction(FlaxmanKalaiMcMahan)

    def _resolve(self) -> dict[str, Any]:
        caller = "FlaxmanKalaiMcMahan"
        if not isinstance(self.polytope, (Box, Simplex)):
            raise ParameterTypeError(
                f"{caller} projects exactly and supports Box and Simplex only; got "
                f"{type(self.polytope).__name__}. Use PrivateBandit(epsilon=math.inf) or "
                "GarberKretzu, which need only the linear oracle."
            )
        geo = make_geometry(self.polytope, self.diameter, caller)
        T = check_int(self.T, "T", low=1, caller=caller)
        L = check_real(self.lipschitz, "lipschitz", low=0.0, low_open=True, caller=caller)
        mode = check_mode(self.mode, geo.radius, caller)
        d, D, r = geo.dim, geo.diameter, geo.radius
        B = L * D if self.bound is None else check_real(self.bound, "bound", low=0.0,
                                                        low_open=True, caller=caller)
        factor = 2.0 + (D / r if mode == "shrink" else 0.0)
        zeta = math.sqrt(D * d * B / (L * factor)) / T ** 0.25 if self.zeta is None else \
            check_real(self.zeta, "zeta", low=0.0, low_open=True, caller=caller)
        zeta = clip_zeta(zeta, r, mode, caller)
        G = d * B / zeta
        eta = D / (G * math.sqrt(T)) if self.eta is None else check_real(
            self.eta, "eta", low=0.0, low_open=True, caller=caller)
        _check_step(caller, self, zeta=zeta, eta=eta)
        return {"T": T, "eta": eta, "zeta": zeta, "mode": mode,
                "alpha": zeta / r if mode == "shrink" else 0.0, "bound": B, "lipschitz": L,
                "diameter": D, "radius": r, "dim": d, "ambient_dim": int(self.polytope.dim),
                "geometry": geo}

    def _project(self, y: np.ndarray) -> np.ndarray:
        P = self.polytope
        if isinstance(P, Box):
            return _project_box(y, P.lo, P.hi)
        assert isinstance(P, Simplex)
        if not P.full:
            x = np.maximum(y, 0.0)
            if float(x.sum()) <= P.scale:
                return x
        return _project_simplex(y, P.scale)

    def _reset(self) -> None:
        super()._reset()
        p = self._resolved
        self._geo = p["geometry"]
        self._spheres = SphereStream(self._geo.basis, as_generator(self.rng))
        self._x = self._geo.center.copy()
        self._u = np.zeros(self._geo.basis.shape[0])
        self._scale = p["dim"] / p["zeta"]

    def _select(self) -> np.ndarray:
        p = self._resolved
        _, self._u = self._spheres.next(1024)
        return played_point(self._geo, p["mode"], p["alpha"], self._x, p["zeta"], self._u)

    def _exploration(self) -> Exploration:
        p = self._resolved
        return exploration_law(self._geo, p["mode"], p["alpha"], self._x, p["zeta"])

    def _update(self, value: float) -> None:
        p = self._resolved
        self._x = self._project(self._x - (p["eta"] * self._scale * value) * self._u)
