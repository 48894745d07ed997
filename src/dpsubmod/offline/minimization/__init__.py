"""Exact submodular minimization (not private): :func:`~dpsubmod.offline.minimize` by the
min-norm point, max-flow for cut-plus-modular objectives, or brute force, in :mod:`.minimize`.

Users call these through the names of :mod:`dpsubmod.offline`.
"""
