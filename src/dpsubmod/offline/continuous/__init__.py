"""Maximization through the multilinear extension: private continuous greedy
(:mod:`.continuous_greedy`, Rafiey and Yoshida 2020) and DPCG (:mod:`.dpcg`, Sadeghi and Fazel
2021), with the gradient oracle they share and the product-base samplers of continuous greedy.

Users call these through :func:`dpsubmod.maximize` or the names of :mod:`dpsubmod.offline`; each
module here registers its methods when it loads.
"""
