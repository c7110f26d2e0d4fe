"""Rule hooks of land-sea-air chess (陸海空三軍棋, game ``sanjunqi``): its reactions, as data for the general kinds
in ``reactions.py``. Registered as the ``facedown.hooks`` entry point ``sanjunqi_reactions``.

- AA guns and gunboats shoot down enemy aircraft flying over them (seed s10, s18);
- the fort strikes an enemy ship that stops next to it over a shore line, or a land piece next to it over a road or
  the railway, and returns (s11); a submarine slips one step away (the clash table's push);
- an AA gun may engage an enemy aircraft that stops within two steps over land lines or air routes, a gunboat one
  within two steps on the water (s10, s18): optional, so with ``reactions: ask`` the owner is asked.
"""

from __future__ import annotations

from .reactions import Engage, Flyover, Reactions, Sentinel

AIRCRAFT = ("fighter", "recon")

SANJUNQI_REACTIONS = Reactions(
    name="sanjunqi_reactions",
    flyovers=(Flyover("aa_fire", guards=("aa_gun", "gunboat"), aircraft=AIRCRAFT),),
    sentinels=(Sentinel("fort_strike", guards=("fort",), lines=frozenset({"shore", "road", "rail"}), immune=AIRCRAFT),),
    engages=(Engage("aa_engage", reach={"aa_gun": frozenset({"road", "rail", "air", "shore"}), "gunboat": frozenset({"sea"})},
                    aircraft=AIRCRAFT),),
    doc="AA fire over guns, forts' strikes, AA and gunboat engagements (seed 003 s10, s11, s18).",
)
