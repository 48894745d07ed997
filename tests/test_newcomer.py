"""A newcomer's first minutes, replayed in a fresh virtual environment.

What it proves: on a machine with only Python, the README's demo command, run as written from
a copy of this source tree, installs every dependency the demo needs from the declared extras
and runs; then the scikit-learn extra installs and ``PrivateFeatureSelector`` fits inside a
``Pipeline`` under cross-validation, charging the caller's budget once per fold. The virtual
environment is made without ``--system-site-packages``, so a dependency missing from
``pyproject.toml`` fails here instead of being found in the developer's environment. Package
downloads come from pip's usual cache when it has them.

It takes about a minute (most of it installing numpy, scipy, matplotlib and scikit-learn), so
it carries the ``newcomer`` marker, which the default test run leaves out and ``.ci/run`` runs
once: ``python -m pytest -m newcomer``. The README's test command is run by CI itself.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.newcomer

ROOT = Path(__file__).resolve().parents[1]
# What a fresh clone does not have: version control, environments, caches, build output (as
# .gitignore lists them), but it has the work not committed yet, which is what is tested.
_PATTERNS = shutil.ignore_patterns(".git", ".venv", ".venv-*", ".ci-venv", ".ci-floors-venv",
                                   "__pycache__", "*.egg-info", ".pytest_cache", ".ruff_cache",
                                   ".hypothesis", "build", "dist", "site", "dpsubmod-demo",
                                   "dpsubmod-results")


def ignore(folder: str, names: list[str]) -> set[str]:
    skip = set(_PATTERNS(folder, names))
    if Path(folder) == ROOT / "benchmarks":
        skip |= {"results"} & set(names)
    return skip

PIPELINE = textwrap.dedent("""
    import numpy as np
    import dpsubmod
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import Pipeline
    from dpsubmod.estimators import PrivateFeatureSelector

    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(1500, 8))
    y = (X[:, 2] + X[:, 5] + rng.integers(0, 2, size=1500) > 2).astype(int)
    budget = dpsubmod.Budget(3.0)
    pipe = Pipeline([("select", PrivateFeatureSelector(2, epsilon=1.0, budget=budget)),
                     ("model", LogisticRegression())])
    scores = cross_val_score(pipe, X, y, cv=3)  # secure noise: the quality is not checked here
    assert scores.shape == (3,) and ((0 <= scores) & (scores <= 1)).all(), scores
    assert budget.spent[0] == 3.0, budget.statement()
    try:  # a fourth release does not fit in the budget
        pipe.fit(X, y)
    except dpsubmod.BudgetExceededError:
        print("refused a fourth release")
    print("pipeline ok", scores.round(2).tolist())
""")


def readme_demo_command() -> str:
    """The first bash block of README.md: the demo command, as a newcomer copies it."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, flags=re.S)
    assert block is not None, "README.md has no ```bash block with the demo command"
    command = block.group(1).strip()
    assert "dpsubmod demo" in command and "\n" not in command, command
    return command


def clean_env() -> dict[str, str]:
    """The caller's environment without the traces of its own virtual environment."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "CONDA_PREFIX")}
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if p != bindir)
    env["MPLBACKEND"] = "Agg"
    return env


def run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float
        ) -> tuple[subprocess.CompletedProcess[str], float]:
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return p, time.perf_counter() - t0


def test_readme_demo_then_a_private_pipeline_in_a_fresh_environment(tmp_path):
    if shutil.which("bash") is None:
        pytest.skip("the README's command is a bash command line")
    tree = tmp_path / "dpsubmod"
    shutil.copytree(ROOT, tree, ignore=ignore, symlinks=True)
    env = clean_env()

    demo, t_demo = run(["bash", "-c", readme_demo_command()], tree, env, timeout=900)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert "Table written to" in demo.stdout
    assert (tree / "dpsubmod-demo" / "demo.csv").exists()

    py = tree / ".venv" / "bin" / "python"
    probe, _ = run([str(py), "-c", "import sys; print(sys.prefix != sys.base_prefix)"],
                   tree, env, timeout=60)
    assert probe.stdout.strip() == "True"  # the command made and used its own environment

    extra, t_extra = run([str(py), "-m", "pip", "install", ".[sklearn]"], tree, env,
                         timeout=600)
    assert extra.returncode == 0, extra.stdout[-3000:] + extra.stderr[-3000:]
    fit, t_fit = run([str(py), "-c", PIPELINE], tmp_path, env, timeout=300)
    assert fit.returncode == 0, fit.stdout[-3000:] + fit.stderr[-3000:]
    assert "pipeline ok" in fit.stdout and "refused a fourth release" in fit.stdout
    print(f"README demo command {t_demo:.0f}s, [sklearn] extra {t_extra:.0f}s, "
          f"pipeline {t_fit:.0f}s")
