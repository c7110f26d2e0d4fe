"""Building and deploying a FaceDown board: the build design (``build``), wiring tables (``wiring``), bills of materials
(``bom``), the mechanical design and air gap (``mechanics``), 74HC165 placement and wire runs (``chain``), the
schematic (``schematic``), hw-test's wire findings (``faults``), RFID modules (``readers``) and the Raspberry Pi's
systemd service and udev rule (``service``). Nothing here touches GPIO, and nothing here draws a board
(controller/board_svg.py and controller/board_layers.py do, from controller/board_geometry.py)."""
