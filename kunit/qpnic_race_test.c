// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite for the requester against everything that gives its WQE
 * slots back while it builds packets (transport-review C1): threads post
 * sends (SGE lists and inline) while another moves the QP to ERR, resets
 * it and brings it back, so flushes and reposts recycle the slots; and on
 * RC, a wire that loses ACKs makes retransmissions overlap the
 * completions, with the send queue refilled the moment a slot comes back.
 * Every message that arrives is checked byte for byte: its immediate data
 * names the buffer and length it was sent from. And MR lookups, which
 * take no lock, against dereg_mr.
 *
 * Races like these are rare on two CPUs. To make them likely within
 * seconds, a kprobe slows down every packet's skb allocation while a case
 * runs, wherever the requester calls it: a requester that built a packet
 * from a slot it no longer held would then lose the race almost every
 * time.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include <qpnic/qpnic.h>
#include <qpnic/wire.h>

#include "qpnic_test_util.h"

MODULE_IMPORT_NS(QPNIC_KUNIT);

#define RACE_NBUF	32
#define RACE_BUF_LEN	4096
#define RACE_GRH	40
#define RACE_NRECV	64
#define RACE_INLINE	256
#define RACE_MS		3000

static struct {
	struct net_device *ndev;
	struct ib_device *ibdev;
	struct ib_pd *pd;
	union ib_gid gid;
} race;

struct race_ctx {
	struct kunit *test;
	enum ib_qp_type type;
	struct ib_cq *send_cq, *recv_cq;
	struct ib_qp *sender, *receiver;
	struct ib_ah *ah;
	u8 *send_buf;		/* RACE_NBUF buffers, never written after setup */
	u8 *recv_buf;
	u32 max_len;
	bool refill;		/* RC: repost as soon as a send completes */
	atomic_t posted, received, bad, cycles;
	char first_bad[128];
};

static unsigned int race_delay_us;

static int race_slow_alloc(struct kprobe *kp, struct pt_regs *regs)
{
	unsigned int us = READ_ONCE(race_delay_us);

	if (us)
		udelay(us);
	return 0;
}

static struct kprobe race_kprobe = {
	.symbol_name = "qpnic_skb_alloc",
	.pre_handler = race_slow_alloc,
};

static bool race_kprobe_on;

static u8 race_pattern(u32 buf, u32 i)
{
	return buf * 37 + i * 11 + (i >> 7);
}

static void race_bad(struct race_ctx *c, const char *what, u32 a, u32 b)
{
	if (atomic_inc_return(&c->bad) == 1)
		snprintf(c->first_bad, sizeof(c->first_bad), "%s (%u, %u)", what, a, b);
}

static int race_post_send(struct race_ctx *c, bool inl)
{
	u32 buf = get_random_u32_below(RACE_NBUF);
	u32 len = 1 + get_random_u32_below(inl ? RACE_INLINE : c->max_len);
	u32 n = inl ? 1 : 1 + get_random_u32_below(3), i, off = 0;
	u8 *src = c->send_buf + buf * RACE_BUF_LEN;
	struct ib_sge sge[3];
	struct ib_ud_wr wr = {
		.wr = { .wr_id = buf, .sg_list = sge, .num_sge = n,
			.opcode = IB_WR_SEND_WITH_IMM,
			.send_flags = IB_SEND_SIGNALED | (inl ? IB_SEND_INLINE : 0),
			.ex.imm_data = cpu_to_be32(buf << 16 | len) },
		.ah = c->ah, .remote_qpn = c->receiver->qp_num,
		.remote_qkey = 0x11111111,
	};

	for (i = 0; i < n; i++) {
		u32 part = i == n - 1 ? len - off : len / n;

		sge[i] = (struct ib_sge){ .addr = (uintptr_t)(src + off),
					  .length = part,
					  .lkey = race.pd->local_dma_lkey };
		off += part;
	}
	return ib_post_send(c->sender, &wr.wr, NULL);
}

static int race_poster(void *arg, bool inl)
{
	struct race_ctx *c = arg;

	while (!kthread_should_stop()) {
		if (!race_post_send(c, inl))
			atomic_inc(&c->posted);
		else
			usleep_range(20, 50);	/* full, or being reset */
		cond_resched();
	}
	return 0;
}

static int race_sge_poster(void *arg)
{
	return race_poster(arg, false);
}

static int race_inline_poster(void *arg)
{
	return race_poster(arg, true);
}

static noinline void race_to_state(struct ib_qp *qp, enum ib_qp_state state)
{
	struct ib_qp_attr a = { .qp_state = state };

	ib_modify_qp(qp, &a, IB_QP_STATE);
}

static noinline void race_drain(struct ib_cq *cq)
{
	struct ib_wc wc[8];

	while (ib_poll_cq(cq, ARRAY_SIZE(wc), wc) > 0)
		;
}

/* UD: flush, reset and bring the sender back; drain its CQ meanwhile. */
static int race_chaos(void *arg)
{
	struct race_ctx *c = arg;
	u32 i;

	while (!kthread_should_stop()) {
		race_drain(c->send_cq);
		usleep_range(100, 1000 + get_random_u32_below(1000));
		race_to_state(c->sender, IB_QPS_ERR);
		/* in ERR each post is flushed at once: its slot is rewritten now */
		for (i = get_random_u32_below(64); i; i--)
			race_post_send(c, i & 1);
		race_to_state(c->sender, IB_QPS_RESET);
		race_drain(c->send_cq);
		if (qpnic_to_init(c->sender) || qpnic_to_rtr(c->sender) ||
		    qpnic_to_rts(c->sender)) {
			race_bad(c, "sender back to RTS failed", 0, 0);
			break;
		}
		atomic_inc(&c->cycles);
	}
	while (!kthread_should_stop())
		usleep_range(1000, 2000);
	return 0;
}

/* RC: keep the SQ full, reposting into each slot as soon as it is given back. */
static int race_refiller(void *arg)
{
	struct race_ctx *c = arg;
	struct ib_wc wc[16];

	while (!kthread_should_stop()) {
		int i, n, k;

		/* (bounded: in ERR every post succeeds, flushed at once) */
		for (k = 0; k < 256 && !race_post_send(c, get_random_u32_below(4) == 0); k++)
			atomic_inc(&c->posted);
		n = ib_poll_cq(c->send_cq, 16, wc);
		for (i = 0; i < n; i++)
			if (wc[i].status != IB_WC_SUCCESS)
				race_bad(c, "send completion status", wc[i].status,
					 (u32)wc[i].wr_id);
		if (!n)
			usleep_range(20, 50);
	}
	return 0;
}

static int race_post_recv(struct race_ctx *c, u32 slot)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)(c->recv_buf + slot * (RACE_GRH + RACE_BUF_LEN)),
		.length = RACE_GRH + RACE_BUF_LEN, .lkey = race.pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 };

	return ib_post_recv(c->receiver, &wr, NULL);
}

static void race_check(struct race_ctx *c, const struct ib_wc *wc)
{
	const u8 *p = c->recv_buf + wc->wr_id * (RACE_GRH + RACE_BUF_LEN);
	u32 hdr = c->type == IB_QPT_UD ? RACE_GRH : 0;
	u32 imm = be32_to_cpu(wc->ex.imm_data);
	u32 buf = imm >> 16, len = imm & 0xffff, i;

	if (wc->status != IB_WC_SUCCESS) {
		race_bad(c, "receive completion status", wc->status, (u32)wc->wr_id);
		return;
	}
	if (!(wc->wc_flags & IB_WC_WITH_IMM) || buf >= RACE_NBUF || !len ||
	    len > RACE_BUF_LEN) {
		race_bad(c, "message with a bad immediate", imm, wc->byte_len);
		return;
	}
	if (wc->byte_len != hdr + len) {
		race_bad(c, "sent and arrived lengths differ", len, wc->byte_len - hdr);
		return;
	}
	for (i = 0; i < len; i++) {
		if (p[hdr + i] != race_pattern(buf, i)) {
			race_bad(c, "byte not what was sent", buf, i);
			return;
		}
	}
	atomic_inc(&c->received);
}

static struct ib_qp *race_qp(struct kunit *test, struct ib_cq *cq,
			     enum ib_qp_type type)
{
	struct ib_qp_init_attr attr = {
		.qp_type = type, .send_cq = cq, .recv_cq = cq,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 32, .max_recv_wr = RACE_NRECV,
			 .max_send_sge = 3, .max_recv_sge = 1,
			 .max_inline_data = RACE_INLINE },
	};
	struct ib_qp *qp = ib_create_qp(race.pd, &attr);

	KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
	return qp;
}

/* @qp, RC, to RTS towards @dqpn through the device's own GID. */
static void race_connect(struct kunit *test, struct ib_qp *qp, u32 dqpn)
{
	/* a 1 ms ACK timeout: retransmissions come soon */
	const struct qpnic_test_rc_path path = {
		.dgid = &race.gid, .psn = 0x700, .rd_atomic = 1, .timeout = 8,
		.retry_cnt = 7, .rnr_retry = 7,
	};

	KUNIT_ASSERT_EQ(test, qpnic_test_rc_connect(qp, dqpn, &path), 0);
}

static void race_setup(struct kunit *test, struct race_ctx *c, enum ib_qp_type type)
{
	u32 i, j;

	memset(c, 0, sizeof(*c));
	c->test = test;
	c->type = type;
	c->send_buf = kunit_kmalloc(test, RACE_NBUF * RACE_BUF_LEN, GFP_KERNEL);
	c->recv_buf = kunit_kzalloc(test, RACE_NRECV * (RACE_GRH + RACE_BUF_LEN),
				    GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c->send_buf);
	KUNIT_ASSERT_NOT_NULL(test, c->recv_buf);
	for (i = 0; i < RACE_NBUF; i++)
		for (j = 0; j < RACE_BUF_LEN; j++)
			c->send_buf[i * RACE_BUF_LEN + j] = race_pattern(i, j);
	c->send_cq = ib_create_cq(race.ibdev, NULL, NULL, NULL,
				  &(struct ib_cq_init_attr){ .cqe = 4096 });
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->send_cq));
	c->recv_cq = ib_create_cq(race.ibdev, NULL, NULL, NULL,
				  &(struct ib_cq_init_attr){ .cqe = 256 });
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->recv_cq));
	c->sender = race_qp(test, c->send_cq, type);
	c->receiver = race_qp(test, c->recv_cq, type);
	if (type == IB_QPT_UD) {
		struct rdma_ah_attr ah = { .type = RDMA_AH_ATTR_TYPE_ROCE };

		rdma_ah_set_port_num(&ah, 1);
		rdma_ah_set_grh(&ah, &race.gid, 0, 0, 64, 0);
		c->ah = rdma_create_ah(race.pd, &ah, RDMA_CREATE_AH_SLEEPABLE);
		KUNIT_ASSERT_FALSE(test, IS_ERR(c->ah));
		c->max_len = 1024;	/* the UD MTU of a 1500-byte netdev */
		KUNIT_ASSERT_EQ(test, qpnic_to_init(c->sender), 0);
		KUNIT_ASSERT_EQ(test, qpnic_to_rtr(c->sender), 0);
		KUNIT_ASSERT_EQ(test, qpnic_to_rts(c->sender), 0);
		KUNIT_ASSERT_EQ(test, qpnic_to_init(c->receiver), 0);
		KUNIT_ASSERT_EQ(test, qpnic_to_rtr(c->receiver), 0);
	} else {
		c->max_len = RACE_BUF_LEN;	/* up to 4 packets */
		race_connect(test, c->sender, c->receiver->qp_num);
		race_connect(test, c->receiver, c->sender->qp_num);
	}
	for (i = 0; i < RACE_NRECV; i++)
		KUNIT_ASSERT_EQ(test, race_post_recv(c, i), 0);
}

/* Run @fns against @c for RACE_MS, checking what arrives meanwhile. */
static void race_run(struct kunit *test, struct race_ctx *c,
		     int (*const *fns)(void *), unsigned int n)
{
	unsigned long end = jiffies + msecs_to_jiffies(RACE_MS);
	struct task_struct *t[4];
	struct ib_wc wc[16];
	unsigned int i;

	if (!race_kprobe_on)
		kunit_info(test, "no kprobes: the race runs at its natural rate\n");
	WRITE_ONCE(race_delay_us, 100);
	for (i = 0; i < n; i++) {
		t[i] = kthread_run(fns[i], c, "qpnic_race%u", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t[i]));
	}
	while (time_before(jiffies, end)) {
		int k, got = ib_poll_cq(c->recv_cq, 16, wc);

		for (k = 0; k < got; k++) {
			race_check(c, &wc[k]);
			if (race_post_recv(c, wc[k].wr_id))
				race_bad(c, "reposting a receive failed", (u32)wc[k].wr_id, 0);
		}
		if (got <= 0)
			usleep_range(50, 100);
	}
	for (i = 0; i < n; i++)
		kthread_stop(t[i]);
	WRITE_ONCE(race_delay_us, 0);
}

static void race_teardown(struct race_ctx *c)
{
	if (c->ah)
		rdma_destroy_ah(c->ah, RDMA_DESTROY_AH_SLEEPABLE);
	ib_destroy_qp(c->sender);
	ib_destroy_qp(c->receiver);
	ib_destroy_cq(c->send_cq);
	ib_destroy_cq(c->recv_cq);
}

/*
 * UD to a loopback AH: two posters (SGE lists, inline) and a thread that
 * flushes, resets and brings the QP back, so the slots are recycled while
 * the requester builds packets from them.
 */
static void qpnic_race_ud_flush_reset_repost(struct kunit *test)
{
	static int (*const fns[])(void *) = {
		race_sge_poster, race_inline_poster, race_chaos,
	};
	struct race_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	race_setup(test, c, IB_QPT_UD);
	race_run(test, c, fns, ARRAY_SIZE(fns));
	race_teardown(c);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&c->bad), 0, "first: %s", c->first_bad);
	/* the race proves something only if data and resets both happened */
	KUNIT_EXPECT_GE(test, atomic_read(&c->received), 50);
	KUNIT_EXPECT_GE(test, atomic_read(&c->cycles), 20);
	kunit_info(test, "UD: %d posted, %d checked, %d flush/reset cycles\n",
		   atomic_read(&c->posted), atomic_read(&c->received),
		   atomic_read(&c->cycles));
}

/*
 * Lose every ACK during six timer ticks of every sixteen: the ACK timeout
 * (two ticks at least, then doubling) most often expires inside the
 * window, the requester resends, and the ACKs of the resends complete
 * WQEs it is still resending (the case repeats its run until it saw
 * enough resends). (Losing single ACKs provokes
 * nothing: a poster delivers its loopback packets itself, so the next
 * ACK comes at once and covers the lost one. A window longer than
 * retry_cnt timeouts would end the QP, as it should.)
 */
static unsigned int race_lose_acks(struct sk_buff *skb)
{
	const u8 *bth = qpnic_test_lo_udp(skb) + sizeof(struct udphdr);

	if (bth[0] == QPNIC_ACKNOWLEDGE && jiffies % 16 < 6)
		return 0;
	return 1;
}

/*
 * RC, messages of up to four packets, a wire that loses ACKs, the ACK
 * timeout at 1 ms: WQEs complete while the requester resends them, and
 * the full SQ is refilled into the slot each completion gives back.
 */
static void qpnic_race_rc_retransmit_complete_repost(struct kunit *test)
{
	static int (*const fns[])(void *) = { race_refiller };
	struct race_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	u64 base = qpnic_test_counter(test, race.ibdev, "tx_retransmits");
	u64 retrans = 0;
	int round;

	KUNIT_ASSERT_NOT_NULL(test, c);
	race_setup(test, c, IB_QPT_RC);
	WRITE_ONCE(qpnic_kunit_lo_hook, race_lose_acks);
	/* how often a timeout beats a window's end varies: go on until 10 */
	for (round = 0; round < 5 && retrans < 10; round++) {
		race_run(test, c, fns, ARRAY_SIZE(fns));
		retrans = qpnic_test_counter(test, race.ibdev, "tx_retransmits") - base;
	}
	WRITE_ONCE(qpnic_kunit_lo_hook, NULL);
	race_teardown(c);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&c->bad), 0, "first: %s", c->first_bad);
	KUNIT_EXPECT_GE(test, atomic_read(&c->received), 50);
	KUNIT_EXPECT_GE(test, retrans, 10ULL);
	kunit_info(test, "RC: %d posted, %d checked, %llu packets resent\n",
		   atomic_read(&c->posted), atomic_read(&c->received), retrans);
}

/*
 * MR lookups without a lock against dereg_mr: a thread looks up the key of
 * the MR the test registers, deregisters and registers again. A kretprobe
 * on xa_load() holds that thread for a while between finding the MR and
 * taking its reference, so the MR is often deregistered in between: its
 * count then refuses the reference, and the memory must still be there to
 * refuse it (KASAN reports the read of a freed MR).
 */
struct race_mr_ctx {
	struct task_struct *looker;
	u32 key;		/* the key to look up */
	atomic_t found, missed;
};

static struct race_mr_ctx *race_mr;

static int race_mr_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct race_mr_ctx *m = READ_ONCE(race_mr);

	return !m || current != m->looker;	/* nonzero: not this call */
}

static int race_mr_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	udelay(get_random_u32_below(20));
	return 0;
}

static struct kretprobe race_mr_kretprobe = {
	.kp.symbol_name = "xa_load",
	.entry_handler = race_mr_entry,
	.handler = race_mr_ret,
	.maxactive = 4,
};

static int race_mr_looker(void *arg)
{
	struct race_mr_ctx *m = arg;

	while (!kthread_should_stop()) {
		if (qpnic_kunit_mr_lookup(race.pd, READ_ONCE(m->key)))
			atomic_inc(&m->found);
		else
			atomic_inc(&m->missed);
		cond_resched();
	}
	return 0;
}

static struct ib_mr *race_mr_reg(struct kunit *test)
{
	struct ib_mr *mr = qpnic_test_dma_mr(race.pd, IB_ACCESS_LOCAL_WRITE);

	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	return mr;
}

static void qpnic_race_mr_lookup_dereg(struct kunit *test)
{
	struct race_mr_ctx *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	unsigned long end = jiffies + msecs_to_jiffies(RACE_MS);
	struct ib_mr *mr;
	int cycles = 0;

	KUNIT_ASSERT_NOT_NULL(test, m);
	if (!IS_ENABLED(CONFIG_KRETPROBES))
		kunit_skip(test, "needs CONFIG_KRETPROBES to widen the race");
	mr = race_mr_reg(test);
	m->key = mr->lkey;
	m->looker = kthread_run(race_mr_looker, m, "qpnic_mr_looker");
	KUNIT_ASSERT_FALSE(test, IS_ERR(m->looker));
	WRITE_ONCE(race_mr, m);
	KUNIT_ASSERT_EQ(test, register_kretprobe(&race_mr_kretprobe), 0);
	while (time_before(jiffies, end)) {
		udelay(get_random_u32_below(60));
		KUNIT_EXPECT_EQ(test, race.ibdev->ops.dereg_mr(mr, NULL), 0);
		mr = race_mr_reg(test);
		WRITE_ONCE(m->key, mr->lkey);
		cycles++;
	}
	kthread_stop(m->looker);
	unregister_kretprobe(&race_mr_kretprobe);
	WRITE_ONCE(race_mr, NULL);
	KUNIT_EXPECT_FALSE(test, qpnic_kunit_mr_lookup(race.pd, mr->lkey ^ 1));
	KUNIT_EXPECT_TRUE(test, qpnic_kunit_mr_lookup(race.pd, mr->lkey));
	KUNIT_EXPECT_EQ(test, race.ibdev->ops.dereg_mr(mr, NULL), 0);
	/* both outcomes, many times over: the lookups did race the deregs */
	KUNIT_EXPECT_GE(test, atomic_read(&m->found), 100);
	KUNIT_EXPECT_GE(test, atomic_read(&m->missed), 100);
	kunit_info(test, "%d registrations; lookups: %d found, %d too late\n",
		   cycles, atomic_read(&m->found), atomic_read(&m->missed));
}

static int qpnic_race_suite_init(struct kunit_suite *suite)
{
	int err;

	race.ndev = qpnic_test_netdev_create("qprace%d");
	if (IS_ERR(race.ndev))
		return PTR_ERR(race.ndev);
	err = qpnic_device_add("qpnic_race%d", race.ndev, &race.ibdev);
	if (err)
		goto err_ndev;
	err = qpnic_test_gid0(race.ibdev, &race.gid);
	if (err)
		goto err_dev;
	race.pd = ib_alloc_pd(race.ibdev, 0);
	if (IS_ERR(race.pd)) {
		err = PTR_ERR(race.pd);
		goto err_dev;
	}
	race_kprobe_on = IS_ENABLED(CONFIG_KPROBES) && !register_kprobe(&race_kprobe);
	return 0;

err_dev:
	qpnic_device_remove(race.ibdev);
err_ndev:
	qpnic_test_netdev_destroy(race.ndev);
	return err;
}

static void qpnic_race_suite_exit(struct kunit_suite *suite)
{
	if (race_kprobe_on)
		unregister_kprobe(&race_kprobe);
	race_kprobe_on = false;
	ib_dealloc_pd(race.pd);
	qpnic_device_remove(race.ibdev);
	qpnic_test_netdev_destroy(race.ndev);
}

static struct kunit_case qpnic_race_cases[] = {
	KUNIT_CASE(qpnic_race_ud_flush_reset_repost),
	KUNIT_CASE(qpnic_race_rc_retransmit_complete_repost),
	KUNIT_CASE(qpnic_race_mr_lookup_dereg),
	{}
};

static struct kunit_suite qpnic_race_suite = {
	.name = "qpnic_race",
	.suite_init = qpnic_race_suite_init,
	.suite_exit = qpnic_race_suite_exit,
	.test_cases = qpnic_race_cases,
};

kunit_test_suite(qpnic_race_suite);
