"""Greedy maximization over sets: the non-private baselines (:mod:`.greedy`), the
exponential-mechanism greedy (:mod:`.private_greedy`) and the decomposable greedy
(:mod:`.decomposable`).

Users call these through :func:`dpsubmod.maximize` or the names of :mod:`dpsubmod.offline`; each
module here registers its methods when it loads.
"""
