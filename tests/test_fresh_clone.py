"""The project stands on its own: a clone of this checkout's HEAD, in a temporary folder with no ../shared beside
it, installed with a plain `pip install` (no test extras, no editable checkout) into a fresh venv, lists its games,
imports human Stratego setups from the data inside the package and explains Stratego; the install prints no
deprecation warning. A hook from a separate distribution, built and pip-installed into the same venv, is then used
by a game file from $FACEDOWN_GAMES_DIR. Slow (a venv and two installs, about a minute): done once per run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_write_a_game import guide_game_text

ROOT = Path(__file__).resolve().parents[1]
FORMAT_DOC = ROOT / "docs" / "game-format.md"


def _need(tool: str) -> str:
    found = shutil.which(tool)
    if found is None:
        why = f"needs {tool} on PATH"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    return found


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], str]:
    """(the venv's bin folder, the environment to run it in, pip's output) for a clone of HEAD installed plainly."""
    git = _need("git")
    if not (ROOT / ".git").exists():
        pytest.skip(f"{ROOT} is not a git checkout")
    base = tmp_path_factory.mktemp("fresh")
    work = base / "work"  # the clone's parent: nothing else in it, so no ../shared
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "FACEDOWN_GAMES_DIR")}
    head = _run([git, "rev-parse", "HEAD"], ROOT, env).stdout.strip()
    _run([git, "clone", "--quiet", "--no-checkout", str(ROOT), str(work / "facedown")], base, env)
    _run([git, "checkout", "--quiet", head], work / "facedown", env)
    assert not (work / "shared").exists() and not (work / "facedown" / ".venv").exists()
    _run([sys.executable, "-m", "venv", str(base / "venv")], base, env)
    bin_dir = base / "venv" / "bin"
    pip = _run([str(bin_dir / "python"), "-m", "pip", "install", "--disable-pip-version-check", str(work / "facedown")], base, env)
    return bin_dir, env, pip.stdout + pip.stderr


def test_a_plain_install_has_no_deprecation_warning(installed: tuple[Path, dict[str, str], str]) -> None:
    _, _, out = installed
    assert "Successfully installed" in out and "facedown-" in out
    assert not re.search(r"BuildBackendWarning|[Dd]eprecat|SetuptoolsWarning", out), out


def test_the_installed_commands_work_from_anywhere(installed: tuple[Path, dict[str, str], str], tmp_path: Path) -> None:
    bin_dir, env, _ = installed
    facedown = str(bin_dir / "facedown")
    games = _run([facedown, "games"], tmp_path, env).stdout.splitlines()
    assert len(games) >= 9 and all(line.endswith("[package]") for line in games)
    assert any(line.startswith("stratego ") for line in games)
    store = tmp_path / "store"
    out = _run([facedown, "setups", "import-human", "classic", "--count", "3", "--store", str(store)], tmp_path, env).stdout
    assert "saved 3 human classic setups for blue in stratego" in out
    assert len(list((store / "stratego" / "blue").glob("*.json"))) == 3
    rules = _run([facedown, "rules", "stratego"], tmp_path, env).stdout
    assert rules.startswith("Stratego") and "Marshal" in rules


def test_a_hook_distribution_installed_with_pip(installed: tuple[Path, dict[str, str], str], tmp_path: Path) -> None:
    """The hook example of docs/game-format.md as its own distribution, built and installed by pip."""
    bin_dir, env, _ = installed
    blocks = re.findall(r"```python\n(.*?)```", FORMAT_DOC.read_text(encoding="utf-8"), flags=re.S)
    dist = tmp_path / "mygames"
    (dist / "mygames").mkdir(parents=True)
    (dist / "mygames" / "__init__.py").write_text("", encoding="utf-8")
    (dist / "mygames" / "hooks.py").write_text(next(b for b in blocks if "class NoRetreat" in b), encoding="utf-8")
    (dist / "pyproject.toml").write_text(textwrap.dedent("""\
        [build-system]
        requires = ["setuptools>=77"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "mygames"
        version = "0.1"

        [tool.setuptools]
        packages = ["mygames"]

        [project.entry-points."facedown.hooks"]
        no_retreat = "mygames.hooks:NoRetreat"
        """), encoding="utf-8")
    _run([str(bin_dir / "python"), "-m", "pip", "install", "--disable-pip-version-check", "--quiet", str(dist)], tmp_path, env)
    games = tmp_path / "games"
    games.mkdir()
    (games / "junqi_duel.yaml").write_text(
        guide_game_text().replace("hooks: [reveal_flag_on_commander_loss]", "hooks: [reveal_flag_on_commander_loss, no_retreat]"),
        encoding="utf-8")
    env = {**env, "FACEDOWN_GAMES_DIR": str(games)}
    listed = _run([str(bin_dir / "facedown"), "games"], tmp_path, env).stdout
    assert f"junqi_duel         Junqi Duel (軍棋對決): 2 sides, 12 pieces each, 30 stations [$FACEDOWN_GAMES_DIR: {games / 'junqi_duel.yaml'}]" in listed
    probe = ("from controller.rules import new_game\n"
             "from controller.rules.base import Piece\n"
             "s = new_game('junqi_duel')\n"
             "s.phase = 'play'\n"
             "s.board = {'b3': Piece(1, 'lieutenant', 'red'), 'b6': Piece(2, 'flag', 'blue'), 'b1': Piece(3, 'flag', 'red')}\n"
             "print(s.why_illegal(('b3', 'b2')))\n")
    out = _run([str(bin_dir / "python"), "-c", probe], tmp_path, env).stdout
    assert out.strip() == "no retreat: pieces only go forward or sideways"
