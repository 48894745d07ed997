"""The names of the privacy filters a Budget can use, with a one-line description of each.

Kept apart from :mod:`dpsubmod.privacy.filters` (which needs scipy for the zCDP conversion) so
that a command line can list the choices without loading the filters.
"""

#: Adaptive rules a Budget may use, with the reference printed in its statements.
FILTERS: dict[str, str] = {
    "basic": "basic composition as a privacy filter (Rogers, Roth, Ullman & Vadhan 2016)",
    "advanced": "the advanced-composition filter of Whitehouse, Ramdas, Rogers & Wu (ICML 2023)",
    "zcdp": "a zCDP (Renyi) filter (Feldman & Zrnic 2021) converted by Canonne, Kamath & "
            "Steinke 2020",
}
