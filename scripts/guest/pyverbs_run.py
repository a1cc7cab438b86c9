#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Run Debian's rdma-core pyverbs tests on one device, one line per test.

usage: pyverbs_run.py DEVICE [CLASS...]

Loads /usr/share/doc/rdma-core/tests the way its run_tests.py does and
prints "@@PYTEST <ok|FAIL|ERROR|skip> <Class>.<test> [reason]" for every
test (only those of the named classes, if any), then a summary line
"@@PYTEST-SUMMARY ran=N ok=N fail=N error=N skip=N".
"""
import os
import sys
import unittest
from importlib.machinery import SourceFileLoader

TESTS = '/usr/share/doc/rdma-core/tests'


def flatten(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flatten(t)
        else:
            yield t


class LineResult(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.counts = {'ok': 0, 'FAIL': 0, 'ERROR': 0, 'skip': 0}

    def _line(self, status, test, why=''):
        self.counts[status] += 1
        name = f'{type(test).__name__}.{getattr(test, "_testMethodName", str(test))}'
        why = ' '.join(str(why).split())[:200]
        print(f'@@PYTEST {status} {name}{" " + why if why else ""}', flush=True)

    def addSuccess(self, test):
        self._line('ok', test)

    def addFailure(self, test, err):
        self._line('FAIL', test, err[1])

    def addError(self, test, err):
        self._line('ERROR', test, f'{err[0].__name__}: {err[1]}')

    def addSkip(self, test, reason):
        self._line('skip', test, reason)

    def addExpectedFailure(self, test, err):
        self._line('ok', test)

    def addUnexpectedSuccess(self, test):
        self._line('FAIL', test, 'unexpected success')


def main():
    dev, classes = sys.argv[1], set(sys.argv[2:])
    sys.path.insert(0, TESTS)
    os.chdir(TESTS)
    sys.argv = [sys.argv[0], '--dev', dev]
    from args_parser import parser
    parser.parse_args()
    tests = SourceFileLoader('tests', os.path.join(TESTS, '__init__.py')).load_module()
    suite = unittest.defaultTestLoader.loadTestsFromModule(tests)
    chosen = [t for t in flatten(suite)
              if not classes or type(t).__name__ in classes]
    result = LineResult()
    unittest.TestSuite(chosen).run(result)
    c = result.counts
    print(f'@@PYTEST-SUMMARY ran={sum(c.values())} ok={c["ok"]} fail={c["FAIL"]} '
          f'error={c["ERROR"]} skip={c["skip"]}', flush=True)


if __name__ == '__main__':
    main()
