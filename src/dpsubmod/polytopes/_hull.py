"""Affine hulls of polytopes: found from the linear-optimization oracle, or assembled from
coordinate axes and sum-zero blocks for the families with a closed form."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class AffineHull:
    """The affine hull ``{point + basis @ z}`` of a polytope.

    Attributes
    ----------
    point : ndarray, shape (n,)
        A point of the polytope (a vertex for hulls found from the oracle).
    basis : ndarray, shape (n, d)
        Orthonormal basis of the direction space (the linear space parallel to the hull).
    normals : ndarray, shape (n, n - d)
        Orthonormal basis of its orthogonal complement: every point ``x`` of the polytope has
        ``normals.T @ x == normals.T @ point``.
    vertices : ndarray, shape (d + 1, n) or None
        Affinely independent vertices spanning the hull, when they were found from the oracle.
    """

    point: np.ndarray
    basis: np.ndarray
    normals: np.ndarray
    vertices: np.ndarray | None = None

    @property
    def dim(self) -> int:
        """Dimension of the polytope (of its affine hull)."""
        return int(self.basis.shape[1])

    @property
    def ambient_dim(self) -> int:
        return int(self.point.size)


def orthonormal_complement(basis: np.ndarray, n: int) -> np.ndarray:
    """Orthonormal basis of the orthogonal complement of the columns of ``basis`` in R^n."""
    if basis.shape[1] == 0:
        return np.eye(n)
    q, _ = np.linalg.qr(basis, mode="complete")
    return q[:, basis.shape[1]:]


def hull_from_oracle(lmax: Callable[[np.ndarray], np.ndarray], n: int, tol: float = 1e-9
                     ) -> AffineHull:
    """The affine hull of a polytope accessed only through ``lmax(w) = argmax <w, x>``.

    Keeps an orthonormal basis ``C`` of the directions not yet classified. For ``d = C[:, 0]``
    it asks for the maximizer and the minimizer of ``<d, x>``: if ``<d, x>`` is constant on the
    polytope (up to ``tol`` relative to the vertices' scale) ``d`` is a normal of the hull;
    otherwise the farther vertex is affinely independent of those found, and the direction it
    adds is split off ``C``. At most ``2n`` oracle calls; exact up to ``tol`` for a polytope.
    """
    v0 = np.asarray(lmax(np.zeros(n)), dtype=float)
    scale = max(1.0, float(np.abs(v0).max(initial=0.0)))
    C = np.eye(n)
    dirs: list[np.ndarray] = []
    normals: list[np.ndarray] = []
    verts = [v0]
    while C.shape[1]:
        d = C[:, 0]
        vp = np.asarray(lmax(d), dtype=float)
        vm = np.asarray(lmax(-d), dtype=float)
        scale = max(scale, float(np.abs(vp).max()), float(np.abs(vm).max()))
        up, down = float(d @ (vp - v0)), float(-(d @ (vm - v0)))
        if max(up, down) <= tol * scale:
            normals.append(d)
            C = C[:, 1:]
            continue
        v = vp if up >= down else vm
        p = C @ (C.T @ (v - v0))
        q = p / np.linalg.norm(p)
        dirs.append(q)
        verts.append(v)
        a = C.T @ q
        full, _ = np.linalg.qr(a[:, None], mode="complete")
        C = C @ full[:, 1:]
    basis = np.column_stack(dirs) if dirs else np.zeros((n, 0))
    if basis.shape[1]:
        basis, _ = np.linalg.qr(basis)
    nrm = orthonormal_complement(basis, n)
    return AffineHull(point=v0, basis=basis, normals=nrm, vertices=np.array(verts))


def coordinate_hull(point: np.ndarray, free: np.ndarray) -> AffineHull:
    """Hull whose direction space is spanned by the coordinate axes in ``free`` (bool mask)."""
    n = point.size
    eye = np.eye(n)
    return AffineHull(point=point, basis=eye[:, free], normals=eye[:, ~free])


def sum_zero_basis(idx: np.ndarray, n: int) -> np.ndarray:
    """Orthonormal basis of ``{z : supp z in idx, sum z = 0}`` (Helmert-style, via QR)."""
    m = idx.size
    if m < 2:
        return np.zeros((n, 0))
    local = orthonormal_complement(np.ones((m, 1)) / math.sqrt(m), m)
    out = np.zeros((n, m - 1))
    out[idx] = local
    return out


def hull_from_parts(point: np.ndarray, parts: list[np.ndarray]) -> AffineHull:
    """Hull through ``point`` whose direction space is spanned by the (mutually orthogonal)
    orthonormal bases in ``parts``."""
    n = point.size
    basis = np.column_stack(parts) if parts else np.zeros((n, 0))
    return AffineHull(point=point, basis=basis, normals=orthonormal_complement(basis, n))
