"""The records the engine, its rule hooks and its views share, in a leaf module (it imports nothing of the package,
so every other module can import it at the top): who sees a reveal (``ALL``), a piece on the board, a removal, a
reveal, and ``Pending``, what a ruling collects while a move is being judged."""

from __future__ import annotations

from dataclasses import dataclass, field

from .say import Say

#: The audience "everyone at the table" in reveals and notices.
ALL = "all"


_OWNER_ONLY: dict[str, frozenset[str]] = {}


def _owner_only(owner: str) -> frozenset[str]:
    """The set of sides that know a piece nobody else has seen: one per owner, shared by its pieces (a frozenset)."""
    known = _OWNER_ONLY.get(owner)
    if known is None:
        known = _OWNER_ONLY[owner] = frozenset((owner,))
    return known


class Piece:
    """One physical piece: an opaque id, its kind, its owner and who knows what it is."""

    __slots__ = ("uid", "type", "owner", "known_to", "public")

    def __init__(self, uid: int, type: str, owner: str) -> None:
        self.uid = uid
        self.type = type
        self.owner = owner
        #: the sides that know its kind; replaced, never changed in place, so copies share it (look-ahead copies
        #: a whole board per position tried)
        self.known_to: frozenset[str] = _owner_only(owner)
        self.public = False

    def copy(self) -> Piece:
        p = _new_piece(Piece)
        p.uid, p.type, p.owner, p.known_to, p.public = self.uid, self.type, self.owner, self.known_to, self.public
        return p

    def __repr__(self) -> str:
        return f"Piece({self.uid}, {self.type!r}, {self.owner!r})"


_new_piece = object.__new__


@dataclass(frozen=True, slots=True)
class Removal:
    """A piece that left the game, where it stood, and why."""

    station: str
    uid: int
    owner: str
    type: str


@dataclass(frozen=True, slots=True)
class Reveal:
    """A piece shown by a ruling: to everyone (``to == ('all',)``) or to some sides only."""

    station: str | None
    uid: int
    owner: str
    type: str
    to: tuple[str, ...]


@dataclass
class Pending:
    """What a ruling collects while it is being judged (the clash, its effects and the hooks add to it)."""

    removed: list[Removal] = field(default_factory=list)
    reveals: list[Reveal] = field(default_factory=list)
    notices: list[tuple[str, Say]] = field(default_factory=list)  # (audience, message object)
    out: list[tuple[str, Say]] = field(default_factory=list)  # (side, reason) a hook puts out of the game
