"""Runs at power-on on the Pico: the FaceDown scanner on USB serial, configured by config.json."""

import fd_board

fd_board.main()
