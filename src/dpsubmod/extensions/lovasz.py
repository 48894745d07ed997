r"""The Lovász extension of a set function, its chain subgradient, and threshold rounding.

For a set function :math:`f` on ``range(n)`` and :math:`x \in [0, 1]^n`, sort the coordinates in
decreasing order, :math:`x_{\pi(1)} \ge \dots \ge x_{\pi(n)}`, and let
:math:`B_k = \{\pi(1), \dots, \pi(k)\}` be the chain of the order (:math:`B_0 = \emptyset`). The
Lovász extension is

.. math::

    f_L(x) = \sum_{k=0}^{n} \mu_k f(B_k), \qquad
    \mu_0 = 1 - x_{\pi(1)},\ \mu_k = x_{\pi(k)} - x_{\pi(k+1)},\ \mu_n = x_{\pi(n)},

equivalently :math:`f_L(x) = \mathbb{E}_U f(\{e : x_e \ge U\})` with :math:`U \sim U(0, 1)`, and
equivalently :math:`f_L(x) = f(\emptyset) + g^\top x` with the chain vector
:math:`g_{\pi(k)} = f(B_k) - f(B_{k-1})`.

No normalisation :math:`f(\emptyset) = 0` is assumed: :math:`f_L` is the (positively homogeneous)
Lovász extension of :math:`f - f(\emptyset)` plus the constant :math:`f(\emptyset)`, so
:math:`f_L(\chi_S) = f(S)` for every set ``S``. It is convex exactly when ``f`` is submodular
(Lovász 1983), and then ``g`` is a subgradient at ``x`` (Edmonds' greedy vertex of the base
polytope :math:`B(f - f(\emptyset))` for the direction ``x``).

References
----------
L. Lovász, "Submodular functions and convexity", Mathematical Programming: The State of the Art,
1983. F. Bach, "Learning with submodular functions: a convex optimization perspective",
Foundations and Trends in Machine Learning 6(2-3), 2013, Sections 3.1 and 3.2. A. Cardoso and
R. Cummings, "Differentially private online submodular optimization", arXiv 2018, Definition 6 and
Lemma 2 (the chain subgradient used by private online minimization).
"""

from __future__ import annotations

import numpy as np

from .._rng import RNGLike, as_generator
from .._validation import check_finite
from ..errors import GroundSetMismatchError, ParameterTypeError, ValidationError
from ..functions.base import SetFunction


def _check_f(f: object, caller: str) -> SetFunction:
    if not isinstance(f, SetFunction):
        raise ParameterTypeError(
            f"The 'f' parameter of {caller} must be a dpsubmod SetFunction; got "
            f"{type(f).__name__}. Wrap your function in a family from dpsubmod.functions or "
            "subclass SetFunction."
        )
    return f


def _check_x(x: object, n: int | None, caller: str) -> np.ndarray:
    """``x`` as a float64 vector in ``[0, 1]^n`` (``n`` taken from ``x`` when None)."""
    a = check_finite(x, "x", caller=caller, ndim=1).astype(np.float64)
    if n is not None and a.shape != (n,):
        raise GroundSetMismatchError(
            f"The 'x' argument of {caller} must have shape ({n},), one coordinate per element of "
            f"the ground set of f; got shape {a.shape}."
        )
    if a.size and (a.min() < 0.0 or a.max() > 1.0):
        raise ValidationError(
            f"The 'x' argument of {caller} must lie in [0, 1]^n; its entries range over "
            f"[{a.min()!r}, {a.max()!r}]. Clip it with numpy.clip(x, 0, 1) first."
        )
    return a


def _decreasing_order(x: np.ndarray) -> np.ndarray:
    # A stable sort of -x puts equal coordinates in increasing index order, so ties are broken
    # deterministically (and independently of the sort implementation).
    return np.argsort(-x, kind="stable")


def _weights(xs: np.ndarray) -> np.ndarray:
    """Chain weights ``mu`` (length ``m + 1``) of coordinates ``xs`` sorted decreasingly.

    Every ``mu_k`` is a difference of sorted floats, hence exactly >= 0; tied steps get exactly 0.
    """
    mu = np.empty(xs.size + 1)
    if xs.size == 0:
        mu[0] = 1.0
        return mu
    mu[0] = 1.0 - xs[0]
    mu[1:-1] = xs[:-1] - xs[1:]
    mu[-1] = xs[-1]
    return mu


def lovasz_value(f: SetFunction, x: object) -> float:
    r"""The Lovász extension :math:`f_L(x)` of ``f`` at ``x`` in :math:`[0, 1]^n`.

    :math:`f_L(x) = \sum_k \mu_k f(B_k)` over the chain of ``x`` sorted decreasingly (module
    docstring), which equals :math:`\mathbb{E}_U f(\{e : x_e \ge U\})`. Only the chain down to the
    last positive coordinate is needed (later sets carry weight 0), so this costs
    ``1 + #{e : x_e > 0}`` evaluations: ``|S| + 1`` on an indicator vector, at most ``n + 1``.

    Parameters
    ----------
    f : SetFunction
        Any set function (submodularity is not required to evaluate the extension; it is convex
        exactly when ``f`` is submodular). ``f(empty)`` need not be 0.
    x : array-like of float, shape (n,)
        A point of the cube :math:`[0, 1]^n`.

    Returns
    -------
    float
        :math:`f_L(x)`; equals ``f(S)`` when ``x`` is the indicator vector of ``S``. The value does
        not depend on how ties in ``x`` are ordered (tied steps carry weight 0).

    Raises
    ------
    ParameterTypeError
        ``f`` is not a SetFunction.
    ValidationError
        ``x`` has the wrong shape, non-finite entries, or entries outside [0, 1].

    References
    ----------
    Lovász (1983); Bach (2013), Section 3.1; Cardoso and Cummings (2018), Definition 6.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsubmod.functions.base import SetFunction
    >>> class Sqrt(SetFunction):
    ...     def _value(self, mask):
    ...         return float(np.sqrt(mask.sum()))
    >>> round(lovasz_value(Sqrt(2), [1.0, 0.5]), 6)   # 0.5 f({0}) + 0.5 f({0, 1})
    1.207107
    """
    f = _check_f(f, "lovasz_value")
    x = _check_x(x, f.n, "lovasz_value")
    order = _decreasing_order(x)
    order = order[: int(np.count_nonzero(x > 0.0))]
    vals = f.chain_values(order)
    # A convex combination of chain values: exact on indicator vectors (weights 0 and 1) and free
    # of the cancellation in f(empty) + g.x.
    return float(_weights(x[order]) @ vals)


def lovasz_subgradient(f: SetFunction, x: object) -> tuple[float, np.ndarray]:
    r"""The Lovász extension at ``x`` and its chain (Edmonds greedy) subgradient.

    Sorts ``x`` decreasingly (ties broken by increasing index, so the output is deterministic),
    evaluates ``f`` on the chain :math:`B_0 \subset B_1 \subset \dots \subset B_n` in one call
    (:meth:`~dpsubmod.functions.SetFunction.chain_values`), and returns ``g`` with
    :math:`g_{\pi(k)} = f(B_k) - f(B_{k-1})`. Costs exactly ``n + 1`` evaluations (the chain
    values), counted in ``f.evaluations``.

    When ``f`` is submodular, ``g`` is a vertex of the base polytope of :math:`f - f(\emptyset)`
    maximising :math:`s \mapsto s^\top x`, hence a subgradient:
    :math:`f_L(y) \ge f_L(x) + g^\top (y - x)` for all ``y`` in the cube, and
    :math:`f_L(x) = f(\emptyset) + g^\top x`. With ties in ``x`` every order of the tied
    coordinates gives such a vertex, so the result is a valid subgradient for any tie order; the
    index order is only a deterministic choice among them (Cardoso and Cummings 2018, Lemma 2: "any
    maximal chain associated with x"). For a non-submodular ``f`` the vector is still the chain
    vector, but it need not be a subgradient.

    Parameters
    ----------
    f : SetFunction
        The set function; ``f(empty)`` need not be 0.
    x : array-like of float, shape (n,)
        A point of the cube :math:`[0, 1]^n`.

    Returns
    -------
    value : float
        :math:`f_L(x)`, the same number :func:`lovasz_value` returns.
    subgradient : ndarray of float64, shape (n,)
        The chain vector ``g``.

    Raises
    ------
    ParameterTypeError
        ``f`` is not a SetFunction.
    ValidationError
        ``x`` has the wrong shape, non-finite entries, or entries outside [0, 1].

    References
    ----------
    J. Edmonds, "Submodular functions, matroids, and certain polyhedra", 1970 (the greedy vertex);
    Bach (2013), Sections 3.1-3.2; Cardoso and Cummings (2018), Lemma 2.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsubmod.functions.base import SetFunction
    >>> class Sqrt(SetFunction):
    ...     def _value(self, mask):
    ...         return float(np.sqrt(mask.sum()))
    >>> value, g = lovasz_subgradient(Sqrt(2), [0.5, 1.0])
    >>> g.round(4).tolist()     # element 1 first: f({1}) - f({}), then f({0, 1}) - f({1})
    [0.4142, 1.0]
    """
    f = _check_f(f, "lovasz_subgradient")
    x = _check_x(x, f.n, "lovasz_subgradient")
    order = _decreasing_order(x)
    vals = f.chain_values(order)
    g = np.empty(f.n)
    g[order] = np.diff(vals)
    return float(_weights(x[order]) @ vals), g


def threshold_round(x: object, *, rng: RNGLike = None) -> np.ndarray:
    r"""Round ``x`` in :math:`[0, 1]^n` to a random set by one uniform threshold.

    Returns :math:`S = \{e : x_e \ge U\}` with a single :math:`U \sim U(0, 1]` shared by all
    coordinates, so ``S`` is always one of the chain sets of ``x``, element ``e`` is in ``S`` with
    probability exactly ``x_e`` (``x_e = 1`` always in, ``x_e = 0`` never), and for every set
    function :math:`\mathbb{E}[f(S)] = f_L(x)`: rounding adds no expected loss to a point of the
    Lovász extension (Cardoso and Cummings 2018, Algorithm 1 and Definition 6).

    Parameters
    ----------
    x : array-like of float, shape (n,)
        A point of the cube :math:`[0, 1]^n`.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, default=None
        Source of the threshold (one draw). ``None`` draws fresh OS entropy; a ``Generator`` is
        used as given (its stream advances by one double).

    Returns
    -------
    ndarray of bool, shape (n,)
        The mask of ``S`` (pass it straight to ``f(S)``).

    Raises
    ------
    ValidationError
        ``x`` is not a finite vector in [0, 1]^n (raised before anything is drawn).

    Examples
    --------
    >>> threshold_round([1.0, 0.0, 0.5], rng=0).tolist()
    [True, False, True]
    """
    x = _check_x(x, None, "threshold_round")
    gen = as_generator(rng)
    # 1 - U[0, 1) lies in (0, 1], which keeps the coordinates equal to 0 out with certainty.
    return _threshold_set(x, 1.0 - gen.random())


def _threshold_set(x: np.ndarray, u: float) -> np.ndarray:
    """The set ``{e : x_e >= u}`` (the deterministic part of :func:`threshold_round`)."""
    return x >= u
