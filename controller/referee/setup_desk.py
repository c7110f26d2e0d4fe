"""The referee's setup desk: registers each seat's deployment, keeps each seat's private guided order, and on an
RFID board reads deployments and tag identities off the board."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import TYPE_CHECKING

from controller.rules.errors import SetupProblem
from controller.rules.say import say
from controller.sensing.base import Snapshot

if TYPE_CHECKING:
    from .session import Session


class SetupDesk:
    """Setup for one session (see the module docstring); every method runs under the session's lock."""

    def __init__(self, session: Session, tag_pieces: Mapping[str, tuple[str, str]] | None = None) -> None:
        self.session = session
        # RFID boards: tag uid -> (side, piece id), from `facedown tags enroll`; setups are then read off the board
        self.tag_pieces: dict[str, tuple[str, str]] = {t.upper(): v for t, v in (tag_pieces or {}).items()}
        self.rng = random.Random()  # guided setup: each seat's private order of pieces, random per seat and game
        self._guided: dict[str, list[str]] = {}
        self._seen: dict[str, tuple] = {}

    def register(self, side: str, placement: Mapping[str, str]) -> list[SetupProblem]:
        """Register ``side``'s deployment; every problem (empty when accepted). Play starts once all are in and the
        board's occupancy matches."""
        from controller.rules.setup import check_deployment

        session = self.session
        with session.lock:
            st = session.state
            if st.phase != "setup":
                return [SetupProblem(None, "the game has already started", say("setup.already_started"))]
            if side in st.deployments:
                return [SetupProblem(None, f"{side} has already deployed", say("setup.already_deployed", side=side))]
            problems = check_deployment(session.game, side, placement, st.options)
            if problems:
                session.announce({"event": "setup", "player": side, "status": "rejected",
                                  "problems": [p.to_json() for p in problems],
                                  "say": say("setup.rejected", player=side, count=len(problems))}, audience=(side,))
                return problems
            session.record("deploy", {"side": side, "placement": dict(placement)})
            st.deploy(side, placement)
            session.announce({"event": "setup", "player": side, "status": "registered",
                              "say": say("setup.registered", player=side)})
            if st.phase != "setup":
                session.expect_whole_board("setup.lay_out")
            return []

    def guided_order(self, side: str) -> list[str]:
        """The order in which ``side``'s seat is asked for its pieces in guided setup (one piece id per piece): a
        fresh random order per seat and game, completable under the setup constraints, built once and told only
        to that seat (never published)."""
        from controller.rules.deploy import guided_order

        session = self.session
        with session.lock:
            if side not in session.game.sides:
                raise ValueError(f"no seat {side!r}; sides are {', '.join(session.game.sides)}")
            if side not in self._guided:
                self._guided[side] = guided_order(session.game, side, self.rng, session.state.options)
            return list(self._guided[side])

    def read_tags(self, snap: Snapshot) -> None:
        """RFID boards read each side's deployment off the board: once a side's whole army stands in its area, it
        is registered (or its problems are told to that seat once)."""
        if not self.tag_pieces:
            return
        game = self.session.game
        army = sum(p.count for p in game.pieces)
        zones = game.setup.zones[game.setup.deploy_zone]
        for side in game.sides:
            if side in self.session.state.deployments:
                continue
            placement = {}
            for station, tag in snap.tags.items():
                who = self.tag_pieces.get(tag.upper())
                if who is not None and who[0] == side and station in zones[side]:
                    placement[station] = who[1]
            if len(placement) < army:
                continue
            key = tuple(sorted(placement.items()))
            if self._seen.get(side) == key:
                continue
            self._seen[side] = key
            self.register(side, placement)  # registers it, or tells that seat every problem
