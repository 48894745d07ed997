"""k-submodular maximization (:mod:`.methods`): the greedy baselines and the private
Algorithms 3 and 4 of Rafiey and Yoshida (2020), with their calibration and, for tiny instances,
the exact output distribution of the private greedy.

Users call these through :func:`dpsubmod.maximize_ksubmodular` or the names of
:mod:`dpsubmod.offline`; the module registers its methods when it loads.
"""
