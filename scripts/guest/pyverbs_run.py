#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Run Debian's rdma-core pyverbs tests on one device, one line per test.

usage: pyverbs_run.py [--poll-timeout SEC] [--test-timeout SEC] DEVICE [CLASS...]

Loads /usr/share/doc/rdma-core/tests the way its run_tests.py does, and
qpnic's own cases (pyverbs_qpnic.py, next to this file), and prints "@@PYTEST <ok|FAIL|ERROR|skip> <Class>.<test> [reason]" for every
test (only those of the named classes, if any), then a summary line
"@@PYTEST-SUMMARY ran=N ok=N fail=N error=N skip=N".

--poll-timeout lowers the suite's 10 s wait for each completion and
--test-timeout ends any one test after SEC seconds (as an ERROR): on a
device without a data path every traffic test, rdma_cm connections
included, would otherwise sit out the protocol's full timeouts.
"""
import os
import signal
import sys
import time
import unittest
from importlib.machinery import SourceFileLoader

TESTS = '/usr/share/doc/rdma-core/tests'


def flatten(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flatten(t)
        else:
            yield t


# Every device context a test opens, closed when the test ends.
OPENED = []


def track_contexts():
    """Make pyverbs.device.Context remember the contexts tests open.

    A test that skips in setUp never reaches the tearDown that closes its
    context; rdma-core 56's pyverbs then leaves those objects to the
    garbage collector, which frees them in any order and segfaults Python
    3.13 (Debian 13) part-way through the suite, whatever the device
    (later rdma-core closes them itself on SkipTest). Context.close()
    closes what was made on the context first, and does nothing twice.
    """
    import pyverbs.device

    orig = pyverbs.device.Context

    class TrackedContext(orig):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            OPENED.append(self)

    # After the tests are loaded: Cython modules find Context's type
    # through this attribute as they load. The tests call it from here or
    # from their own name for it.
    for mod in list(sys.modules.values()):
        if getattr(mod, 'Context', None) is orig:
            mod.Context = TrackedContext


def close_contexts(test):
    while OPENED:
        ctx = OPENED.pop()
        try:
            ctx.close()
        except Exception as ex:  # reported, never fatal to the run
            print(f'@@ closing a context after {test.id()}: {ex}', flush=True)


def cache_link_queries():
    """Ask for each port's netdev and each netdev's address once per run.

    rdma-core 56's RDMATestCase.setUp runs `rdma link show -j` and
    `ip -j addr show` for every GID of the port before every test: four
    new processes, 0.4 s a test under TCG, over two minutes of the whole
    suite. The links and addresses do not change while the suite runs.
    """
    base = sys.modules.get('tests.base')
    cls = getattr(base, 'RDMATestCase', None)
    for name in ('get_net_name', 'get_ip_mac_address'):
        orig = cls.__dict__.get(name) if cls else None
        if not isinstance(orig, staticmethod):
            continue
        answers = {}

        def cached(*args, _fn=orig.__func__, _answers=answers):
            if args not in _answers:
                _answers[args] = _fn(*args)
            return _answers[args]
        setattr(cls, name, staticmethod(cached))


class TestTimeout(Exception):
    pass


def on_alarm(signum, frame):
    raise TestTimeout('test timed out')


class LineResult(unittest.TestResult):
    def __init__(self, test_timeout):
        super().__init__()
        self.counts = {'ok': 0, 'FAIL': 0, 'ERROR': 0, 'skip': 0}
        self.test_timeout = test_timeout
        self.started = 0.0

    def startTest(self, test):
        super().startTest(test)
        self.started = time.monotonic()
        if self.test_timeout:
            signal.alarm(self.test_timeout)

    def stopTest(self, test):
        signal.alarm(0)
        close_contexts(test)
        super().stopTest(test)

    def _line(self, status, test, why=''):
        self.counts[status] += 1
        name = f'{type(test).__name__}.{getattr(test, "_testMethodName", str(test))}'
        why = ' '.join(str(why).split())[:200]
        secs = time.monotonic() - self.started
        print(f'@@PYTEST {status} {name} [{secs:.1f}s]{" " + why if why else ""}',
              flush=True)

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
    args = sys.argv[1:]
    poll_timeout = test_timeout = None
    while args[:1] in (['--poll-timeout'], ['--test-timeout']):
        if args[0] == '--poll-timeout':
            poll_timeout = float(args[1])
        else:
            test_timeout = int(args[1])
        args = args[2:]
    signal.signal(signal.SIGALRM, on_alarm)
    dev, classes = args[0], set(args[1:])
    sys.path.insert(0, TESTS)
    os.chdir(TESTS)
    sys.argv = [sys.argv[0], '--dev', dev]
    from args_parser import parser
    parser.parse_args()
    tests = SourceFileLoader('tests', os.path.join(TESTS, '__init__.py')).load_module()
    if poll_timeout is not None:
        sys.modules['tests.utils'].POLL_CQ_TIMEOUT = poll_timeout
    track_contexts()
    cache_link_queries()
    here = os.path.dirname(os.path.abspath(__file__))
    qpnic_cases = SourceFileLoader(
        'pyverbs_qpnic', os.path.join(here, 'pyverbs_qpnic.py')).load_module()
    loader = unittest.defaultTestLoader
    suite = unittest.TestSuite([loader.loadTestsFromModule(tests),
                                loader.loadTestsFromModule(qpnic_cases)])
    chosen = [t for t in flatten(suite)
              if not classes or type(t).__name__ in classes]
    result = LineResult(test_timeout)
    unittest.TestSuite(chosen).run(result)
    c = result.counts
    print(f'@@PYTEST-SUMMARY ran={sum(c.values())} ok={c["ok"]} fail={c["FAIL"]} '
          f'error={c["ERROR"]} skip={c["skip"]}', flush=True)


if __name__ == '__main__':
    main()
