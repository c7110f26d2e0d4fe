"""Every cell of the seed clash tables (Stratego: seed 002, L'Attaque: seed 004) against the engine's contract.

The seed tables are transcribed below exactly as the seeds print them: rows are the DEFENDER (守), columns the
ATTACKER (攻). 攻勝 = attacker wins, 守勝 = defender wins, 同盡 = both removed, — = the attacker cannot attack
(bombs/mines and flags never move). The seeds leave out the captain 上尉; its row and column follow rank order.
The tables write 少校 where the piece lists write 中校, and the seeds' piece lists write 斥侯 where the tables (and the
game files, issue 37: the usual form) write 斥候: the same pieces.
"""

from __future__ import annotations

import pytest

from controller.commands.rules import contract
from controller.rules import load_game

CELL = {"攻勝": "attacker", "守勝": "defender", "同盡": "both", "—": "illegal"}

# Seed 002 (西洋陸軍棋), 勝負一覽. First line: the attackers (columns); then one line per defender.
STRATEGO_TABLE = """
守\\攻  元帥 將軍 上校 少校 中尉 士官 除雷兵 斥候 間諜 地雷 軍旗
元帥    同盡 守勝 守勝 守勝 守勝 守勝 守勝 守勝 攻勝 — —
將軍    攻勝 同盡 守勝 守勝 守勝 守勝 守勝 守勝 守勝 — —
上校    攻勝 攻勝 同盡 守勝 守勝 守勝 守勝 守勝 守勝 — —
少校    攻勝 攻勝 攻勝 同盡 守勝 守勝 守勝 守勝 守勝 — —
中尉    攻勝 攻勝 攻勝 攻勝 同盡 守勝 守勝 守勝 守勝 — —
士官    攻勝 攻勝 攻勝 攻勝 攻勝 同盡 守勝 守勝 守勝 — —
除雷兵  攻勝 攻勝 攻勝 攻勝 攻勝 攻勝 同盡 守勝 守勝 — —
斥侯    攻勝 攻勝 攻勝 攻勝 攻勝 攻勝 攻勝 同盡 守勝 — —
間諜    攻勝 攻勝 攻勝 攻勝 攻勝 攻勝 攻勝 攻勝 同盡 — —
地雷    守勝 守勝 守勝 守勝 守勝 守勝 攻勝 守勝 守勝 — —
軍旗    攻勝 攻勝 攻勝 攻勝 攻勝 攻勝 攻勝 攻勝 攻勝 — —
"""

# Seed 004 (法國陸軍棋), 勝負一覽, same layout.
LATTAQUE_TABLE = """
守\\攻  總司令 准將 上校 少校 中尉 士官 工兵 斥候 間諜 地雷 軍旗
總司令  同盡 守勝 守勝 守勝 守勝 守勝 守勝 守勝 攻勝 — —
准將    攻勝 同盡 守勝 守勝 守勝 守勝 守勝 守勝 守勝 — —
上校    攻勝 攻勝 同盡 守勝 守勝 守勝 守勝 守勝 守勝 — —
少校    攻勝 攻勝 攻勝 同盡 守勝 守勝 守勝 守勝 守勝 — —
中尉    攻勝 攻勝 攻勝 攻勝 同盡 守勝 守勝 守勝 守勝 — —
士官    攻勝 攻勝 攻勝 攻勝 攻勝 同盡 守勝 守勝 守勝 — —
工兵    攻勝 攻勝 攻勝 攻勝 攻勝 攻勝 同盡 守勝 守勝 — —
斥侯    攻勝 攻勝 攻勝 攻勝 攻勝 攻勝 攻勝 同盡 守勝 — —
間諜    守勝 攻勝 攻勝 攻勝 攻勝 攻勝 攻勝 攻勝 同盡 — —
地雷    守勝 守勝 守勝 守勝 守勝 守勝 攻勝 守勝 守勝 — —
軍旗    攻勝 攻勝 攻勝 攻勝 攻勝 攻勝 攻勝 攻勝 攻勝 — —
"""

# The seeds' piece lists (軍階高低, 棋子名稱, 各方枚數), with the engine's id for each piece.
STRATEGO_PIECES = [
    ("marshal", "元帥", 1), ("general", "將軍", 1), ("colonel", "上校", 2), ("major", "中校", 3),
    ("captain", "上尉", 4), ("lieutenant", "中尉", 4), ("sergeant", "士官", 4), ("miner", "除雷兵", 5),
    ("scout", "斥候", 8), ("spy", "間諜", 1), ("bomb", "地雷", 6), ("flag", "軍旗", 1),
]
LATTAQUE_PIECES = [
    ("general", "總司令", 1), ("brigadier", "准將", 1), ("colonel", "上校", 2), ("major", "中校", 2),
    ("captain", "上尉", 4), ("lieutenant", "中尉", 4), ("sergeant", "士官", 4), ("sapper", "工兵", 4),
    ("scout", "斥候", 8), ("spy", "間諜", 1), ("mine", "地雷", 4), ("flag", "軍旗", 1),
]
# Names the tables use that differ from the piece lists.
TABLE_ALIASES = {"少校": "中校", "斥侯": "斥候"}
IMMOBILE = {"bomb", "mine", "flag"}


def parse_table(text: str, pieces: list[tuple[str, str, int]]) -> dict[str, dict[str, str]]:
    """{attacker id: {defender id: outcome}} from a transcribed seed table (rows defender, columns attacker)."""
    by_zh = {zh: pid for pid, zh, _ in pieces}
    lines = [ln.split() for ln in text.strip().splitlines()]
    attackers = [by_zh[TABLE_ALIASES.get(z, z)] for z in lines[0][1:]]
    out: dict[str, dict[str, str]] = {a: {} for a in attackers}
    for row in lines[1:]:
        defender = by_zh[TABLE_ALIASES.get(row[0], row[0])]
        assert len(row) == len(attackers) + 1, row
        for attacker, cell in zip(attackers, row[1:], strict=True):
            out[attacker][defender] = CELL[cell]
    return out


def with_captain(table: dict[str, dict[str, str]], pieces: list[tuple[str, str, int]]) -> dict[str, dict[str, str]]:
    """Adds the captain's row and column by rank order (rank 5: list position), as the brief and game files say."""
    rank = {pid: i + 1 for i, (pid, _, _) in enumerate(pieces) if pid not in IMMOBILE}
    full = {a: dict(row) for a, row in table.items()}
    full["captain"] = {}
    for pid, _, _ in pieces:
        if pid == "flag":
            full["captain"][pid] = "attacker"
        elif pid in IMMOBILE:
            full["captain"][pid] = "defender"
        else:
            r = rank[pid]
            full["captain"][pid] = "both" if r == 5 else ("defender" if r < 5 else "attacker")
        if pid != "captain":
            if pid in IMMOBILE:
                full[pid]["captain"] = "illegal"
            else:
                r = rank[pid]
                full[pid]["captain"] = "attacker" if r < 5 else "defender"
    return full


def test_transcriptions_are_whole() -> None:
    for text, pieces in ((STRATEGO_TABLE, STRATEGO_PIECES), (LATTAQUE_TABLE, LATTAQUE_PIECES)):
        table = parse_table(text, pieces)
        assert len(table) == 11 and all(len(row) == 11 for row in table.values())
        assert "captain" not in table
        full = with_captain(table, pieces)
        assert set(full) == {p for p, _, _ in pieces}
        assert all(set(row) == set(full) for row in full.values())


@pytest.mark.parametrize(
    ("game", "text", "pieces"),
    [("stratego", STRATEGO_TABLE, STRATEGO_PIECES), ("lattaque", LATTAQUE_TABLE, LATTAQUE_PIECES)],
)
def test_every_cell_matches_the_seed(game: str, text: str, pieces: list[tuple[str, str, int]]) -> None:
    expected = with_captain(parse_table(text, pieces), pieces)
    got = contract(game)["clash"]
    wrong = [
        f"{a} attacks {d}: seed {expected[a][d]}, engine {got[a][d]}"
        for a in expected for d in expected[a] if expected[a][d] != got[a][d]
    ]
    assert not wrong, "\n".join(wrong)
    assert set(got) == set(expected) and all(set(got[a]) == set(expected[a]) for a in got)


@pytest.mark.parametrize(("game", "pieces"), [("stratego", STRATEGO_PIECES), ("lattaque", LATTAQUE_PIECES)])
def test_pieces_as_the_seed_lists_them(game: str, pieces: list[tuple[str, str, int]]) -> None:
    doc = contract(game)
    assert [(p["id"], p["zh"], p["count"]) for p in doc["pieces"]] == pieces
    for p in doc["pieces"]:
        assert p["movable"] is (p["id"] not in IMMOBILE)
        assert p["can_attack"] is (p["id"] not in IMMOBILE)


def test_scout_is_written_in_its_usual_form() -> None:
    for game in ("stratego", "lattaque"):
        zh = {p.id: p.zh for p in load_game(game).pieces}
        assert zh["scout"] == "斥候"  # not 斥侯 (the seeds' piece lists): the usual form, in both scripts
        assert zh["major"] == "中校"  # not 少校 (the tables' spelling)


def test_lattaque_spy_as_stratego_flips_only_general_attacks_spy() -> None:
    seed = contract("lattaque")["clash"]
    flipped = contract("lattaque", {"spy_as_stratego": True})["clash"]
    assert seed["general"]["spy"] == "defender"
    assert flipped["general"]["spy"] == "attacker"
    assert flipped["spy"]["general"] == "attacker"
    changed = [(a, d) for a in seed for d in seed[a] if seed[a][d] != flipped[a][d]]
    assert changed == [("general", "spy")]


def test_stratego_spy_wins_only_when_it_attacks() -> None:
    clash = contract("stratego")["clash"]
    assert clash["spy"]["marshal"] == "attacker"
    assert clash["marshal"]["spy"] == "attacker"
    assert clash["spy"]["general"] == "defender"


def test_luzhanqi_contract_is_complete_and_follows_its_rules() -> None:
    doc = contract("luzhanqi")
    ids = [p["id"] for p in doc["pieces"]]
    clash = doc["clash"]
    assert set(clash) == set(ids) and all(set(row) == set(ids) for row in clash.values())
    ranked = ids[:9]  # commander .. engineer, in rank order
    for i, a in enumerate(ranked):
        for j, d in enumerate(ranked):
            assert clash[a][d] == ("both" if i == j else "attacker" if i < j else "defender")
        assert clash[a]["bomb"] == "both" and clash["bomb"][a] == "both"
        assert clash[a]["mine"] == ("attacker" if a == "engineer" else "defender")
        assert clash[a]["flag"] == "attacker"
    assert clash["bomb"]["flag"] == "both"  # the bomb goes with the flag it strikes; losing the flag loses the game
    assert clash["bomb"]["mine"] == "both"
    for immobile in ("mine", "flag"):
        assert set(clash[immobile].values()) == {"illegal"}
    assert contract("luzhanqi", {"bomb_takes_flag": False})["clash"]["bomb"]["flag"] == "illegal"
    killer = contract("luzhanqi", {"mine_kills_attacker": True})["clash"]
    assert killer["commander"]["mine"] == "both" and killer["engineer"]["mine"] == "attacker"
