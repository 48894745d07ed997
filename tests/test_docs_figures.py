"""The documentation's figures: the script draws them, and the pages quote what it computes.

``docs/figures/make_figures.py budget`` runs in seconds, so it runs here and the counts the
privacy page quotes are checked against what it printed. The utility figure runs the offline
experiment of docs/results.md (about half an hour), so only its refusal without the data is
tested here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scripts import load_script

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def make_figures():
    pytest.importorskip("matplotlib", reason="the [plot] extra draws the figures")
    return load_script("docs/figures/make_figures.py")


def test_the_budget_figure_is_drawn_and_its_page_quotes_its_counts(make_figures, tmp_path,
                                                                   capsys):
    png = make_figures.budget(out=tmp_path / "budget_spent.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr().out
    assert "4 release(s), spent epsilon 0.9, delta 0" in printed
    fits = dict(re.findall(r"^(\w+): (\d+) releases of epsilon 0\.02 fit", printed, flags=re.M))
    assert fits == {"basic": "49", "advanced": "83", "zcdp": "121"}
    page = " ".join((ROOT / "docs" / "privacy.md").read_text().split())
    assert (f"The basic rule admits {fits['basic']} " in page
            and f"(`delta = 1e-6`) {fits['advanced']} and the zCDP filter {fits['zcdp']}."
            in page)
    assert "python docs/figures/make_figures.py budget" in page
    assert "![" in page and "(figures/budget_spent.png)" in page


def test_the_utility_figure_names_the_missing_data(make_figures, tmp_path):
    with pytest.raises(SystemExit, match="--uber PATH"):
        make_figures.utility(tmp_path / "absent.csv", out=tmp_path / "u.png")


def test_each_figure_shown_is_committed_with_its_command():
    for page in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]:
        text = page.read_text()
        for target in re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", text):
            assert (page.parent / target).is_file(), f"{page.name}: {target}"
            name = Path(target).stem
            figure = {"budget_spent": "budget", "utility_vs_epsilon": "utility"}.get(name)
            if figure is not None:
                assert f"make_figures.py {figure}" in " ".join(text.split()), page.name
