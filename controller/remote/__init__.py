"""Remote play: one host referees a game whose seats are boards (or phones) elsewhere, over an MQTT broker."""
