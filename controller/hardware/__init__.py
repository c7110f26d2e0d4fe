"""Building and deploying a FaceDown board: wiring tables from hardware profiles (``wiring``), bills of materials
(``bom``) and the Raspberry Pi's systemd service and udev rule (``service``). Nothing here touches GPIO."""
