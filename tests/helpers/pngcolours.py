#!/usr/bin/python3
# Count the pixels of a PNG: its size, how many distinct colours, white
# pixels, and the pixels of each label colour of cachescope plot (exact
# RGB, as tools/svg.c fills them).  Used by tests/test_plot.c:
#   pngcolours.py FILE.png
import sys
from PIL import Image

LABELS = {
    "normal": (0xC3, 0xC7, 0xCE),
    "thrash": (0xD6, 0x27, 0x28),
    "false_sharing": (0x8E, 0x44, 0xC9),
    "leak": (0xFF, 0x8C, 0x00),
}

img = Image.open(sys.argv[1]).convert("RGB")
counts = {}
for c, rgb in img.getcolors(maxcolors=1 << 24):
    counts[rgb] = c
print("size %d %d" % img.size)
print("colours %d" % len(counts))
print("white %d" % counts.get((255, 255, 255), 0))
for name, rgb in LABELS.items():
    print("%s %d" % (name, counts.get(rgb, 0)))
