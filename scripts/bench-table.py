#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Turn the @@BENCH lines of a bench guest log into a table: per driver
the median of a figure's runs and, when it ran more than once, their
spread (min-max) and how many runs failed; then the ratios of the
medians (qpnic to rdma_rxe and to siw; "-" where a figure is missing)
and, for loopback bandwidth, qpnic to the machine's bound: half its
memcpy bandwidth (a "limit" line; each payload byte is copied twice).
The limits are listed after the drivers' figures.
A run that gave no number ("failed", "inf") counts as failed and never
enters the median.

usage: bench-table.py LOG
"""
import math
import re
import statistics
import sys

DRIVERS = ('qpnic', 'rxe', 'siw')
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
    rows[metric].setdefault(drv, []).append(val)


def num(v):
    """A figure, or None for one that did not parse ("failed", "inf")."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def fmt(f):
    return f'{f:.4g}' if f < 1e6 else f'{f:.0f}'


def summary(runs):
    """(median or None, the cell's text)."""
    if not runs:
        return None, '-'
    good = [f for f in map(num, runs) if f is not None]
    failed = len(runs) - len(good)
    if not good:
        return None, 'failed'
    med = statistics.median(good)
    text = fmt(med)
    if len(runs) > 1:
        text += f' [{fmt(min(good))}-{fmt(max(good))}]'
    if failed:
        text += f' {failed}/{len(runs)}F'
    return med, text


def ratio(a, b):
    return f'{a / b:10.2f}' if a is not None and b else f'{"-":>10}'


# loopback copies each payload byte twice: half the memcpy bandwidth
copy_bw, _ = summary(rows.get('memcpy_64k_MBps', {}).get('limit', []))


def limit_of(metric):
    """The bound of a loopback bandwidth figure, or None."""
    if not copy_bw or not re.match(r'(write|read|send)_bw_', metric):
        return None
    return copy_bw / 2


limits = [m for m in order if set(rows[m]) == {'limit'}]
order = [m for m in order if m not in limits]
runs = max((len(v) for r in rows.values() for v in r.values()), default=0)
width = 26 if runs > 1 else 12
print(f'{"metric":34} ' + ' '.join(f'{d if d != "rxe" else "rdma_rxe":>{width}}'
                                   for d in DRIVERS) +
      f' {"qpnic/rxe":>10} {"qpnic/siw":>10} {"qpnic/limit":>11}')
for metric in order:
    cells = [summary(rows[metric].get(d, [])) for d in DRIVERS]
    (q, _), (x, _), (s, _) = cells
    print(f'{metric:34} ' + ' '.join(f'{t:>{width}}' for _, t in cells) +
          f' {ratio(q, x)} {ratio(q, s)} {ratio(q, limit_of(metric)):>11}')
if limits:
    print('\nlimits of the machine, in the same run:')
for metric in limits:
    print(f'{metric:34} {summary(rows[metric]["limit"])[1]:>{width}}')
if runs > 1:
    print(f'\n(median [min-max] of up to {runs} runs; nF: n runs gave no figure)')
