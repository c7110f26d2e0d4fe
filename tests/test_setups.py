"""Human Stratego setups (Ataraxos data from the Gravon archive, shipped in the package) against our setup
rules, corruption reported with its square, and the `facedown setups` command over the saved-setups store."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from corpus_files import corpus

from controller.cli import main
from controller.records import RecordError
from controller.records.ataraxos import as_blue, human_setup, read_setups, setup_lines
from controller.rules import load_game
from controller.rules.setup import check_deployment
from controller.setups_store import SetupStore

CORPUS = corpus("ataraxos-stratego")
FILES = {"stratego": CORPUS / "human_setups" / "classic_human_setups.dat",
         "stratego_barrage": CORPUS / "human_setups" / "barrage_human_setups.dat"}



#: The barrage file has 3,944 setups and a stray "]" as its last line (the corpus README counts 3,945 lines).
@pytest.mark.parametrize(("game", "count"), [("stratego", 64920), ("stratego_barrage", 3944)])
def test_every_human_setup_is_valid_for_both_seats(game: str, count: int) -> None:
    """All of them (about 10 s for the 64,920 classic ones): each is valid for Red, and turned round for Blue."""
    gdef = load_game(game)
    options = gdef.resolve_options()
    lines = setup_lines(FILES[game])
    good = [(n, text) for n, text in lines if len(text) == 40]
    assert len(good) == count
    assert [n for n, text in lines if len(text) != 40] == ([3946] if game == "stratego_barrage" else [])  # a stray "]"
    bad = []
    for n, text in good:
        red = human_setup(text, f"line {n}")
        if check_deployment(gdef, "red", red, options):
            bad.append(n)
        elif n % 50 == 0 and check_deployment(gdef, "blue", as_blue(red), options):
            bad.append(-n)
    assert bad == []


def test_the_stray_line_is_reported_with_its_place() -> None:
    with pytest.raises(RecordError, match=r"barrage_human_setups.dat: line 3946: expected 40 letters, got 1"):
        list(read_setups(FILES["stratego_barrage"]))


def test_reading_a_line_back_row_first() -> None:
    placement = human_setup("BDGFDFDDDBHFLJGKDIFGEHEMCEHBDDIBJEIBHEBG")  # the first classic line
    assert [placement[f"{c}1"] for c in "abcd"] == ["lieutenant", "bomb", "miner", "captain"]  # "...HEBG" read backwards
    assert placement["j4"] == "bomb" and placement["a4"] == "bomb" and placement["b4"] == "scout"  # "BDGFDFDDDB..."
    assert as_blue(placement)["j10"] == "lieutenant" and as_blue(placement)["i7"] == "scout"


@pytest.mark.parametrize("game", ["stratego", "stratego_barrage"])
def test_corrupting_one_piece_is_reported_with_its_square(game: str) -> None:
    gdef = load_game(game)
    rng = random.Random(8)
    lines = [(n, t) for n, t in setup_lines(FILES[game]) if len(t) == 40]
    for n, text in rng.sample(lines, 200):
        red = human_setup(text)
        station = rng.choice(sorted(red))
        before = red[station]
        # another piece kind in its place: that square is named, and the counts of both kinds are off
        red[station] = rng.choice([p.id for p in gdef.pieces if p.id != before])
        problems = check_deployment(gdef, "red", red)
        names = {p.id: p.name for p in gdef.pieces}
        assert any(p.station is None and p.message.startswith(names[before]) for p in problems), (n, problems)
        # a letter that is no piece at all: a clear message naming the square in the file's own terms
        i = 39 - (int(station[1:]) - 1) * 10 - "abcdefghij".index(station[0])
        broken = text[:i] + "Z" + text[i + 1:]
        with pytest.raises(RecordError, match=rf"line {n}: character {i + 1} \({station}\): unknown piece letter 'Z'"):
            human_setup(broken, f"line {n}")
        # a piece moved out of its rows: the station is named
        red = human_setup(text)
        red["e5"] = red.pop(station)
        assert any(p.station == "e5" and "outside red's deployment area" in p.message for p in check_deployment(gdef, "red", red))


# ---------------------------------------------------------------------- the command
def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_import_human_then_list_and_load(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    rc, out, _ = run(capsys, "setups", "import-human", "classic", "--count", "5", "--seed", "3", "--store", store, "--corpus", str(CORPUS))
    assert rc == 0 and "saved 5 human classic setups for blue in stratego" in out
    saved = SetupStore(store).list(load_game("stratego"), "blue")
    assert len(saved) == 5 and all(s.name.startswith("human classic ") for s in saved)
    rc, out, _ = run(capsys, "setups", "list", "stratego", "--store", store)
    assert rc == 0 and len(out.splitlines()) == 5 and all(" 40 pieces" in line for line in out.splitlines())
    name = saved[0].name
    rc, out, _ = run(capsys, "setups", "load", "stratego", "blue", name, "--store", store)
    line = int(name.split()[-1])
    text = dict(setup_lines(FILES["stratego"]))[line]
    assert rc == 0 and json.loads(out) == as_blue(human_setup(text))


def test_import_human_reads_the_package_by_default(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No --corpus and no $FACEDOWN_ATARAXOS: the setups come from the package, the same lines as the folder's."""
    monkeypatch.delenv("FACEDOWN_ATARAXOS", raising=False)
    stores = [str(tmp_path / "a"), str(tmp_path / "b")]
    rc, out, _ = run(capsys, "setups", "import-human", "barrage", "--count", "3", "--seed", "5", "--store", stores[0])
    assert rc == 0 and "saved 3 human barrage setups for blue in stratego_barrage" in out
    rc, _, _ = run(capsys, "setups", "import-human", "barrage", "--count", "3", "--seed", "5", "--store", stores[1], "--corpus", str(CORPUS))
    game = load_game("stratego_barrage")
    packaged, from_folder = (sorted((s.name, s.placement) for s in SetupStore(d).list(game, "blue")) for d in stores)
    assert rc == 0 and packaged == from_folder and len(packaged) == 3


def test_pick_is_repeatable_and_saves_for_the_seat(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    args = ("setups", "pick", "stratego_barrage", "--seed", "11", "--side", "red", "--store", store, "--corpus", str(CORPUS))
    rc, first, err = run(capsys, *args)
    assert rc == 0 and "saved for red as 'human barrage " in err
    _, second, _ = run(capsys, *args)
    assert first == second and len(json.loads(first)) == 8
    assert not check_deployment(load_game("stratego_barrage"), "red", json.loads(first))


def test_save_and_validate_report_every_problem(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(human_setup(setup_lines(FILES["stratego_barrage"])[0][1])), encoding="utf-8")
    rc, out, _ = run(capsys, "setups", "validate", "stratego_barrage", "red", str(good))
    assert rc == 0 and "a valid deployment" in out
    rc, out, _ = run(capsys, "setups", "save", "stratego_barrage", "red", "mine", str(good), "--store", str(tmp_path / "s"))
    assert rc == 0 and "saved red's deployment 'mine'" in out
    bad = tmp_path / "bad.json"
    placement = json.loads(good.read_text(encoding="utf-8"))
    placement["e6"] = placement.pop(sorted(placement)[0])
    bad.write_text(json.dumps(placement), encoding="utf-8")
    rc, out, _ = run(capsys, "setups", "validate", "stratego_barrage", "red", str(bad))
    assert rc == 1 and "e6: " in out and "outside red's deployment area" in out
    rc, _, err = run(capsys, "setups", "save", "stratego_barrage", "red", "mine2", str(bad), "--store", str(tmp_path / "s"))
    assert rc == 2 and "not saved" in err and "e6:" in err
    junk = tmp_path / "junk.json"
    junk.write_text("{oops", encoding="utf-8")
    rc, _, err = run(capsys, "setups", "validate", "stratego", "red", str(junk))
    assert rc == 2 and "line 1, column 2: not JSON" in err
