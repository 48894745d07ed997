"""k-label facility location: k-resource facility location (Rafiey and Yoshida 2020, Ex. 5.2)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._rng import as_generator
from ..._validation import check_finite, check_real
from ...errors import ValidationError
from .base import KSubmodularFunction, KSubmodularState


class _KFacilityState(KSubmodularState):
    """Keeps ``best[i, c]``, the best label-i similarity of client c to an opened facility."""

    def __init__(self, f: KFacilityLocation):
        self.f = f
        self.x = np.zeros(f.n, dtype=np.int64)
        self.mask = np.zeros(f.n, dtype=bool)
        self.selected = []
        self.best = np.zeros((f.k, f.n_clients))
        self.value = 0.0

    def _gains(self, items: np.ndarray) -> np.ndarray:
        s = self.f.similarities[:, :, items]                      # (k, N, m)
        g = np.maximum(s - self.best[:, :, None], 0.0).sum(axis=1)  # (k, m)
        return g.T * self.f._scale

    def _add(self, e: int, label: int) -> None:
        i = label - 1
        new = np.maximum(self.best[i], self.f.similarities[i, :, e])
        self.value += float((new - self.best[i]).sum()) * self.f._scale
        self.best[i] = new


class KFacilityLocation(KSubmodularFunction):
    r"""k-label facility location: open facilities of ``k`` types at distinct locations.

    .. math::

        F(\mathbf x) = \frac{1}{N} \sum_{c=1}^{N} \sum_{i=1}^{k} \max_{e : x_e = i} s_i(c, e),

    with ``max`` over an empty set equal to 0. Location ``e`` hosts at most one facility (one
    label); a client ``c`` is served in resource ``i`` by its most similar type-``i`` facility.
    This is Example 5.2 of Rafiey and Yoshida (2020) ("k-resource facility location") with
    similarities ``s_i(c, e) = C - c_i(c, e)`` for costs ``c_i`` in ``[0, C]``, and with
    the cost of an unserved client defined as ``c_i(c, empty) = C`` so that ``F >= 0`` and
    ``F(0) = 0`` (the paper leaves it undefined; seed 004 note, item 12).

    **Monotone k-submodular**: ``F`` is a sum over labels of monotone submodular facility-location
    functions of the disjoint sets ``X_i``, and such a sum is monotone (gains are non-negative)
    and orthant submodular (a label-i gain depends only on ``X_i`` and shrinks as it grows), hence
    k-submodular (Ward and Zivny 2014).

    Parameters
    ----------
    similarities : array-like of shape (k, N, n)
        ``similarities[i, c, e]`` = ``s_{i+1}(c, e) >= 0``.
    max_similarity : float, optional
        A public upper bound ``C`` on every similarity. When given, the data are checked against
        it and the sensitivity is declared (below); otherwise none is declared.
    average : bool, default=True
        Divide by the number of clients ``N`` (otherwise sum over clients).

    Attributes
    ----------
    sensitivity : float or None
        ``k C / N`` (``k C`` when ``average=False``) under **replace one client**: a client's
        ``k`` similarity rows (one per resource) form one record, and its term of ``F`` lies in
        ``[0, k C]`` at every selection.

    References
    ----------
    A. Rafiey and Y. Yoshida. Fast and private submodular and k-submodular functions maximization
    with matroid constraints. ICML 2020, Example 5.2.

    Examples
    --------
    >>> import numpy as np
    >>> f = KFacilityLocation.from_costs(np.array([[[0.0, 2.0]], [[2.0, 1.0]]]), max_cost=2.0)
    >>> f([1, 2])    # item 0 opens resource 1 (cost 0), item 1 resource 2 (cost 1)
    3.0
    """

    neighbouring = "replace one client (its k similarity rows)"

    def __init__(self, similarities: Any, *, max_similarity: float | None = None,
                 average: bool = True):
        name = type(self).__name__
        s = check_finite(similarities, "similarities", caller=name, ndim=3, nonnegative=True,
                         dtype=np.float64)
        k, n_clients, n = s.shape
        if k < 1 or n_clients < 1:
            raise ValidationError(
                f"The 'similarities' argument of {name} must have shape (k, N, n) with k >= 1 and "
                f"N >= 1 clients; got {s.shape}."
            )
        sens = None
        if max_similarity is not None:
            max_similarity = check_real(max_similarity, "max_similarity", low=0.0,
                                        low_open=True, caller=name)
            if s.size and s.max() > max_similarity:
                raise ValidationError(
                    f"The 'similarities' of {name} exceed the declared bound max_similarity="
                    f"{max_similarity!r} (largest {s.max()!r}); pass a bound that holds for every "
                    "possible record, or clip the data to it."
                )
            sens = k * max_similarity / (n_clients if average else 1)
            if not 0.0 < sens < math.inf:
                raise ValidationError(
                    f"The 'max_similarity' parameter of {name} is {max_similarity!r}: the "
                    f"sensitivity k * max_similarity / N it gives is {sens!r}, outside "
                    "floating-point range. Rescale the similarities so that the bound lies "
                    "between about 1e-300 and 1e300."
                )
        super().__init__(n, k, sensitivity=sens, data_model="monotone-records")
        self.similarities = s
        self.n_clients = n_clients
        self.max_similarity = max_similarity
        self.average = bool(average)
        self._scale = 1.0 / n_clients if average else 1.0

    @classmethod
    def from_costs(cls, costs: Any, max_cost: float, *, average: bool = True
                   ) -> KFacilityLocation:
        """Build from costs ``c_i(c, e)`` in ``[0, max_cost]`` (Example 5.2): ``s = C - c``.

        Parameters
        ----------
        costs : array-like of shape (k, N, n)
            ``costs[i, c, e]``: cost of serving client ``c`` with resource ``i + 1`` from a
            facility at ``e``.
        max_cost : float
            The public constant ``C`` (cost of an unserved client), at least every cost.
        """
        max_cost = check_real(max_cost, "max_cost", low=0.0, low_open=True,
                              caller="KFacilityLocation.from_costs")
        c = check_finite(costs, "costs", caller="KFacilityLocation.from_costs", ndim=3,
                         nonnegative=True, dtype=np.float64)
        if c.size and c.max() > max_cost:
            raise ValidationError(
                f"The 'costs' of KFacilityLocation.from_costs exceed max_cost={max_cost!r} "
                f"(largest {c.max()!r}); C must bound every cost."
            )
        return cls(max_cost - c, max_similarity=max_cost, average=average)

    @classmethod
    def from_records(cls, clients: Any, locations: Any, bandwidths: Any, *,
                     average: bool = True) -> KFacilityLocation:
        """Gaussian-kernel similarities, one bandwidth per resource type.

        ``s_i(c, e) = exp(-||p_c - q_e||^2 / (2 h_i^2))`` in ``(0, 1]``, so ``C = 1`` and the
        sensitivity is ``k / N`` (replace one client).

        Parameters
        ----------
        clients : array-like of shape (N, d)
            Client positions (the private records).
        locations : array-like of shape (n, d)
            Candidate facility locations (public).
        bandwidths : array-like of shape (k,)
            Positive kernel widths ``h_i``, one per resource type.
        """
        caller = "KFacilityLocation.from_records"
        p = check_finite(clients, "clients", caller=caller, ndim=2, dtype=np.float64)
        q = check_finite(locations, "locations", caller=caller, ndim=2, dtype=np.float64)
        h = check_finite(bandwidths, "bandwidths", caller=caller, ndim=1, dtype=np.float64)
        if p.shape[1] != q.shape[1]:
            raise ValidationError(
                f"The 'clients' and 'locations' of {caller} must have the same number of "
                f"coordinates; got {p.shape[1]} and {q.shape[1]}."
            )
        if h.size < 1 or h.min() <= 0:
            raise ValidationError(f"The 'bandwidths' of {caller} must be positive, one per label.")
        d2 = ((p[:, None, :] - q[None, :, :]) ** 2).sum(axis=2)   # (N, n)
        s = np.exp(-d2[None, :, :] / (2.0 * h[:, None, None] ** 2))
        return cls(s, max_similarity=1.0, average=average)

    def _value(self, x: np.ndarray) -> float:
        total = 0.0
        for i in range(self.k):
            cols = np.flatnonzero(x == i + 1)
            if cols.size:
                total += float(self.similarities[i][:, cols].max(axis=1).sum())
        return total * self._scale

    def state(self) -> KSubmodularState:
        return _KFacilityState(self)

    def replace_client(self, c: int, rows: Any) -> KFacilityLocation:
        """A neighbouring instance with client ``c``'s ``k`` similarity rows replaced by ``rows``
        (shape ``(k, n)``, values in ``[0, max_similarity]``)."""
        if self.max_similarity is None:
            raise ValidationError(
                "KFacilityLocation declares no max_similarity, so it has no neighbouring relation; "
                "build it with max_similarity=, from_costs or from_records."
            )
        c = int(np.asarray(c))
        if not 0 <= c < self.n_clients:
            raise ValidationError(
                f"The client index 'c' must be in 0..{self.n_clients - 1}; got {c}."
            )
        r = check_finite(rows, "rows", caller="KFacilityLocation.replace_client", ndim=2,
                         nonnegative=True, dtype=np.float64)
        if r.shape != (self.k, self.n):
            raise ValidationError(
                f"The 'rows' must have shape ({self.k}, {self.n}); got {r.shape}."
            )
        s = self.similarities.copy()
        s[:, c, :] = r
        return type(self)(s, max_similarity=self.max_similarity, average=self.average)

    def neighbour(self, rng: Any = None) -> KFacilityLocation:
        """Replace one uniformly chosen client's rows with uniform values in ``[0, C]``."""
        gen = as_generator(rng)
        if self.max_similarity is None:
            return self.replace_client(0, np.zeros((self.k, self.n)))  # raises the clear error
        c = int(gen.integers(self.n_clients))
        return self.replace_client(c, gen.uniform(0.0, self.max_similarity, (self.k, self.n)))
