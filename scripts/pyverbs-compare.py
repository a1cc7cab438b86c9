#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Compare the whole pyverbs suite on qpnic and on rdma_rxe from one log.

usage: pyverbs-compare.py LOG

Reads the "@@PYVERBS <label> <summary>" and "@@PYVERBS-<label> <outcome>
<test> [secs] [reason]" lines the stock guest prints, and prints both
summaries and every test whose outcome differs, with qpnic's reason.
"""
import re
import sys

summary = {}
outcome = {'qpnic': {}, 'rxe': {}}
for line in open(sys.argv[1], errors='replace'):
    m = re.match(r'^@@PYVERBS (\S+) (.*)$', line)
    if m:
        summary[m.group(1)] = m.group(2).strip()
        continue
    m = re.match(r'^@@PYVERBS-(\S+) (\S+) (\S+) \[[0-9.]+s\] ?(.*)$', line)
    if m and m.group(1) in outcome:
        outcome[m.group(1)][m.group(3)] = (m.group(2), m.group(4).strip())

for label in ('qpnic', 'rxe'):
    print(f'pyverbs whole suite on {label:5}: {summary.get(label, "not run")}')
diff = sorted(t for t in set(outcome['qpnic']) | set(outcome['rxe'])
              if outcome['qpnic'].get(t, ('-',))[0] != outcome['rxe'].get(t, ('-',))[0])
if diff:
    print(f'{len(diff)} tests differ (qpnic vs rdma_rxe):')
for t in diff:
    q = outcome['qpnic'].get(t, ('-', ''))
    r = outcome['rxe'].get(t, ('-', ''))
    print(f'  {t:55} qpnic {q[0]:5} rxe {r[0]:5}  {q[1][:90]}')
