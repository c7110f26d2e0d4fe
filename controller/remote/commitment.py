"""Deployment commitments: before play a board publishes one salted digest per station of its deployment; after
the game each side reveals its salts, and anyone holding the post-game record checks that the referee judged the
very deployments committed to, and that replaying the record's moves on them gives the rulings it announced.

Pure: no files, no sockets. A digest alone says nothing of the piece (16 random bytes of salt per station)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from controller.rules import Move, new_game, redact_ruling


def make_salts(placement: Mapping[str, str]) -> dict[str, str]:
    return {station: secrets.token_hex(16) for station in placement}


def digest(game_id: str, seat: str, station: str, piece: str, salt: str) -> str:
    return hashlib.sha256(f"facedown-commit:{game_id}:{seat}:{station}:{piece}:{salt}".encode()).hexdigest()


def commit(game_id: str, seat: str, placement: Mapping[str, str], salts: Mapping[str, str]) -> dict[str, str]:
    """The published commitment of ``seat``'s deployment: a digest per station."""
    return {s: digest(game_id, seat, s, piece, salts[s]) for s, piece in placement.items()}


def check_deployment(game_id: str, seat: str, judged: Mapping[str, str], commitment: Mapping[str, str],
                     salts: Mapping[str, str]) -> list[str]:
    """Every way the deployment the referee judged (``judged``, from the record) differs from the one committed
    to; empty when it is the same."""
    problems = []
    if set(judged) != set(commitment):
        problems.append(f"{seat}: the record's stations differ from the committed ones "
                        f"({', '.join(sorted(set(judged) ^ set(commitment))[:5])})")
    for station in sorted(set(judged) & set(commitment)):
        salt = salts.get(station)
        if salt is None or digest(game_id, seat, station, judged[station], salt) != commitment[station]:
            problems.append(f"{seat}: {station} holds {judged[station]} in the record, not what was committed")
    return problems


def replay_problems(game: str, options: Mapping[str, Any], deployments: Mapping[str, Mapping[str, str]],
                    moves: Sequence[Mapping[str, Any]], rulings: Sequence[Mapping[str, Any]]) -> list[str]:
    """Replay the record's ``moves`` on its ``deployments`` with the rules and compare each ruling with the one the
    referee announced (``rulings``, each as its post-game reveal: kind, outcome, pieces); empty when all agree."""
    st = new_game(game, dict(options))
    for side in st.game.sides:
        st.deploy(side, dict(deployments[side]))
    problems = []
    for i, (m, said) in enumerate(zip(moves, rulings, strict=False)):
        try:
            ruling = st.apply(Move(m["from"], m["to"]))
        except Exception as exc:  # a move the rules refuse on these deployments: the record is not what was played
            return [*problems, f"move {i + 1} ({m['from']}-{m['to']}) is refused on the committed deployments: {exc}"]
        mine = redact_ruling(ruling, "arbiter", game_over=True)
        for key in ("kind", "outcome", "piece", "defender_piece"):
            if mine.get(key) != said.get(key):
                problems.append(f"move {i + 1} ({m['from']}-{m['to']}): {key} is {mine.get(key)!r} on the committed "
                                f"deployments, the referee said {said.get(key)!r}")
    if len(moves) != len(rulings):
        problems.append(f"the record has {len(moves)} moves but {len(rulings)} rulings")
    return problems


__all__ = ["check_deployment", "commit", "digest", "make_salts", "replay_problems"]
