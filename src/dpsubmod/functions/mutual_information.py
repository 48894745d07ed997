"""Mutual information between selected discrete features and a label (feature selection)."""

from __future__ import annotations

import numpy as np
from scipy.special import xlogy

from .._rng import RNGLike, as_generator
from .._validation import check_finite, check_int
from ..errors import ParameterTypeError, ValidationError
from .base import FunctionState, SetFunction

#: Largest joint-code space (candidates x codes x alphabet x labels) handled in one block.
_KEY_LIMIT = 1 << 62


def _xlogx(c: np.ndarray) -> np.ndarray:
    """``c log c`` with ``0 log 0 = 0``."""
    c = np.asarray(c, dtype=np.float64)
    return xlogy(c, c)


def _unit_move(c: int) -> float:
    r"""``D(c) = c log c - (c-1) log(c-1)`` (``D(1) = 0``), without cancellation for large c."""
    if c <= 1:
        return 0.0
    return float(np.log(c) + (c - 1) * np.log1p(1.0 / (c - 1)))


class MutualInformation(SetFunction):
    r"""Plug-in mutual information :math:`f(S) = \hat I(X_S; Y)` for feature selection.

    ``X`` holds ``N`` records of ``n`` discrete features and ``y`` their labels; :math:`\hat I`
    is the mutual information (in nats) of the **empirical** joint distribution of the selected
    features :math:`X_S` (as one discrete variable) and the label. Choosing ``S`` to maximise it
    picks the features that together say most about the label (Krause and Guestrin).

    With counts :math:`n_x`, :math:`n_y`, :math:`n_{xy}` of the values of :math:`X_S`, ``Y`` and
    the pair, and :math:`\phi(c) = c\log c`,

    .. math:: N \hat I(X_S;Y) = N\log N - \sum_y \phi(n_y) - \sum_x \phi(n_x) + \sum_{x,y}
              \phi(n_{xy}).

    **Monotone** (``monotone = True``): by the chain rule, applied to the empirical distribution,
    :math:`\hat I(X_{S \cup j}; Y) = \hat I(X_S; Y) + \hat I(X_j; Y \mid X_S) \ge \hat I(X_S;Y)`.

    **Not submodular in general** (``submodular = False``): with ``Y = X_1 XOR X_2`` on the four
    rows of ``{0,1}^2``, each feature alone carries 0 nats and both together ``log 2``, so the
    gain of :math:`X_2` grows from 0 to ``log 2`` once :math:`X_1` is chosen. It is submodular
    when the features are conditionally independent given ``Y`` (then :math:`I(X_S;Y) =
    H(X_S) - \sum_{j \in S} H(X_j \mid Y)`, entropy minus a modular term; Krause and Guestrin
    2005), but that holds for a model distribution, not for the empirical one, and the exact
    mutual information of a naive-Bayes model costs time exponential in ``|S|``; it is not
    offered. Greedy on this objective is therefore a heuristic without the ``1 - 1/e``
    guarantee (Mitrovic et al. 2017 use it the same way).

    Parameters
    ----------
    X : array-like of int, shape (N, n)
        Discrete features: integer (or integral float, or bool) category codes; any values, they
        are re-encoded per column. Discretise continuous features first, with public bins.
    y : array-like of int, shape (N,)
        Discrete labels.
    sensitivity : float, optional
        Declared sensitivity, passed through (see :meth:`from_records` for the derived one).

    Attributes
    ----------
    n_records : int
    X, y : ndarray of int64
        The data as given (after the integer check).

    Notes
    -----
    Gains of all candidates come from one vectorised pass: the rows are grouped by the joint
    code of the current selection, each candidate's column is appended to that code (with a
    per-candidate offset so all candidates share one counting pass), and the counts of codes and
    of (code, label) pairs give every candidate's :math:`\sum\phi(n_{xy}) - \sum\phi(n_x)`.

    References
    ----------
    Krause, A. and Guestrin, C. (2005). Near-optimal nonmyopic value of information in graphical
    models. UAI.
    Mitrovic, M., Bun, M., Krause, A. and Karbasi, A. (2017). Differentially private submodular
    maximization: data summarization in disguise. ICML.

    Examples
    --------
    >>> f = MutualInformation([[0, 0], [0, 1], [1, 0], [1, 1]], [0, 1, 1, 0])
    >>> f([0]), f([1]), round(f([0, 1]), 6)
    (0.0, 0.0, 0.693147)
    """

    monotone = True
    submodular = False

    def __init__(self, X: object, y: object, *, sensitivity: float | None = None):
        caller = "MutualInformation"
        Xr = _integer_array(X, "X", 2, caller)
        yr = _integer_array(y, "y", 1, caller)
        N, n = Xr.shape
        if N == 0 or n == 0:
            raise ValidationError(
                f"The 'X' argument of {caller} needs at least one row and one column; got shape "
                f"{Xr.shape}."
            )
        if yr.shape != (N,):
            raise ValidationError(
                f"The 'y' argument of {caller} must have one label per row of X ({N}); got "
                f"shape {yr.shape}."
            )
        super().__init__(n, sensitivity=sensitivity)
        self.X, self.y = Xr, yr
        self.n_records = N
        codes = np.empty((N, n), dtype=np.int64)
        alph = np.empty(n, dtype=np.int64)
        for j in range(n):
            vals, codes[:, j] = np.unique(Xr[:, j], return_inverse=True)
            alph[j] = vals.size
        labels, ycode = np.unique(yr, return_inverse=True)
        if N * int(alph.max()) * labels.size >= _KEY_LIMIT:
            raise ValidationError(
                f"The data given to {caller} have too many categories for the joint counting "
                f"(N x largest alphabet x labels >= 2**62); merge rare categories first."
            )
        self._codes = codes
        self._alphabet = alph
        self._kmax = int(alph.max())
        self._labels = ycode.astype(np.int64)
        self._n_labels = int(labels.size)
        # T(S) = sum phi(n_xy) - sum phi(n_x); at S = {} X_S is constant, so T0 gives I = 0.
        self._T0 = float(_xlogx(np.bincount(self._labels)).sum() - _xlogx(N))
        self._from_records = False

    # -- privacy ----------------------------------------------------------------------------------
    @staticmethod
    def replace_one_sensitivity(n_records: int) -> float:
        r"""Largest change of the plug-in :math:`\hat I(X_S;Y)` when one of ``N`` rows is replaced.

        Returns :math:`B(N)/N` with :math:`B(N) = D(\lfloor (N+1)/2 \rfloor) +
        D(\lceil (N+1)/2 \rceil)` and :math:`D(c) = c\log c - (c-1)\log(c-1) = \log c +
        (c-1)\log\frac{c}{c-1}` (``D(1) = 0``), valid for every ``S`` and every replacement
        (new values may lie outside the observed alphabets). About
        :math:`2(\log\frac{N+1}{2} + 1)/N` nats.

        Derivation. Write :math:`-\sum\phi(c)` for a count vector. Replacing one row moves one
        unit of count from cell ``a`` to cell ``b`` and changes :math:`-\sum\phi` by
        :math:`D(c_a) - D(c_b + 1)`, where :math:`D(c) = \phi(c) - \phi(c-1)` is increasing and
        concave on the integers ``c >= 1`` with ``D(1) = 0``. Replace row ``(x, y)`` by
        ``(x', y')`` with ``x != x'`` and ``y != y'``; all three count vectors (of ``Y``,
        :math:`X_S` and the pair) move, and from the display in the class docstring

        .. math:: N\Delta\hat I = [D(n_y) + D(n_x) - D(n_{xy})] - [D(n'_{y'}) + D(n'_{x'})
                  - D(n'_{x'y'})],

        where unprimed counts are those of the old data set (they include the removed row) and
        primed ones those of the new data set (they include the added row). Each bracket has the
        form :math:`D(a) + D(b) - D(c)` with :math:`1 \le c \le \min(a, b)` and
        :math:`a + b - c \le N` (rows with ``X = x`` or ``Y = y`` are at most ``N``). It is
        :math:`\ge D(a) \ge 0` because ``D`` increases, and at most
        :math:`\max_s D(\lfloor s/2 \rfloor) + D(\lceil s/2 \rceil) - D(\max(1, s - N))` over
        ``s = a + b`` (for a fixed sum, concavity puts the maximum at the balanced split). This is
        nondecreasing for ``s <= N + 1`` (``c = 1``) and nonincreasing for ``N + 1 <= s <= 2N``
        (the ``D`` increment at ``s/2`` is at most the one at ``s - N <= s/2``), so the maximum
        is ``B(N)`` at ``s = N + 1``. Both brackets lie in ``[0, B(N)]``, so
        :math:`|N\Delta\hat I| \le B(N)`. If only ``x`` changes (``y = y'``), the ``Y`` counts
        do not move and :math:`N\Delta\hat I = [D(n_x) - D(n_{xy})] - [D(n'_{x'}) -
        D(n'_{x'y})]`, each bracket in ``[0, D(N)]``, and ``D(N) <= B(N)`` (the ``s = 2N`` case
        above); the case ``x = x'`` is symmetric. The bound is attained when the removed row
        ``(x, y)`` has ``n_x = n_y`` about ``(N+1)/2``, ``n_xy = 1`` and ``n_x + n_y - 1 = N``,
        and the new row takes values seen nowhere else. It is about 2/3 of the naive sum of three
        entropy sensitivities, :math:`3 D(N)/N` (each plug-in entropy moves by at most
        :math:`D(N)/N`, attained by splitting one row off a constant column).

        Parameters
        ----------
        n_records : int
            ``N``, the number of rows (fixed under replacement), at least 1.

        Returns
        -------
        float
            The sensitivity in nats.
        """
        N = check_int(n_records, "n_records", low=1,
                      caller="MutualInformation.replace_one_sensitivity")
        a = (N + 1) // 2
        return (_unit_move(a) + _unit_move(N + 1 - a)) / N

    @classmethod
    def from_records(cls, X: object, y: object) -> MutualInformation:
        """Mutual information of private records ``(X[i], y[i])`` with a derived sensitivity.

        Neighbouring relation: replace one row ``(X[i], y[i])`` by any other row (any values),
        ``N`` fixed. Declared ``sensitivity = replace_one_sensitivity(N)`` (see there for the
        derivation), ``data_model = "general"`` (mutual information is not a sum of per-record
        terms).

        Parameters
        ----------
        X : array-like of int, shape (N, n), N >= 2
        y : array-like of int, shape (N,)

        Returns
        -------
        MutualInformation
        """
        f = cls(X, y)
        if f.n_records < 2:
            raise ValidationError(
                "MutualInformation.from_records needs at least 2 records (with one record the "
                "mutual information is always 0)."
            )
        f.sensitivity = cls.replace_one_sensitivity(f.n_records)
        f._from_records = True
        return f

    def neighbour(self, rng: RNGLike = None, *, index: int | None = None, row: object = None,
                  label: int | None = None) -> MutualInformation:
        """The same objective with one record replaced (replace-one relation).

        Parameters
        ----------
        rng : int, Generator or None, default=None
            Used only for what is not given: the index (uniform), each feature of the new row
            (uniform over that column's observed values) and the new label (uniform over the
            observed labels).
        index : int, optional
        row : array-like of int, shape (n,), optional
        label : int, optional
        """
        if not self._from_records:
            return super().neighbour(rng)
        caller = "MutualInformation.neighbour"
        N, n = self.X.shape
        if index is not None:
            index = check_int(index, "index", low=0, high=N - 1, caller=caller)
        if row is not None:
            row = _integer_array(row, "row", 1, caller)
            if row.shape != (n,):
                raise ValidationError(
                    f"The 'row' argument of {caller} must have shape ({n},); got {row.shape}."
                )
        if label is not None:
            label = check_int(label, "label", caller=caller)
        gen = as_generator(rng)
        if index is None:
            index = int(gen.integers(N))
        if row is None:
            pick = (gen.random(n) * self._alphabet).astype(np.int64)
            row = np.array([np.unique(self.X[:, j])[pick[j]] for j in range(n)])
        if label is None:
            labels = np.unique(self.y)
            label = int(labels[gen.integers(labels.size)])
        X2, y2 = self.X.copy(), self.y.copy()
        X2[index], y2[index] = row, label
        return type(self).from_records(X2, y2)

    # -- evaluation -------------------------------------------------------------------------------
    def _extend(self, code: np.ndarray, j: int) -> tuple[np.ndarray, int]:
        """Joint code of (current code, feature j), re-compacted to ``0..K-1``."""
        raw = code * self._alphabet[j] + self._codes[:, j]
        vals, new = np.unique(raw, return_inverse=True)
        return new.astype(np.int64, copy=False), int(vals.size)

    def _T(self, code: np.ndarray, n_codes: int) -> float:
        cx = np.bincount(code, minlength=n_codes)
        cxy = np.bincount(code * self._n_labels + self._labels, minlength=n_codes * self._n_labels)
        return float(_xlogx(cxy).sum() - _xlogx(cx).sum())

    def _T_candidates(self, code: np.ndarray, n_codes: int, cand: np.ndarray) -> np.ndarray:
        """``T(S + j)`` for every candidate ``j`` in one counting pass per block of candidates."""
        N, L, Km = self.n_records, self._n_labels, self._kmax
        width = n_codes * Km  # code space of (code, x_j) for one candidate
        per_cand = width * L
        step = max(1, min((1 << 22) // N, _KEY_LIMIT // per_cand))
        out = np.empty(cand.size)
        for s in range(0, cand.size, step):
            cj = cand[s:s + step]
            m = cj.size
            key = code[:, None] * Km + self._codes[:, cj]
            key += (np.arange(m, dtype=np.int64) * width)[None, :]
            keyy = (key * L + self._labels[:, None]).ravel()
            key = key.ravel()
            if m * per_cand <= max(8 * key.size, 1 << 16):
                sx = _xlogx(np.bincount(key, minlength=m * width)).reshape(m, width).sum(axis=1)
                sxy = _xlogx(np.bincount(keyy, minlength=m * per_cand)).reshape(m, per_cand
                                                                                ).sum(axis=1)
            else:
                u, c = np.unique(key, return_counts=True)
                sx = np.bincount(u // width, weights=_xlogx(c), minlength=m)
                u, c = np.unique(keyy, return_counts=True)
                sxy = np.bincount(u // per_cand, weights=_xlogx(c), minlength=m)
            out[s:s + m] = sxy - sx
        return out

    def _code_of(self, mask: np.ndarray) -> tuple[np.ndarray, int]:
        code, k = np.zeros(self.n_records, dtype=np.int64), 1
        for j in np.flatnonzero(mask):
            code, k = self._extend(code, int(j))
        return code, k

    def _value(self, mask: np.ndarray) -> float:
        if not mask.any():
            return 0.0
        return (self._T(*self._code_of(mask)) - self._T0) / self.n_records

    def _chain_values(self, order: np.ndarray) -> np.ndarray:
        """One code extension per step; once every row has its own code, adding features can
        split nothing more, so the rest of the chain keeps that value."""
        N = self.n_records
        out = np.zeros(order.size + 1)
        code, k = np.zeros(N, dtype=np.int64), 1
        for i, e in enumerate(order.tolist(), start=1):
            code, k = self._extend(code, int(e))
            out[i] = (self._T(code, k) - self._T0) / N
            if k == N:
                out[i + 1:] = out[i]
                break
        return out

    def state(self) -> FunctionState:
        return _MutualInformationState(self)


def _integer_array(a: object, name: str, ndim: int, caller: str) -> np.ndarray:
    arr = check_finite(a, name, caller=caller, ndim=ndim)
    if arr.dtype == np.bool_ or np.issubdtype(arr.dtype, np.integer):
        return arr.astype(np.int64)
    if np.issubdtype(arr.dtype, np.floating):
        if arr.size and not np.array_equal(arr, np.round(arr)):
            raise ValidationError(
                f"The '{name}' argument of {caller} must hold integer category codes; it has "
                "non-integral values. Discretise continuous data first (with public bins)."
            )
        return arr.astype(np.int64)
    raise ParameterTypeError(
        f"The '{name}' argument of {caller} must hold integer category codes; got dtype "
        f"{arr.dtype}."
    )


class _MutualInformationState(FunctionState):
    """Joint code of the selected features per row, and ``T(S)``."""

    f: MutualInformation

    def __init__(self, f: MutualInformation):
        super().__init__(f)
        self.code = np.zeros(f.n_records, dtype=np.int64)
        self.n_codes = 1
        self.T = f._T0

    def _gains(self, cand: np.ndarray) -> np.ndarray:
        f = self.f
        out = (f._T_candidates(self.code, self.n_codes, cand) - self.T) / f.n_records
        out[self.mask[cand]] = 0.0
        return out

    def _add(self, e: int) -> None:
        f = self.f
        self.code, self.n_codes = f._extend(self.code, e)
        self.T = f._T(self.code, self.n_codes)
        self.value = (self.T - f._T0) / f.n_records
