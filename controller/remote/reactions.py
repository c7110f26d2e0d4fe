"""A remote seat's reaction desk: its open offers are the host's (told with each view), and its answers and standing
choice go to the host, which judges them; nothing is decided on this board."""

from __future__ import annotations

from typing import Any

from controller.referee.reaction_desk import ReactionDesk, ReactionRefused
from controller.rules import reactions as _reactions


class RemoteReactions(ReactionDesk):
    """The mirror session's desk (``send``: a message to the host)."""

    resumed_by = "answer when it is resumed"

    def __init__(self, session: Any, send: Any) -> None:
        super().__init__(session)
        self.send = send

    def tell_offers(self, why: str, mover: str | None = None) -> None:
        """The host tells each seat of its offers as they open and close."""

    def answer(self, side: str, offer_id: int, accept: bool, *, target: str | None = None) -> dict[str, Any]:
        """Send ``side``'s answer to its open offer to the host (the outcome comes back as its messages do)."""
        with self.session.lock:
            offer = self.open_offer(side, offer_id, target)
            self.send({"type": "react", "offer": offer_id, "accept": bool(accept), "target": offer.target,
                       "ply": self.session.state.ply})
            return {"offer": offer_id, "accepted": accept, "sent": True}

    def set_automatic(self, side: str, on: bool) -> None:
        session = self.session
        with session.lock:
            st = session.state
            if not _reactions.asks(st):
                raise ReactionRefused("this game takes every reaction at once (option reactions: automatic)")
            if st.phase == "over":
                raise ReactionRefused("the game is over")
            self.send({"type": "react_auto", "on": bool(on)})


__all__ = ["RemoteReactions"]
