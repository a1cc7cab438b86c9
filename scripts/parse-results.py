#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Count results in qpnic guest logs and look for kernel checker reports.

usage: parse-results.py [--expect-ktap] LABEL=LOG...

Counts every KUnit case (KTAP read from debugfs, between @@KTAP-BEGIN and
@@KTAP-END) and every guest test (@@RESULT lines). A guest that did not
reach @@QPNIC-EXIT, a missing KTAP block where one is expected, and any
KASAN / lockdep / kmemleak / WARN / BUG / Oops report count as failures.
Prints one line per failure and ends with "N passed, N failed".
"""
import collections
import re
import sys

CASE = re.compile(r'^    (not ok|ok) \d+ (?:- )?(\S+)(.*)$')
SUITE = re.compile(r'^(not ok|ok) \d+ (?:- )?(\S+)')
RESULT = re.compile(r'^@@RESULT (PASS|FAIL|SKIP) (.*)$')
SPLATS = [
    r'BUG: ', r'WARNING: ', r'KASAN', r'UBSAN', r'Oops', r'general protection fault',
    r'possible circular locking', r'possible recursive locking',
    r'inconsistent lock state', r'suspicious RCU usage', r'lock held when returning',
    r'unreferenced object', r'ODEBUG', r'list_(add|del) corruption',
    r'Kernel panic', r'blocked for more than', r'INFO: lockdep',
    r'INFO: trying to register non-static key',
]
SPLAT = re.compile('|'.join(SPLATS))


def parse(label, path, expect_ktap):
    passed, failed, skipped = 0, [], 0
    try:
        lines = open(path, errors='replace').read().splitlines()
    except OSError as e:
        return 0, [f'{label}: cannot read log {path}: {e}'], 0
    in_ktap = in_leak = False
    saw_ktap = saw_exit = False
    suite_cases = 0
    leak = []
    last_result, console = 'nothing', collections.deque(maxlen=3)
    for raw in lines:
        line = raw.rstrip()
        if line.startswith('@@KTAP-BEGIN'):
            in_ktap, saw_ktap, suite_cases = True, True, 0
            continue
        if line.startswith('@@KTAP-END'):
            in_ktap = False
            continue
        if line.startswith('@@KMEMLEAK-BEGIN'):
            in_leak = True
            continue
        if line.startswith('@@KMEMLEAK-END'):
            in_leak = False
            continue
        if line.startswith('@@QPNIC-EXIT'):
            saw_exit = True
        if in_leak:
            if line.strip():
                leak.append(line)
            continue
        if in_ktap:
            m = CASE.match(line)
            if m:
                suite_cases += 1
                if '# SKIP' in m.group(3):
                    skipped += 1
                elif m.group(1) == 'ok':
                    passed += 1
                else:
                    failed.append(f'{label}: KUnit {m.group(2)}')
                continue
            m = SUITE.match(line)
            if m:
                if m.group(1) == 'not ok' and suite_cases == 0:
                    failed.append(f'{label}: KUnit suite {m.group(2)} ran no case')
                suite_cases = 0
            continue
        m = RESULT.match(line)
        if m:
            last_result = m.group(2)[:100]
            if m.group(1) == 'PASS':
                passed += 1
            elif m.group(1) == 'SKIP':
                skipped += 1
            else:
                failed.append(f'{label}: {m.group(2)}')
            continue
        if SPLAT.search(line) and not line.startswith('@@'):
            failed.append(f'{label}: kernel report: {line.strip()[:160]}')
        if line.startswith('[') and 'speed is unknown' not in line:
            console.append(line.strip()[:160])
    if leak:
        failed.append(f'{label}: kmemleak: {leak[0][:120]} ({len(leak)} lines)')
    if expect_ktap and not saw_ktap:
        failed.append(f'{label}: no KUnit results in the log')
    if not saw_exit:
        # (where it stopped, for a CI run whose logs are gone)
        failed.append(f'{label}: guest did not finish; last result: {last_result}; '
                      f'last kernel lines: {" | ".join(console) or "none"}')
    return passed, failed, skipped


def main(argv):
    expect_ktap = False
    total_pass, total_fail, total_skip = 0, [], 0
    for arg in argv:
        if arg == '--expect-ktap':
            expect_ktap = True
            continue
        label, _, path = arg.partition('=')
        p, f, s = parse(label, path, expect_ktap)
        expect_ktap = False
        print(f'{label}: {p} passed, {len(f)} failed, {s} skipped ({path})')
        total_pass += p
        total_fail += f
        total_skip += s
    for f in total_fail:
        print(f'FAILED: {f}')
    print(f'{total_pass} passed, {len(total_fail)} failed'
          + (f' ({total_skip} skipped)' if total_skip else ''))
    return 1 if total_fail else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
