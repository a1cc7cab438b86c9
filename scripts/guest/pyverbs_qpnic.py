# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""qpnic's own pyverbs cases, loaded by pyverbs_run.py beside Debian's suite.

QpnicFlushTest: RDMA FLUSH requests the responder must refuse, each with
the completion status IBTA 1.5 gives it, next to the FLUSHes rdma-core's
QpExTestCase shows working. It needs an rdma-core whose pyverbs posts
FLUSH (Debian 13's); on an older one every case skips with that reason.
"""
import errno
import unittest

import pyverbs.enums as e
from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QPAttr

from tests.base import RDMATestCase
import tests.utils as u

try:
    from tests.test_qpex import QpExRCFlush
except ImportError:  # rdma-core without FLUSH in its tests
    QpExRCFlush = None


if QpExRCFlush is not None:
    class QpnicFlushNoMRAccess(QpExRCFlush):
        """The target MR allows remote writes, not FLUSH."""
        def create_mr(self):
            self.mr = u.create_custom_mr(self, e.IBV_ACCESS_REMOTE_WRITE)


class QpnicFlushTest(RDMATestCase):
    """FLUSH that a responder refuses, and the range a region FLUSH ignores."""

    def setUp(self):
        super().setUp()
        self.iters = 1
        if QpExRCFlush is None:
            raise unittest.SkipTest('this rdma-core has no FLUSH in pyverbs')

    def flush_status(self):
        """Post the client's FLUSH, as it stands, and return its status."""
        u.send(self.client, None, e.IBV_WR_FLUSH, new_send=True)
        return u._poll_cq(self.client.cq)[0].status

    def expect(self, want):
        got = self.flush_status()
        self.assertEqual(got, want, f'status {u.wc_status_to_str(got)}, '
                         f'want {u.wc_status_to_str(want)}')

    def test_flush_past_the_mr(self):
        """A range that runs one byte past the MR: remote access error."""
        self.create_players(QpExRCFlush)
        self.client.msg_size = self.server.msg_size + 1
        self.expect(e.IBV_WC_REM_ACCESS_ERR)

    def test_flush_region_ignores_range(self):
        """At the MR level the RETH's address and length are not looked at."""
        self.create_players(QpExRCFlush)
        self.client.level = e.IBV_FLUSH_MR
        self.client.raddr = 0
        self.client.msg_size = 0xffffffff
        self.expect(e.IBV_WC_SUCCESS)

    def test_flush_mr_without_flush_access(self):
        """An MR registered without FLUSH access: remote access error."""
        self.create_players(QpnicFlushNoMRAccess)
        self.expect(e.IBV_WC_REM_ACCESS_ERR)

    def test_flush_qp_without_flush_access(self):
        """A responder QP whose access flags lack FLUSH: invalid request."""
        self.create_players(QpExRCFlush)
        attr = QPAttr()
        attr.qp_access_flags = e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
        self.server.qps[0].modify(attr, e.IBV_QP_ACCESS_FLAGS)
        self.expect(e.IBV_WC_REM_INV_REQ_ERR)

    def test_flush_unknown_placement(self):
        """A placement type IBTA does not define never leaves the requester."""
        self.create_players(QpExRCFlush)
        self.client.ptype = 4
        self.expect(e.IBV_WC_LOC_QP_OP_ERR)

    def test_flush_persistent_mr_refused(self):
        """No persistent memory behind the device: no MR may promise it."""
        self.create_players(QpExRCFlush)
        with self.assertRaises(PyverbsRDMAError) as ex:
            MR(self.server.pd, 4096, e.IBV_ACCESS_LOCAL_WRITE |
               e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_FLUSH_PERSISTENT)
        self.assertIn(ex.exception.error_code, (errno.EINVAL, errno.EOPNOTSUPP))
