"""QR codes for the seat, spectator and arbiter links: SVG for the arbiter page, text blocks for the terminal."""

from __future__ import annotations

import io


def _code(url: str):  # noqa: ANN202 - qrcode has no type hints
    import qrcode

    code = qrcode.QRCode(border=2, error_correction=qrcode.constants.ERROR_CORRECT_L)
    code.add_data(url)
    code.make(fit=True)
    return code


def qr_svg(url: str) -> str:
    """An SVG drawing of the QR code for ``url`` (no Pillow needed)."""
    import qrcode.image.svg

    img = _code(url).make_image(image_factory=qrcode.image.svg.SvgPathImage)
    return img.to_string(encoding="unicode")


def qr_text(url: str) -> str:
    """The QR code for ``url`` drawn with block characters, for a terminal."""
    out = io.StringIO()
    _code(url).print_ascii(out=out, invert=True)
    return out.getvalue()
