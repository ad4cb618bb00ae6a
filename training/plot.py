"""Loss curves as a PNG, written with numpy and zlib only (no plotting library).

The picture: a white canvas, a frame with the y range labelled at top and bottom and the
x range (epochs) at left and right, one coloured polyline with point markers per series, and
a legend; or several such panels one above the other (:func:`plot_panels`). Text uses a
built-in 3x5 pixel font, so it needs no font files.
"""

from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

import numpy as np

# 3x5 glyphs, one string of 5 rows of 3 bits each.
_FONT = {
    "0": "111101101101111", "1": "010110010010111", "2": "111001111100111",
    "3": "111001111001111", "4": "101101111001001", "5": "111100111001111",
    "6": "111100111101111", "7": "111001001010010", "8": "111101111101111",
    "9": "111101111001111", ".": "000000000000010", "-": "000000111000000",
    "+": "000010111010000", " ": "000000000000000", ":": "000010000010000",
    "a": "000011101101011", "b": "100110101101110", "c": "000111100100111",
    "d": "001011101101011", "e": "000111111100111", "f": "011100110100100",
    "g": "000111101011110", "h": "100110101101101", "i": "010000010010010",
    "k": "100101110101101", "l": "110010010010111", "m": "000111111101101",
    "n": "000110101101101", "o": "000111101101111", "p": "000111101111100",
    "r": "000111100100100", "s": "000011110011110", "t": "010111010010011",
    "u": "000101101101111", "v": "000101101101010", "w": "000101101111111",
    "x": "000101010101101", "y": "000101111001110", "(": "010100100100010",
    ")": "010001001001010", "/": "001001010100100", "=": "000111000111000",
    "_": "000000000000111", "j": "001000001101010", "q": "000111101111001",
    "z": "000111010100111", ",": "000000000010100", "%": "101001010100101",
}
COLOURS = [(31, 119, 180), (214, 39, 40), (44, 160, 44), (148, 103, 189), (255, 127, 14),
           (140, 86, 75), (227, 119, 194), (23, 190, 207)]


def write_png(path: str | Path, image: np.ndarray) -> None:
    """Write an ``[height, width, 3]`` uint8 RGB array as a PNG file."""
    image = np.ascontiguousarray(image, dtype=np.uint8)
    h, w, _ = image.shape
    raw = b"".join(b"\x00" + image[y].tobytes() for y in range(h))  # filter 0 per row

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return (struct.pack(">I", len(data)) + body
                + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF))

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_bytes(png)


def _text(img: np.ndarray, x: int, y: int, text: str, colour=(0, 0, 0), scale: int = 2) -> None:
    """Draw ``text`` with its top-left corner at pixel (x, y)."""
    for ch in text.lower():
        glyph = _FONT.get(ch, _FONT[" "])
        for r in range(5):
            for c in range(3):
                if glyph[r * 3 + c] == "1":
                    y0, x0 = y + r * scale, x + c * scale
                    img[max(y0, 0):max(y0 + scale, 0), max(x0, 0):max(x0 + scale, 0)] = colour
        x += 4 * scale


def _line(img: np.ndarray, x0: float, y0: float, x1: float, y1: float, colour,
          thick: int = 1) -> None:
    n = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
    xs = np.rint(np.linspace(x0, x1, n)).astype(int)
    ys = np.rint(np.linspace(y0, y1, n)).astype(int)
    h, w, _ = img.shape
    for dx in range(-(thick // 2), thick - thick // 2):
        for dy in range(-(thick // 2), thick - thick // 2):
            xx, yy = np.clip(xs + dx, 0, w - 1), np.clip(ys + dy, 0, h - 1)
            img[yy, xx] = colour


def _tick(value: float, span: float) -> str:
    """An axis label with as many decimals as the axis' span needs (four for a loss curve
    a few hundredths high, none for Elo spanning hundreds)."""
    decimals = min(4, max(0, 2 - math.floor(math.log10(span)))) if span > 0 else 4
    return f"{value:.{decimals}f}"


Series = dict[str, tuple[list[float], list[float]]]


def plot_curves(path: str | Path, series: Series, title: str = "", width: int = 720,
                height: int = 440, x_label: str = "epoch") -> None:
    """Plot named ``(xs, ys)`` series (e.g. train and validation loss per epoch) to a PNG."""
    plot_panels(path, [(series, title, x_label)], width, height)


def plot_panels(path: str | Path, panels: list[tuple[Series, str, str]], width: int = 720,
                height: int = 440) -> None:
    """Plot panels one above the other to a PNG, each ``(series, title, x_label)`` as
    :func:`plot_curves` draws one, ``height`` pixels high: series of different scales
    (weights, a score) each on an axis of its own."""
    img = np.full((height * max(1, len(panels)), width, 3), 255, np.uint8)
    for k, (series, title, x_label) in enumerate(panels):
        _panel(img[k * height:(k + 1) * height], series, title, x_label)   # a view: drawn in
    write_png(path, img)


def _panel(img: np.ndarray, series: Series, title: str, x_label: str) -> None:
    height, width, _ = img.shape
    left, right, top, bottom = 80, width - 20, 40, height - 50
    pts = [(x, y) for xs, ys in series.values() for x, y in zip(xs, ys)
           if np.isfinite(x) and np.isfinite(y)]
    if pts:
        xs_all, ys_all = zip(*pts)
        x_lo, x_hi = min(xs_all), max(xs_all)
        y_lo, y_hi = min(ys_all), max(ys_all)
    else:
        x_lo, x_hi, y_lo, y_hi = 0.0, 1.0, 0.0, 1.0
    if x_hi == x_lo:
        x_hi = x_lo + 1
    pad = (y_hi - y_lo) * 0.05 or 0.01
    y_lo, y_hi = y_lo - pad, y_hi + pad

    def px(x: float, y: float) -> tuple[float, float]:
        return (left + (x - x_lo) / (x_hi - x_lo) * (right - left),
                bottom - (y - y_lo) / (y_hi - y_lo) * (bottom - top))

    grey = (200, 200, 200)
    for k in range(1, 4):  # light horizontal grid
        yy = top + k * (bottom - top) / 4
        _line(img, left, yy, right, yy, (235, 235, 235))
        _text(img, 4, int(yy) - 5, _tick(y_hi - k * (y_hi - y_lo) / 4, y_hi - y_lo), (90, 90, 90))
    for a, b, c, d in ((left, top, right, top), (left, bottom, right, bottom),
                       (left, top, left, bottom), (right, top, right, bottom)):
        _line(img, a, b, c, d, grey)
    _text(img, 4, top - 5, _tick(y_hi, y_hi - y_lo))
    _text(img, 4, bottom - 5, _tick(y_lo, y_hi - y_lo))
    _text(img, left, bottom + 8, f"{x_lo:g}")
    _text(img, right - 8 * len(f"{x_hi:g}"), bottom + 8, f"{x_hi:g}")
    _text(img, (left + right) // 2 - 4 * len(x_label), bottom + 24, x_label)
    if title:
        _text(img, left, 10, title)
    for i, (name, (xs, ys)) in enumerate(series.items()):
        colour = COLOURS[i % len(COLOURS)]
        points = [px(x, y) for x, y in zip(xs, ys) if np.isfinite(x) and np.isfinite(y)]
        for (a, b), (c, d) in zip(points, points[1:]):
            _line(img, a, b, c, d, colour, thick=2)
        for a, b in points:
            img[max(int(b) - 2, 0):int(b) + 3, max(int(a) - 2, 0):int(a) + 3] = colour
        ly = top + 10 + 16 * i
        _line(img, right - 150, ly + 4, right - 125, ly + 4, colour, thick=3)
        _text(img, right - 118, ly, name, colour)
