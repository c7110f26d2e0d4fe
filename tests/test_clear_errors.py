"""Clear errors everywhere (issue 16): every malformed input gets a located message and exit status 2 on the
command line, a 4xx on the web, and never a traceback."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest

from controller.cli import main
from controller.docreader import DocumentProblem, load_yaml
from controller.records import RecordError
from controller.records.gravon import parse as parse_gravon
from controller.rules.errors import GameFileError
from controller.rules.loader import load_game_file
from controller.setups_store import MAX_PER_SIDE, SetupStore, SetupStoreError
from harness.web_game import Game
from web_referee.app import create_app

BAD_UTF8 = b"a1: flag\n\xff\xfe: x\n"


def run(argv: list[str], capsys) -> tuple[int, str]:  # noqa: ANN001
    code = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "dir").mkdir()
    out = {"dir": tmp_path / "dir", "missing": tmp_path / "missing.yaml"}
    out["bad"] = tmp_path / "bad.yaml"
    out["bad"].write_bytes(BAD_UTF8)
    out["deep"] = tmp_path / "deep.jsonl"
    out["deep"].write_text("[" * 100_000 + "]" * 100_000 + "\n")
    out["bigint"] = tmp_path / "bigint.jsonl"
    out["bigint"].write_text('{"tick_ms": ' + "9" * 5000 + "}\n")
    return out


@pytest.mark.parametrize("which,expect", [
    ("bad", r"bad\.yaml: line 2, column 1: byte 0xFF is not UTF-8"),
    ("dir", r"dir: is a directory, not a script"),
    ("missing", r"missing\.yaml: no such script"),
    ("deep", r"deep\.jsonl: line 1: nested more than 200 levels deep"),
    ("bigint", r"bigint\.jsonl: line 1: a number too long to read"),
])
def test_script_files(files, capsys, which: str, expect: str) -> None:  # noqa: ANN001
    code, err = run(["script", "stratego", str(files[which])], capsys)
    assert code == 2 and re.search(expect, err), err


@pytest.mark.parametrize("which,expect", [
    ("bad", r"line 2, column 1: byte 0xFF is not UTF-8 text \(save the deployment file as UTF-8\)"),
    ("dir", r"is a directory, not a deployment file"),
    ("missing", r"no such deployment file"),
])
def test_deployment_files(files, tmp_path: Path, capsys, which: str, expect: str) -> None:  # noqa: ANN001
    code, err = run(["play", "stratego", "--no-web", "--announce", "none", "--journal", str(tmp_path / "j.sqlite"),
                     "--setup", f"red={files[which]}"], capsys)
    assert code == 2 and re.search(expect, err), err


def test_profiles_and_game_files(files, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    code, err = run(["play", "--profile", str(files["bad"]), "--no-web", "--journal", str(tmp_path / "j.sqlite")], capsys)
    assert code == 2 and "byte 0xFF is not UTF-8" in err
    with pytest.raises(GameFileError, match="byte 0xFF is not UTF-8"):
        load_game_file(files["bad"])
    with pytest.raises(GameFileError, match="is a directory"):
        load_game_file(files["dir"])


def test_duplicate_keys_are_refused_with_both_places(tmp_path: Path) -> None:
    game = Path(__file__).resolve().parents[1] / "controller" / "rules" / "games" / "stratego.yaml"
    text = game.read_text(encoding="utf-8")
    doubled = tmp_path / "stratego.yaml"
    doubled.write_text(text + "\nname: Stratego again\n", encoding="utf-8")
    first = next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith("name:"))
    last = len((text + "\nname: Stratego again\n").splitlines())
    with pytest.raises(GameFileError) as err:
        load_game_file(doubled)
    assert f"line {last}, column 1" in str(err.value) and f"already given at line {first}, column 1" in str(err.value)
    with pytest.raises(DocumentProblem):
        load_yaml("a: 1\nb:\n  c: 2\n  c: 3\n")


def test_option_values_that_are_absurd(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    code, err = run(["play", "stratego", "--no-web", "--journal", str(tmp_path / "j.sqlite"), "-o", "x=" + "9" * 5000], capsys)
    assert code == 2 and "option x" in err and "sensible length" in err


def test_a_port_in_use_exits_2_with_a_message(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        code, err = run(["play", "stratego", "--announce", "none", "--host", "127.0.0.1", "--port", str(port),
                         "--journal", str(tmp_path / "j.sqlite")], capsys)
    assert code == 2 and f"port {port} on 127.0.0.1 is already in use" in err


def test_a_gravon_file_with_several_games_is_refused_with_the_count(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    doc = "<stratego>" + "<game type='classic'><field content='x'/></game>" * 3 + "</stratego>"
    with pytest.raises(RecordError, match="holds 3 games"):
        parse_gravon(doc, "three.xml")
    f = tmp_path / "three.xml"
    f.write_text(doc)
    journal = tmp_path / "j.sqlite"
    code, err = run(["record", "import", str(f), "--journal", str(journal)], capsys)
    assert code == 2 and "holds 3 games" in err and "nothing was imported" in err


def test_saved_setups_are_bounded_in_count_and_size(tmp_path: Path) -> None:
    from controller.rules import load_game
    from controller.rules.deploy import random_deployment

    game = load_game("stratego")
    store = SetupStore(tmp_path / "setups")
    placement = random_deployment(game, "red", __import__("random").Random(1))
    for i in range(MAX_PER_SIDE):
        store.save(game, "red", f"s{i}", placement)
    with pytest.raises(SetupStoreError, match=f"already has {MAX_PER_SIDE} saved deployments"):
        store.save(game, "red", "one more", placement)
    store.save(game, "red", "s3", placement)  # replacing one is fine
    assert len(store.list(game, "red")) == MAX_PER_SIDE
    big = tmp_path / "setups" / "stratego" / "red" / "s0.json"
    big.write_text(json.dumps({"placement": {f"x{i}": "flag" for i in range(5000)}}))
    assert len(store.list(game, "red")) == MAX_PER_SIDE - 1  # an oversized file is not read


def test_web_bodies_nested_deep_or_with_long_numbers_are_400(tmp_path: Path) -> None:
    g = Game("stratego", tmp_path)
    client = create_app(g.table, setups=SetupStore(tmp_path / "s")).test_client()
    red = g.table.tokens["red"]
    html = client.get(f"/seat/{red}").get_data(as_text=True)
    csrf = re.search(r'name="facedown-csrf" content="([0-9a-f]+)"', html).group(1)
    for body, why in (("[" * 30_000 + "]" * 30_000, "nested more than"), ('{"placement": {"a1": ' + "9" * 5000 + "}}", "too long"),
                      (b'{"placement": "\xff"}', "not UTF-8")):
        r = client.post(f"/api/{red}/setup/check", data=body, headers={"X-CSRF-Token": csrf, "Content-Type": "application/json"})
        assert r.status_code == 400 and why in r.get_json()["error"], r.get_data(as_text=True)[:200]
    # saving more deployments than the bound is a 422 that says so
    from controller.rules.deploy import random_deployment

    placement = random_deployment(g.table.game, "red", __import__("random").Random(2))
    for i in range(MAX_PER_SIDE + 1):
        r = client.post(f"/api/{red}/setups", json={"name": f"n{i}", "placement": placement}, headers={"X-CSRF-Token": csrf})
    assert r.status_code == 422 and "already has" in r.get_json()["error"]
