"""The web referee: seat, spectator and arbiter pages with live updates, served from the table's views only.

``create_app(table)`` (in ``app.py``) builds the Flask app; ``WebServer`` (in ``server.py``) serves it with waitress.
Nothing here is imported until ``facedown play`` serves the page, so the referee starts fast without it.
"""
