// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite for qpnic's connected transport (RC, UC) through the verbs a
 * kernel ULP uses: two QPs on one device connected through the device's
 * own GID (the loopback path runs the same requester, responder and
 * completer as the wire). A faulty wire (qpnic_kunit_lo_hook) drops or
 * duplicates packets; every byte is checked and the counters must show
 * the retransmissions and duplicates.
 */
#include <kunit/test.h>
#include <linux/cpumask.h>
#include <linux/ipv6.h>
#include <linux/jhash.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>
#include <asm/unaligned.h>
#include <qpnic/qpnic.h>
#include <qpnic/wire.h>

#include "qpnic_test_util.h"

MODULE_IMPORT_NS(QPNIC_KUNIT);

static struct {
	struct net_device *ndev;
	struct ib_device *ibdev;
	struct ib_pd *pd;	/* with an rkey for all kernel memory */
	struct ib_mr *atomic_mr;	/* the same, remote atomics allowed */
	union ib_gid gid;
} rc;

struct rc_pair {
	struct ib_cq *cq_a, *cq_b;
	struct ib_qp *a, *b;
};

struct rc_opts {
	enum ib_qp_type type;
	u32 psn;		/* both directions start here */
	u8 rnr_retry;
	u8 retry_cnt;
	u8 timeout;
	bool a_to_nowhere;	/* A's destination QP does not exist */
};

static struct ib_qp *rc_qp(struct kunit *test, struct ib_cq *cq,
			   enum ib_qp_type type)
{
	struct ib_qp_init_attr attr = {
		.qp_type = type, .send_cq = cq, .recv_cq = cq,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 4,
			 .max_recv_sge = 4, .max_inline_data = 64 },
	};
	struct ib_qp *qp = ib_create_qp(rc.pd, &attr);

	KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
	return qp;
}

static void rc_connect(struct kunit *test, struct ib_qp *qp, u32 dqpn,
		       const struct rc_opts *o)
{
	const struct qpnic_test_rc_path path = {
		.dgid = &rc.gid, .psn = o->psn, .rd_atomic = 4,
		.timeout = o->timeout ?: 12,	/* 16.8 ms */
		.retry_cnt = o->retry_cnt, .rnr_retry = o->rnr_retry,
		.access = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_ATOMIC,
	};

	KUNIT_ASSERT_EQ(test, qpnic_test_rc_connect(qp, dqpn, &path), 0);
}

static void rc_pair_init(struct kunit *test, struct rc_pair *p,
			 const struct rc_opts *o)
{
	p->cq_a = ib_create_cq(rc.ibdev, NULL, NULL, NULL,
			       &(struct ib_cq_init_attr){ .cqe = 64 });
	KUNIT_ASSERT_FALSE(test, IS_ERR(p->cq_a));
	p->cq_b = ib_create_cq(rc.ibdev, NULL, NULL, NULL,
			       &(struct ib_cq_init_attr){ .cqe = 64 });
	KUNIT_ASSERT_FALSE(test, IS_ERR(p->cq_b));
	p->a = rc_qp(test, p->cq_a, o->type);
	p->b = rc_qp(test, p->cq_b, o->type);
	rc_connect(test, p->a, o->a_to_nowhere ? 0xfffff0 : p->b->qp_num, o);
	rc_connect(test, p->b, p->a->qp_num, o);
}

static void rc_pair_destroy(struct rc_pair *p)
{
	ib_destroy_qp(p->b);
	ib_destroy_qp(p->a);
	ib_destroy_cq(p->cq_b);
	ib_destroy_cq(p->cq_a);
}

static int rc_post_recv(struct ib_qp *qp, void *buf, u32 len, u64 wr_id)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = rc.pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };

	return ib_post_recv(qp, &wr, NULL);
}

static int rc_post_flags(struct ib_qp *qp, enum ib_wr_opcode op, void *buf,
			 u32 len, void *remote, u32 rkey, u64 wr_id, int flags)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = rc.pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
			.opcode = op, .send_flags = flags,
			.ex.imm_data = cpu_to_be32(0x1234abcd) },
		.remote_addr = (uintptr_t)remote, .rkey = rkey,
	};

	return ib_post_send(qp, &wr.wr, NULL);
}

static int rc_post(struct ib_qp *qp, enum ib_wr_opcode op, void *buf, u32 len,
		   void *remote, u32 rkey, u64 wr_id)
{
	return rc_post_flags(qp, op, buf, len, remote, rkey, wr_id,
			     IB_SEND_SIGNALED);
}

static int rc_post_atomic(struct ib_qp *qp, enum ib_wr_opcode op, u64 *result,
			  u64 *remote, u64 compare_add, u64 swap, u64 wr_id)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)result, .length = sizeof(*result),
		.lkey = rc.pd->local_dma_lkey,
	};
	struct ib_atomic_wr wr = {
		.wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
			.opcode = op, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = (uintptr_t)remote, .rkey = rc.atomic_mr->rkey,
		.compare_add = compare_add, .swap = swap,
	};

	return ib_post_send(qp, &wr.wr, NULL);
}

static void rc_fill(u8 *buf, u32 len, u8 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		buf[i] = seed + i * 7 + (i >> 8);
}

#define RC_LEN	(9 * 1024 + 123)	/* 10 packets at a 1024-byte MTU */
#define RC_ADDS	20

/*
 * FETCH_ADDs back to back (max_rd_atomic 4 in flight), then a CMP_SWAP
 * that swaps and one that does not: each original value is the one the
 * sequence implies, so none ran twice (a duplicate is answered from the
 * responder's resources) and none was lost.
 */
static void rc_atomics(struct kunit *test, struct rc_pair *p)
{
	u64 *target = kunit_kzalloc(test, sizeof(u64), GFP_KERNEL);
	u64 *res = kunit_kcalloc(test, RC_ADDS + 2, sizeof(u64), GFP_KERNEL);
	struct ib_wc wc;
	u64 expect = 1000;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, target);
	KUNIT_ASSERT_NOT_NULL(test, res);
	*target = expect;
	for (i = 1; i <= RC_ADDS; i++)
		KUNIT_ASSERT_EQ(test, rc_post_atomic(p->a, IB_WR_ATOMIC_FETCH_AND_ADD,
						     &res[i - 1], target, i, 0,
						     10 + i), 0);
	for (i = 1; i <= RC_ADDS; i++) {
		qpnic_test_expect(test, p->cq_a, IB_WC_SUCCESS, IB_WC_FETCH_ADD, 10 + i, &wc);
		KUNIT_EXPECT_EQ(test, wc.byte_len, 8U);
		KUNIT_EXPECT_EQ_MSG(test, res[i - 1], expect, "add %d", i);
		expect += i;
	}
	KUNIT_EXPECT_EQ(test, *target, expect);
	KUNIT_ASSERT_EQ(test, rc_post_atomic(p->a, IB_WR_ATOMIC_CMP_AND_SWP,
					     &res[RC_ADDS], target, expect, 7, 40), 0);
	KUNIT_ASSERT_EQ(test, rc_post_atomic(p->a, IB_WR_ATOMIC_CMP_AND_SWP,
					     &res[RC_ADDS + 1], target, expect, 9,
					     41), 0);
	qpnic_test_expect(test, p->cq_a, IB_WC_SUCCESS, IB_WC_COMP_SWAP, 40, &wc);
	qpnic_test_expect(test, p->cq_a, IB_WC_SUCCESS, IB_WC_COMP_SWAP, 41, &wc);
	KUNIT_EXPECT_EQ(test, res[RC_ADDS], expect);
	KUNIT_EXPECT_EQ(test, res[RC_ADDS + 1], 7ULL);
	KUNIT_EXPECT_EQ(test, *target, 7ULL);
}

/*
 * SEND with immediate, RDMA WRITE, WRITE with immediate and RDMA READ,
 * each ten packets, across the 24-bit PSN wrap; the bytes are checked.
 */
static void rc_traffic(struct kunit *test, const struct rc_opts *o)
{
	u8 *src = kunit_kzalloc(test, RC_LEN, GFP_KERNEL);
	u8 *dst = kunit_kzalloc(test, RC_LEN, GFP_KERNEL);
	u8 *back = kunit_kzalloc(test, RC_LEN, GFP_KERNEL);
	u32 rkey = rc.pd->unsafe_global_rkey;
	struct rc_pair p;
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	KUNIT_ASSERT_NOT_NULL(test, back);
	rc_pair_init(test, &p, o);

	rc_fill(src, RC_LEN, 1);
	KUNIT_ASSERT_EQ(test, rc_post_recv(p.b, dst, RC_LEN, 100), 0);
	KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_SEND_WITH_IMM, src, RC_LEN,
				      NULL, 0, 1), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_SEND, 1, &wc);
	qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_RECV, 100, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, RC_LEN);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0x1234abcd);
	KUNIT_EXPECT_EQ(test, wc.src_qp, p.a->qp_num);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, RC_LEN), 0);

	rc_fill(src, RC_LEN, 2);
	KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_RDMA_WRITE, src, RC_LEN, dst,
				      rkey, 2), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, 2, &wc);
	/* UC completes a WRITE once it is sent: give the responder time */
	for (i = 0; i < 1000 && memcmp(dst, src, RC_LEN); i++)
		usleep_range(500, 1000);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, RC_LEN), 0);

	rc_fill(src, RC_LEN, 3);
	KUNIT_ASSERT_EQ(test, rc_post_recv(p.b, back, 16, 101), 0);
	KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_RDMA_WRITE_WITH_IMM, src, RC_LEN,
				      dst, rkey, 3), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, 3, &wc);
	qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_RECV_RDMA_WITH_IMM, 101, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, RC_LEN);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0x1234abcd);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, RC_LEN), 0);

	if (o->type == IB_QPT_RC) {
		memset(back, 0, RC_LEN);
		KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_RDMA_READ, back, RC_LEN,
					      dst, rkey, 4), 0);
		qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_READ, 4, &wc);
		KUNIT_EXPECT_EQ(test, memcmp(back, src, RC_LEN), 0);
		rc_atomics(test, &p);
	}
	KUNIT_EXPECT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 0), 0);
	KUNIT_EXPECT_EQ(test, qpnic_test_poll(p.cq_b, &wc, 0), 0);
	rc_pair_destroy(&p);
}

/*
 * The answers to the atomics went to the completer without a packet,
 * their original values checked as above (a message's ACK may too).
 */
static void qpnic_rc_traffic(struct kunit *test)
{
	struct rc_opts o = { .type = IB_QPT_RC, .psn = 0xfffffa, .retry_cnt = 7 };
	u64 direct0 = qpnic_test_counter(test, rc.ibdev, "loopback_direct_acks");

	rc_traffic(test, &o);
	KUNIT_EXPECT_GE(test, qpnic_test_counter(test, rc.ibdev, "loopback_direct_acks") -
			direct0, RC_ADDS + 2);
}

static void qpnic_uc_traffic(struct kunit *test)
{
	struct rc_opts o = { .type = IB_QPT_UC, .psn = 0xfffffa };

	rc_traffic(test, &o);
}

/*
 * The faulty wire: lose every fifth packet (mode 0), deliver every one
 * twice (1), have the sending host refuse every fifth one (2), or lose
 * one in ten at no fixed period (3). It
 * counts the loopback segments it sees, and those that are not of a
 * SEND, a WRITE or a READ's responses.
 */
static atomic_t rc_wire_count, rc_wire_segments, rc_wire_bad_segments;
static unsigned int rc_wire_mode;

static unsigned int rc_wire(struct sk_buff *skb)
{
	const u8 *bth = qpnic_test_lo_udp(skb) + sizeof(struct udphdr);
	unsigned int n = atomic_inc_return(&rc_wire_count);
	u32 flags = qpnic_opcode_flags(bth[0]);

	if (qpnic_lo_npkts(skb) > 1) {
		atomic_inc(&rc_wire_segments);
		if (!(flags & (QPNIC_OP_SEND | QPNIC_OP_WRITE)) &&
		    (flags & (QPNIC_OP_READ | QPNIC_OP_ACK)) !=
		    (QPNIC_OP_READ | QPNIC_OP_ACK))
			atomic_inc(&rc_wire_bad_segments);
	}

	if (rc_wire_mode == 1)
		return 2;
	if (rc_wire_mode == 3)	/* one in ten, with no period to lock onto */
		return jhash_1word(n, 0x5eed) % 10 ? 1 : 0;
	if (n % 5)
		return 1;
	return rc_wire_mode == 2 ? QPNIC_LO_REFUSED : 0;
}

static void rc_faulty(struct kunit *test, unsigned int mode, bool segments)
{
	u64 retrans = qpnic_test_counter(test, rc.ibdev, "tx_retransmits");
	u64 dups = qpnic_test_counter(test, rc.ibdev, "rx_duplicate_requests");
	u64 refused = qpnic_test_counter(test, rc.ibdev, "tx_drop_stack");
	u64 naks = qpnic_test_counter(test, rc.ibdev, "rx_seq_naks");
	u64 cuts = qpnic_test_counter(test, rc.ibdev, "window_cuts");
	struct rc_opts o = { .type = IB_QPT_RC, .psn = 0x10, .retry_cnt = 7,
			     .timeout = 12 };

	rc_wire_mode = mode;
	atomic_set(&rc_wire_count, 0);
	atomic_set(&rc_wire_segments, 0);
	atomic_set(&rc_wire_bad_segments, 0);
	WRITE_ONCE(qpnic_kunit_lo_segments, segments);
	WRITE_ONCE(qpnic_kunit_lo_hook, rc_wire);
	rc_traffic(test, &o);
	WRITE_ONCE(qpnic_kunit_lo_hook, NULL);
	WRITE_ONCE(qpnic_kunit_lo_segments, false);
	/* segments go only where the wire takes them, and only SEND, WRITE */
	if (segments)
		KUNIT_EXPECT_GT(test, atomic_read(&rc_wire_segments), 0);
	else
		KUNIT_EXPECT_EQ(test, atomic_read(&rc_wire_segments), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&rc_wire_bad_segments), 0);
	if (mode == 0) {
		KUNIT_EXPECT_GT(test, qpnic_test_counter(test, rc.ibdev,
							 "tx_retransmits"), retrans);
		/* a loss halves the window, as a CNP does */
		KUNIT_EXPECT_GT(test, qpnic_test_counter(test, rc.ibdev,
							 "window_cuts"), cuts);
	} else if (mode == 1) {
		KUNIT_EXPECT_GT(test, qpnic_test_counter(test, rc.ibdev,
							 "rx_duplicate_requests"), dups);
	}
	if (mode != 2)
		return;
	/*
	 * The requester went back to each refused request at once, before
	 * sending what follows it: the responder never saw a gap to NAK.
	 */
	KUNIT_EXPECT_GT(test, qpnic_test_counter(test, rc.ibdev, "tx_drop_stack"),
			refused);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rc.ibdev, "rx_seq_naks"),
			naks);
}

static void qpnic_rc_lossy_wire(struct kunit *test)
{
	rc_faulty(test, 0, false);
}

static void qpnic_rc_duplicating_wire(struct kunit *test)
{
	rc_faulty(test, 1, false);
}

/*
 * The same with loopback segments: a segment lost, duplicated or refused
 * is a run of packets lost, duplicated or refused. After a loss the
 * window is halved and the requester builds its segments again from
 * another PSN: one may reach across the PSN the responder expects, which
 * has the requester go back to it. Every byte is checked all the same.
 */
static void qpnic_rc_lossy_wire_segments(struct kunit *test)
{
	rc_faulty(test, 0, true);
}

static void qpnic_rc_duplicating_wire_segments(struct kunit *test)
{
	rc_faulty(test, 1, true);
}

static void qpnic_rc_refused_segments(struct kunit *test)
{
	rc_faulty(test, 2, true);
}

/*
 * A congested wire: it marks every request CE, and checks on the way
 * that RC requests leave ECN-capable (ECT(0)) and nothing else does.
 */
static atomic_t rc_ce_marked, rc_wrong_ecn;

static unsigned int rc_mark_ce(struct sk_buff *skb)
{
	const u8 *bth = qpnic_test_lo_udp(skb) + sizeof(struct udphdr);
	u8 ecn = (ip_hdr(skb)->version == 4 ? ipv4_get_dsfield(ip_hdr(skb)) :
		  ipv6_get_dsfield(ipv6_hdr(skb))) & INET_ECN_MASK;

	if (!(qpnic_opcode_flags(bth[0]) & QPNIC_OP_REQ)) {
		if (ecn != INET_ECN_NOT_ECT)
			atomic_inc(&rc_wrong_ecn);
		return 1;
	}
	if (ecn != INET_ECN_ECT_0 || !INET_ECN_set_ce(skb))
		atomic_inc(&rc_wrong_ecn);
	else
		atomic_inc(&rc_ce_marked);
	return 1;
}

#define RC_ECN_LEN	(256 * 1024)	/* 256 packets, a whole window */

/*
 * The responder answers CE with CNPs (at most one per 50 us); each CNP
 * round halves the requester's window, down to 16 PSNs. All the data
 * arrives, and it arrives without one retransmission or ACK timeout: the
 * requester asks for ACKs at least every half window, so a cut window
 * (16 PSNs inside a 64-packet message) is never left waiting for one.
 */
static void qpnic_rc_ecn(struct kunit *test)
{
	static const char *const names[] = {
		"rx_ecn_marked_requests", "tx_cnps", "rx_cnps",
		"window_cuts", "tx_retransmits", "ack_timeouts",
	};
	struct rc_opts o = { .type = IB_QPT_RC, .psn = 0xffff00, .retry_cnt = 7,
			     .timeout = 14 };	/* 67 ms: none expires early */
	u64 before[ARRAY_SIZE(names)], d[ARRAY_SIZE(names)];
	struct rc_pair p;
	struct ib_wc wc;
	u8 *src, *dst;
	int i;

	src = vmalloc(RC_ECN_LEN);
	dst = vzalloc(RC_ECN_LEN);
	if (!src || !dst) {
		vfree(src);
		vfree(dst);
		KUNIT_FAIL(test, "no memory for the buffers");
		return;
	}
	for (i = 0; i < ARRAY_SIZE(names); i++)
		before[i] = qpnic_test_counter(test, rc.ibdev, names[i]);
	atomic_set(&rc_ce_marked, 0);
	atomic_set(&rc_wrong_ecn, 0);
	WRITE_ONCE(qpnic_kunit_lo_hook, rc_mark_ce);
	rc_traffic(test, &o);

	rc_pair_init(test, &p, &o);
	rc_fill(src, RC_ECN_LEN, 7);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_RDMA_WRITE,
					      src + i * RC_ECN_LEN / 4,
					      RC_ECN_LEN / 4,
					      dst + i * RC_ECN_LEN / 4,
					      rc.pd->unsafe_global_rkey, i), 0);
	for (i = 0; i < 4; i++)
		qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
				  i, &wc);
	/* once more, with the window as the first pass left it */
	memset(dst, 0, RC_ECN_LEN);
	KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_RDMA_WRITE, src, RC_ECN_LEN,
				      dst, rc.pd->unsafe_global_rkey, 9), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, 9, &wc);
	WRITE_ONCE(qpnic_kunit_lo_hook, NULL);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, RC_ECN_LEN), 0);
	rc_pair_destroy(&p);
	vfree(src);
	vfree(dst);

	for (i = 0; i < ARRAY_SIZE(names); i++)
		d[i] = qpnic_test_counter(test, rc.ibdev, names[i]) - before[i];
	kunit_info(test, "%d requests marked CE: %llu CNPs sent, %llu received, %llu window cuts",
		   atomic_read(&rc_ce_marked), d[1], d[2], d[3]);
	KUNIT_EXPECT_EQ(test, atomic_read(&rc_wrong_ecn), 0);
	KUNIT_EXPECT_GT(test, atomic_read(&rc_ce_marked), 2 * 256);
	KUNIT_EXPECT_EQ(test, d[0], (u64)atomic_read(&rc_ce_marked));
	KUNIT_EXPECT_GT(test, d[1], 0ULL);
	KUNIT_EXPECT_LE(test, d[1], d[0]);
	KUNIT_EXPECT_EQ(test, d[2], d[1]);
	/* 256 down to 16 takes four rounds; a round cuts once */
	KUNIT_EXPECT_GE(test, d[3], 4ULL);
	KUNIT_EXPECT_LE(test, d[3], d[2]);
	KUNIT_EXPECT_EQ(test, d[4], 0ULL);
	KUNIT_EXPECT_EQ(test, d[5], 0ULL);
}

static void qpnic_rc_refused_by_host(struct kunit *test)
{
	rc_faulty(test, 2, false);
}

/*
 * No receive WQE: the responder sends RNR NAKs and the requester waits
 * and retries (rnr_retry 7: for ever) until one is posted, for longer
 * than its ACK timeout without one timing out (an RNR wait stops the
 * ACK clock); with rnr_retry 0 the SEND fails at the first RNR NAK.
 */
static void qpnic_rc_rnr(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, 2048, GFP_KERNEL);
	u64 rnr = qpnic_test_counter(test, rc.ibdev, "tx_rnr_naks");
	u64 timeouts = qpnic_test_counter(test, rc.ibdev, "ack_timeouts");
	struct rc_opts o = { .type = IB_QPT_RC, .rnr_retry = 7, .retry_cnt = 7,
			     .timeout = 14 };
	unsigned long t = max(2UL, nsecs_to_jiffies(4096ULL << 14));
	unsigned long start;
	struct rc_pair p;
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	rc_pair_init(test, &p, &o);
	rc_fill(buf, 1024, 9);
	start = jiffies;
	KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_SEND, buf, 1024, NULL, 0, 7), 0);
	/* the SEND waits, NAKed again and again, until there is a receive */
	for (i = 0; i < 2000 && (qpnic_test_counter(test, rc.ibdev, "tx_rnr_naks") < rnr + 2 ||
				 time_before(jiffies, start + 2 * t));
	     i++)
		usleep_range(500, 1000);
	KUNIT_EXPECT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 0), 0);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rc.ibdev, "ack_timeouts"), timeouts);
	KUNIT_ASSERT_EQ(test, rc_post_recv(p.b, buf + 1024, 1024, 70), 0);
	qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_RECV, 70, &wc);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_SEND, 7, &wc);
	KUNIT_EXPECT_EQ(test, memcmp(buf, buf + 1024, 1024), 0);
	KUNIT_EXPECT_GE(test, qpnic_test_counter(test, rc.ibdev, "tx_rnr_naks"), rnr + 2);
	rc_pair_destroy(&p);

	o.rnr_retry = 0;
	rc_pair_init(test, &p, &o);
	KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_SEND, buf, 64, NULL, 0, 8), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_RNR_RETRY_EXC_ERR, IB_WC_SEND, 8, &wc);
	rc_pair_destroy(&p);
}

/*
 * A remote access error ends both QPs: a WRITE whose R_Key names no MR
 * completes with IB_WC_REM_ACCESS_ERR, the WR after it flushes, and the
 * responder's memory is untouched.
 */
static void qpnic_rc_remote_access(struct kunit *test)
{
	struct rc_opts o = { .type = IB_QPT_RC, .retry_cnt = 7 };
	u8 *buf = kunit_kzalloc(test, 4096, GFP_KERNEL);
	struct ib_qp_attr attr;
	struct ib_qp_init_attr init;
	struct rc_pair p;
	struct ib_wc wc;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	rc_pair_init(test, &p, &o);
	memset(buf + 2048, 0x77, 2048);
	KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_RDMA_WRITE, buf, 512, buf + 2048,
				      rc.pd->unsafe_global_rkey ^ 0x1, 1), 0);
	KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_SEND, buf, 16, NULL, 0, 2), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_REM_ACCESS_ERR, IB_WC_RDMA_WRITE, 1, &wc);
	qpnic_test_expect(test, p.cq_a, IB_WC_WR_FLUSH_ERR, IB_WC_SEND, 2, &wc);
	KUNIT_EXPECT_EQ(test, buf[2048], 0x77);
	KUNIT_EXPECT_EQ(test, ib_query_qp(p.a, &attr, IB_QP_STATE, &init), 0);
	KUNIT_EXPECT_EQ(test, attr.qp_state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, ib_query_qp(p.b, &attr, IB_QP_STATE, &init), 0);
	KUNIT_EXPECT_EQ(test, attr.qp_state, IB_QPS_ERR);
	rc_pair_destroy(&p);
}

/*
 * Atomics the responder refuses: a target not 8-byte aligned (invalid
 * request) and an R_Key that names no MR (remote access error). The QP
 * goes to ERR and the target is untouched.
 */
static void qpnic_rc_atomic_refused(struct kunit *test)
{
	struct rc_opts o = { .type = IB_QPT_RC, .retry_cnt = 7 };
	u64 *buf = kunit_kcalloc(test, 4, sizeof(u64), GFP_KERNEL);
	struct ib_atomic_wr bad_key;
	struct ib_sge sge;
	struct rc_pair p;
	struct ib_wc wc;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	buf[1] = 0x1111;
	buf[2] = 0x2222;
	rc_pair_init(test, &p, &o);
	KUNIT_ASSERT_EQ(test, rc_post_atomic(p.a, IB_WR_ATOMIC_FETCH_AND_ADD, &buf[0],
					     (u64 *)((u8 *)&buf[1] + 4), 1, 0, 1), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_REM_INV_REQ_ERR, IB_WC_FETCH_ADD, 1, &wc);
	KUNIT_EXPECT_EQ(test, buf[1], 0x1111ULL);
	KUNIT_EXPECT_EQ(test, buf[2], 0x2222ULL);
	rc_pair_destroy(&p);

	rc_pair_init(test, &p, &o);
	sge = (struct ib_sge){ .addr = (uintptr_t)&buf[0], .length = 8,
			       .lkey = rc.pd->local_dma_lkey };
	bad_key = (struct ib_atomic_wr){
		.wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_ATOMIC_CMP_AND_SWP },
		.remote_addr = (uintptr_t)&buf[2],
		.rkey = rc.atomic_mr->rkey ^ 1,
		.compare_add = 0x2222, .swap = 5,
	};
	KUNIT_ASSERT_EQ(test, ib_post_send(p.a, &bad_key.wr, NULL), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_REM_ACCESS_ERR, IB_WC_COMP_SWAP, 2, &wc);
	KUNIT_EXPECT_EQ(test, buf[2], 0x2222ULL);
	rc_pair_destroy(&p);
}

/*
 * The faulty wire's other use: note the first SEND ONLY with invalidate's
 * IETH, and count packets whose transmit hash is not the one their UDP
 * source port gives (the transmit queue follows the QP's flow).
 */
static u32 rc_inv_seen;
static atomic_t rc_bad_hash;

static unsigned int rc_catch_inv(struct sk_buff *skb)
{
	const u8 *udp = qpnic_test_lo_udp(skb);
	const u8 *bth = udp + sizeof(struct udphdr);

	if (!skb->l4_hash ||
	    skb->hash != jhash_1word(get_unaligned_be16(udp), 0))
		atomic_inc(&rc_bad_hash);
	if (bth[0] == QPNIC_SEND_ONLY_INV && !rc_inv_seen)
		rc_inv_seen = get_unaligned_be32(bth + QPNIC_BTH_LEN);
	return 1;
}

/*
 * SEND with invalidate: the packet carries the R_Key in its IETH. qpnic
 * has no MR a peer may invalidate (no fast registration yet), so its
 * responder refuses it as IBTA class J: the receive WQE completes with
 * IB_WC_REM_INV_REQ_ERR, and so does the SEND, after an invalid-request NAK.
 */
static void qpnic_rc_send_with_inv(struct kunit *test)
{
	struct rc_opts o = { .type = IB_QPT_RC, .retry_cnt = 7 };
	u8 *buf = kunit_kzalloc(test, 256, GFP_KERNEL);
	struct ib_sge sge;
	struct ib_send_wr wr;
	struct rc_pair p;
	struct ib_wc wc;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	rc_pair_init(test, &p, &o);
	KUNIT_ASSERT_EQ(test, rc_post_recv(p.b, buf + 128, 128, 50), 0);
	sge = (struct ib_sge){ .addr = (uintptr_t)buf, .length = 64,
			       .lkey = rc.pd->local_dma_lkey };
	wr = (struct ib_send_wr){
		.wr_id = 5, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND_WITH_INV, .send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = 0xabcd1234,
	};
	rc_inv_seen = 0;
	atomic_set(&rc_bad_hash, 0);
	WRITE_ONCE(qpnic_kunit_lo_hook, rc_catch_inv);
	KUNIT_ASSERT_EQ(test, ib_post_send(p.a, &wr, NULL), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_REM_INV_REQ_ERR, IB_WC_SEND, 5, &wc);
	WRITE_ONCE(qpnic_kunit_lo_hook, NULL);
	qpnic_test_expect(test, p.cq_b, IB_WC_REM_INV_REQ_ERR, IB_WC_RECV, 50, &wc);
	KUNIT_EXPECT_EQ(test, rc_inv_seen, 0xabcd1234U);
	KUNIT_EXPECT_EQ(test, atomic_read(&rc_bad_hash), 0);
	rc_pair_destroy(&p);
}

/*
 * Nobody answers (the destination QP does not exist): after retry_cnt
 * retransmissions the WR completes with IB_WC_RETRY_EXC_ERR.
 */
static void qpnic_rc_retry_exceeded(struct kunit *test)
{
	struct rc_opts o = { .type = IB_QPT_RC, .retry_cnt = 2, .timeout = 8,
			     .a_to_nowhere = true };
	u8 *buf = kunit_kzalloc(test, 64, GFP_KERNEL);
	u64 timeouts = qpnic_test_counter(test, rc.ibdev, "ack_timeouts");
	struct rc_pair p;
	struct ib_wc wc;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	rc_pair_init(test, &p, &o);
	KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_SEND, buf, 64, NULL, 0, 5), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_RETRY_EXC_ERR, IB_WC_SEND, 5, &wc);
	/* the first timeout and two retries */
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rc.ibdev, "ack_timeouts"), timeouts + 3);
	rc_pair_destroy(&p);
}

static unsigned int rc_wire_lose_all(struct sk_buff *skb)
{
	return 0;
}

/*
 * The ACK timer is lazy (qpnic_comp_time()): an ACK moves the deadline,
 * not the timer. Messages acknowledged one after another for longer than
 * the timeout draw no timeout; a message lost after a ping-pong left the
 * timer set for an earlier message times out one timeout after it was
 * sent, not when the timer set for the earlier one runs.
 */
static void qpnic_rc_ack_timer_lazy(struct kunit *test)
{
	struct rc_opts o = { .type = IB_QPT_RC, .retry_cnt = 7, .timeout = 14 };
	unsigned long t = max(2UL, nsecs_to_jiffies(4096ULL << 14));
	u8 *src = kunit_kzalloc(test, 64, GFP_KERNEL);
	u8 *dst = kunit_kzalloc(test, 64, GFP_KERNEL);
	u32 rkey = rc.pd->unsafe_global_rkey;
	unsigned long start, sent, seen;
	u64 timeouts;
	struct rc_pair p;
	struct ib_wc wc;
	u64 id = 0;

	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	rc_pair_init(test, &p, &o);
	timeouts = qpnic_test_counter(test, rc.ibdev, "ack_timeouts");
	start = jiffies;
	while (time_before(jiffies, start + 3 * t)) {
		KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_RDMA_WRITE, src, 64,
					      dst, rkey, ++id), 0);
		qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
				  id, &wc);
		usleep_range(1000, 2000);
	}
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rc.ibdev, "ack_timeouts"),
			timeouts);

	/*
	 * Once the timers of those ran out, one more message sets the timer
	 * again, for one timeout after it; half a timeout later, one is lost.
	 */
	msleep(jiffies_to_msecs(2 * t));
	KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_RDMA_WRITE, src, 64, dst, rkey,
				      ++id), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, id, &wc);
	msleep(jiffies_to_msecs(t) / 2);
	rc_fill(src, 64, 9);
	WRITE_ONCE(qpnic_kunit_lo_hook, rc_wire_lose_all);
	sent = jiffies;
	KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_RDMA_WRITE, src, 64, dst, rkey,
				      ++id), 0);
	while (qpnic_test_counter(test, rc.ibdev, "ack_timeouts") == timeouts &&
	       time_before(jiffies, sent + 10 * t))
		usleep_range(200, 400);
	seen = jiffies;
	WRITE_ONCE(qpnic_kunit_lo_hook, NULL);
	KUNIT_EXPECT_GT(test, qpnic_test_counter(test, rc.ibdev, "ack_timeouts"),
			timeouts);
	KUNIT_EXPECT_GE_MSG(test, seen - sent, t, "timed out %lu jiffies after it was sent",
			    seen - sent);
	/* the resend after the timeout (or the next) gets through */
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, id, &wc);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, 64), 0);
	rc_pair_destroy(&p);
}

/* Destroying QPs with traffic in flight and timers armed leaves nothing. */
static void qpnic_rc_destroy_busy(struct kunit *test)
{
	struct rc_opts o = { .type = IB_QPT_RC, .retry_cnt = 7, .rnr_retry = 7 };
	u8 *buf = kunit_kzalloc(test, RC_LEN, GFP_KERNEL);
	struct rc_pair p;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	rc_pair_init(test, &p, &o);
	for (i = 0; i < 8; i++)
		KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_SEND, buf, RC_LEN, NULL,
					      0, i), 0);
	rc_pair_destroy(&p);
}

/* The async events a QP got, in order (at most 8 kept). */
struct rc_events {
	atomic_t n;
	enum ib_event_type type[8];
};

static void rc_event(struct ib_event *ev, void *ctx)
{
	struct rc_events *e = ctx;
	int i = atomic_inc_return(&e->n) - 1;

	if (i < ARRAY_SIZE(e->type))
		e->type[i] = ev->event;
}

/* Wait up to @ms for @e to hold @n events. */
static int rc_wait_events(struct rc_events *e, int n, unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	while (atomic_read(&e->n) < n && time_before(jiffies, end))
		usleep_range(1000, 2000);
	return atomic_read(&e->n);
}

static struct ib_qp *rc_qp_events(struct kunit *test, struct ib_cq *cq,
				  struct ib_srq *srq, struct rc_events *e)
{
	struct ib_qp_init_attr attr = {
		.qp_type = IB_QPT_RC, .send_cq = cq, .recv_cq = cq, .srq = srq,
		.sq_sig_type = IB_SIGNAL_REQ_WR, .event_handler = rc_event,
		.qp_context = e,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ib_qp *qp = ib_create_qp(rc.pd, &attr);

	KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
	return qp;
}

/* A connected RC pair whose A end reports its async events to @e. */
static void rc_pair_events_init(struct kunit *test, struct rc_pair *p,
				const struct rc_opts *o, struct rc_events *e)
{
	p->cq_a = ib_create_cq(rc.ibdev, NULL, NULL, NULL,
			       &(struct ib_cq_init_attr){ .cqe = 16 });
	KUNIT_ASSERT_FALSE(test, IS_ERR(p->cq_a));
	p->cq_b = ib_create_cq(rc.ibdev, NULL, NULL, NULL,
			       &(struct ib_cq_init_attr){ .cqe = 16 });
	KUNIT_ASSERT_FALSE(test, IS_ERR(p->cq_b));
	p->a = rc_qp_events(test, p->cq_a, NULL, e);
	p->b = rc_qp(test, p->cq_b, IB_QPT_RC);
	rc_connect(test, p->a, p->b->qp_num, o);
	rc_connect(test, p->b, p->a->qp_num, o);
}

/*
 * A transport error (the retry count ran out) completes the WQE in error,
 * then raises IB_EVENT_QP_FATAL and, the QP being on an SRQ, the
 * IB_EVENT_QP_LAST_WQE_REACHED an SRQ consumer waits for before it
 * destroys the QP.
 */
static void qpnic_rc_error_events(struct kunit *test)
{
	struct rc_opts o = { .type = IB_QPT_RC, .retry_cnt = 1, .timeout = 8 };
	struct ib_srq_init_attr sattr = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct rc_events *e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	u8 *buf = kunit_kzalloc(test, 64, GFP_KERNEL);
	struct ib_srq *srq;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_wc wc;

	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	cq = ib_create_cq(rc.ibdev, NULL, NULL, NULL,
			  &(struct ib_cq_init_attr){ .cqe = 16 });
	KUNIT_ASSERT_FALSE(test, IS_ERR(cq));
	srq = ib_create_srq(rc.pd, &sattr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(srq));
	qp = rc_qp_events(test, cq, srq, e);
	rc_connect(test, qp, 0xfffff0, &o);	/* nobody answers */
	KUNIT_ASSERT_EQ(test, rc_post(qp, IB_WR_SEND, buf, 64, NULL, 0, 9), 0);
	qpnic_test_expect(test, cq, IB_WC_RETRY_EXC_ERR, IB_WC_SEND, 9, &wc);
	KUNIT_EXPECT_EQ(test, rc_wait_events(e, 2, 2000), 2);
	KUNIT_EXPECT_EQ(test, e->type[0], IB_EVENT_QP_FATAL);
	KUNIT_EXPECT_EQ(test, e->type[1], IB_EVENT_QP_LAST_WQE_REACHED);
	ib_destroy_qp(qp);
	ib_destroy_srq(srq);
	ib_destroy_cq(cq);
}

static atomic_t rc_hold_wire, rc_held;

/* While set, nothing gets through (and what was held is counted). */
static unsigned int rc_hold(struct sk_buff *skb)
{
	if (!atomic_read(&rc_hold_wire))
		return 1;
	atomic_inc(&rc_held);
	return 0;
}

/*
 * SQD with en_sqd_async_notify: IB_EVENT_SQ_DRAINED comes once what was
 * started is acknowledged, not while an RC message is still outstanding.
 */
static void qpnic_rc_sq_drained(struct kunit *test)
{
	struct rc_opts o = { .type = IB_QPT_RC, .retry_cnt = 7, .rnr_retry = 7,
			     .timeout = 10 };
	struct rc_events *e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	struct ib_qp_attr a = { .qp_state = IB_QPS_SQD, .en_sqd_async_notify = 1 };
	u8 *src = kunit_kzalloc(test, RC_LEN, GFP_KERNEL);
	u8 *dst = kunit_kzalloc(test, RC_LEN, GFP_KERNEL);
	struct rc_pair p;
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	rc_pair_events_init(test, &p, &o, e);
	KUNIT_ASSERT_EQ(test, rc_post_recv(p.b, dst, RC_LEN, 1), 0);
	/* the message goes out, and nothing comes back for now */
	atomic_set(&rc_hold_wire, 1);
	atomic_set(&rc_held, 0);
	WRITE_ONCE(qpnic_kunit_lo_hook, rc_hold);
	rc_fill(src, RC_LEN, 3);
	KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_SEND, src, RC_LEN, NULL, 0, 2), 0);
	/* started before SQD: a kernel post may go out after it returns */
	for (i = 0; i < 1000 && !atomic_read(&rc_held); i++)
		usleep_range(500, 1000);
	KUNIT_ASSERT_GT(test, atomic_read(&rc_held), 0);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(p.a, &a, IB_QP_STATE | IB_QP_EN_SQD_ASYNC_NOTIFY),
			0);
	KUNIT_EXPECT_EQ(test, rc_wait_events(e, 1, 200), 0);
	/* the wire back: the resend is acknowledged, then the SQ is drained */
	atomic_set(&rc_hold_wire, 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_SEND, 2, &wc);
	KUNIT_EXPECT_EQ(test, rc_wait_events(e, 1, 2000), 1);
	KUNIT_EXPECT_EQ(test, e->type[0], IB_EVENT_SQ_DRAINED);
	qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_RECV, 1, &wc);
	KUNIT_EXPECT_TRUE(test, !memcmp(src, dst, RC_LEN));
	WRITE_ONCE(qpnic_kunit_lo_hook, NULL);
	rc_pair_destroy(&p);
}

static void rc_cq_event(struct ib_event *ev, void *ctx)
{
	if (ev->event == IB_EVENT_CQ_ERR)
		atomic_inc(ctx);
}

/*
 * A CQ overrun (IBTA 11.6.3): one IB_EVENT_CQ_ERR, and the QP completing
 * into that CQ goes to ERR instead of going on with completions lost;
 * its peer, on another CQ, goes on.
 */
static void qpnic_rc_cq_overrun_errors_qps(struct kunit *test)
{
	struct rc_opts o = { .type = IB_QPT_RC, .retry_cnt = 7, .rnr_retry = 7 };
	u8 *buf = kunit_kzalloc(test, 64, GFP_KERNEL);
	struct ib_cq_init_attr small = { .cqe = 2 };
	struct ib_qp_init_attr init;
	unsigned long end = jiffies + 5 * HZ;
	atomic_t cq_err = ATOMIC_INIT(0);
	struct ib_cq *cq_a, *cq_b;
	struct ib_qp *qa, *qb;
	struct ib_qp_attr q;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	cq_a = ib_create_cq(rc.ibdev, NULL, rc_cq_event, &cq_err, &small);
	KUNIT_ASSERT_FALSE(test, IS_ERR(cq_a));
	cq_b = ib_create_cq(rc.ibdev, NULL, NULL, NULL,
			    &(struct ib_cq_init_attr){ .cqe = 64 });
	KUNIT_ASSERT_FALSE(test, IS_ERR(cq_b));
	qa = rc_qp(test, cq_a, IB_QPT_RC);
	qb = rc_qp(test, cq_b, IB_QPT_RC);
	rc_connect(test, qa, qb->qp_num, &o);
	rc_connect(test, qb, qa->qp_num, &o);
	for (i = 0; i < 8; i++)
		KUNIT_ASSERT_EQ(test, rc_post_recv(qb, buf, 64, i), 0);
	/* more signaled completions than the CQ holds, none polled */
	for (i = 0; i < 8; i++)
		KUNIT_ASSERT_EQ(test, rc_post(qa, IB_WR_SEND, buf, 64, NULL, 0, i), 0);
	do {
		usleep_range(1000, 2000);
		KUNIT_ASSERT_EQ(test, ib_query_qp(qa, &q, IB_QP_STATE, &init), 0);
	} while (q.qp_state != IB_QPS_ERR && time_before(jiffies, end));
	KUNIT_EXPECT_EQ(test, q.qp_state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, atomic_read(&cq_err), 1);
	KUNIT_ASSERT_EQ(test, ib_query_qp(qb, &q, IB_QP_STATE, &init), 0);
	KUNIT_EXPECT_EQ(test, q.qp_state, IB_QPS_RTS);
	ib_destroy_qp(qb);
	ib_destroy_qp(qa);
	ib_destroy_cq(cq_b);
	ib_destroy_cq(cq_a);
}

static int rc_set_mtu(unsigned int mtu)
{
	int err;

	rtnl_lock();
	err = dev_set_mtu(rc.ndev, mtu);
	rtnl_unlock();
	return err;
}

/*
 * A netdev MTU change reaches the QPs: connected QPs whose path MTU the
 * netdev no longer carries go to ERR at once, and below 352 bytes the
 * device MTU is 256 (the smallest IB MTU), so a UD send above it is
 * still refused.
 */
static void qpnic_rc_mtu_change(struct kunit *test)
{
	struct rc_opts o = { .type = IB_QPT_RC, .retry_cnt = 7, .rnr_retry = 7 };
	struct ib_qp_init_attr uattr = {
		.qp_type = IB_QPT_UD, .sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct rdma_ah_attr ah_attr = { .type = RDMA_AH_ATTR_TYPE_ROCE };
	u8 *buf = kunit_kzalloc(test, 512, GFP_KERNEL);
	struct ib_sge sge = { .length = 300 };
	struct ib_ud_wr wr = {
		.wr = { .wr_id = 3, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_SEND },
		.remote_qpn = 0xabcd, .remote_qkey = 0x11111111,
	};
	struct ib_qp_init_attr init;
	struct ib_port_attr pa;
	struct ib_qp_attr q;
	struct rc_pair p;
	struct ib_qp *ud;
	struct ib_ah *ah;
	struct ib_wc wc;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	rc_pair_init(test, &p, &o);	/* path MTU 1024 */
	uattr.send_cq = p.cq_a;
	uattr.recv_cq = p.cq_a;
	ud = ib_create_qp(rc.pd, &uattr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ud));
	KUNIT_ASSERT_EQ(test, qpnic_to_init(ud), 0);
	KUNIT_ASSERT_EQ(test, qpnic_to_rtr(ud), 0);
	KUNIT_ASSERT_EQ(test, qpnic_to_rts(ud), 0);
	rdma_ah_set_port_num(&ah_attr, 1);
	rdma_ah_set_grh(&ah_attr, &rc.gid, 0, 0, 64, 0);
	ah = rdma_create_ah(rc.pd, &ah_attr, RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ah));
	wr.ah = ah;
	sge.addr = (uintptr_t)buf;
	sge.lkey = rc.pd->local_dma_lkey;

	/* 800 bytes carry IB MTU 512: the 1024-byte path MTU no longer fits */
	KUNIT_ASSERT_EQ(test, rc_set_mtu(800), 0);
	KUNIT_EXPECT_EQ(test, ib_query_port(rc.ibdev, 1, &pa), 0);
	KUNIT_EXPECT_EQ(test, pa.active_mtu, IB_MTU_512);
	KUNIT_EXPECT_EQ(test, ib_query_qp(p.a, &q, IB_QP_STATE, &init), 0);
	KUNIT_EXPECT_EQ(test, q.qp_state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, ib_query_qp(p.b, &q, IB_QP_STATE, &init), 0);
	KUNIT_EXPECT_EQ(test, q.qp_state, IB_QPS_ERR);
	/* below 352 bytes: IB MTU 256, and a 300-byte UD send is refused */
	KUNIT_ASSERT_EQ(test, rc_set_mtu(300), 0);
	KUNIT_EXPECT_EQ(test, ib_query_port(rc.ibdev, 1, &pa), 0);
	KUNIT_EXPECT_EQ(test, pa.active_mtu, IB_MTU_256);
	KUNIT_ASSERT_EQ(test, ib_post_send(ud, &wr.wr, NULL), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_LOC_LEN_ERR, IB_WC_SEND, 3, &wc);
	KUNIT_EXPECT_EQ(test, rc_set_mtu(1500), 0);
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
	ib_destroy_qp(ud);
	rc_pair_destroy(&p);
}

/*
 * Inside an inline loopback section (what a user QP's poster opens) a
 * SEND to the device's own GID waits for the section's end, not for the
 * work item; the end delivers it and the ACK it draws, so both
 * completions are there when it returns. A nested section delivers
 * nothing of its own.
 */
static void qpnic_rc_inline_delivery(struct kunit *test)
{
	/* (an ACK timeout of 1 s: no retransmission meanwhile) */
	struct rc_opts o = { .type = IB_QPT_RC, .retry_cnt = 7, .timeout = 18 };
	u8 *src = kunit_kzalloc(test, 2048, GFP_KERNEL);
	u8 *dst = kunit_kzalloc(test, 2048, GFP_KERNEL);
	int before_end[2], after_end[2];
	u64 lo0, lo1;
	struct rc_pair p;
	struct ib_wc wa, wb;
	bool outer, nested;
	int posted;

	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	rc_fill(src, 2048, 7);
	rc_pair_init(test, &p, &o);
	KUNIT_ASSERT_EQ(test, rc_post_recv(p.b, dst, 2048, 200), 0);
	lo0 = qpnic_test_counter(test, rc.ibdev, "loopback_packets");

	local_bh_disable();
	outer = qpnic_kunit_inline_begin(rc.ibdev);
	nested = qpnic_kunit_inline_begin(rc.ibdev);
	/* two packets at the default path MTU of 1024 */
	posted = rc_post(p.a, IB_WR_SEND, src, 2048, NULL, 0, 20);
	mdelay(20);	/* time the work item would have taken them in */
	before_end[0] = ib_poll_cq(p.cq_a, 1, &wa);
	before_end[1] = ib_poll_cq(p.cq_b, 1, &wb);
	if (outer)
		qpnic_kunit_inline_end(rc.ibdev);
	after_end[0] = ib_poll_cq(p.cq_a, 1, &wa);
	after_end[1] = ib_poll_cq(p.cq_b, 1, &wb);
	local_bh_enable();

	KUNIT_ASSERT_EQ(test, posted, 0);
	KUNIT_EXPECT_TRUE(test, outer);
	KUNIT_EXPECT_FALSE(test, nested);
	KUNIT_EXPECT_EQ(test, before_end[0], 0);
	KUNIT_EXPECT_EQ(test, before_end[1], 0);
	KUNIT_ASSERT_EQ(test, after_end[0], 1);
	KUNIT_ASSERT_EQ(test, after_end[1], 1);
	KUNIT_EXPECT_EQ(test, wa.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wa.wr_id, 20);
	KUNIT_EXPECT_EQ(test, wb.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wb.wr_id, 200);
	KUNIT_EXPECT_EQ(test, wb.byte_len, 2048);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, 2048), 0);
	/* the two data packets and the ACK, all looped back */
	lo1 = qpnic_test_counter(test, rc.ibdev, "loopback_packets");
	KUNIT_EXPECT_GE(test, lo1 - lo0, 3);
	rc_pair_destroy(&p);
}

/* Post @n one-packet SENDs from @src inside an inline section. */
static bool rc_burst(struct kunit *test, struct ib_qp *qp, u8 *src, int n,
		     u64 wr_id)
{
	bool outer;
	int i, err = 0;

	local_bh_disable();
	outer = qpnic_kunit_inline_begin(rc.ibdev);
	for (i = 0; i < n; i++)
		err |= rc_post(qp, IB_WR_SEND, src + 64 * i, 64, NULL, 0, wr_id + i);
	if (outer)
		qpnic_kunit_inline_end(rc.ibdev);
	local_bh_enable();
	KUNIT_EXPECT_EQ(test, err, 0);
	return outer;
}

/*
 * Four 64 KiB READs in flight: each one's first response goes from the
 * receive path, the rest (loopback segments) from the READ work, one
 * sender at a time. They reach the completer in PSN order: no response
 * is stale, nothing is sent again, every byte lands.
 */
#define RC_READ_LEN	(64 * 1024)

static void qpnic_rc_reads_in_order(struct kunit *test)
{
	/* (an ACK timeout of 1 s: no retransmission meanwhile) */
	struct rc_opts o = { .type = IB_QPT_RC, .retry_cnt = 7, .timeout = 18 };
	u8 *src = kunit_kzalloc(test, RC_READ_LEN, GFP_KERNEL);
	u64 stale0, retrans0;
	struct rc_pair p;
	struct ib_wc wc;
	u8 *dst[4];
	int i;

	KUNIT_ASSERT_NOT_NULL(test, src);
	for (i = 0; i < 4; i++) {
		dst[i] = kunit_kzalloc(test, RC_READ_LEN, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, dst[i]);
	}
	rc_fill(src, RC_READ_LEN, 11);
	rc_pair_init(test, &p, &o);
	stale0 = qpnic_test_counter(test, rc.ibdev, "rx_drop_stale_response");
	retrans0 = qpnic_test_counter(test, rc.ibdev, "tx_retransmits");
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_RDMA_READ, dst[i], RC_READ_LEN,
					      src, rc.pd->unsafe_global_rkey, 50 + i), 0);
	for (i = 0; i < 4; i++)
		qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_READ, 50 + i, &wc);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ_MSG(test, memcmp(dst[i], src, RC_READ_LEN), 0, "READ %d", i);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rc.ibdev, "rx_drop_stale_response"),
			stale0);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rc.ibdev, "tx_retransmits"),
			retrans0);
	rc_pair_destroy(&p);
}

/*
 * A burst of requests delivered in one pass draws one ACK, for the newest
 * PSN: eight one-packet SENDs cost nine packets, not sixteen, and all
 * eight complete. A held ACK leaves before an RNR NAK that follows it in
 * the same pass: the SENDs before the NAKed one complete at once, and no
 * ACK arrives stale.
 */
static void qpnic_rc_acks_coalesced(struct kunit *test)
{
	/* (an ACK timeout of 1 s: no retransmission meanwhile) */
	struct rc_opts o = { .type = IB_QPT_RC, .rnr_retry = 7, .retry_cnt = 7,
			     .timeout = 18 };
	u8 *src = kunit_kzalloc(test, 512, GFP_KERNEL);
	u8 *dst = kunit_kzalloc(test, 512, GFP_KERNEL);
	u64 lo0, direct0, stale0;
	struct rc_pair p;
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	rc_fill(src, 512, 3);
	rc_pair_init(test, &p, &o);
	for (i = 0; i < 8; i++)
		KUNIT_ASSERT_EQ(test, rc_post_recv(p.b, dst + 64 * i, 64, 100 + i), 0);
	lo0 = qpnic_test_counter(test, rc.ibdev, "loopback_packets");
	direct0 = qpnic_test_counter(test, rc.ibdev, "loopback_direct_acks");
	stale0 = qpnic_test_counter(test, rc.ibdev, "rx_drop_stale_response");
	KUNIT_ASSERT_TRUE(test, rc_burst(test, p.a, src, 8, 0));
	for (i = 0; i < 8; i++) {
		qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_RECV, 100 + i, &wc);
		qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_SEND, i, &wc);
	}
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, 512), 0);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rc.ibdev, "loopback_packets") - lo0, 9);
	/* the ACK, alone for A at the pass's end, went without a packet */
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rc.ibdev, "loopback_direct_acks") -
			direct0, 1);

	/* three SENDs, two receives: ACK, then RNR NAK for the third */
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_EQ(test, rc_post_recv(p.b, dst + 64 * i, 64, 200 + i), 0);
	KUNIT_ASSERT_TRUE(test, rc_burst(test, p.a, src, 3, 10));
	for (i = 0; i < 2; i++) {
		qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_RECV, 200 + i, &wc);
		qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_SEND, 10 + i, &wc);
	}
	KUNIT_EXPECT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 0), 0);
	KUNIT_ASSERT_EQ(test, rc_post_recv(p.b, dst + 128, 64, 202), 0);
	qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_RECV, 202, &wc);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_SEND, 12, &wc);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rc.ibdev, "rx_drop_stale_response"),
			stale0);
	rc_pair_destroy(&p);
}

/*
 * An ACK goes to the completer without a packet only when nothing its
 * responder sent that QP before is still queued: SEND, READ, SEND, SEND
 * in one pass send the held ACK of the first SEND direct, then the
 * READ's response as a packet, so the ACK for the last two SENDs follows
 * it as a packet; all four complete in order, none stale, nothing sent
 * again.
 */
static void qpnic_rc_direct_ack_behind_answers(struct kunit *test)
{
	/* (an ACK timeout of 1 s: no retransmission meanwhile) */
	struct rc_opts o = { .type = IB_QPT_RC, .retry_cnt = 7, .timeout = 18 };
	static const char * const still[] = {
		"rx_drop_stale_response", "tx_retransmits",
	};
	static const enum ib_wc_opcode done[] = {
		IB_WC_SEND, IB_WC_RDMA_READ, IB_WC_SEND, IB_WC_SEND,
	};
	u8 *src = kunit_kzalloc(test, 256, GFP_KERNEL);
	u8 *dst = kunit_kzalloc(test, 256, GFP_KERNEL);
	u64 before[ARRAY_SIZE(still)], lo0, direct0;
	struct rc_pair p;
	struct ib_wc wc;
	int i, err = 0;
	bool outer;

	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	rc_fill(src, 256, 5);
	rc_pair_init(test, &p, &o);
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, rc_post_recv(p.b, dst + 64 * i, 64, 100 + i), 0);
	for (i = 0; i < ARRAY_SIZE(still); i++)
		before[i] = qpnic_test_counter(test, rc.ibdev, still[i]);
	lo0 = qpnic_test_counter(test, rc.ibdev, "loopback_packets");
	direct0 = qpnic_test_counter(test, rc.ibdev, "loopback_direct_acks");

	local_bh_disable();
	outer = qpnic_kunit_inline_begin(rc.ibdev);
	err |= rc_post(p.a, IB_WR_SEND, src, 64, NULL, 0, 0);
	/* B's bytes 192..255 into A's last 64 */
	err |= rc_post(p.a, IB_WR_RDMA_READ, dst + 192, 64, src + 192,
		       rc.pd->unsafe_global_rkey, 1);
	err |= rc_post(p.a, IB_WR_SEND, src + 64, 64, NULL, 0, 2);
	err |= rc_post(p.a, IB_WR_SEND, src + 128, 64, NULL, 0, 3);
	if (outer)
		qpnic_kunit_inline_end(rc.ibdev);
	local_bh_enable();

	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_ASSERT_TRUE(test, outer);
	for (i = 0; i < 4; i++)
		qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, done[i], i, &wc);
	for (i = 0; i < 3; i++)
		qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_RECV, 100 + i, &wc);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, 256), 0);
	/* four requests; an ACK, the READ's response and the last ACK */
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rc.ibdev, "loopback_packets") - lo0, 7);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rc.ibdev, "loopback_direct_acks") -
			direct0, 1);
	for (i = 0; i < ARRAY_SIZE(still); i++)
		KUNIT_EXPECT_EQ_MSG(test, qpnic_test_counter(test, rc.ibdev, still[i]),
				    before[i], "%s", still[i]);
	rc_pair_destroy(&p);
}

/* The plain ACKs (not READ responses, not atomic answers) on the wire. */
static atomic_t rc_acks_seen;

static unsigned int rc_count_acks(struct sk_buff *skb)
{
	const u8 *bth = qpnic_test_lo_udp(skb) + sizeof(struct udphdr);

	if (bth[0] == QPNIC_ACKNOWLEDGE)
		atomic_inc(&rc_acks_seen);
	return 1;
}

/*
 * Eight unsignaled SENDs and a signaled one: only the signaled one asks
 * for an ACK, whose one ACK completes all nine (an ACK is cumulative);
 * the unsignaled ones show no completion. Then three unsignaled SENDs
 * alone: nothing asks, and the ACK timer (16.8 ms here) sends the last
 * of them again asking, once, without spending a retry (ack_probes, not
 * ack_timeouts): its ACK acknowledges all three.
 * Their slots come back: the SQ (32) takes its depth again.
 */
static void qpnic_rc_unsignaled_acks(struct kunit *test)
{
	struct rc_opts o = { .type = IB_QPT_RC, .psn = 1, .retry_cnt = 1,
			     .timeout = 12 };
	u8 *src = kunit_kzalloc(test, 12 * 64, GFP_KERNEL);
	u8 *dst = kunit_kzalloc(test, 12 * 64, GFP_KERNEL);
	u64 timeouts = qpnic_test_counter(test, rc.ibdev, "ack_timeouts");
	u64 probes = qpnic_test_counter(test, rc.ibdev, "ack_probes");
	u64 dups;
	struct rc_pair p;
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	rc_fill(src, 12 * 64, 5);
	rc_pair_init(test, &p, &o);
	for (i = 0; i < 12; i++)
		KUNIT_ASSERT_EQ(test, rc_post_recv(p.b, dst + 64 * i, 64, 100 + i), 0);
	atomic_set(&rc_acks_seen, 0);
	WRITE_ONCE(qpnic_kunit_lo_hook, rc_count_acks);
	for (i = 0; i < 9; i++)
		KUNIT_ASSERT_EQ(test, rc_post_flags(p.a, IB_WR_SEND, src + 64 * i, 64,
						    NULL, 0, i,
						    i == 8 ? IB_SEND_SIGNALED : 0), 0);
	for (i = 0; i < 9; i++)
		qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_RECV, 100 + i, &wc);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_SEND, 8, &wc);
	KUNIT_EXPECT_EQ(test, atomic_read(&rc_acks_seen), 1);
	KUNIT_EXPECT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 0), 0);

	dups = qpnic_test_counter(test, rc.ibdev, "rx_duplicate_requests");
	for (i = 9; i < 12; i++)
		KUNIT_ASSERT_EQ(test, rc_post_flags(p.a, IB_WR_SEND, src + 64 * i, 64,
						    NULL, 0, i, 0), 0);
	for (i = 9; i < 12; i++)
		qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_RECV, 100 + i, &wc);
	for (i = 0; i < 100 && atomic_read(&rc_acks_seen) < 2; i++)
		msleep(20);
	WRITE_ONCE(qpnic_kunit_lo_hook, NULL);
	KUNIT_EXPECT_GE(test, atomic_read(&rc_acks_seen), 2);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rc.ibdev, "ack_probes"),
			probes + 1);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rc.ibdev, "ack_timeouts"),
			timeouts);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rc.ibdev, "rx_duplicate_requests"),
			dups + 1);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, 12 * 64), 0);
	KUNIT_EXPECT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 0), 0);
	KUNIT_EXPECT_EQ(test, qpnic_test_poll(p.cq_b, &wc, 0), 0);
	/* acknowledged: all 32 slots are free (RDMA WRITEs need no receive) */
	for (i = 0; i < 32; i++)
		KUNIT_ASSERT_EQ(test, rc_post_flags(p.a, IB_WR_RDMA_WRITE, src, 64, dst,
						    rc.pd->unsafe_global_rkey, 200 + i,
						    i == 31 ? IB_SEND_SIGNALED : 0), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, 231, &wc);
	KUNIT_EXPECT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 0), 0);
	rc_pair_destroy(&p);
}

/*
 * Unsignaled SENDs on a wire that loses one packet in ten (data, ACKs
 * and resends alike), the last one signaled: every message arrives once,
 * in order and whole, and the one completion says success. Losses the
 * unsignaled tail hides are found by sequence NAKs, the ACK probe or the
 * ACK timeout; none may stall the QP or fail it. (A loss at a fixed
 * period can lock onto a resend of the same length and lose the same
 * packet each time, until the retries run out, whatever asks for ACKs.)
 */
static void qpnic_rc_unsignaled_lossy_wire(struct kunit *test)
{
	struct rc_opts o = { .type = IB_QPT_RC, .psn = 0x10, .retry_cnt = 7,
			     .timeout = 12 };
	u8 *src = kunit_kzalloc(test, 30 * 64, GFP_KERNEL);
	u8 *dst = kunit_kzalloc(test, 30 * 64, GFP_KERNEL);
	u64 retrans = qpnic_test_counter(test, rc.ibdev, "tx_retransmits");
	struct rc_pair p;
	struct ib_wc wc;
	int i, round;
	bool ok = true;

	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	rc_pair_init(test, &p, &o);
	rc_wire_mode = 3;
	atomic_set(&rc_wire_count, 0);
	WRITE_ONCE(qpnic_kunit_lo_hook, rc_wire);
	for (round = 0; ok && round < 4; round++) {
		rc_fill(src, 30 * 64, 20 + round);
		memset(dst, 0, 30 * 64);
		for (i = 0; i < 30; i++)
			KUNIT_ASSERT_EQ(test, rc_post_recv(p.b, dst + 64 * i, 64, i), 0);
		for (i = 0; i < 30; i++)
			KUNIT_ASSERT_EQ(test, rc_post_flags(p.a, IB_WR_SEND, src + 64 * i,
							    64, NULL, 0, i,
							    i == 29 ? IB_SEND_SIGNALED : 0),
					0);
		for (i = 0; ok && i < 30; i++) {
			ok = qpnic_test_poll(p.cq_b, &wc, 3000) == 1 &&
			     wc.status == IB_WC_SUCCESS && wc.wr_id == i;
			KUNIT_EXPECT_TRUE_MSG(test, ok, "round %d: receive %d", round, i);
		}
		ok = ok && qpnic_test_poll(p.cq_a, &wc, 3000) == 1 &&
		     wc.status == IB_WC_SUCCESS && wc.wr_id == 29;
		KUNIT_EXPECT_TRUE_MSG(test, ok, "round %d: no SEND completion", round);
		KUNIT_EXPECT_EQ(test, memcmp(dst, src, 30 * 64), 0);
		KUNIT_EXPECT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 0), 0);
	}
	WRITE_ONCE(qpnic_kunit_lo_hook, NULL);
	/* (the wire lost packets, and they were sent again) */
	KUNIT_EXPECT_GT(test, qpnic_test_counter(test, rc.ibdev, "tx_retransmits"),
			retrans);
	rc_pair_destroy(&p);
}

/*
 * Three unsignaled SENDs asked for no ACK; the QP goes to SQD: it asks
 * for their ACK at once, and IB_EVENT_SQ_DRAINED comes well before the
 * ACK timeout (1.07 s here) would have sent them again.
 */
static void qpnic_rc_sq_drained_unsignaled(struct kunit *test)
{
	struct rc_opts o = { .type = IB_QPT_RC, .psn = 1, .retry_cnt = 7,
			     .timeout = 18 };
	struct rc_events *e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	struct ib_qp_attr a = { .qp_state = IB_QPS_SQD, .en_sqd_async_notify = 1 };
	u8 *src = kunit_kzalloc(test, 3 * 64, GFP_KERNEL);
	u8 *dst = kunit_kzalloc(test, 3 * 64, GFP_KERNEL);
	u64 probes = qpnic_test_counter(test, rc.ibdev, "ack_probes");
	u64 timeouts = qpnic_test_counter(test, rc.ibdev, "ack_timeouts");
	struct rc_pair p;
	unsigned long start;
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	rc_pair_events_init(test, &p, &o, e);
	rc_fill(src, 3 * 64, 7);
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ(test, rc_post_recv(p.b, dst + 64 * i, 64, i), 0);
		KUNIT_ASSERT_EQ(test, rc_post_flags(p.a, IB_WR_SEND, src + 64 * i, 64,
						    NULL, 0, i, 0), 0);
	}
	for (i = 0; i < 3; i++)
		qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_RECV, i, &wc);
	start = jiffies;
	KUNIT_ASSERT_EQ(test, ib_modify_qp(p.a, &a, IB_QP_STATE | IB_QP_EN_SQD_ASYNC_NOTIFY),
			0);
	KUNIT_EXPECT_EQ(test, rc_wait_events(e, 1, 3000), 1);
	KUNIT_EXPECT_EQ(test, e->type[0], IB_EVENT_SQ_DRAINED);
	KUNIT_EXPECT_LT(test, jiffies_to_msecs(jiffies - start), 500U);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rc.ibdev, "ack_probes"),
			probes + 1);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rc.ibdev, "ack_timeouts"),
			timeouts);
	KUNIT_EXPECT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 0), 0);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, 3 * 64), 0);
	rc_pair_destroy(&p);
}

/*
 * Both ends of one RC pair stream at once, each from its own kthread,
 * and each thread moves to the other CPU every few messages: the two
 * directions' lanes are delivered on two CPUs at once, and one stream's
 * packets are queued from both CPUs in turn. Every message must arrive
 * whole and in order, and nothing may be reordered on the way: no
 * out-of-sequence packet, no resend, no loopback drop.
 */
#define RC_LANE_MSGS	600
#define RC_LANE_SLOTS	16	/* receives each end keeps posted */
#define RC_LANE_LEN	2048	/* up to two packets at a 1024-byte MTU */

struct rc_lane_end {
	struct ib_qp *qp;
	struct ib_cq *cq;
	struct rc_lane_end *peer;
	struct completion done;
	atomic_t recvs_posted;	/* credits for the peer's SENDs */
	u8 *src, *dst;		/* RC_LANE_SLOTS buffers each */
	u32 sent, acked, received;
	const char *bad;	/* the first thing that went wrong */
	u32 bad_val;
};

static u32 rc_lane_len(u32 i)
{
	return 65 + (i * 389) % (RC_LANE_LEN - 65);
}

static bool rc_lane_recv(struct rc_lane_end *e, u32 slot)
{
	if (rc_post_recv(e->qp, e->dst + slot * RC_LANE_LEN, RC_LANE_LEN,
			 slot))
		return false;
	atomic_inc(&e->recvs_posted);
	return true;
}

static bool rc_lane_poll(struct rc_lane_end *e)
{
	u8 want[64];
	struct ib_wc wc;
	u32 slot, len;

	if (ib_poll_cq(e->cq, 1, &wc) != 1)
		return false;
	if (wc.status != IB_WC_SUCCESS) {
		e->bad = "completion status";
		e->bad_val = wc.status;
	} else if (wc.opcode == IB_WC_SEND) {
		if (wc.wr_id != e->acked) {
			e->bad = "send completed out of order";
			e->bad_val = wc.wr_id;
		}
		e->acked++;
	} else {
		/* message i lands in receive slot i % RC_LANE_SLOTS */
		slot = e->received % RC_LANE_SLOTS;
		len = rc_lane_len(e->received);
		rc_fill(want, sizeof(want), e->received);
		if (wc.wr_id != slot || wc.byte_len != len ||
		    memcmp(e->dst + slot * RC_LANE_LEN, want, sizeof(want)) ||
		    e->dst[slot * RC_LANE_LEN + len - 1] != (u8)e->received) {
			e->bad = "message out of order or damaged";
			e->bad_val = e->received;
		}
		e->received++;
		if (atomic_read(&e->recvs_posted) < RC_LANE_MSGS &&
		    !rc_lane_recv(e, slot)) {
			e->bad = "reposting a receive failed";
			e->bad_val = slot;
		}
	}
	return true;
}

static int rc_lane_thread(void *arg)
{
	struct rc_lane_end *e = arg;
	unsigned long end = jiffies + 30 * HZ;
	u32 cpu = 0;

	while (!e->bad && (e->acked < RC_LANE_MSGS ||
			   e->received < RC_LANE_MSGS) &&
	       time_before(jiffies, end)) {
		bool busy = rc_lane_poll(e);

		/* a SEND only into a receive the peer has posted */
		if (e->sent < RC_LANE_MSGS && e->sent - e->acked < 8 &&
		    e->sent < atomic_read(&e->peer->recvs_posted)) {
			u8 *buf = e->src + (e->sent % RC_LANE_SLOTS) * RC_LANE_LEN;
			u32 len = rc_lane_len(e->sent);

			rc_fill(buf, 64, e->sent);
			buf[len - 1] = e->sent;
			if (rc_post(e->qp, IB_WR_SEND, buf, len, NULL, 0, e->sent)) {
				e->bad = "post failed";
				e->bad_val = e->sent;
			}
			e->sent++;
			busy = true;
			if (!(e->sent % 5)) {
				cpu = cpumask_next(cpu, cpu_online_mask);
				if (cpu >= nr_cpu_ids)
					cpu = cpumask_first(cpu_online_mask);
				set_cpus_allowed_ptr(current, cpumask_of(cpu));
			}
		}
		if (!busy)
			usleep_range(20, 50);
	}
	if (!e->bad && (e->acked < RC_LANE_MSGS || e->received < RC_LANE_MSGS)) {
		e->bad = "timed out; messages received";
		e->bad_val = e->received;
	}
	complete(&e->done);
	return 0;
}

static void qpnic_rc_lanes_both_ways(struct kunit *test)
{
	/* (an ACK timeout of 1 s: no retransmission meanwhile) */
	struct rc_opts o = { .type = IB_QPT_RC, .retry_cnt = 7, .timeout = 18 };
	static const char * const still[] = {
		"rx_out_of_sequence", "rx_seq_naks", "tx_retransmits",
		"loopback_drops", "rx_drop_stale_response",
	};
	struct rc_lane_end ends[2] = {};
	u64 before[ARRAY_SIZE(still)];
	struct task_struct *t[2];
	struct rc_pair p;
	u32 i, slot;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs");
	rc_pair_init(test, &p, &o);
	for (i = 0; i < 2; i++) {
		struct rc_lane_end *e = &ends[i];

		e->qp = i ? p.b : p.a;
		e->cq = i ? p.cq_b : p.cq_a;
		e->peer = &ends[!i];
		init_completion(&e->done);
		e->src = kunit_kzalloc(test, RC_LANE_SLOTS * RC_LANE_LEN, GFP_KERNEL);
		e->dst = kunit_kzalloc(test, RC_LANE_SLOTS * RC_LANE_LEN, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, e->src);
		KUNIT_ASSERT_NOT_NULL(test, e->dst);
		for (slot = 0; slot < RC_LANE_SLOTS; slot++)
			KUNIT_ASSERT_TRUE(test, rc_lane_recv(e, slot));
	}
	for (i = 0; i < ARRAY_SIZE(still); i++)
		before[i] = qpnic_test_counter(test, rc.ibdev, still[i]);
	t[0] = kthread_create(rc_lane_thread, &ends[0], "qpnic_lane0");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t[0]));
	t[1] = kthread_create(rc_lane_thread, &ends[1], "qpnic_lane1");
	if (IS_ERR(t[1]))
		kthread_stop(t[0]);	/* (it never ran) */
	KUNIT_ASSERT_FALSE(test, IS_ERR(t[1]));
	for (i = 0; i < 2; i++)
		wake_up_process(t[i]);
	for (i = 0; i < 2; i++)
		wait_for_completion(&ends[i].done);
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_PTR_EQ_MSG(test, ends[i].bad, NULL, "end %u: %s (%u)",
					i, ends[i].bad, ends[i].bad_val);
		KUNIT_EXPECT_EQ(test, ends[i].received, RC_LANE_MSGS);
		KUNIT_EXPECT_EQ(test, ends[i].acked, RC_LANE_MSGS);
	}
	for (i = 0; i < ARRAY_SIZE(still); i++)
		KUNIT_EXPECT_EQ_MSG(test, qpnic_test_counter(test, rc.ibdev, still[i]),
				    before[i], "%s", still[i]);
	rc_pair_destroy(&p);
}

/* B of qpnic_rc_ack_of_destroyed_qp, destroyed from another CPU. */
struct rc_dying {
	struct work_struct destroy;
	struct ib_qp *qp;
	atomic_t fired;
	bool dying_seen;
};

static void rc_dying_destroy(struct work_struct *work)
{
	ib_destroy_qp(container_of(work, struct rc_dying, destroy)->qp);
}

/*
 * B's receive completed, inside the delivering pass: B's destroy starts
 * on the other CPU, and the pass goes on once it has (a post then fails;
 * the destroy itself waits for the pass).
 */
static void rc_dying_comp(struct ib_cq *cq, void *ctx)
{
	struct rc_dying *d = ctx;
	int ms;

	if (atomic_xchg(&d->fired, 1))
		return;
	queue_work_on(cpumask_any_but(cpu_online_mask, smp_processor_id()),
		      system_wq, &d->destroy);
	for (ms = 0; ms < 2000 && !d->dying_seen; ms++) {
		d->dying_seen = ib_post_send(d->qp, NULL, NULL) == -EINVAL;
		mdelay(1);
	}
}

/*
 * A receiver that destroys its QP as soon as its last receive completes
 * (ibv_rc_pingpong does): the ACK the delivering pass holds for that
 * SEND still goes, and the SEND completes at once instead of retrying
 * into a QP that is gone (here: IB_WC_RETRY_EXC_ERR after 2 s).
 */
static void qpnic_rc_ack_of_destroyed_qp(struct kunit *test)
{
	struct rc_opts o = { .type = IB_QPT_RC, .retry_cnt = 1, .timeout = 18 };
	struct rc_dying *d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
	u8 *src = kunit_kzalloc(test, 64, GFP_KERNEL);
	u8 *dst = kunit_kzalloc(test, 64, GFP_KERNEL);
	struct ib_cq *cq_a, *cq_b;
	struct ib_qp *qa;
	struct ib_wc wc;

	if (num_online_cpus() < 2)
		kunit_skip(test, "the destroy needs a second CPU");
	KUNIT_ASSERT_NOT_NULL(test, d);
	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	INIT_WORK(&d->destroy, rc_dying_destroy);
	rc_fill(src, 64, 9);
	cq_a = ib_create_cq(rc.ibdev, NULL, NULL, NULL,
			    &(struct ib_cq_init_attr){ .cqe = 16 });
	KUNIT_ASSERT_FALSE(test, IS_ERR(cq_a));
	cq_b = ib_create_cq(rc.ibdev, rc_dying_comp, NULL, d,
			    &(struct ib_cq_init_attr){ .cqe = 16 });
	KUNIT_ASSERT_FALSE(test, IS_ERR(cq_b));
	qa = rc_qp(test, cq_a, IB_QPT_RC);
	d->qp = rc_qp(test, cq_b, IB_QPT_RC);
	rc_connect(test, qa, d->qp->qp_num, &o);
	rc_connect(test, d->qp, qa->qp_num, &o);
	KUNIT_ASSERT_EQ(test, rc_post_recv(d->qp, dst, 64, 1), 0);
	KUNIT_ASSERT_EQ(test, ib_req_notify_cq(cq_b, IB_CQ_NEXT_COMP), 0);
	KUNIT_ASSERT_TRUE(test, rc_burst(test, qa, src, 1, 7));
	flush_work(&d->destroy);
	KUNIT_EXPECT_TRUE(test, d->dying_seen);
	qpnic_test_expect(test, cq_a, IB_WC_SUCCESS, IB_WC_SEND, 7, &wc);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, 64), 0);
	ib_destroy_qp(qa);
	ib_destroy_cq(cq_b);
	ib_destroy_cq(cq_a);
}

static atomic_t rc_lost_last;

/* Lose the first READ RESPONSE LAST that comes by. */
static unsigned int rc_lose_read_last(struct sk_buff *skb)
{
	const u8 *bth = qpnic_test_lo_udp(skb) + sizeof(struct udphdr);

	if (bth[0] == QPNIC_READ_RESPONSE_LAST && !atomic_xchg(&rc_lost_last, 1))
		return 0;
	return 1;
}

/*
 * Two READs in flight and the first one's last response lost: the second
 * one's responses say so (an implied NAK), the first is asked again from
 * what is missing at once, not after the ACK timeout (here 1 s).
 */
static void qpnic_rc_read_implied_nak(struct kunit *test)
{
	struct rc_opts o = { .type = IB_QPT_RC, .retry_cnt = 7, .rnr_retry = 7,
			     .timeout = 18 };
	u8 *src = kunit_kzalloc(test, 2 * 4096, GFP_KERNEL);
	u8 *dst = kunit_kzalloc(test, 2 * 4096, GFP_KERNEL);
	u64 timeouts = qpnic_test_counter(test, rc.ibdev, "ack_timeouts");
	unsigned long start;
	struct rc_pair p;
	struct ib_wc wc;

	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	rc_fill(src, 2 * 4096, 9);
	rc_pair_init(test, &p, &o);
	atomic_set(&rc_lost_last, 0);
	WRITE_ONCE(qpnic_kunit_lo_hook, rc_lose_read_last);
	start = jiffies;
	KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_RDMA_READ, dst, 4096, src,
				      rc.pd->unsafe_global_rkey, 1), 0);
	KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_RDMA_READ, dst + 4096, 4096,
				      src + 4096, rc.pd->unsafe_global_rkey, 2), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_READ, 1, &wc);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_READ, 2, &wc);
	WRITE_ONCE(qpnic_kunit_lo_hook, NULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&rc_lost_last), 1);
	KUNIT_EXPECT_LT(test, jiffies_to_msecs(jiffies - start), 700U);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rc.ibdev, "ack_timeouts"),
			timeouts);
	KUNIT_EXPECT_TRUE(test, !memcmp(src, dst, 2 * 4096));
	rc_pair_destroy(&p);
}

/*
 * 64 KiB READs answered from the READ work, each with a WRITE and a
 * FETCH_ADD behind it: neither the WRITE's ACK nor the ATOMIC ACKNOWLEDGE
 * may overtake the READ's responses (IBTA 9.7.5.1: the requester would
 * take them as lost and ask again at once). Nothing is resent on a clean
 * wire, and the atomics' values come back in order. The ACK timeout is
 * 1 s: a debug kernel under TCG can take longer than the default 16.8 ms
 * to answer a 64 KiB READ, and a resend after a timeout is no overtaking.
 */
static void qpnic_rc_answers_behind_read_in_order(struct kunit *test)
{
	struct rc_opts o = { .type = IB_QPT_RC, .retry_cnt = 7, .timeout = 18 };
	u8 *src = kunit_kzalloc(test, 2 * 65536, GFP_KERNEL);
	u8 *dst = kunit_kzalloc(test, 2 * 65536, GFP_KERNEL);
	u64 *counter = kunit_kzalloc(test, sizeof(u64), GFP_KERNEL);
	u64 *orig = kunit_kzalloc(test, 4 * sizeof(u64), GFP_KERNEL);
	u64 resent = qpnic_test_counter(test, rc.ibdev, "tx_retransmits");
	struct rc_pair p;
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	KUNIT_ASSERT_NOT_NULL(test, counter);
	KUNIT_ASSERT_NOT_NULL(test, orig);
	rc_fill(src, 2 * 65536, 9);
	*counter = 100;
	rc_pair_init(test, &p, &o);
	for (i = 0; i < 4; i++) {
		KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_RDMA_READ, dst, 65536, src,
					      rc.pd->unsafe_global_rkey, 10 + i), 0);
		KUNIT_ASSERT_EQ(test, rc_post(p.a, IB_WR_RDMA_WRITE, src + 65536, 64,
					      dst + 65536 + 64 * i,
					      rc.pd->unsafe_global_rkey, 20 + i), 0);
		KUNIT_ASSERT_EQ(test, rc_post_atomic(p.a, IB_WR_ATOMIC_FETCH_AND_ADD,
						     &orig[i], counter, 1, 0, 30 + i), 0);
	}
	for (i = 0; i < 4; i++) {
		qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_READ, 10 + i, &wc);
		qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, 20 + i, &wc);
		qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_FETCH_ADD, 30 + i, &wc);
		KUNIT_EXPECT_EQ(test, orig[i], 100ULL + i);
	}
	KUNIT_EXPECT_EQ(test, *counter, 104ULL);
	KUNIT_EXPECT_TRUE(test, !memcmp(dst, src, 65536));
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rc.ibdev, "tx_retransmits"),
			resent);
	rc_pair_destroy(&p);
}

/*
 * A NIC that keeps what it is given until the test frees it: the packets
 * one QP has in this host's stack.
 */
static struct sk_buff_head rc_nic_held;
static atomic_t rc_nic_sent;

static netdev_tx_t rc_nic_hold(struct sk_buff *skb, struct net_device *ndev)
{
	/* (the netdev's own IPv6 chatter, MLD reports, is not the QP's) */
	if (skb->protocol != htons(ETH_P_IPV6) ||
	    ipv6_hdr(skb)->nexthdr != IPPROTO_UDP) {
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	atomic_inc(&rc_nic_sent);
	skb_queue_tail(&rc_nic_held, skb);
	return NETDEV_TX_OK;
}

static const struct net_device_ops rc_nic_ops = {
	.ndo_start_xmit = rc_nic_hold,
};

/* Wait up to 2 s for the NIC to hold @n packets, and 20 ms for more. */
static u32 rc_nic_wait(u32 n)
{
	unsigned long end = jiffies + 2 * HZ;

	while (skb_queue_len(&rc_nic_held) < n && time_before(jiffies, end))
		usleep_range(500, 1000);
	msleep(20);
	return skb_queue_len(&rc_nic_held);
}

/* The NIC sends (frees) the @n oldest packets it holds. */
static void rc_nic_free(u32 n)
{
	struct sk_buff *skb;

	while (n-- && (skb = skb_dequeue(&rc_nic_held)))
		kfree_skb(skb);
}

/* An RC QP on its own device, on a NIC that holds what it is given. */
struct rc_nic_env {
	struct net_device *ndev;
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u8 *buf;
};

static void rc_nic_setup(struct kunit *test, struct rc_nic_env *e)
{
	union ib_gid peer = { .global = {
		.subnet_prefix = cpu_to_be64(0xfe80000000000000ULL),
		.interface_id = cpu_to_be64(0x0200000000000001ULL) } };
	const struct qpnic_test_rc_path path = {
		.dgid = &peer, .rd_atomic = 1, .retry_cnt = 7, .rnr_retry = 7,
		.timeout = 20,	/* 4.3 s: no resend while the test runs */
	};
	struct ib_qp_init_attr attr = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 8, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	union ib_gid gid;

	e->buf = kunit_kzalloc(test, SZ_64K, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e->buf);
	skb_queue_head_init(&rc_nic_held);
	atomic_set(&rc_nic_sent, 0);
	/* no neighbour to resolve: packets go straight to the NIC */
	e->ndev = qpnic_test_netdev_create_ops("qprcn%d", &rc_nic_ops, IFF_NOARP);
	KUNIT_ASSERT_FALSE(test, IS_ERR(e->ndev));
	KUNIT_ASSERT_EQ(test, qpnic_device_add("qpnic_rcn%d", e->ndev, &e->ibdev), 0);
	KUNIT_ASSERT_EQ(test, qpnic_test_gid0(e->ibdev, &gid), 0);
	e->pd = ib_alloc_pd(e->ibdev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(e->pd));
	e->cq = ib_create_cq(e->ibdev, NULL, NULL, NULL,
			     &(struct ib_cq_init_attr){ .cqe = 16 });
	KUNIT_ASSERT_FALSE(test, IS_ERR(e->cq));
	attr.send_cq = e->cq;
	attr.recv_cq = e->cq;
	e->qp = ib_create_qp(e->pd, &attr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(e->qp));
	KUNIT_ASSERT_EQ(test, qpnic_test_rc_connect(e->qp, 0x11, &path), 0);
}

/* Post @n signaled 64 KiB WRITEs (64 packets each) on @e's QP. */
static void rc_nic_post_writes(struct kunit *test, struct rc_nic_env *e, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct ib_sge sge = {
			.addr = (uintptr_t)e->buf, .length = SZ_64K,
			.lkey = e->pd->local_dma_lkey,
		};
		struct ib_rdma_wr wr = {
			.wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
				.opcode = IB_WR_RDMA_WRITE,
				.send_flags = IB_SEND_SIGNALED },
			.remote_addr = 0x10000, .rkey = 0x1234,
		};

		KUNIT_ASSERT_EQ(test, ib_post_send(e->qp, &wr.wr, NULL), 0);
	}
}

/* The QP is destroyed already; the NIC lets go of what it holds. */
static void rc_nic_teardown(struct rc_nic_env *e)
{
	skb_queue_purge(&rc_nic_held);	/* their flow outlived the QP */
	ib_destroy_cq(e->cq);
	ib_dealloc_pd(e->pd);
	qpnic_device_remove(e->ibdev);
	qpnic_test_netdev_destroy(e->ndev);
}

/*
 * One QP streams WRITEs to a peer on the wire through a NIC that frees
 * nothing on its own. The QP stops at 128 packets in the stack (not at
 * its 256 PSNs in flight), sends on once no more than 32 are left, and
 * then until its window is full; no packet is dropped on the way.
 * Destroying the QP with packets still held returns at once, and the
 * packets freed after it find their flow, not the QP.
 */
static void qpnic_rc_stack_backpressure(struct kunit *test)
{
	struct rc_nic_env e;
	u64 full0, drop0;

	rc_nic_setup(test, &e);
	full0 = qpnic_test_counter(test, e.ibdev, "tx_stack_full");
	drop0 = qpnic_test_counter(test, e.ibdev, "tx_drop_stack");

	rc_nic_post_writes(test, &e, 8);
	/* 8 x 64 packets posted: the stack's share stops the first run */
	KUNIT_EXPECT_EQ(test, rc_nic_wait(128), 128);
	KUNIT_EXPECT_GT(test, qpnic_test_counter(test, e.ibdev, "tx_stack_full"),
			full0);
	/* 38 left: above the low mark, nothing more goes */
	rc_nic_free(90);
	KUNIT_EXPECT_EQ(test, rc_nic_wait(0), 38);
	KUNIT_EXPECT_EQ(test, atomic_read(&rc_nic_sent), 128);
	/* 32 left: the QP sends until 128 are held again */
	rc_nic_free(6);
	KUNIT_EXPECT_EQ(test, rc_nic_wait(128), 128);
	KUNIT_EXPECT_EQ(test, atomic_read(&rc_nic_sent), 224);
	/* all sent: 256 PSNs in flight and no ACK, the window stops it */
	rc_nic_free(128);
	KUNIT_EXPECT_EQ(test, rc_nic_wait(32), 32);
	KUNIT_EXPECT_EQ(test, atomic_read(&rc_nic_sent), 256);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, e.ibdev, "tx_drop_stack"),
			drop0);

	ib_destroy_qp(e.qp);
	rc_nic_teardown(&e);
}

static atomic_t rc_nic_freeing;

/* The NIC on another CPU: once told, it frees what it holds, one by one. */
static int rc_nic_freer(void *unused)
{
	struct sk_buff *skb;

	while (!kthread_should_stop()) {
		if (!atomic_read(&rc_nic_freeing)) {
			cond_resched();
			continue;
		}
		skb = skb_dequeue(&rc_nic_held);
		if (skb)
			kfree_skb(skb);	/* wakes the QP's senders at 32 left */
		else
			cond_resched();
	}
	return 0;
}

/*
 * The NIC frees a stopped QP's packets while the QP is destroyed, 20
 * times: the packets that leave 32 or fewer wake the QP's senders, and
 * that wake-up races destroy_qp's detaching the flow and cancelling the
 * work (KASAN and lockdep watch it). Once destroy_qp returned, nothing
 * of the QP sends any more.
 */
static void qpnic_rc_stack_free_races_destroy(struct kunit *test)
{
	struct task_struct *freer;
	struct rc_nic_env e;
	int round;

	for (round = 0; round < 20; round++) {
		rc_nic_setup(test, &e);
		rc_nic_post_writes(test, &e, 4);
		KUNIT_ASSERT_EQ(test, rc_nic_wait(128), 128);
		atomic_set(&rc_nic_freeing, 0);
		freer = kthread_create(rc_nic_freer, NULL, "qpnic_nicfree");
		KUNIT_ASSERT_FALSE(test, IS_ERR(freer));
		kthread_bind(freer, (raw_smp_processor_id() + 1) % nr_cpu_ids);
		wake_up_process(freer);
		/* the NIC frees from now, and the QP goes meanwhile */
		atomic_set(&rc_nic_freeing, 1);
		udelay(round * 5);
		ib_destroy_qp(e.qp);
		/* whatever it sent before it went, and nothing after */
		while (skb_queue_len(&rc_nic_held))
			usleep_range(100, 200);
		kthread_stop(freer);
		KUNIT_EXPECT_GE(test, atomic_read(&rc_nic_sent), 128);
		KUNIT_EXPECT_EQ(test, rc_nic_wait(0), 0);
		rc_nic_teardown(&e);
	}
}

static int qpnic_rc_suite_init(struct kunit_suite *suite)
{
	int err;

	rc.ndev = qpnic_test_netdev_create("qprc%d");
	if (IS_ERR(rc.ndev))
		return PTR_ERR(rc.ndev);
	err = qpnic_device_add("qpnic_rc%d", rc.ndev, &rc.ibdev);
	if (err)
		goto err_ndev;
	err = qpnic_test_gid0(rc.ibdev, &rc.gid);
	if (err)
		goto err_dev;
	rc.pd = ib_alloc_pd(rc.ibdev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(rc.pd)) {
		err = PTR_ERR(rc.pd);
		goto err_dev;
	}
	/* ib_alloc_pd's global rkey allows no atomics: a DMA MR that does */
	rc.atomic_mr = qpnic_test_dma_mr(rc.pd, IB_ACCESS_LOCAL_WRITE |
					 IB_ACCESS_REMOTE_ATOMIC);
	if (IS_ERR(rc.atomic_mr)) {
		err = PTR_ERR(rc.atomic_mr);
		goto err_pd;
	}
	return 0;

err_pd:
	ib_dealloc_pd(rc.pd);
err_dev:
	qpnic_device_remove(rc.ibdev);
err_ndev:
	qpnic_test_netdev_destroy(rc.ndev);
	return err;
}

static void qpnic_rc_suite_exit(struct kunit_suite *suite)
{
	rc.ibdev->ops.dereg_mr(rc.atomic_mr, NULL);
	ib_dealloc_pd(rc.pd);
	qpnic_device_remove(rc.ibdev);
	qpnic_test_netdev_destroy(rc.ndev);
}

static struct kunit_case qpnic_rc_cases[] = {
	KUNIT_CASE(qpnic_rc_traffic),
	KUNIT_CASE(qpnic_uc_traffic),
	KUNIT_CASE(qpnic_rc_lossy_wire),
	KUNIT_CASE(qpnic_rc_duplicating_wire),
	KUNIT_CASE(qpnic_rc_lossy_wire_segments),
	KUNIT_CASE(qpnic_rc_duplicating_wire_segments),
	KUNIT_CASE(qpnic_rc_refused_segments),
	KUNIT_CASE(qpnic_rc_ecn),
	KUNIT_CASE(qpnic_rc_refused_by_host),
	KUNIT_CASE(qpnic_rc_stack_backpressure),
	KUNIT_CASE(qpnic_rc_stack_free_races_destroy),
	KUNIT_CASE(qpnic_rc_rnr),
	KUNIT_CASE(qpnic_rc_remote_access),
	KUNIT_CASE(qpnic_rc_atomic_refused),
	KUNIT_CASE(qpnic_rc_send_with_inv),
	KUNIT_CASE(qpnic_rc_retry_exceeded),
	KUNIT_CASE(qpnic_rc_ack_timer_lazy),
	KUNIT_CASE(qpnic_rc_destroy_busy),
	KUNIT_CASE(qpnic_rc_error_events),
	KUNIT_CASE(qpnic_rc_sq_drained),
	KUNIT_CASE(qpnic_rc_cq_overrun_errors_qps),
	KUNIT_CASE(qpnic_rc_read_implied_nak),
	KUNIT_CASE(qpnic_rc_answers_behind_read_in_order),
	KUNIT_CASE(qpnic_rc_mtu_change),
	KUNIT_CASE(qpnic_rc_inline_delivery),
	KUNIT_CASE(qpnic_rc_acks_coalesced),
	KUNIT_CASE(qpnic_rc_direct_ack_behind_answers),
	KUNIT_CASE(qpnic_rc_unsignaled_acks),
	KUNIT_CASE(qpnic_rc_unsignaled_lossy_wire),
	KUNIT_CASE(qpnic_rc_sq_drained_unsignaled),
	KUNIT_CASE(qpnic_rc_reads_in_order),
	KUNIT_CASE(qpnic_rc_lanes_both_ways),
	KUNIT_CASE(qpnic_rc_ack_of_destroyed_qp),
	{}
};

static struct kunit_suite qpnic_rc_suite = {
	.name = "qpnic_rc",
	.suite_init = qpnic_rc_suite_init,
	.suite_exit = qpnic_rc_suite_exit,
	.test_cases = qpnic_rc_cases,
};

kunit_test_suite(qpnic_rc_suite);
