"""FaceDown: everything that runs on the referee Pi except the web page."""
