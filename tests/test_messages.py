"""The message catalogs: the same keys in every language, every code the product can say is there, rendering by
param name, Simplified and Traditional piece names, and `facedown rules --json` telling what the engine does."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from controller.commands.rules import contract
from controller.messages import LANGS, MessageError, catalog, placeholders, render
from controller.referee.steps import ACTIONS
from controller.rules import game_ids, load_game, new_game
from controller.rules.effects import clash_effects, spared_outcome
from controller.rules.say import codes, say

ROOT = Path(__file__).resolve().parents[1]
CATALOGS = ROOT / "controller" / "messages" / "catalogs"


def test_the_three_catalogs_have_the_same_keys_sorted_with_the_same_params():
    keys = {lang: list(json.loads((CATALOGS / f"{lang}.json").read_text(encoding="utf-8"))) for lang in LANGS}
    assert keys["en"] == sorted(keys["en"]), "keys are kept sorted"
    assert set(keys["en"]) == set(keys["zh-Hans"]) == set(keys["zh-Hant"])
    for key in keys["en"]:
        used = [placeholders(catalog(lang)[key]) for lang in LANGS]
        assert used[0] == used[1] == used[2], f"{key}: the languages use different params {used}"


@pytest.mark.parametrize("lang", ["zh-Hans", "zh-Hant"])
def test_chinese_catalogs_hold_no_english_words(lang):
    for key, template in catalog(lang).items():
        if key.startswith("page."):  # the board page's chrome belongs to its own branch
            continue
        text = re.sub(r"\{[a-z_]+\}", "", template)
        assert not re.search(r"[A-Za-z]{2,}", text), f"{lang} {key}: {template!r}"


def _source_codes() -> set[str]:
    found: set[str] = set()
    for path in [*ROOT.joinpath("controller").rglob("*.py"), *ROOT.joinpath("web_referee").glob("*.py")]:
        text = path.read_text(encoding="utf-8")
        found |= set(re.findall(r"\bsay\(\s*\"([a-z_]+\.[a-z_.]+)\"", text))
        found |= set(re.findall(r"\"((?:reason|verdict|notice|event|step|reaction)\.[a-z_]+)\"", text))
    return found


def test_every_code_in_the_product_source_is_in_the_catalogs():
    wanted = _source_codes()
    wanted |= {f"step.{a}" for a in ACTIONS}
    wanted |= {f"verdict.outcome_{o}" for o in ("attacker", "defender", "both", "bounce")}
    wanted |= {f"notice.strike_{o}" for o in ("attacker", "defender", "both", "bounce")}
    wanted |= {"notice.flag_taken_from_sunk", "notice.flag_taken_back_from_sunk", "event.start", "event.turn"}
    for gid in game_ids():
        game = load_game(gid)
        wanted |= {f"side.{s}" for s in game.sides} | {f"kind.{k}" for k in game.station_kinds}
    assert len(wanted) > 100
    for lang in LANGS:
        missing = sorted(wanted - set(catalog(lang)))
        assert not missing, f"catalogs/{lang}.json lacks {missing}"


def test_render_names_pieces_sides_and_stations_by_param_name():
    game = load_game("stratego")
    msg = say("reason.cannot_reach", piece="scout", **{"from": "j4", "to": "i5"})
    assert render(msg, "en", game) == "a Scout cannot go from j4 to i5."
    assert render(msg, "zh-Hant", game) == "斥候不能從 j4 走到 i5。"
    general = say("verdict.piece_lost", piece="general", side="blue")
    assert render(general, "zh-Hans", game) == "蓝方失去将军" and render(general, "zh-Hant", game) == "藍方失去將軍"
    nested = say("event.fixup", steps=[say("step.return", station="a5", owner="red", to="a4"), say("step.take_off", station="b1")])
    assert render(nested, "en") == "Fix the board: a5: return Red's piece to a4; b1: take the piece off."
    assert render(say("notice.out_clear", side="green", reason=say("verdict.no_move", side="green"), stations=["SA1", "SB2"]), "en") \
        == "Green is out (Green has no legal move): its pieces leave the board: SA1, SB2."
    with pytest.raises(MessageError, match="no key 'reason.nonsense'"):
        render(say("reason.nonsense"), "en")
    with pytest.raises(MessageError, match="needs param 'piece'"):
        render(say("reason.piece_immobile", station="a1"), "en")
    with pytest.raises(MessageError, match="unknown language"):
        render(msg, "fr")
    assert codes({"a": [nested, {"reason": general}]}) == {"event.fixup", "step.return", "step.take_off", "verdict.piece_lost"}


def test_every_piece_has_a_simplified_name_and_the_traditional_one_as_the_source_writes_it():
    changed = 0
    for gid in game_ids():
        for p in load_game(gid).pieces:
            assert p.zh_hans and p.zh, (gid, p.id)
            assert len(p.zh_hans) == len(p.zh), (gid, p.id, p.zh, p.zh_hans)
            changed += p.zh_hans != p.zh
    assert changed > 30  # most rule sources write Traditional
    stratego = load_game("stratego").piece_by_id
    assert (stratego["marshal"].zh, stratego["marshal"].zh_hans) == ("元帥", "元帅")


def test_rules_contract_shows_the_gunboats_shelling_as_the_engine_plays_it():
    doc = contract("sanjunqi")
    game = load_game("sanjunqi")
    gunboat = game.piece_by_id["gunboat"]
    shelling = next(m for m in gunboat.moves if m.spared)
    stronger = next(d for d, o in doc["clash"]["gunboat"].items() if o == "defender")
    equal = next((d for d, o in doc["clash"]["gunboat"].items() if o == "both" and d != "gunboat"), None)
    said = {e["effect"]: e for e in doc["effects"]["gunboat"][stronger]}
    assert said["spared"]["outcome"] == "bounce" == spared_outcome("defender")
    assert said["spared"]["along"] == sorted(shelling.along)
    if equal is not None:
        assert {e["effect"]: e for e in doc["effects"]["gunboat"][equal]}["spared"]["outcome"] == "attacker"
    # the engine's own judgement of the clash with that move agrees with the contract
    from controller.rules.effects import clash_outcome
    from controller.rules.state import Piece

    state = new_game("sanjunqi")
    station = next(s.id for s in game.stations)
    mover, target = Piece(1, "gunboat", "red"), Piece(2, stronger, "blue")
    assert clash_outcome(state, station, mover, target, shelling, doc["clash"]["gunboat"][stronger]) == "bounce"
    for gid in ("stratego", "luzhanqi"):
        assert clash_effects(load_game(gid), load_game(gid).resolve_options(None)) == {}
