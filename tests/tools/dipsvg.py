#!/usr/bin/python3
"""Read bbrplot's dip plot back from its SVG: the time axis of each panel and
where each collapse marker sits on it.

    dipsvg.py PLOT.svg COLOUR

Prints, one per line:
  lower_ticks V:X ...        the lower panel's tick labels and their pixels
  upper_grid X ...           the upper panel's vertical grid lines (pixels)
  lower_grid X ...           the lower panel's
  marker PANEL T             each point of COLOUR (rgb(r, g, b), as gnuplot
                             writes it) inside the plot's width, in panel
                             upper or lower, as a time (s) read on the lower
                             panel's axis
Nothing here knows what the plot should show: the test compares."""
import re
import sys

svg = open(sys.argv[1]).read()
colour = re.sub(r"\s+", "", sys.argv[2])

# tick labels: a translate(x,y) group holding one <text>NUMBER</text>
ticks = [(float(x), float(y), float(v)) for x, y, v in re.findall(
    r'translate\(([\d.]+),([\d.]+)\)[^>]*text-anchor="middle">\s*<text>(-?[\d.]+)</text>', svg)]
grid = [(float(x), float(y1), float(y2)) for x, y1, y2 in re.findall(
    r"class=\"gridline\"\s+d='M([\d.]+),([\d.]+) L\1,([\d.]+)", svg)]
if not ticks or not grid:
    sys.exit("no tick labels or grid lines found")
bottom = max(y for _, y, _ in ticks)
lower = sorted((x, v) for x, y, v in ticks if y == bottom)
(x0, v0), (x1, v1) = lower[0], lower[-1]
lower_top = min(min(y1, y2) for _, y1, y2 in grid if max(y1, y2) > bottom - 30)
print("lower_ticks", " ".join(f"{v:g}:{x:.2f}" for x, v in lower))
print("upper_grid", " ".join(f"{x:.2f}" for x, y1, y2 in sorted(grid) if max(y1, y2) < lower_top))
print("lower_grid", " ".join(f"{x:.2f}" for x, y1, y2 in sorted(grid) if max(y1, y2) >= lower_top))
for x, y, c in re.findall(r"<use xlink:href='#gpPt\d+' transform='translate\(([\d.]+),([\d.]+)\)[^']*' color='([^']+)'", svg):
    x, y = float(x), float(y)
    if re.sub(r"\s+", "", c) == colour and x0 <= x <= x1:
        panel = "upper" if y < lower_top else "lower"
        print("marker", panel, f"{v0 + (x - x0) * (v1 - v0) / (x1 - x0):.4f}")
