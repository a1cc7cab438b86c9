#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Turn the @@BENCH lines of bench guest logs into a table: per driver
the median of a figure's runs and, when it ran more than once, their
spread (min-max) and how many runs failed; then the ratios of the
medians (qpnic to rdma_rxe and to siw; "-" where a figure is missing)
and, for bandwidth, qpnic to the machine's bound ("limit" lines): on
loopback half the memcpy bandwidth (each payload byte is copied twice),
across two guests (rows pair_*) the link's UDP goodput.
The limits are listed after the drivers' figures.
A run that gave no number ("failed", "inf") counts as failed and never
enters the median.

usage: bench-table.py LOG...
"""
import math
import re
import statistics
import sys

DRIVERS = ('qpnic', 'rxe', 'siw')
rows = {}
order = []
for path in sys.argv[1:]:
    for line in open(path, errors='replace'):
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


def limit(metric):
    return summary(rows.get(metric, {}).get('limit', []))[0]


# loopback copies each payload byte twice: half the memcpy bandwidth
copy_bw = limit('memcpy_64k_MBps')
link_bw = limit('pair_link_udp_goodput_MBps')


def limit_of(metric):
    """The bound of a bandwidth figure, or None."""
    m = re.match(r'(pair_)?(write|read|send)_bw_', metric)
    if not m:
        return None
    if m.group(1):
        return link_bw
    return copy_bw / 2 if copy_bw else None


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
