"""Club play: many tables on one dashboard. Game clocks (``clock``), the table's publisher to the club's message
broker (``bus``), the MQTT address and credentials (``broker``) and results with standings (``results``).

Nothing here imports paho-mqtt at module load except ``bus`` and the dashboard, which only ``--club`` and
``facedown club`` import, so a table that plays alone never pays for it."""
