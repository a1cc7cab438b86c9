// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The QP contract of ibv_create_qp_ex(3) / ibv_destroy_qp(3), checked from
 * userspace through unmodified libibverbs + librxe on a qpnic device.
 * Each check prints "@@RESULT PASS|FAIL name [why]" for the host to count.
 *
 * usage: test_qp_contract -d DEVICE [-a IPV4]   (IPV4 default 10.0.0.1)
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <infiniband/verbs.h>
#include "guest_test.h"

static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_device_attr dev_attr;

/* On the shared PD and CQ; the tests change what they check before creating. */
static struct ibv_qp_init_attr_ex qp_attr(enum ibv_qp_type type)
{
	return qp_init_attr(pd, cq, type);
}

/* create_qp_ex; on failure returns NULL with errno kept. */
static struct ibv_qp *create(struct ibv_qp_init_attr_ex *a)
{
	errno = 0;
	return ibv_create_qp_ex(ctx, a);
}

static const char *type_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : "UD";
}

/* Every supported type with every send op librxe offers for it. */
static void test_create_types(void)
{
	static const struct { enum ibv_qp_type type; uint64_t ops; } cases[] = {
		{ IBV_QPT_RC, IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			      IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			      IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			      IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV |
			      IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_SEND_WITH_INV |
			      IBV_QP_EX_WITH_ATOMIC_WRITE },
		{ IBV_QPT_UC, IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			      IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			      IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_SEND_WITH_INV },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM },
	};
	char name[128];
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ibv_qp_init_attr_ex a = qp_attr(cases[i].type);
		struct ibv_qp_init_attr qinit;
		struct ibv_qp_attr qa;
		struct ibv_qp_ex *qpx;
		struct ibv_qp *qp;
		int err;

		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = cases[i].ops;
		a.cap.max_send_wr = 10;
		a.cap.max_recv_wr = 20;
		a.cap.max_send_sge = 2;
		a.cap.max_recv_sge = 3;
		a.cap.max_inline_data = 40;
		qp = create(&a);
		snprintf(name, sizeof(name), "create_qp_ex %s with all send ops", type_name(cases[i].type));
		result(qp, name, "errno %d", errno);
		if (!qp)
			continue;
		snprintf(name, sizeof(name), "%s caps >= request", type_name(cases[i].type));
		result(a.cap.max_send_wr >= 10 && a.cap.max_recv_wr >= 20 &&
		       a.cap.max_send_sge >= 2 && a.cap.max_recv_sge >= 3 &&
		       a.cap.max_inline_data >= 40, name, "%u %u %u %u %u",
		       a.cap.max_send_wr, a.cap.max_recv_wr, a.cap.max_send_sge,
		       a.cap.max_recv_sge, a.cap.max_inline_data);
		err = ibv_query_qp(qp, &qa, IBV_QP_CAP, &qinit);
		snprintf(name, sizeof(name), "%s query_qp caps equal the write-back", type_name(cases[i].type));
		result(!err && qa.cap.max_send_wr == a.cap.max_send_wr &&
		       qa.cap.max_recv_wr == a.cap.max_recv_wr &&
		       qa.cap.max_send_sge == a.cap.max_send_sge &&
		       qa.cap.max_recv_sge == a.cap.max_recv_sge &&
		       qa.cap.max_inline_data == a.cap.max_inline_data, name,
		       "err %d query %u %u %u %u %u", err, qa.cap.max_send_wr,
		       qa.cap.max_recv_wr, qa.cap.max_send_sge, qa.cap.max_recv_sge,
		       qa.cap.max_inline_data);
		qpx = ibv_qp_to_qp_ex(qp);
		snprintf(name, sizeof(name), "%s ibv_qp_to_qp_ex", type_name(cases[i].type));
		result(qpx && qpx->wr_start && qpx->wr_send, name, "qpx %p", (void *)qpx);
		snprintf(name, sizeof(name), "%s qp_num is 24-bit and not 0/1", type_name(cases[i].type));
		result(qp->qp_num > 1 && qp->qp_num <= 0xffffff, name, "qp_num %u", qp->qp_num);
		err = ibv_destroy_qp(qp);
		snprintf(name, sizeof(name), "%s destroy_qp", type_name(cases[i].type));
		result(!err, name, "err %d", err);
	}
}

static void expect_create_errno(const char *name, struct ibv_qp_init_attr_ex *a, int want)
{
	struct ibv_qp *qp = create(a);
	int got = qp ? 0 : errno;

	result(got == want, name, "errno %d, want %d", got, want);
	if (qp)
		ibv_destroy_qp(qp);
}

/*
 * The caps a create writes back are what the QP holds; asking for exactly
 * them again must be accepted (they never exceed the device limits).
 */
static void test_recreate_with_returned_caps(void)
{
	static const uint32_t asks[] = { 1, 16, 1000, 8192, 0 };
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp *qp, *again;
	char why[160] = "";
	bool ok = true;
	unsigned int i;

	for (i = 0; i < sizeof(asks) / sizeof(asks[0]) && ok; i++) {
		a = qp_attr(IBV_QPT_RC);
		a.cap.max_send_wr = asks[i] ? asks[i] : (uint32_t)dev_attr.max_qp_wr;
		a.cap.max_recv_wr = a.cap.max_send_wr;
		qp = create(&a);
		if (!qp) {
			snprintf(why, sizeof(why), "create %u WRs: errno %d",
				 a.cap.max_send_wr, errno);
			ok = false;
			break;
		}
		if (a.cap.max_send_wr > (uint32_t)dev_attr.max_qp_wr ||
		    a.cap.max_recv_wr > (uint32_t)dev_attr.max_qp_wr) {
			snprintf(why, sizeof(why), "asked %u, got %u/%u above max_qp_wr %d",
				 asks[i], a.cap.max_send_wr, a.cap.max_recv_wr,
				 dev_attr.max_qp_wr);
			ok = false;
		}
		again = create(&a);
		if (!again && ok) {
			snprintf(why, sizeof(why), "recreate with %u/%u WRs: errno %d",
				 a.cap.max_send_wr, a.cap.max_recv_wr, errno);
			ok = false;
		}
		if (again)
			ibv_destroy_qp(again);
		ibv_destroy_qp(qp);
	}
	result(ok, "creating again with the written-back caps succeeds", "%s", why);
}

static void test_create_errors(void)
{
	struct ibv_qp_init_attr_ex a;

	a = qp_attr(IBV_QPT_RAW_PACKET);
	expect_create_errno("RAW_PACKET is EOPNOTSUPP", &a, EOPNOTSUPP);
	a = qp_attr(IBV_QPT_DRIVER);
	expect_create_errno("DRIVER QP is EOPNOTSUPP", &a, EOPNOTSUPP);
	a = qp_attr(IBV_QPT_RC);
	a.cap.max_send_wr = dev_attr.max_qp_wr + 1;
	expect_create_errno("max_send_wr above max_qp_wr is EINVAL", &a, EINVAL);
	a = qp_attr(IBV_QPT_RC);
	a.cap.max_recv_wr = dev_attr.max_qp_wr + 1;
	expect_create_errno("max_recv_wr above max_qp_wr is EINVAL", &a, EINVAL);
	a = qp_attr(IBV_QPT_RC);
	a.cap.max_send_sge = dev_attr.max_sge + 1;
	expect_create_errno("max_send_sge above max_sge is EINVAL", &a, EINVAL);
	a = qp_attr(IBV_QPT_RC);
	a.cap.max_recv_sge = dev_attr.max_sge + 1;
	expect_create_errno("max_recv_sge above max_sge is EINVAL", &a, EINVAL);
	a = qp_attr(IBV_QPT_RC);
	a.cap.max_send_wr = UINT32_MAX;
	expect_create_errno("max_send_wr U32_MAX is EINVAL", &a, EINVAL);
	a = qp_attr(IBV_QPT_RC);
	a.cap.max_inline_data = UINT32_MAX;
	expect_create_errno("max_inline_data U32_MAX is EINVAL", &a, EINVAL);
	a = qp_attr(IBV_QPT_RC);
	a.cap.max_send_wr = dev_attr.max_qp_wr;
	a.cap.max_recv_wr = dev_attr.max_qp_wr;
	expect_create_errno("max_send_wr/max_recv_wr at max_qp_wr succeed", &a, 0);
	test_recreate_with_returned_caps();
	a = qp_attr(IBV_QPT_UD);
	a.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	a.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	expect_create_errno("unsupported create_flags are EOPNOTSUPP", &a, EOPNOTSUPP);
	a = qp_attr(IBV_QPT_UD);
	a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE;
	expect_create_errno("RDMA write on a UD QP is EOPNOTSUPP", &a, EOPNOTSUPP);
}

static int post_recvs(struct ibv_qp *qp, unsigned int max, uint64_t base)
{
	struct ibv_recv_wr wr = {}, *bad;
	unsigned int n;

	for (n = 0; n <= max; n++) {
		wr.wr_id = base + n;
		if (ibv_post_recv(qp, &wr, &bad))
			break;
	}
	return n;
}

static int post_sends(struct ibv_qp *qp, unsigned int max, int *last_err)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_WRITE }, *bad;
	unsigned int n;

	*last_err = 0;
	for (n = 0; n <= max; n++) {
		wr.wr_id = n;
		wr.wr.rdma.remote_addr = 0x1000;
		wr.wr.rdma.rkey = 0x55;
		*last_err = ibv_post_send(qp, &wr, &bad);
		if (*last_err)
			break;
	}
	return n;
}

/* The rings hold exactly the returned caps. */
static void test_ring_capacity(void)
{
	static const unsigned int sizes[] = { 1, 2, 3, 16, 100, 1000 };
	unsigned int i;
	char name[128];

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct ibv_qp_init_attr_ex a = qp_attr(IBV_QPT_RC);
		struct ibv_send_wr swr = { .opcode = IBV_WR_RDMA_WRITE }, *sbad;
		struct ibv_qp *qp;
		int n, err;

		a.cap.max_send_wr = sizes[i];
		a.cap.max_recv_wr = sizes[i];
		qp = create(&a);
		if (!qp) {
			result(false, "ring capacity: create", "errno %d", errno);
			continue;
		}
		err = ibv_post_send(qp, &swr, &sbad);
		snprintf(name, sizeof(name), "post_send in RESET is EINVAL (%u)", sizes[i]);
		result(err == EINVAL, name, "got %d", err);
		to_init(qp);
		n = post_recvs(qp, a.cap.max_recv_wr, 0);
		snprintf(name, sizeof(name), "exactly max_recv_wr=%u receives fit", a.cap.max_recv_wr);
		result(n == (int)a.cap.max_recv_wr, name, "posted %d", n);
		/* in SQD the requester starts nothing: the ring keeps what is posted */
		if (to_rtr(qp) || to_rts(qp) || to_state(qp, IBV_QPS_SQD)) {
			result(false, "ring capacity: modify to SQD", "errno %d", errno);
			ibv_destroy_qp(qp);
			continue;
		}
		n = post_sends(qp, a.cap.max_send_wr, &err);
		snprintf(name, sizeof(name), "exactly max_send_wr=%u sends fit, then ENOMEM",
			 a.cap.max_send_wr);
		result(n == (int)a.cap.max_send_wr && err == ENOMEM, name,
		       "posted %d, then %d", n, err);
		ibv_destroy_qp(qp);
	}
}

static void test_srq(void)
{
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = 10, .max_sge = 1 } };
	struct ibv_qp_init_attr_ex a = qp_attr(IBV_QPT_RC);
	struct ibv_srq_attr mod = { .max_wr = 100 };
	struct ibv_recv_wr wr = {}, *bad;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	unsigned int n;
	int err;

	srq = ibv_create_srq(pd, &sattr);
	result(srq && sattr.attr.max_wr >= 10, "create_srq", "errno %d", errno);
	if (!srq)
		return;
	a.srq = srq;
	a.cap.max_recv_wr = 500;
	a.cap.max_recv_sge = 4;
	qp = create(&a);
	result(qp && a.cap.max_recv_wr == 0 && a.cap.max_recv_sge == 0,
	       "with an SRQ recv caps come back 0", "qp %p %u %u", (void *)qp,
	       a.cap.max_recv_wr, a.cap.max_recv_sge);
	if (qp)
		ibv_destroy_qp(qp);
	for (n = 0; n <= sattr.attr.max_wr && !ibv_post_srq_recv(srq, &wr, &bad); n++)
		;
	result(n == sattr.attr.max_wr, "SRQ holds exactly max_wr", "posted %u of %u", n,
	       sattr.attr.max_wr);
	err = ibv_modify_srq(srq, &mod, IBV_SRQ_MAX_WR);
	result(!err, "modify_srq resizes", "err %d", err);
	err = ibv_query_srq(srq, &mod);
	result(!err && mod.max_wr >= 100, "query_srq after resize", "err %d max_wr %u", err,
	       mod.max_wr);
	for (; n <= mod.max_wr && !ibv_post_srq_recv(srq, &wr, &bad); n++)
		;
	result(n == mod.max_wr, "resized SRQ keeps old WRs and holds max_wr",
	       "posted %u of %u", n, mod.max_wr);
	err = ibv_destroy_srq(srq);
	result(!err, "destroy_srq", "err %d", err);
}

static void test_state_machine(void)
{
	struct ibv_qp_init_attr_ex a = qp_attr(IBV_QPT_RC);
	struct ibv_qp_attr qa = {};
	struct ibv_qp_init_attr qinit;
	struct ibv_qp *qp = create(&a);
	int err;

	if (!qp) {
		result(false, "state machine: create", "errno %d", errno);
		return;
	}
	err = to_state(qp, IBV_QPS_RTR);
	result(err == EINVAL, "RESET -> RTR is EINVAL", "got %d", err);
	qa.qp_state = IBV_QPS_INIT;
	qa.port_num = 2;
	err = ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	result(err == EINVAL, "INIT with port 2 is EINVAL", "got %d", err);
	result(!to_init(qp), "RESET -> INIT", "errno %d", errno);
	result(!to_rtr(qp), "INIT -> RTR (RoCE path resolved)", "errno %d", errno);
	result(!to_rts(qp), "RTR -> RTS", "errno %d", errno);
	err = ibv_query_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			   IBV_QP_SQ_PSN | IBV_QP_RQ_PSN | IBV_QP_AV, &qinit);
	result(!err && qa.qp_state == IBV_QPS_RTS && qa.path_mtu == IBV_MTU_1024 &&
	       qa.dest_qp_num == qp->qp_num && qa.sq_psn == 0x456 && qa.rq_psn == 0x123 &&
	       qa.ah_attr.grh.sgid_index == gid_index && qa.ah_attr.is_global,
	       "query_qp returns what was set", "err %d state %d mtu %d", err, qa.qp_state,
	       qa.path_mtu);
	result(!to_state(qp, IBV_QPS_SQD), "RTS -> SQD", "errno %d", errno);
	result(!to_state(qp, IBV_QPS_RTS), "SQD -> RTS", "errno %d", errno);
	err = to_state(qp, IBV_QPS_INIT);
	result(err == EINVAL, "RTS -> INIT is EINVAL", "got %d", err);
	result(!to_state(qp, IBV_QPS_ERR), "RTS -> ERR", "errno %d", errno);
	result(!to_state(qp, IBV_QPS_RESET), "ERR -> RESET", "errno %d", errno);
	ibv_destroy_qp(qp);
}

/* ERR flushes receives and sends, in order, and raises a CQ event. */
static void test_flush(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *fcq = ch ? ibv_create_cq(ctx, 64, NULL, ch, 0) : NULL;
	struct ibv_qp_init_attr_ex a = qp_attr(IBV_QPT_RC);
	int nrecv, nsend, err, n, i, got_r = 0, got_s = 0, bad_status = 0;
	struct pollfd pfd;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	struct ibv_wc wc[16];
	struct ibv_qp *qp;

	if (!fcq) {
		result(false, "flush: create CQ with channel", "errno %d", errno);
		return;
	}
	a.send_cq = fcq;
	a.recv_cq = fcq;
	qp = create(&a);
	if (!qp || to_init(qp)) {
		result(false, "flush: create QP", "errno %d", errno);
		goto out;
	}
	nrecv = post_recvs(qp, 4, 1000);
	if (to_rtr(qp) || to_rts(qp)) {
		result(false, "flush: to RTS", "errno %d", errno);
		goto out_qp;
	}
	nsend = post_sends(qp, 2, &err);
	result(ibv_poll_cq(fcq, 16, wc) == 0, "nothing completes before ERR", NULL);
	ibv_req_notify_cq(fcq, 0);
	result(!to_state(qp, IBV_QPS_ERR), "to ERR", "errno %d", errno);
	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	n = poll(&pfd, 1, 5000);
	err = n == 1 ? ibv_get_cq_event(ch, &ev_cq, &ev_ctx) : -1;
	result(!err && ev_cq == fcq, "flush raises a completion event", "poll %d", n);
	if (!err)
		ibv_ack_cq_events(ev_cq, 1);
	while ((n = ibv_poll_cq(fcq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			bad_status += wc[i].status != IBV_WC_WR_FLUSH_ERR ||
				      wc[i].qp_num != qp->qp_num;
			if (wc[i].wr_id >= 1000)
				bad_status += wc[i].wr_id != 1000u + got_r++;
			else
				bad_status += wc[i].wr_id != (uint64_t)got_s++;
		}
	}
	result(got_r == nrecv && got_s == nsend && !bad_status,
	       "ERR flushes every WR as IBV_WC_WR_FLUSH_ERR in order",
	       "recv %d/%d send %d/%d bad %d", got_r, nrecv, got_s, nsend, bad_status);
	/* posting in ERR completes at once with a flush error */
	nsend = post_sends(qp, 0, &err);
	n = ibv_poll_cq(fcq, 16, wc);
	result(nsend == 1 && n == 1 && wc[0].status == IBV_WC_WR_FLUSH_ERR,
	       "a send posted in ERR is flushed", "posted %d polled %d", nsend, n);
out_qp:
	ibv_destroy_qp(qp);
out:
	ibv_destroy_cq(fcq);
	ibv_destroy_comp_channel(ch);
}

static void test_qpn_cyclic(void)
{
	struct ibv_qp_init_attr_ex a = qp_attr(IBV_QPT_UD);
	struct ibv_qp *qp = create(&a);
	uint32_t freed;
	bool ok = true;
	int i;

	if (!qp) {
		result(false, "qp numbers: create", "errno %d", errno);
		return;
	}
	freed = qp->qp_num;
	ibv_destroy_qp(qp);
	for (i = 0; i < 16; i++) {
		a = qp_attr(IBV_QPT_UD);
		qp = create(&a);
		if (!qp || qp->qp_num == freed)
			ok = false;
		if (qp)
			ibv_destroy_qp(qp);
	}
	result(ok, "a freed QP number is not reused soon", "freed %u", freed);
}

static void test_mcast_and_ah(void)
{
	struct ibv_qp_init_attr_ex a = qp_attr(IBV_QPT_UD);
	union ibv_gid mgid = { .raw = { 0xff, 0x0e, [15] = 0x42 } };
	struct ibv_ah_attr ah_attr = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = local_gid, .sgid_index = gid_index, .hop_limit = 1 },
	};
	struct ibv_qp *qp = create(&a);
	struct ibv_ah *ah;
	int err;

	if (!qp) {
		result(false, "mcast: create UD QP", "errno %d", errno);
		return;
	}
	ah = ibv_create_ah(pd, &ah_attr);
	result(ah, "create_ah with a RoCEv2 GID", "errno %d", errno);
	if (ah)
		result(!ibv_destroy_ah(ah), "destroy_ah", NULL);
	to_init(qp);
	err = ibv_attach_mcast(qp, &mgid, 0);
	result(!err, "attach_mcast", "err %d", err);
	err = ibv_destroy_qp(qp);
	result(err == EBUSY, "destroy of an attached QP is EBUSY", "got %d", err);
	if (!err)
		return;
	err = ibv_detach_mcast(qp, &mgid, 0);
	result(!err, "detach_mcast", "err %d", err);
	err = ibv_destroy_qp(qp);
	result(!err, "destroy after detach", "err %d", err);
}

static void test_mr_and_cq(void)
{
	static char buf[65536];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf),
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	struct ibv_cq *c;
	int err;

	result(mr && mr->lkey, "reg_mr", "errno %d", errno);
	if (mr)
		result(!ibv_dereg_mr(mr), "dereg_mr", NULL);
	/* ibv_reg_mr(3): optional access flags are ignored where unsupported */
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_RELAXED_ORDERING);
	result(mr, "reg_mr with IBV_ACCESS_RELAXED_ORDERING", "errno %d", errno);
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE);
	result(!mr, "reg_mr remote write without local write fails", NULL);
	if (mr)
		ibv_dereg_mr(mr);
	c = ibv_create_cq(ctx, 10, NULL, NULL, 0);
	result(c && c->cqe >= 10, "create_cq", "errno %d", errno);
	if (!c)
		return;
	err = ibv_resize_cq(c, 300);
	result(!err && c->cqe >= 300, "resize_cq", "err %d cqe %d", err, c->cqe);
	result(!ibv_destroy_cq(c), "destroy_cq", NULL);
	c = ibv_create_cq(ctx, dev_attr.max_cqe + 1, NULL, NULL, 0);
	result(!c, "create_cq above max_cqe fails", NULL);
	if (c)
		ibv_destroy_cq(c);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	const char *ipv4;

	if (!open_test_device(argc, argv, &list, &ipv4))
		return 1;
	ibv_query_device(ctx, &dev_attr);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4096, NULL, NULL, 0);
	gid_index = find_gid(ipv4);
	result(pd && cq && gid_index >= 0, "PD, CQ and RoCEv2 GID", "gid %d", gid_index);
	if (!pd || !cq || gid_index < 0)
		return 1;

	test_create_types();
	test_create_errors();
	test_ring_capacity();
	test_srq();
	test_state_machine();
	test_flush();
	test_qpn_cyclic();
	test_mcast_and_ah();
	test_mr_and_cq();

	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failures ? 1 : 0;
}
