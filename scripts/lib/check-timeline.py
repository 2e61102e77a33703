#!/usr/bin/env python3
"""Tells whether a screenshot (PNG) shows something: a timeline page that drew its chart, not a blank one.

    check-timeline.py SHOT.png [--min FRACTION]

Counts the pixels that are neither white nor the picture's most common colour (its background),
each within a tolerance of 32 in every channel, so faint shading does not count. Prints one line,
`non-blank: <fraction of such pixels>`, and exits 0 if that is above FRACTION (default 0.01),
1 if not, 2 if the file is not a PNG it can read. Standard library only: the PNG is decoded here
(8 or 16 bits, grey, RGB, palette, with or without alpha, not interlaced).
"""

import argparse
import struct
import sys
import zlib
from collections import Counter

TOLERANCE = 32


def decode(path):
    """(width, height, rows): rows of (r, g, b) tuples."""
    with open(path, "rb") as f:
        blob = f.read()
    if blob[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, palette, header = 8, [], None, None
    while pos + 8 <= len(blob):
        length, kind = struct.unpack(">I4s", blob[pos:pos + 8])
        body = blob[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            palette = [tuple(body[i:i + 3]) for i in range(0, len(body), 3)]
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError("no IHDR chunk")
    width, height, depth, color, _, _, interlace = header
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(color)
    if channels is None or depth not in (8, 16) or (color == 3 and depth != 8) or interlace:
        raise ValueError(f"unsupported PNG: color type {color}, bit depth {depth}, interlace {interlace}")
    bpp = channels * depth // 8
    stride = width * bpp
    raw = zlib.decompress(b"".join(idat))
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:  # Sub
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif kind == 2:  # Up
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif kind == 3:  # Average
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif kind == 4:  # Paeth
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        elif kind != 0:
            raise ValueError(f"bad filter type {kind} in row {y}")
        prev = line
        step = depth // 8  # 16-bit samples: keep the high byte
        samples = line[::step] if step > 1 else line
        if color == 3:
            rows.append([palette[i] for i in samples])
        elif color in (0, 4):
            rows.append([(v, v, v) for v in samples[::channels]])
        else:
            rows.append(list(zip(samples[0::channels], samples[1::channels], samples[2::channels])))
    return width, height, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("png")
    parser.add_argument("--min", type=float, default=0.01, help="fraction of pixels that must be drawn (default 0.01)")
    args = parser.parse_args()
    try:
        width, height, rows = decode(args.png)
    except (OSError, ValueError, zlib.error, struct.error) as error:
        print(f"cannot read {args.png}: {error}", file=sys.stderr)
        return 2
    counts = Counter()
    for row in rows:
        counts.update(row)
    total = width * height
    background = counts.most_common(1)[0][0] if counts else (255, 255, 255)

    def near(pixel, other):
        return all(abs(p - o) <= TOLERANCE for p, o in zip(pixel, other))

    drawn = sum(count for pixel, count in counts.items() if not near(pixel, (255, 255, 255)) and not near(pixel, background))
    fraction = drawn / total if total else 0.0
    print(f"non-blank: {fraction:.4f}")
    return 0 if fraction > args.min else 1


if __name__ == "__main__":
    sys.exit(main())
