// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite for qpnic's data path through the verbs a kernel ULP uses:
 * QPs on one device send to the device's own GID (the loopback path, the
 * same transport code as the wire), and each case checks the completions,
 * the bytes that landed, the headers a UD receiver sees and the port
 * counters. Every error class the transport completes with has a case.
 */
#include <kunit/test.h>
#include <linux/ipv6.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <qpnic/qpnic.h>

#include "qpnic_test_util.h"

MODULE_IMPORT_NS(QPNIC_KUNIT);

#define DT_QKEY		0x11111111
#define DT_GRH		40

static struct {
	struct net_device *ndev;
	struct ib_device *ibdev;
	struct ib_pd *pd;
	union ib_gid gid;	/* GID 0: the default, link-local GID */
} dt;

/* One case's objects: two UD QPs and the CQs of each. */
struct dt_pair {
	struct ib_cq *cq_a, *cq_b;
	struct ib_qp *a, *b;
	struct ib_ah *ah;
	struct ib_srq *srq;
};

static void dt_srq_event(struct ib_event *ev, void *ctx)
{
	if (ev->event == IB_EVENT_SRQ_LIMIT_REACHED)
		atomic_inc(ctx);
}

static struct ib_qp *dt_ud_qp(struct kunit *test, struct ib_cq *cq,
			      struct ib_srq *srq)
{
	struct ib_qp_init_attr attr = {
		.qp_type = IB_QPT_UD, .send_cq = cq, .recv_cq = cq, .srq = srq,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 4,
			 .max_recv_sge = 4, .max_inline_data = 64 },
	};
	struct ib_qp *qp = ib_create_qp(dt.pd, &attr);

	KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
	KUNIT_ASSERT_EQ(test, qpnic_to_init(qp), 0);
	KUNIT_ASSERT_EQ(test, qpnic_to_rtr(qp), 0);
	KUNIT_ASSERT_EQ(test, qpnic_to_rts(qp), 0);
	return qp;
}

static void dt_pair_init(struct kunit *test, struct dt_pair *p, atomic_t *srq_events)
{
	struct rdma_ah_attr ah = { .type = RDMA_AH_ATTR_TYPE_ROCE };

	memset(p, 0, sizeof(*p));
	p->cq_a = ib_create_cq(dt.ibdev, NULL, NULL, NULL,
			       &(struct ib_cq_init_attr){ .cqe = 16 });
	KUNIT_ASSERT_FALSE(test, IS_ERR(p->cq_a));
	p->cq_b = ib_create_cq(dt.ibdev, NULL, NULL, NULL,
			       &(struct ib_cq_init_attr){ .cqe = 16 });
	KUNIT_ASSERT_FALSE(test, IS_ERR(p->cq_b));
	if (srq_events) {
		struct ib_srq_init_attr sattr = {
			.event_handler = dt_srq_event, .srq_context = srq_events,
			.attr = { .max_wr = 8, .max_sge = 2 },
		};

		p->srq = ib_create_srq(dt.pd, &sattr);
		KUNIT_ASSERT_FALSE(test, IS_ERR(p->srq));
	}
	p->a = dt_ud_qp(test, p->cq_a, NULL);
	p->b = dt_ud_qp(test, p->cq_b, p->srq);
	rdma_ah_set_port_num(&ah, 1);
	rdma_ah_set_grh(&ah, &dt.gid, 0, 0, 64, 0);
	p->ah = rdma_create_ah(dt.pd, &ah, RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(p->ah));
}

static void dt_pair_destroy(struct dt_pair *p)
{
	rdma_destroy_ah(p->ah, RDMA_DESTROY_AH_SLEEPABLE);
	ib_destroy_qp(p->b);
	ib_destroy_qp(p->a);
	if (p->srq)
		ib_destroy_srq(p->srq);
	ib_destroy_cq(p->cq_b);
	ib_destroy_cq(p->cq_a);
}

static int dt_post_recv(struct dt_pair *p, void *buf, u32 len, u64 wr_id)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = dt.pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };

	return p->srq ? ib_post_srq_recv(p->srq, &wr, NULL) :
			ib_post_recv(p->b, &wr, NULL);
}

static int dt_post_send(struct dt_pair *p, const void *buf, u32 len, u32 qkey,
			u32 lkey, int flags)
{
	struct ib_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = lkey };
	struct ib_ud_wr wr = {
		.wr = { .wr_id = 0xa11ce, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_SEND_WITH_IMM,
			.send_flags = IB_SEND_SIGNALED | flags,
			.ex.imm_data = cpu_to_be32(0xfeedf00d) },
		.ah = p->ah, .remote_qpn = p->b->qp_num, .remote_qkey = qkey,
	};

	return ib_post_send(p->a, &wr.wr, NULL);
}

/* A UD SEND with immediate arrives whole, with the GRH and the source. */
static void qpnic_dt_ud_send_recv(struct kunit *test)
{
	u8 *src = kunit_kzalloc(test, 256, GFP_KERNEL);
	u8 *dst = kunit_kzalloc(test, DT_GRH + 256, GFP_KERNEL);
	u64 tx = qpnic_test_counter(test, dt.ibdev, "tx_packets");
	u64 lo = qpnic_test_counter(test, dt.ibdev, "loopback_packets");
	u64 rx = qpnic_test_counter(test, dt.ibdev, "rx_packets");
	struct ipv6hdr *ip6h = (struct ipv6hdr *)dst;
	struct dt_pair p;
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	for (i = 0; i < 256; i++)
		src[i] = i ^ 0x5a;
	dt_pair_init(test, &p, NULL);
	KUNIT_ASSERT_EQ(test, dt_post_recv(&p, dst, DT_GRH + 256, 7), 0);
	KUNIT_ASSERT_EQ(test, dt_post_send(&p, src, 256, DT_QKEY,
					   dt.pd->local_dma_lkey, 0), 0);

	KUNIT_ASSERT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 2000), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_SEND);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 0xa11ceULL);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, p.a);

	KUNIT_ASSERT_EQ(test, qpnic_test_poll(p.cq_b, &wc, 2000), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 7ULL);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, p.b);
	KUNIT_EXPECT_EQ(test, wc.byte_len, DT_GRH + 256);
	KUNIT_EXPECT_EQ(test, wc.src_qp, p.a->qp_num);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_GRH);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0xfeedf00d);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE);
	KUNIT_EXPECT_EQ(test, wc.network_hdr_type, RDMA_NETWORK_IPV6);
	KUNIT_EXPECT_EQ(test, memcmp(dst + DT_GRH, src, 256), 0);
	/* the GRH is the packet's IPv6 header: from and to GID 0 */
	KUNIT_EXPECT_EQ(test, dst[0] >> 4, 6);
	KUNIT_EXPECT_EQ(test, ip6h->nexthdr, IPPROTO_UDP);
	KUNIT_EXPECT_EQ(test, ip6h->hop_limit, 64);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(ip6h->payload_len),
			8 + 12 + 8 + 4 + 256 + 4);
	KUNIT_EXPECT_EQ(test, memcmp(&ip6h->saddr, dt.gid.raw, 16), 0);
	KUNIT_EXPECT_EQ(test, memcmp(&ip6h->daddr, dt.gid.raw, 16), 0);

	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, dt.ibdev, "tx_packets"), tx + 1);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, dt.ibdev, "loopback_packets"), lo + 1);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, dt.ibdev, "rx_packets"), rx + 1);
	dt_pair_destroy(&p);
}

/*
 * Q_Keys: a wrong one is dropped and counted; one with the high bit set
 * means the sender's own Q_Key (IBTA 10.2.5), which matches.
 */
static void qpnic_dt_ud_qkey(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, 2 * DT_GRH + 64, GFP_KERNEL);
	u64 bad = qpnic_test_counter(test, dt.ibdev, "rx_drop_bad_qkey");
	struct dt_pair p;
	struct ib_wc wc;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	dt_pair_init(test, &p, NULL);
	KUNIT_ASSERT_EQ(test, dt_post_recv(&p, buf, DT_GRH + 64, 1), 0);
	KUNIT_ASSERT_EQ(test, dt_post_send(&p, buf + 100, 16, DT_QKEY + 1,
					   dt.pd->local_dma_lkey, 0), 0);
	KUNIT_ASSERT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 2000), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, qpnic_test_poll(p.cq_b, &wc, 100), 0);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, dt.ibdev, "rx_drop_bad_qkey"), bad + 1);

	KUNIT_ASSERT_EQ(test, dt_post_send(&p, buf + 100, 16, 0x80000000,
					   dt.pd->local_dma_lkey, 0), 0);
	KUNIT_ASSERT_EQ(test, qpnic_test_poll(p.cq_b, &wc, 2000), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 1ULL);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, dt.ibdev, "rx_drop_bad_qkey"), bad + 1);
	dt_pair_destroy(&p);
}

/* No receive WQE: UD drops the message (counted), the sender succeeds. */
static void qpnic_dt_ud_no_recv_wqe(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, 64, GFP_KERNEL);
	u64 none = qpnic_test_counter(test, dt.ibdev, "rx_drop_no_recv_wqe");
	struct dt_pair p;
	struct ib_wc wc;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	dt_pair_init(test, &p, NULL);
	KUNIT_ASSERT_EQ(test, dt_post_send(&p, buf, 64, DT_QKEY,
					   dt.pd->local_dma_lkey, 0), 0);
	KUNIT_ASSERT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 2000), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, qpnic_test_poll(p.cq_b, &wc, 100), 0);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, dt.ibdev, "rx_drop_no_recv_wqe"), none + 1);
	dt_pair_destroy(&p);
}

/*
 * Local errors complete the WR in error: a receive buffer too small for
 * GRH plus payload and a receive SGE with a bad key (UD drops only that
 * message), a send SGE with a bad key and a UD send longer than the MTU
 * (the sender's QP goes to ERR and what follows flushes).
 */
static void qpnic_dt_ud_local_errors(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, 4096, GFP_KERNEL);
	u32 bad_lkey = dt.pd->local_dma_lkey ^ 0x80;
	struct ib_qp_attr attr;
	struct ib_qp_init_attr init;
	struct ib_sge sge;
	struct ib_recv_wr rwr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 };
	struct dt_pair p;
	struct ib_wc wc;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	dt_pair_init(test, &p, NULL);
	/* 40 + 64 bytes arrive in a 40 + 16 byte buffer */
	KUNIT_ASSERT_EQ(test, dt_post_recv(&p, buf, DT_GRH + 16, 1), 0);
	KUNIT_ASSERT_EQ(test, dt_post_send(&p, buf + 1024, 64, DT_QKEY,
					   dt.pd->local_dma_lkey, 0), 0);
	KUNIT_ASSERT_EQ(test, qpnic_test_poll(p.cq_b, &wc, 2000), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_LEN_ERR);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 1ULL);
	KUNIT_ASSERT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 2000), 1);

	/* a receive SGE whose key names no MR: nothing lands */
	memset(buf, 0xee, 512);
	sge = (struct ib_sge){ .addr = (uintptr_t)buf, .length = 512,
			       .lkey = bad_lkey };
	KUNIT_ASSERT_EQ(test, ib_post_recv(p.b, &rwr, NULL), 0);
	KUNIT_ASSERT_EQ(test, dt_post_send(&p, buf + 1024, 64, DT_QKEY,
					   dt.pd->local_dma_lkey, 0), 0);
	KUNIT_ASSERT_EQ(test, qpnic_test_poll(p.cq_b, &wc, 2000), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 2ULL);
	KUNIT_EXPECT_EQ(test, buf[0], 0xee);
	KUNIT_EXPECT_EQ(test, buf[511], 0xee);
	KUNIT_ASSERT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 2000), 1);

	/* a send SGE with a bad key: error completion, QP in ERR, the rest flushes */
	KUNIT_ASSERT_EQ(test, dt_post_send(&p, buf, 64, DT_QKEY, bad_lkey, 0), 0);
	KUNIT_ASSERT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 2000), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 0xa11ceULL);
	KUNIT_EXPECT_EQ(test, ib_query_qp(p.a, &attr, IB_QP_STATE, &init), 0);
	KUNIT_EXPECT_EQ(test, attr.qp_state, IB_QPS_ERR);
	KUNIT_ASSERT_EQ(test, dt_post_send(&p, buf, 64, DT_QKEY,
					   dt.pd->local_dma_lkey, 0), 0);
	KUNIT_ASSERT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 2000), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);

	/* longer than the path MTU (1024 on a 1500-byte netdev) */
	KUNIT_ASSERT_EQ(test, ib_modify_qp(p.a, &(struct ib_qp_attr){
		.qp_state = IB_QPS_RESET }, IB_QP_STATE), 0);
	KUNIT_ASSERT_EQ(test, qpnic_to_init(p.a), 0);
	KUNIT_ASSERT_EQ(test, qpnic_to_rtr(p.a), 0);
	KUNIT_ASSERT_EQ(test, qpnic_to_rts(p.a), 0);
	KUNIT_ASSERT_EQ(test, dt_post_send(&p, buf, 1025, DT_QKEY,
					   dt.pd->local_dma_lkey, 0), 0);
	KUNIT_ASSERT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 2000), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_LEN_ERR);
	dt_pair_destroy(&p);
}

/* Inline data and scatter across SGEs, the GRH split over two of them. */
static void qpnic_dt_ud_inline_scatter(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, 1024, GFP_KERNEL);
	u8 *src = buf, *r1 = buf + 256, *r2 = buf + 512;
	struct ib_sge sge[2] = {
		{ .addr = (uintptr_t)r1, .length = 30 },
		{ .addr = (uintptr_t)r2, .length = 200 },
	};
	struct ib_recv_wr rwr = { .wr_id = 3, .sg_list = sge, .num_sge = 2 };
	struct dt_pair p;
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < 64; i++)
		src[i] = 0x80 | i;
	sge[0].lkey = dt.pd->local_dma_lkey;
	sge[1].lkey = dt.pd->local_dma_lkey;
	dt_pair_init(test, &p, NULL);
	KUNIT_ASSERT_EQ(test, ib_post_recv(p.b, &rwr, NULL), 0);
	KUNIT_ASSERT_EQ(test, dt_post_send(&p, src, 64, DT_QKEY, 0,
					   IB_SEND_INLINE), 0);
	/* the inline payload was copied at post time */
	memset(src, 0, 64);
	KUNIT_ASSERT_EQ(test, qpnic_test_poll(p.cq_b, &wc, 2000), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, DT_GRH + 64);
	for (i = 0; i < 64; i++)
		KUNIT_EXPECT_EQ(test, r2[10 + i], 0x80 | i);
	KUNIT_EXPECT_EQ(test, r2[10 + 64], 0);
	KUNIT_ASSERT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 2000), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	dt_pair_destroy(&p);
}

/* An SRQ feeds the UD QP; going under the armed limit raises one event. */
static void qpnic_dt_ud_srq(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, 4 * 128 + 64, GFP_KERNEL);
	struct ib_srq_attr sattr = { .srq_limit = 3 };
	atomic_t events = ATOMIC_INIT(0);
	struct dt_pair p;
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	dt_pair_init(test, &p, &events);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, dt_post_recv(&p, buf + i * 128, 128, 10 + i), 0);
	KUNIT_ASSERT_EQ(test, ib_modify_srq(p.srq, &sattr, IB_SRQ_LIMIT), 0);
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_EQ(test, dt_post_send(&p, buf + 4 * 128, 32, DT_QKEY,
						   dt.pd->local_dma_lkey, 0), 0);
		KUNIT_ASSERT_EQ(test, qpnic_test_poll(p.cq_b, &wc, 2000), 1);
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, wc.wr_id, 10ULL + i);
		KUNIT_ASSERT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 2000), 1);
	}
	/* 4 -> 3 is not below 3; 3 -> 2 is, once (raised after the CQE) */
	for (i = 0; i < 1000 && !atomic_read(&events); i++)
		usleep_range(500, 1000);
	KUNIT_EXPECT_EQ(test, atomic_read(&events), 1);
	KUNIT_EXPECT_EQ(test, ib_query_srq(p.srq, &sattr), 0);
	KUNIT_EXPECT_EQ(test, sattr.srq_limit, 0U);
	dt_pair_destroy(&p);
}

static atomic_t dt_flood_once;

/* The first packet comes 3000 times: more than the loopback queue holds. */
static unsigned int dt_flood(struct sk_buff *skb)
{
	return atomic_inc_return(&dt_flood_once) == 1 ? 3000 : 1;
}

/*
 * The loopback queue is bounded: a packet that would pass its limit is
 * dropped and counted, every copy is either delivered or counted, and
 * the device goes on working.
 */
static void qpnic_dt_loopback_bounded(struct kunit *test)
{
	u64 lo = qpnic_test_counter(test, dt.ibdev, "loopback_packets");
	u64 drops = qpnic_test_counter(test, dt.ibdev, "loopback_drops");
	u8 *buf = kunit_kzalloc(test, DT_GRH + 64, GFP_KERNEL);
	unsigned long end = jiffies + 60 * HZ;
	struct dt_pair p;
	struct ib_wc wc;
	u64 got;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	dt_pair_init(test, &p, NULL);
	atomic_set(&dt_flood_once, 0);
	WRITE_ONCE(qpnic_kunit_lo_hook, dt_flood);
	KUNIT_ASSERT_EQ(test, dt_post_send(&p, buf, 64, DT_QKEY,
					   dt.pd->local_dma_lkey, 0), 0);
	/* the send may go out after the post returns: unhook once it did */
	KUNIT_ASSERT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 2000), 1);
	WRITE_ONCE(qpnic_kunit_lo_hook, NULL);
	do {
		msleep(20);
		got = qpnic_test_counter(test, dt.ibdev, "loopback_packets") - lo +
		      qpnic_test_counter(test, dt.ibdev, "loopback_drops") - drops;
	} while (got < 3000 && time_before(jiffies, end));
	KUNIT_EXPECT_EQ(test, got, 3000ULL);
	KUNIT_EXPECT_GT(test, qpnic_test_counter(test, dt.ibdev, "loopback_drops"),
			drops);
	/* and a message after the flood arrives */
	KUNIT_ASSERT_EQ(test, dt_post_recv(&p, buf, DT_GRH + 64, 2), 0);
	KUNIT_ASSERT_EQ(test, dt_post_send(&p, buf, 64, DT_QKEY,
					   dt.pd->local_dma_lkey, 0), 0);
	KUNIT_ASSERT_EQ(test, qpnic_test_poll(p.cq_b, &wc, 2000), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	dt_pair_destroy(&p);
}

static struct task_struct *dt_sender;

/* Notes the task a loopback packet is sent from. */
static unsigned int dt_note_sender(struct sk_buff *skb)
{
	WRITE_ONCE(dt_sender, current);
	return 1;
}

/*
 * A kernel ULP posting from a task goes on at once: a work item carries
 * the send out, so the peer's completion handler does not preempt the
 * poster once per message. A post with BH off is past any wake-up
 * already and is carried out before it returns. Both arrive.
 */
static void qpnic_dt_post_context(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, DT_GRH + 64, GFP_KERNEL);
	struct task_struct *sender;
	struct dt_pair p;
	struct ib_wc wc;
	int err;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	dt_pair_init(test, &p, NULL);
	KUNIT_ASSERT_EQ(test, dt_post_recv(&p, buf, DT_GRH + 64, 1), 0);
	KUNIT_ASSERT_EQ(test, dt_post_recv(&p, buf, DT_GRH + 64, 2), 0);
	WRITE_ONCE(dt_sender, NULL);
	WRITE_ONCE(qpnic_kunit_lo_hook, dt_note_sender);
	err = dt_post_send(&p, buf, 64, DT_QKEY, dt.pd->local_dma_lkey, 0);
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_EXPECT_EQ(test, qpnic_test_poll(p.cq_b, &wc, 2000), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 1ULL);
	sender = READ_ONCE(dt_sender);
	KUNIT_EXPECT_NOT_NULL(test, sender);
	KUNIT_EXPECT_PTR_NE(test, sender, current);

	WRITE_ONCE(dt_sender, NULL);
	local_bh_disable();
	err = dt_post_send(&p, buf, 64, DT_QKEY, dt.pd->local_dma_lkey, 0);
	sender = READ_ONCE(dt_sender);
	local_bh_enable();
	WRITE_ONCE(qpnic_kunit_lo_hook, NULL);
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_EXPECT_PTR_EQ(test, sender, current);
	KUNIT_EXPECT_EQ(test, qpnic_test_poll(p.cq_b, &wc, 2000), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 2ULL);
	KUNIT_EXPECT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 2000), 1);
	KUNIT_EXPECT_EQ(test, qpnic_test_poll(p.cq_a, &wc, 2000), 1);
	dt_pair_destroy(&p);
}

/*
 * A QP destroyed while the work item that carries its posts out is
 * still queued: destroy waits it out or cancels it, and nothing runs on
 * the QP after (KASAN would see it).
 */
static void qpnic_dt_destroy_queued_post(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, 64, GFP_KERNEL);
	int round, i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (round = 0; round < 20; round++) {
		struct dt_pair p;

		dt_pair_init(test, &p, NULL);
		for (i = 0; i < 8; i++)
			KUNIT_ASSERT_EQ(test, dt_post_send(&p, buf, 64, DT_QKEY,
							   dt.pd->local_dma_lkey, 0),
					0);
		/* a first, with its sends queued */
		ib_destroy_qp(p.a);
		rdma_destroy_ah(p.ah, RDMA_DESTROY_AH_SLEEPABLE);
		ib_destroy_qp(p.b);
		ib_destroy_cq(p.cq_b);
		ib_destroy_cq(p.cq_a);
	}
}

/*
 * create_ah and destroy_ah without RDMA_CREATE_AH_SLEEPABLE may be called
 * with interrupts off (ib_cm does, under an irqsave lock): they leave them
 * off.
 */
static void qpnic_dt_ah_irqs_off(struct kunit *test)
{
	struct rdma_ah_attr attr = { .type = RDMA_AH_ATTR_TYPE_ROCE };
	unsigned long flags;
	struct ib_ah *ah;
	bool off_after_create, off_after_destroy;

	rdma_ah_set_port_num(&attr, 1);
	rdma_ah_set_grh(&attr, &dt.gid, 0, 0, 64, 0);
	/* (a lock on the stack would have no static lockdep key) */
	local_irq_save(flags);
	ah = rdma_create_ah(dt.pd, &attr, 0);
	off_after_create = irqs_disabled();
	if (!IS_ERR(ah))
		rdma_destroy_ah(ah, 0);
	off_after_destroy = irqs_disabled();
	local_irq_restore(flags);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ah));
	KUNIT_EXPECT_TRUE(test, off_after_create);
	KUNIT_EXPECT_TRUE(test, off_after_destroy);
}

/*
 * An atomic has no payload of its own to inline: IB_SEND_INLINE on one is
 * refused at post time. max_msg_sz is 1 GiB, so one message never spans
 * half the PSN space at path MTU 256, and a WR past it is refused.
 */
static void qpnic_dt_post_limits(struct kunit *test)
{
	struct ib_cq *cq = ib_create_cq(dt.ibdev, NULL, NULL, NULL,
					&(struct ib_cq_init_attr){ .cqe = 16 });
	struct ib_qp_init_attr attr = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 2,
			 .max_recv_sge = 1, .max_inline_data = 64 },
	};
	u64 *result = kunit_kzalloc(test, sizeof(u64), GFP_KERNEL);
	/* nothing is read from the SGEs of a WR that is refused */
	struct ib_sge sge[2] = {
		{ .addr = (uintptr_t)result, .length = 8, .lkey = dt.pd->local_dma_lkey },
		{ .addr = (uintptr_t)result, .length = 0x3fffffff,
		  .lkey = dt.pd->local_dma_lkey },
	};
	struct ib_atomic_wr wr = {
		.wr = { .sg_list = sge, .num_sge = 1, .opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
			.send_flags = IB_SEND_INLINE },
		.remote_addr = 0x1000, .rkey = 0x100, .compare_add = 1,
	};
	struct ib_rdma_wr past = {
		.wr = { .sg_list = sge, .num_sge = 2, .opcode = IB_WR_RDMA_WRITE },
	};
	struct ib_port_attr pattr;
	struct ib_qp *qp;

	KUNIT_ASSERT_FALSE(test, IS_ERR(cq));
	KUNIT_ASSERT_NOT_NULL(test, result);
	attr.send_cq = cq;
	attr.recv_cq = cq;
	qp = ib_create_qp(dt.pd, &attr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
	KUNIT_ASSERT_EQ(test, qpnic_to_init(qp), 0);
	KUNIT_ASSERT_EQ(test, qpnic_to_rtr(qp), 0);
	KUNIT_ASSERT_EQ(test, qpnic_to_rts(qp), 0);
	KUNIT_EXPECT_EQ(test, ib_post_send(qp, &wr.wr, NULL), -EINVAL);
	wr.wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP;
	KUNIT_EXPECT_EQ(test, ib_post_send(qp, &wr.wr, NULL), -EINVAL);
	KUNIT_ASSERT_EQ(test, ib_query_port(dt.ibdev, 1, &pattr), 0);
	KUNIT_EXPECT_EQ(test, pattr.max_msg_sz, 0x40000000U);
	/* 8 + 2^30 - 1 bytes: one past max_msg_sz */
	KUNIT_EXPECT_EQ(test, ib_post_send(qp, &past.wr, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(qp), 0);
	ib_destroy_cq(cq);
}

static int qpnic_dt_suite_init(struct kunit_suite *suite)
{
	int err;

	dt.ndev = qpnic_test_netdev_create("qpdt%d");
	if (IS_ERR(dt.ndev))
		return PTR_ERR(dt.ndev);
	err = qpnic_device_add("qpnic_dt%d", dt.ndev, &dt.ibdev);
	if (err)
		goto err_ndev;
	err = qpnic_test_gid0(dt.ibdev, &dt.gid);
	if (err)
		goto err_dev;
	dt.pd = ib_alloc_pd(dt.ibdev, 0);
	if (IS_ERR(dt.pd)) {
		err = PTR_ERR(dt.pd);
		goto err_dev;
	}
	return 0;

err_dev:
	qpnic_device_remove(dt.ibdev);
err_ndev:
	qpnic_test_netdev_destroy(dt.ndev);
	return err;
}

static void qpnic_dt_suite_exit(struct kunit_suite *suite)
{
	ib_dealloc_pd(dt.pd);
	qpnic_device_remove(dt.ibdev);
	qpnic_test_netdev_destroy(dt.ndev);
}

static struct kunit_case qpnic_dt_cases[] = {
	KUNIT_CASE(qpnic_dt_loopback_bounded),
	KUNIT_CASE(qpnic_dt_post_context),
	KUNIT_CASE(qpnic_dt_destroy_queued_post),
	KUNIT_CASE(qpnic_dt_ah_irqs_off),
	KUNIT_CASE(qpnic_dt_post_limits),
	KUNIT_CASE(qpnic_dt_ud_send_recv),
	KUNIT_CASE(qpnic_dt_ud_qkey),
	KUNIT_CASE(qpnic_dt_ud_no_recv_wqe),
	KUNIT_CASE(qpnic_dt_ud_local_errors),
	KUNIT_CASE(qpnic_dt_ud_inline_scatter),
	KUNIT_CASE(qpnic_dt_ud_srq),
	{}
};

static struct kunit_suite qpnic_dt_suite = {
	.name = "qpnic_data",
	.suite_init = qpnic_dt_suite_init,
	.suite_exit = qpnic_dt_suite_exit,
	.test_cases = qpnic_dt_cases,
};

kunit_test_suite(qpnic_dt_suite);
