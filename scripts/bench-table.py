#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Turn the @@BENCH lines of a bench guest log into a table with ratios.

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


print(f'{"metric":44} {"qpnic":>12} {"rdma_rxe":>12} {"qpnic/rxe":>10}')
for metric in order:
    r = rows[metric]
    q, x = num(r.get('qpnic')), num(r.get('rxe'))
    ratio = f'{q / x:10.2f}' if q is not None and x else f'{"-":>10}'
    print(f'{metric:44} {r.get("qpnic", "-"):>12} {r.get("rxe", "-"):>12} {ratio}')
