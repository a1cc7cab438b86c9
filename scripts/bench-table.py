#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Turn the @@BENCH lines of a bench guest log into a table with ratios
(qpnic to rdma_rxe and to siw; "-" where a figure is missing or failed).

usage: bench-table.py LOG
"""
import math
import re
import sys

rows = {}
order = []
for line in open(sys.argv[1], errors='replace'):
    m = re.match(r'^@@BENCH (\S+) (\S+) (\S+)', line)
    if not m:
        continue
    metric, drv, val = m.groups()
    if metric not in rows:
        rows[metric] = {}
        order.append(metric)
    rows[metric][drv] = val


def num(v):
    """A figure, or None for one that did not parse ("failed", "inf")."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def ratio(a, b):
    return f'{a / b:10.2f}' if a is not None and b else f'{"-":>10}'


print(f'{"metric":44} {"qpnic":>12} {"rdma_rxe":>12} {"siw":>12} '
      f'{"qpnic/rxe":>10} {"qpnic/siw":>10}')
for metric in order:
    r = rows[metric]
    q, x, s = (num(r.get(d)) for d in ('qpnic', 'rxe', 'siw'))
    print(f'{metric:44} {r.get("qpnic", "-"):>12} {r.get("rxe", "-"):>12} '
          f'{r.get("siw", "-"):>12} {ratio(q, x)} {ratio(q, s)}')
