// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite for qpnic's receive path: packets built here by hand (with
 * an ICRC this suite computes itself, checked first against a packet
 * rdma_rxe sent) enter through qpnic_rcv() as the UDP socket would hand
 * them over, on a qpnic device bound to a test netdev. The port counters
 * say what became of each: one drop reason per bad-packet class.
 */
#include <kunit/test.h>
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/module.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <linux/vmalloc.h>
#include <net/ip.h>
#include <asm/unaligned.h>
#include <qpnic/qpnic.h>
#include <qpnic/wire.h>

#include "qpnic_test_util.h"

MODULE_IMPORT_NS(QPNIC_KUNIT);

static struct {
	struct net_device *ndev, *other;
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
} rx;

/*
 * The ICRC as IBTA Annex A17 defines it, written apart from qpnic's:
 * CRC-32 (zlib's) over 8 bytes of ones, the IPv4 header with TOS, TTL and
 * checksum set to ones, the UDP header with its checksum set to ones, the
 * BTH with byte 4 set to ones, then the rest up to the ICRC.
 */
static u32 qpnic_rx_ref_icrc(const u8 *ip, size_t len)
{
	u8 head[8 + 20 + 8 + 12];

	memset(head, 0xff, 8);
	memcpy(head + 8, ip, 40);
	head[8 + 1] = 0xff;
	head[8 + 8] = 0xff;
	head[8 + 10] = 0xff;
	head[8 + 11] = 0xff;
	head[8 + 26] = 0xff;
	head[8 + 27] = 0xff;
	head[8 + 32] = 0xff;
	return ~crc32_le(crc32_le(~0U, head, sizeof(head)), ip + 40,
			 len - 40 - QPNIC_ICRC_LEN);
}

/* The reference ICRC reproduces an ACK rdma_rxe sent (roce-wire.md). */
static void qpnic_rx_ref_icrc_matches_rxe(struct kunit *test)
{
	static const char *const ack[] = {
		"45000030436340004011e3450a0900010a090002caaf12b7001c0000",
		"1100ffff000abcde000001001f000001b61b667e",
	};
	u8 pkt[48];

	KUNIT_ASSERT_EQ(test, hex2bin(pkt, ack[0], 28), 0);
	KUNIT_ASSERT_EQ(test, hex2bin(pkt + 28, ack[1], 20), 0);
	KUNIT_EXPECT_EQ(test, qpnic_rx_ref_icrc(pkt, sizeof(pkt)),
			get_unaligned_le32(pkt + sizeof(pkt) - 4));
}

struct qpnic_rx_spec {
	u8 opcode;
	u8 bth_flags;		/* byte 1: SE, M, pad, TVer */
	u16 pkey;
	u32 dqpn;
	unsigned int ext;	/* extension header bytes (zeroed) */
	const void *ext_data;	/* what they are, if not zeros */
	unsigned int paylen;	/* payload bytes */
	bool bad_icrc;
	unsigned int truncate;	/* UDP payload bytes to keep, 0 for all */
	u32 psn;		/* 0 for 0x123, the test QPs' rq_psn */
};

/*
 * An IPv4/UDP packet for @s as qpnic_rcv() takes it: data at the UDP
 * header, network and transport headers set, arrived on @ndev.
 */
static struct sk_buff *qpnic_rx_build(struct kunit *test,
				      const struct qpnic_rx_spec *s,
				      struct net_device *ndev)
{
	size_t udplen = 8 + QPNIC_BTH_LEN + s->ext + s->paylen + QPNIC_ICRC_LEN;
	size_t len = 20 + udplen;
	struct sk_buff *skb;
	struct iphdr *iph;
	u8 *bth;

	skb = alloc_skb(len + NET_IP_ALIGN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reserve(skb, NET_IP_ALIGN);
	iph = skb_put_zero(skb, len);
	qpnic_test_ipv4_udp(iph, len, 0x0a000002, 0x0a000001, 0xc123);
	bth = (u8 *)iph + sizeof(*iph) + sizeof(struct udphdr);
	bth[0] = s->opcode;
	bth[1] = s->bth_flags;
	put_unaligned_be16(s->pkey, bth + 2);
	put_unaligned_be32(s->dqpn, bth + 4);
	put_unaligned_be32(0x80000000 | (s->psn ?: 0x123), bth + 8);
	if (s->ext_data)
		memcpy(bth + QPNIC_BTH_LEN, s->ext_data, s->ext);
	memset(bth + QPNIC_BTH_LEN + s->ext, 0x5a, s->paylen);
	put_unaligned_le32(qpnic_rx_ref_icrc((u8 *)iph, len) ^ (s->bad_icrc ? 1 : 0),
			   (u8 *)iph + len - QPNIC_ICRC_LEN);
	if (s->truncate)
		skb_trim(skb, 20 + 8 + s->truncate);
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, 20);
	__skb_pull(skb, 20);
	skb->dev = ndev;
	return skb;
}

static const char *const qpnic_rx_counter_names[] = {
	"rx_packets", "rx_icrc_errors", "rx_drop_malformed",
	"rx_drop_bad_opcode", "rx_drop_bad_pkey", "rx_drop_unknown_qp",
	"rx_drop_qp_type", "rx_drop_qp_state", "rx_drop_bad_qkey",
	"rx_drop_no_recv_wqe", "rx_drop_stale_response", "rx_out_of_sequence",
	"rx_duplicate_requests", "tx_error_naks", "rx_cnps", "window_cuts",
};

/* Receive @s and expect exactly the counters in @bumped to rise by one. */
static void qpnic_rx_expect(struct kunit *test, const struct qpnic_rx_spec *s,
			    const char *const *bumped)
{
	u64 before[ARRAY_SIZE(qpnic_rx_counter_names)];
	int i, j;

	for (i = 0; i < ARRAY_SIZE(qpnic_rx_counter_names); i++)
		before[i] = qpnic_test_counter(test, rx.ibdev, qpnic_rx_counter_names[i]);
	qpnic_rcv(qpnic_rx_build(test, s, rx.ndev));
	for (i = 0; i < ARRAY_SIZE(qpnic_rx_counter_names); i++) {
		u64 want = before[i];

		for (j = 0; bumped[j]; j++)
			if (!strcmp(bumped[j], qpnic_rx_counter_names[i]))
				want++;
		KUNIT_EXPECT_EQ_MSG(test, qpnic_test_counter(test, rx.ibdev,
							     qpnic_rx_counter_names[i]),
				    want, "counter %s, opcode %#x to QP %#x",
				    qpnic_rx_counter_names[i], s->opcode, s->dqpn);
	}
}

#define COUNTED(...) ((const char *const []){ __VA_ARGS__, NULL })

/* One bad-packet class each, refused before any QP is touched. */
static void qpnic_rx_bad_packets(struct kunit *test)
{
	struct qpnic_rx_spec s = { .opcode = QPNIC_ACKNOWLEDGE, .pkey = 0xffff,
				   .dqpn = 0xabcde, .ext = QPNIC_AETH_LEN };

	qpnic_rx_expect(test, &s, COUNTED("rx_drop_unknown_qp"));
	s.bad_icrc = true;
	qpnic_rx_expect(test, &s, COUNTED("rx_icrc_errors"));
	s.bad_icrc = false;
	s.opcode = 0x15;			/* undefined */
	qpnic_rx_expect(test, &s, COUNTED("rx_drop_bad_opcode"));
	s.opcode = QPNIC_ACKNOWLEDGE;
	s.bth_flags = 0x01;			/* transport version 1 */
	qpnic_rx_expect(test, &s, COUNTED("rx_drop_bad_opcode"));
	s.bth_flags = 0;
	s.truncate = QPNIC_BTH_LEN;		/* no AETH, no ICRC */
	qpnic_rx_expect(test, &s, COUNTED("rx_drop_malformed"));
	s.truncate = 0;
	s.paylen = 8;				/* an ACK carries no payload */
	qpnic_rx_expect(test, &s, COUNTED("rx_drop_malformed"));
	s.paylen = 0;
	/* the completer reads the original value at once: half of it */
	s.opcode = QPNIC_ATOMIC_ACKNOWLEDGE;
	s.ext = QPNIC_AETH_LEN + QPNIC_ATMACK_LEN;
	s.truncate = QPNIC_BTH_LEN + QPNIC_AETH_LEN + 4;
	qpnic_rx_expect(test, &s, COUNTED("rx_drop_malformed"));
	s.truncate = 0;
	s.ext = QPNIC_AETH_LEN;
	s.opcode = QPNIC_ACKNOWLEDGE;
	s.pkey = 0x1234;
	qpnic_rx_expect(test, &s, COUNTED("rx_drop_bad_pkey"));
	s.pkey = 0x7fff;			/* limited member of the default */
	qpnic_rx_expect(test, &s, COUNTED("rx_drop_unknown_qp"));
}

/* Packets for live QPs: type and state, then the responder's PSN window. */
static void qpnic_rx_qp_checks(struct kunit *test)
{
	struct ib_qp_init_attr attr = {
		.qp_type = IB_QPT_RC, .send_cq = rx.cq, .recv_cq = rx.cq,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct qpnic_rx_spec send = { .opcode = QPNIC_SEND_ONLY, .pkey = 0xffff,
				      .paylen = 64 };
	struct qpnic_rx_spec ack = { .opcode = QPNIC_ACKNOWLEDGE, .pkey = 0xffff,
				     .ext = QPNIC_AETH_LEN };
	struct qpnic_rx_spec ud = { .opcode = QPNIC_UD_SEND_ONLY, .pkey = 0xffff,
				    .ext = QPNIC_DETH_LEN, .paylen = 16 };
	struct qpnic_rx_spec cnp = { .opcode = QPNIC_CNP, .pkey = 0xffff,
				     .ext = QPNIC_CNP_LEN };
	struct ib_qp *qp;

	qp = ib_create_qp(rx.pd, &attr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
	send.dqpn = qp->qp_num;
	ack.dqpn = qp->qp_num;
	ud.dqpn = qp->qp_num;
	cnp.dqpn = qp->qp_num;
	qpnic_rx_expect(test, &send, COUNTED("rx_drop_qp_state"));	/* RESET */
	KUNIT_ASSERT_EQ(test, qpnic_to_init(qp), 0);
	qpnic_rx_expect(test, &send, COUNTED("rx_drop_qp_state"));	/* INIT */
	KUNIT_ASSERT_EQ(test, qpnic_to_rtr(qp), 0);
	qpnic_rx_expect(test, &ud, COUNTED("rx_drop_qp_type"));
	send.opcode = QPNIC_OPC_UC | QPNIC_SEND_ONLY;
	qpnic_rx_expect(test, &send, COUNTED("rx_drop_qp_type"));
	send.opcode = QPNIC_SEND_ONLY;
	/* an RTR QP responds, but has sent nothing to be acknowledged */
	qpnic_rx_expect(test, &ack, COUNTED("rx_drop_qp_state"));
	/* nor anything a CNP could slow down */
	qpnic_rx_expect(test, &cnp, COUNTED("rx_drop_qp_state"));
	/* a SEND at the expected PSN with no receive WQE: RNR */
	qpnic_rx_expect(test, &send, COUNTED("rx_packets", "rx_drop_no_recv_wqe"));
	/* PSNs outside the expected one: ahead is a gap, behind a duplicate */
	send.psn = 0x130;
	qpnic_rx_expect(test, &send, COUNTED("rx_packets", "rx_out_of_sequence"));
	send.psn = 0x123 + 0x7fffff;	/* the far edge of the window */
	qpnic_rx_expect(test, &send, COUNTED("rx_packets", "rx_out_of_sequence"));
	send.psn = 0x100;
	qpnic_rx_expect(test, &send, COUNTED("rx_packets", "rx_duplicate_requests"));
	send.psn = (0x123 - 0x800000) & 0xffffff;	/* half the PSN space behind */
	qpnic_rx_expect(test, &send, COUNTED("rx_packets", "rx_duplicate_requests"));
	send.psn = 0;
	KUNIT_ASSERT_EQ(test, qpnic_to_rts(qp), 0);
	/* an ACK for nothing sent */
	qpnic_rx_expect(test, &ack, COUNTED("rx_packets", "rx_drop_stale_response"));
	/*
	 * A CNP halves the window; the next one waits for a PSN sent after
	 * the cut to be acknowledged, so a flood of them (true or forged)
	 * at an idle QP cuts once. A CNP carries exactly 16 reserved bytes.
	 */
	qpnic_rx_expect(test, &cnp, COUNTED("rx_packets", "rx_cnps", "window_cuts"));
	qpnic_rx_expect(test, &cnp, COUNTED("rx_packets", "rx_cnps"));
	cnp.paylen = 4;
	qpnic_rx_expect(test, &cnp, COUNTED("rx_drop_malformed"));
	cnp.paylen = 0;
	cnp.dqpn = 1;		/* the GSI QP: UD does not mark its packets */
	qpnic_rx_expect(test, &cnp, COUNTED("rx_drop_qp_type"));
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(qp), 0);
	/* the number is free again: nobody to deliver to */
	qpnic_rx_expect(test, &send, COUNTED("rx_drop_unknown_qp"));
	/* QP1, ib_mad's GSI QP, takes UD sends, with the GSI Q_Key only */
	ud.dqpn = 1;
	qpnic_rx_expect(test, &ud, COUNTED("rx_packets", "rx_drop_bad_qkey"));
}

/*
 * Payloads the path MTU (1024) does not allow: a FIRST or MIDDLE packet
 * carries exactly the MTU, a LAST or ONLY one at most. The responder NAKs
 * (invalid request) and the QP goes to ERR; nothing lands.
 */
static void qpnic_rx_payload_length(struct kunit *test)
{
	static const struct { u8 opcode; u32 psn, paylen; bool good; } seq[][2] = {
		{ { QPNIC_SEND_FIRST, 0x123, 1000 } },
		{ { QPNIC_SEND_ONLY, 0x123, 1028 } },
		{ { QPNIC_SEND_FIRST, 0x123, 1024, true },
		  { QPNIC_SEND_MIDDLE, 0x124, 512 } },
	};
	struct ib_qp_init_attr attr = {
		.qp_type = IB_QPT_RC, .send_cq = rx.cq, .recv_cq = rx.cq,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	u8 *buf = kunit_kzalloc(test, 4096, GFP_KERNEL);
	struct ib_sge sge = { .addr = (uintptr_t)buf, .length = 4096 };
	struct ib_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	struct ib_qp_init_attr init;
	struct ib_qp_attr qattr;
	int i, j;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	sge.lkey = rx.pd->local_dma_lkey;
	for (i = 0; i < ARRAY_SIZE(seq); i++) {
		struct ib_qp *qp = ib_create_qp(rx.pd, &attr);

		KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
		KUNIT_ASSERT_EQ(test, qpnic_to_init(qp), 0);
		KUNIT_ASSERT_EQ(test, qpnic_to_rtr(qp), 0);
		KUNIT_ASSERT_EQ(test, ib_post_recv(qp, &wr, NULL), 0);
		for (j = 0; j < 2 && seq[i][j].paylen; j++) {	/* SEND FIRST is 0 */
			struct qpnic_rx_spec s = {
				.opcode = seq[i][j].opcode, .pkey = 0xffff,
				.dqpn = qp->qp_num, .psn = seq[i][j].psn,
				.paylen = seq[i][j].paylen,
			};

			if (seq[i][j].good) {
				qpnic_rx_expect(test, &s, COUNTED("rx_packets"));
				memset(buf, 0, 4096);
				continue;
			}
			qpnic_rx_expect(test, &s, COUNTED("rx_packets",
							  "rx_drop_malformed",
							  "tx_error_naks"));
		}
		KUNIT_EXPECT_EQ(test, ib_query_qp(qp, &qattr, IB_QP_STATE, &init), 0);
		KUNIT_EXPECT_EQ_MSG(test, qattr.qp_state, IB_QPS_ERR, "sequence %d", i);
		KUNIT_EXPECT_TRUE_MSG(test, !memchr_inv(buf, 0, 4096), "sequence %d", i);
		KUNIT_EXPECT_EQ(test, ib_destroy_qp(qp), 0);
	}
}

/* A DMA MR of rx.pd with @access (ib_alloc_pd gave rx.pd no rkey). */
static struct ib_mr *qpnic_rx_dma_mr(struct kunit *test, int access)
{
	struct ib_mr *mr = qpnic_test_dma_mr(rx.pd, access);

	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	return mr;
}

static void qpnic_rx_reth(u8 *reth, u64 va, u32 rkey, u32 len)
{
	put_unaligned_be64(va, reth);
	put_unaligned_be32(rkey, reth + 8);
	put_unaligned_be32(len, reth + 12);
}

static struct ib_qp *qpnic_rx_qp(struct kunit *test, enum ib_qp_type type)
{
	struct ib_qp_init_attr attr = {
		.qp_type = type, .send_cq = rx.cq, .recv_cq = rx.cq,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ib_qp *qp = ib_create_qp(rx.pd, &attr);

	KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
	return qp;
}

/* Wait up to @ms for tx_packets to reach @want; the count it reached. */
static u64 qpnic_rx_wait_tx(struct kunit *test, u64 want, unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	u64 now;

	while ((now = qpnic_test_counter(test, rx.ibdev, "tx_packets")) < want &&
	       time_before(jiffies, end))
		msleep(20);
	return now;
}

#define RX_READ_LEN	(1024 * 1024)	/* 1024 responses at path MTU 1024 */

/*
 * A READ request is answered from the QP's READ work but for its first
 * response, which the receive call sends as it would an ACK: a 1 MiB
 * READ takes the receive path one packet's time.
 * A duplicate is answered only inside the READ it repeats, from its PSN
 * on, and only while the QP allows remote reads.
 */
static void qpnic_rx_read_answered_from_work(struct kunit *test)
{
	struct ib_mr *mr = qpnic_rx_dma_mr(test, IB_ACCESS_LOCAL_WRITE |
					   IB_ACCESS_REMOTE_READ);
	u8 *buf = vzalloc(RX_READ_LEN);
	struct ib_qp *qp = qpnic_rx_qp(test, IB_QPT_RC);
	u8 reth[QPNIC_RETH_LEN];
	struct qpnic_rx_spec s = { .opcode = QPNIC_READ_REQUEST, .pkey = 0xffff,
				   .dqpn = qp->qp_num, .ext = sizeof(reth),
				   .ext_data = reth };
	struct ib_qp_attr a = { .qp_access_flags = IB_ACCESS_REMOTE_WRITE };
	struct sk_buff *skb;
	u64 tx, dups;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, qpnic_to_init(qp), 0);
	KUNIT_ASSERT_EQ(test, qpnic_to_rtr(qp), 0);
	qpnic_rx_reth(reth, (uintptr_t)buf, mr->rkey, RX_READ_LEN);
	skb = qpnic_rx_build(test, &s, rx.ndev);
	tx = qpnic_test_counter(test, rx.ibdev, "tx_packets");
	/* nothing may delay the count after the call, or the old code's shows */
	preempt_disable();
	qpnic_rcv(skb);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rx.ibdev, "tx_packets") - tx,
			1ULL);
	KUNIT_EXPECT_EQ(test, qpnic_rx_wait_tx(test, tx + 1024, 60000), tx + 1024);

	/* the rest of it again, from the 11th response on */
	s.psn = 0x123 + 10;
	qpnic_rx_reth(reth, (uintptr_t)buf + 10 * 1024, mr->rkey,
		      RX_READ_LEN - 10 * 1024);
	tx = qpnic_test_counter(test, rx.ibdev, "tx_packets");
	qpnic_rcv(qpnic_rx_build(test, &s, rx.ndev));
	KUNIT_EXPECT_EQ(test, qpnic_rx_wait_tx(test, tx + 1014, 60000), tx + 1014);

	/* not the range that READ named, or no READ at all: no answer */
	dups = qpnic_test_counter(test, rx.ibdev, "rx_duplicate_requests");
	tx = qpnic_test_counter(test, rx.ibdev, "tx_packets");
	qpnic_rx_reth(reth, (uintptr_t)buf + 10 * 1024, mr->rkey, RX_READ_LEN);
	qpnic_rcv(qpnic_rx_build(test, &s, rx.ndev));
	qpnic_rx_reth(reth, (uintptr_t)buf, mr->rkey, 4096);
	s.psn = 0x100;
	qpnic_rcv(qpnic_rx_build(test, &s, rx.ndev));
	msleep(200);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rx.ibdev, "tx_packets"), tx);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rx.ibdev,
						 "rx_duplicate_requests"), dups + 2);

	/* the READ itself again, once the QP no longer allows remote reads */
	KUNIT_ASSERT_EQ(test, qpnic_to_rts(qp), 0);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &a, IB_QP_ACCESS_FLAGS), 0);
	s.psn = 0x123;
	qpnic_rx_reth(reth, (uintptr_t)buf, mr->rkey, RX_READ_LEN);
	tx = qpnic_test_counter(test, rx.ibdev, "tx_packets");
	qpnic_rcv(qpnic_rx_build(test, &s, rx.ndev));
	msleep(200);
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rx.ibdev, "tx_packets"), tx);

	KUNIT_EXPECT_EQ(test, ib_destroy_qp(qp), 0);
	rx.ibdev->ops.dereg_mr(mr, NULL);
	vfree(buf);
}

/*
 * UC drops a message it cannot take and goes on (IBTA 9.9.4.2): a WRITE
 * longer than its RETH, a WRITE to a QP without remote write access, a
 * SEND longer than the receive buffer. The QP stays where it was and the
 * next good SEND lands in the receive WQE the dropped one had taken. A
 * FIRST in the middle of a message drops that message and starts anew.
 */
static void qpnic_rx_uc_drops_refused_messages(struct kunit *test)
{
	struct ib_mr *mr = qpnic_rx_dma_mr(test, IB_ACCESS_LOCAL_WRITE |
					   IB_ACCESS_REMOTE_WRITE);
	u8 *buf = kunit_kzalloc(test, 64, GFP_KERNEL);
	u8 *target = kunit_kzalloc(test, 64, GFP_KERNEL);
	u8 *big = kunit_kzalloc(test, 2048, GFP_KERNEL);
	struct ib_qp *qp = qpnic_rx_qp(test, IB_QPT_UC);
	struct ib_qp *closed = qpnic_rx_qp(test, IB_QPT_UC);
	struct ib_sge sge = { .length = 16 };
	struct ib_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 };
	struct ib_qp_attr a = { .qp_state = IB_QPS_INIT, .port_num = 1 };
	u8 reth[QPNIC_RETH_LEN];
	struct qpnic_rx_spec s = { .opcode = QPNIC_OPC_UC | QPNIC_WRITE_ONLY,
				   .pkey = 0xffff, .dqpn = qp->qp_num,
				   .ext = sizeof(reth), .ext_data = reth,
				   .paylen = 64 };
	struct ib_qp_init_attr init;
	struct ib_qp_attr q;
	struct ib_wc wc;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, target);
	KUNIT_ASSERT_NOT_NULL(test, big);
	sge.addr = (uintptr_t)buf;
	sge.lkey = rx.pd->local_dma_lkey;
	KUNIT_ASSERT_EQ(test, qpnic_to_init(qp), 0);
	KUNIT_ASSERT_EQ(test, qpnic_to_rtr(qp), 0);
	KUNIT_ASSERT_EQ(test, ib_post_recv(qp, &wr, NULL), 0);
	/* a QP that allows no remote access at all */
	KUNIT_ASSERT_EQ(test, ib_modify_qp(closed, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
					   IB_QP_PORT | IB_QP_ACCESS_FLAGS), 0);
	KUNIT_ASSERT_EQ(test, qpnic_to_rtr(closed), 0);

	/* 64 bytes where the RETH allows 16 */
	qpnic_rx_reth(reth, (uintptr_t)target, mr->rkey, 16);
	qpnic_rx_expect(test, &s, COUNTED("rx_packets"));
	s.dqpn = closed->qp_num;
	s.paylen = 16;
	qpnic_rx_expect(test, &s, COUNTED("rx_packets"));
	/* 64 bytes into a 16-byte receive buffer */
	s = (struct qpnic_rx_spec){ .opcode = QPNIC_OPC_UC | QPNIC_SEND_ONLY,
				    .pkey = 0xffff, .dqpn = qp->qp_num,
				    .psn = 0x124, .paylen = 64 };
	qpnic_rx_expect(test, &s, COUNTED("rx_packets"));
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rx.ibdev,
						 "rx_uc_dropped_messages") >= 3, true);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(target, 0, 64));
	KUNIT_EXPECT_EQ(test, ib_poll_cq(rx.cq, 1, &wc), 0);
	KUNIT_EXPECT_EQ(test, ib_query_qp(qp, &q, IB_QP_STATE, &init), 0);
	KUNIT_EXPECT_EQ(test, q.qp_state, IB_QPS_RTR);
	KUNIT_EXPECT_EQ(test, ib_query_qp(closed, &q, IB_QP_STATE, &init), 0);
	KUNIT_EXPECT_EQ(test, q.qp_state, IB_QPS_RTR);

	/* and the next SEND that fits lands where the dropped one would have */
	s.psn = 0x125;
	s.paylen = 8;
	qpnic_rx_expect(test, &s, COUNTED("rx_packets"));
	KUNIT_ASSERT_EQ(test, qpnic_test_poll(rx.cq, &wc, 1000), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 7ULL);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 8U);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(buf, 0x5a, 8));

	/* a FIRST in the middle of a message: that one is lost, this one starts */
	sge.addr = (uintptr_t)big;
	sge.length = 2048;
	KUNIT_ASSERT_EQ(test, ib_post_recv(qp, &wr, NULL), 0);
	s = (struct qpnic_rx_spec){ .opcode = QPNIC_OPC_UC | QPNIC_SEND_FIRST,
				    .pkey = 0xffff, .dqpn = qp->qp_num,
				    .psn = 0x126, .paylen = 1024 };
	qpnic_rx_expect(test, &s, COUNTED("rx_packets"));
	s.opcode = QPNIC_OPC_UC | QPNIC_SEND_ONLY;
	s.psn = 0x127;
	s.paylen = 12;
	qpnic_rx_expect(test, &s, COUNTED("rx_packets", "rx_out_of_sequence"));
	KUNIT_ASSERT_EQ(test, qpnic_test_poll(rx.cq, &wc, 1000), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 12U);

	KUNIT_EXPECT_EQ(test, ib_destroy_qp(closed), 0);
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(qp), 0);
	rx.ibdev->ops.dereg_mr(mr, NULL);
}

/*
 * Forged sequence NAKs for PSNs inside a message that is not acknowledged,
 * alternating between two of them: the first goes back once, the rest
 * change nothing (one behind what a NAK acknowledged is stale, the same
 * one again waits for progress). The old requester resent the message's
 * tail for each.
 */
static void qpnic_rx_forged_naks(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, 8192, GFP_KERNEL);
	struct ib_qp *qp = qpnic_rx_qp(test, IB_QPT_RC);
	struct ib_sge sge = { .length = 8192 };
	struct ib_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				 .opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED };
	/* no ACK timeout: only the NAKs can make it resend */
	struct ib_qp_attr a = { .qp_state = IB_QPS_RTS, .sq_psn = 0x456,
				.retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 1 };
	u8 aeth[QPNIC_AETH_LEN] = { QPNIC_AETH_NAK };
	struct qpnic_rx_spec s = { .opcode = QPNIC_ACKNOWLEDGE, .pkey = 0xffff,
				   .dqpn = qp->qp_num, .ext = sizeof(aeth),
				   .ext_data = aeth };
	u64 sent, resent, naks;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	sge.addr = (uintptr_t)buf;
	sge.lkey = rx.pd->local_dma_lkey;
	KUNIT_ASSERT_EQ(test, qpnic_to_init(qp), 0);
	KUNIT_ASSERT_EQ(test, qpnic_to_rtr(qp), 0);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN |
					   IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
					   IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC), 0);
	/* 8 packets, PSNs 0x456..0x45d, to a peer that never answers */
	sent = qpnic_test_counter(test, rx.ibdev, "tx_packets");
	KUNIT_ASSERT_EQ(test, ib_post_send(qp, &wr, NULL), 0);
	/* (a work item may send them after the post returns) */
	for (i = 0; i < 1000 && qpnic_test_counter(test, rx.ibdev, "tx_packets") - sent < 8;
	     i++)
		usleep_range(500, 1000);
	KUNIT_ASSERT_EQ(test, qpnic_test_counter(test, rx.ibdev, "tx_packets") - sent, 8ULL);
	resent = qpnic_test_counter(test, rx.ibdev, "tx_retransmits");
	naks = qpnic_test_counter(test, rx.ibdev, "rx_seq_naks");
	for (i = 0; i < 10; i++) {
		s.psn = 0x456 + (i % 2 ? 1 : 5);
		qpnic_rcv(qpnic_rx_build(test, &s, rx.ndev));
	}
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rx.ibdev, "rx_seq_naks"),
			naks + 10);
	/* one go-back-N from PSN 0x45b: 3 packets, not 3 + 7 per pair */
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rx.ibdev, "tx_retransmits") -
			resent, 3ULL);
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(qp), 0);
}

/* A packet on a netdev with no qpnic device is nobody's: nothing counts. */
static void qpnic_rx_other_netdev(struct kunit *test)
{
	struct qpnic_rx_spec s = { .opcode = QPNIC_ACKNOWLEDGE, .pkey = 0xffff,
				   .dqpn = 0xabcde, .ext = QPNIC_AETH_LEN };
	u64 before = qpnic_test_counter(test, rx.ibdev, "rx_drop_unknown_qp");

	qpnic_rcv(qpnic_rx_build(test, &s, rx.other));
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, rx.ibdev, "rx_drop_unknown_qp"), before);
}

static int qpnic_rx_suite_init(struct kunit_suite *suite)
{
	int err;

	rx.ndev = qpnic_test_netdev_create("qprx%d");
	if (IS_ERR(rx.ndev))
		return PTR_ERR(rx.ndev);
	rx.other = qpnic_test_netdev_create("qprxo%d");
	if (IS_ERR(rx.other)) {
		err = PTR_ERR(rx.other);
		goto err_ndev;
	}
	err = qpnic_device_add("qpnic_rx%d", rx.ndev, &rx.ibdev);
	if (err)
		goto err_other;
	rx.pd = ib_alloc_pd(rx.ibdev, 0);
	if (IS_ERR(rx.pd)) {
		err = PTR_ERR(rx.pd);
		goto err_dev;
	}
	rx.cq = ib_create_cq(rx.ibdev, NULL, NULL, NULL,
			     &(struct ib_cq_init_attr){ .cqe = 16 });
	if (IS_ERR(rx.cq)) {
		err = PTR_ERR(rx.cq);
		goto err_pd;
	}
	return 0;

err_pd:
	ib_dealloc_pd(rx.pd);
err_dev:
	qpnic_device_remove(rx.ibdev);
err_other:
	qpnic_test_netdev_destroy(rx.other);
err_ndev:
	qpnic_test_netdev_destroy(rx.ndev);
	return err;
}

static void qpnic_rx_suite_exit(struct kunit_suite *suite)
{
	ib_destroy_cq(rx.cq);
	ib_dealloc_pd(rx.pd);
	qpnic_device_remove(rx.ibdev);
	qpnic_test_netdev_destroy(rx.other);
	qpnic_test_netdev_destroy(rx.ndev);
}

static struct kunit_case qpnic_rx_cases[] = {
	KUNIT_CASE(qpnic_rx_ref_icrc_matches_rxe),
	KUNIT_CASE(qpnic_rx_bad_packets),
	KUNIT_CASE(qpnic_rx_qp_checks),
	KUNIT_CASE(qpnic_rx_payload_length),
	KUNIT_CASE(qpnic_rx_other_netdev),
	KUNIT_CASE(qpnic_rx_read_answered_from_work),
	KUNIT_CASE(qpnic_rx_uc_drops_refused_messages),
	KUNIT_CASE(qpnic_rx_forged_naks),
	{}
};

static struct kunit_suite qpnic_rx_suite = {
	.name = "qpnic_rx",
	.suite_init = qpnic_rx_suite_init,
	.suite_exit = qpnic_rx_suite_exit,
	.test_cases = qpnic_rx_cases,
};

kunit_test_suite(qpnic_rx_suite);
