"""The site checker (``.ci/check_site.py``) and the docstring converter (``docs/_ext``).

CI builds the site with ``mkdocs build --strict`` and then runs the checker on it; these tests
show the checker passes a page whose markup was converted and fails each kind of raw markup a
broken page could show, and that the converter turns the docstrings' Sphinx markup into what
the checker accepts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts import load_script

ROOT = Path(__file__).resolve().parents[1]


check_site = load_script(".ci/check_site.py")

PAGE = """<html><head><script>var s = ":func:`x` \\\\frac{a}{b}";</script></head><body>
<article><h1>maximize</h1>
<p>Runs a method; see <code>list_methods</code>. With <span class="arithmatex">\\(\\epsilon_i\\)
</span> per step and</p>
<div class="arithmatex">\\[ f(S) = \\sum_{e \\in S} w_e \\]</div>
<pre><code>:func:`kept` in code is shown as written, so is \\alpha and x_{i}</code></pre>
<p>A price of $5 and $6, a path C:\\ and a snake_case_name{} stay.</p>
{BROKEN}
</article></body></html>"""

BROKEN = {
    "Sphinx role": "<p>see :func:`maximize` for the entry point</p>",
    "class role": "<td>a :class:`~dpsubmod.offline.Result`</td>",
    "math role": "<p>with :math:`f(S)` the value</p>",
    "math directive": "<p>.. math::</p><p>f(S) = 1</p>",
    "LaTeX command": "<p>where \\epsilon is the budget</p>",
    "LaTeX subscript": "<p>the weights w_{ij} of the edges</p>",
    "dollar math": "<p>the value $\\sum_e x_e$ is</p>",
    "undelimited math": '<span class="arithmatex">f(S)</span>',
    "math outside its element": "<p>then \\(x\\) holds</p>",
}


def test_a_converted_page_passes():
    assert check_site.findings(PAGE.replace("{BROKEN}", "")) == []


@pytest.mark.parametrize("kind", BROKEN)
def test_each_kind_of_raw_markup_is_caught(kind: str):
    assert check_site.findings(PAGE.replace("{BROKEN}", BROKEN[kind])), kind


def test_the_command_fails_on_a_broken_site(tmp_path: Path, capsys):
    (tmp_path / "api").mkdir()
    (tmp_path / "index.html").write_text(PAGE.replace("{BROKEN}", ""))
    assert check_site.main([str(tmp_path)]) == 0
    (tmp_path / "api" / "index.html").write_text(PAGE.replace("{BROKEN}", BROKEN["class role"]))
    assert check_site.main([str(tmp_path)]) == 1
    assert "api/index.html: Sphinx role" in capsys.readouterr().out


def test_the_command_refuses_an_empty_site(tmp_path: Path):
    with pytest.raises(SystemExit, match="no HTML pages"):
        check_site.main([str(tmp_path)])


def _converter():
    pytest.importorskip("griffe", reason="the [docs] extra's griffe")
    return load_script("docs/_ext/sphinx_roles.py")


def test_the_converter_writes_roles_as_code_and_math_for_arithmatex():
    convert = _converter().convert
    text = ("See :func:`maximize` and :class:`~dpsubmod.offline.Result`, with :math:`x_e`.\n"
            "\n"
            ".. math:: R_t = \\sum_s f_s, \\qquad\n"
            "          x^* \\in K.\n"
            "\n"
            "After.")
    assert convert(text) == ("See `maximize` and `Result`, with \\(x_e\\).\n"
                             "\n"
                             "\\[\n"
                             "R_t = \\sum_s f_s, \\qquad\n"
                             "x^* \\in K.\n"
                             "\\]\n"
                             "\n"
                             "After.")


def test_the_converter_keeps_a_directive_indentation_and_splits_equations():
    convert = _converter().convert
    text = "Text\n\n    .. math::\n\n        a = b\n\n        c = d\n    after"
    assert convert(text) == ("Text\n\n    \\[\n    a = b\n    \\]\n\n    \\[\n    c = d\n    \\]\n"
                             "\n    after")


def test_a_lazily_exported_function_is_documented():
    """A name of a package's ``_WHERE`` table (defined in a submodule): the page shows it."""
    griffe = pytest.importorskip("griffe", reason="the [docs] extra's griffe")
    ext = _converter()
    pkg = griffe.load("dpsubmod", search_paths=[str(ROOT / "src")],
                      extensions=griffe.load_extensions(ext.SphinxRoles()))
    member = pkg["offline"].members["greedy"]
    assert member.is_alias and member.final_target.is_function
    assert pkg["offline"].members["lazy_greedy"].final_target.is_function
    assert ":math:" not in pkg["offline"].members["minimize"].final_target.docstring.value


def test_the_bundled_katex_refuses_a_formula_it_cannot_render():
    import shutil
    if shutil.which("node") is None:
        pytest.skip("Node.js runs the bundled KaTeX")
    good = ("a.html", "\\(\\sum_{e \\in S} w_e\\)")
    bad = ("b.html", "\\[\\frac{1}{2\\]")
    unknown = ("c.html", "\\(\\notacommand x\\)")
    assert check_site.katex_errors([good]) == []
    errors = check_site.katex_errors([good, bad, unknown])
    assert [e.split(":")[0] for e in errors] == ["b.html", "c.html"]
