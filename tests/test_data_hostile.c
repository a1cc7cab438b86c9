// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_data_hostile: requests that name memory they may not touch, from
 * userspace through librxe. RC QPs come in pairs connected through the
 * device's own GID; every refused request must complete with the error
 * the IB spec gives it, and no byte outside what was allowed may change:
 *
 *  - an RDMA WRITE that runs past the end of its R_Key's MR, or starts
 *    before it, one packet or several: IBV_WC_REM_ACCESS_ERR, and not even
 *    the part inside the MR is written;
 *  - an RDMA READ past the end: IBV_WC_REM_ACCESS_ERR, the local buffer
 *    untouched;
 *  - an atomic on an MR registered without remote atomic access:
 *    IBV_WC_REM_ACCESS_ERR, the target unchanged;
 *  - a UD send through an AH of another protection domain:
 *    IBV_WC_LOC_QP_OP_ERR, nothing reaches the receiver.
 *
 * usage: test_data_hostile -d DEVICE [-a IPV4]
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "guest_test.h"

#define BUF_LEN		8192
#define MR_LEN		4096	/* the target MR covers the first half */
#define FILL_TARGET	0xaa
#define FILL_SOURCE	0x55

static struct ibv_pd *pd;
static struct ibv_cq *cq;

/* One completion within @ms milliseconds; false if none came. */
static bool poll_one(struct ibv_wc *wc, int ms)
{
	struct timespec ts = { 0, 1000000 };
	int i;

	for (i = 0; i < ms; i++) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n)
			return n == 1;
		nanosleep(&ts, NULL);
	}
	return false;
}

/*
 * Two RC QPs connected to each other: the requester qp[0] and the
 * responder qp[1] (a responder that refuses a request goes to ERR, so it
 * cannot be the requester too). False if they could not be made.
 */
static bool rc_pair(struct ibv_qp *qp[2], int access)
{
	struct ibv_qp_init_attr_ex init = qp_init_attr(pd, cq, IBV_QPT_RC);

	qp[0] = ibv_create_qp_ex(ctx, &init);
	qp[1] = ibv_create_qp_ex(ctx, &init);
	if (qp[0] && qp[1] && !connect_rc(qp[0], qp[1]->qp_num, access) &&
	    !connect_rc(qp[1], qp[0]->qp_num, access))
		return true;
	if (qp[0])
		ibv_destroy_qp(qp[0]);
	if (qp[1])
		ibv_destroy_qp(qp[1]);
	return false;
}

/* The requester's completion of wr_id @wr_id: its status, or -1 if none came. */
static int wait_status(uint64_t wr_id)
{
	struct ibv_wc wc;

	while (poll_one(&wc, 5000))
		if (wc.wr_id == wr_id)
			return wc.status;
	return -1;
}

/* The first offset in [@from, @to) of @p that is not @fill, or -1. */
static long changed(const uint8_t *p, size_t from, size_t to, uint8_t fill)
{
	size_t i;

	for (i = from; i < to; i++)
		if (p[i] != fill)
			return i;
	return -1;
}

/*
 * Post one RDMA WR (@op, @len bytes) from @local at @remote_off bytes
 * into the target buffer, and wait for its completion status.
 */
static int rdma_status(enum ibv_wr_opcode op, struct ibv_mr *local,
		       struct ibv_mr *target, long remote_off, uint32_t len,
		       int access)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)local->addr, .length = len, .lkey = local->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_qp *qp[2];
	int status = -1;

	if (!rc_pair(qp, access))
		return -2;
	wr.wr.rdma.remote_addr = (uintptr_t)target->addr + remote_off;
	wr.wr.rdma.rkey = target->rkey;
	if (!ibv_post_send(qp[0], &wr, &bad))
		status = wait_status(1);
	ibv_destroy_qp(qp[0]);
	ibv_destroy_qp(qp[1]);
	return status;
}

/*
 * Local operations a user ring may not do: REG_MR names a kernel MR
 * object (librxe's WQE would carry a user pointer there), and LOCAL_INV
 * of a user MR's key (only fast-reg MRs, which are kernel objects, and
 * type 2 windows can be invalidated; test_mw covers windows). librxe
 * passes the opcodes through to the ring; the kernel completes each one
 * LOC_QP_OP_ERR and sends nothing: the target is untouched.
 */
static void test_kernel_only_opcodes(void)
{
	static const struct { const char *name; unsigned int op; } cases[] = {
		{ "REG_MR (kernel opcode 0x20) from a user ring completes LOC_QP_OP_ERR", 0x20 },
		{ "LOCAL_INV of a user MR's key completes LOC_QP_OP_ERR",
		  IBV_WR_LOCAL_INV },
	};
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	uint8_t *target = aligned_alloc(4096, BUF_LEN);
	struct ibv_mr *tmr = target ? ibv_reg_mr(pd, target, BUF_LEN, access) : NULL;
	unsigned int i;

	if (!tmr) {
		result(false, "register a target MR", "errno %d", errno);
		free(target);
		return;
	}
	memset(target, FILL_TARGET, BUF_LEN);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ibv_send_wr wr = {
			.wr_id = 7, .opcode = (enum ibv_wr_opcode)cases[i].op,
			.send_flags = IBV_SEND_SIGNALED,
		}, *bad;
		struct ibv_qp *qp[2];
		int err, status = -1;

		if (!rc_pair(qp, access)) {
			result(false, cases[i].name, "RC pair: errno %d", errno);
			continue;
		}
		/* what a REG_MR would register: the target, by its key */
		wr.invalidate_rkey = tmr->rkey;
		err = ibv_post_send(qp[0], &wr, &bad);
		if (!err)
			status = wait_status(7);
		result(!err && status == IBV_WC_LOC_QP_OP_ERR &&
		       changed(target, 0, BUF_LEN, FILL_TARGET) < 0, cases[i].name,
		       "post %d, status %d (want %d)", err, status, IBV_WC_LOC_QP_OP_ERR);
		ibv_destroy_qp(qp[0]);
		ibv_destroy_qp(qp[1]);
	}
	ibv_dereg_mr(tmr);
	free(target);
}

static void test_rdma_bounds(void)
{
	static const struct {
		const char *name;
		enum ibv_wr_opcode op;
		long off;
		uint32_t len;
	} cases[] = {
		{ "RDMA WRITE running 128 bytes past the MR's end",
		  IBV_WR_RDMA_WRITE, MR_LEN - 128, 256 },
		{ "RDMA WRITE of 3 packets whose last passes the MR's end",
		  IBV_WR_RDMA_WRITE, MR_LEN - 2500, 3000 },
		{ "RDMA WRITE starting 64 bytes before the MR",
		  IBV_WR_RDMA_WRITE, -64, 128 },
		{ "RDMA READ running past the MR's end",
		  IBV_WR_RDMA_READ, MR_LEN - 100, 200 },
	};
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ;
	uint8_t *target = aligned_alloc(4096, BUF_LEN + 4096);
	uint8_t *local = aligned_alloc(4096, BUF_LEN);
	struct ibv_mr *tmr = NULL, *lmr = NULL;
	unsigned int i;
	int status;

	if (target && local) {
		/* the MR starts a page into the buffer: bytes before it exist */
		tmr = ibv_reg_mr(pd, target + 4096, MR_LEN, access);
		lmr = ibv_reg_mr(pd, local, BUF_LEN, access);
	}
	if (!tmr || !lmr) {
		result(false, "register the target and local MRs", "errno %d", errno);
		goto out;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool read = cases[i].op == IBV_WR_RDMA_READ;
		long bad_target, bad_local;

		memset(target, FILL_TARGET, BUF_LEN + 4096);
		memset(local, FILL_SOURCE, BUF_LEN);
		status = rdma_status(cases[i].op, lmr, tmr, cases[i].off,
				     cases[i].len, access);
		bad_target = changed(target, 0, BUF_LEN + 4096, FILL_TARGET);
		bad_local = changed(local, 0, BUF_LEN, FILL_SOURCE);
		result(status == IBV_WC_REM_ACCESS_ERR && bad_target < 0 &&
		       (!read || bad_local < 0), cases[i].name,
		       "status %d (want %d), target byte %ld and local byte %ld changed",
		       status, IBV_WC_REM_ACCESS_ERR, bad_target, bad_local);
	}
	/* the same MR and QPs take a WRITE that fits: the refusals were the bounds */
	memset(target, FILL_TARGET, BUF_LEN + 4096);
	status = rdma_status(IBV_WR_RDMA_WRITE, lmr, tmr, MR_LEN - 256, 256, access);
	result(status == IBV_WC_SUCCESS &&
	       changed(target + 4096, MR_LEN - 256, MR_LEN, FILL_SOURCE) < 0 &&
	       changed(target, 0, 4096 + MR_LEN - 256, FILL_TARGET) < 0 &&
	       changed(target, 4096 + MR_LEN, BUF_LEN + 4096, FILL_TARGET) < 0,
	       "RDMA WRITE ending at the MR's last byte lands exactly there",
	       "status %d", status);
out:
	if (tmr)
		ibv_dereg_mr(tmr);
	if (lmr)
		ibv_dereg_mr(lmr);
	free(target);
	free(local);
}

static void test_atomic_no_access(void)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	uint64_t *target = aligned_alloc(64, 64), *result_buf = aligned_alloc(64, 64);
	struct ibv_mr *tmr = NULL, *lmr = NULL;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_qp *qp[2] = {};
	struct ibv_sge sge;
	int status = -1;

	if (target && result_buf) {
		/* the target's MR allows remote writes, not atomics */
		tmr = ibv_reg_mr(pd, target, 64, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE);
		lmr = ibv_reg_mr(pd, result_buf, 64, IBV_ACCESS_LOCAL_WRITE);
	}
	if (!tmr || !lmr || !rc_pair(qp, access)) {
		result(false, "atomic set-up", "errno %d", errno);
		goto out;
	}
	target[0] = 41;
	result_buf[0] = 7;
	sge = (struct ibv_sge){ .addr = (uintptr_t)result_buf, .length = 8,
				.lkey = lmr->lkey };
	wr = (struct ibv_send_wr){
		.wr_id = 2, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
	};
	wr.wr.atomic.remote_addr = (uintptr_t)target;
	wr.wr.atomic.rkey = tmr->rkey;
	wr.wr.atomic.compare_add = 1;
	if (!ibv_post_send(qp[0], &wr, &bad))
		status = wait_status(2);
	result(status == IBV_WC_REM_ACCESS_ERR && target[0] == 41 && result_buf[0] == 7,
	       "FETCH_ADD on an MR without remote atomic access is refused",
	       "status %d (want %d), target %llu, result %llu", status,
	       IBV_WC_REM_ACCESS_ERR, (unsigned long long)target[0],
	       (unsigned long long)result_buf[0]);
out:
	if (qp[0]) {
		ibv_destroy_qp(qp[0]);
		ibv_destroy_qp(qp[1]);
	}
	if (tmr)
		ibv_dereg_mr(tmr);
	if (lmr)
		ibv_dereg_mr(lmr);
	free(target);
	free(result_buf);
}

/* A UD QP of @pd in RTS; its receive side has one WQE in @rbuf. */
static struct ibv_qp *ud_qp(struct ibv_mr *rmr)
{
	struct ibv_qp_init_attr_ex init = qp_init_attr(pd, cq, IBV_QPT_UD);
	struct ibv_sge sge = {
		.addr = (uintptr_t)rmr->addr, .length = rmr->length,
		.lkey = rmr->lkey,
	};
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &init);

	if (!qp)
		return NULL;
	if (to_init(qp) || to_rtr(qp) || to_rts(qp) || ibv_post_recv(qp, &rwr, &bad)) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

static void test_ud_foreign_ah(void)
{
	struct ibv_ah_attr ah_attr = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = local_gid, .sgid_index = gid_index, .hop_limit = 64 },
	};
	uint8_t *sbuf = calloc(1, 256), *rbuf = calloc(1, 256);
	struct ibv_pd *other = ibv_alloc_pd(ctx);
	struct ibv_mr *smr = NULL, *rmr = NULL;
	struct ibv_ah *own_ah = NULL, *foreign_ah = NULL;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_qp *qp = NULL;
	struct ibv_sge sge;
	struct ibv_wc wc[2];
	int status = -1, extra = 0;

	if (sbuf && rbuf && other) {
		smr = ibv_reg_mr(pd, sbuf, 256, IBV_ACCESS_LOCAL_WRITE);
		rmr = ibv_reg_mr(pd, rbuf, 256, IBV_ACCESS_LOCAL_WRITE);
		own_ah = ibv_create_ah(pd, &ah_attr);
		foreign_ah = ibv_create_ah(other, &ah_attr);
	}
	if (smr && rmr)
		qp = ud_qp(rmr);
	if (!qp || !own_ah || !foreign_ah) {
		result(false, "UD set-up", "errno %d", errno);
		goto out;
	}
	memset(sbuf, FILL_SOURCE, 256);
	sge = (struct ibv_sge){ .addr = (uintptr_t)sbuf, .length = 64,
				.lkey = smr->lkey };
	wr = (struct ibv_send_wr){
		.wr_id = 3, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	wr.wr.ud.ah = foreign_ah;
	wr.wr.ud.remote_qpn = qp->qp_num;
	wr.wr.ud.remote_qkey = QKEY;
	if (!ibv_post_send(qp, &wr, &bad) && poll_one(&wc[0], 5000))
		status = wc[0].wr_id == 3 ? (int)wc[0].status : -3;
	/* the receive WQE may only flush (the QP went to ERR), never fill */
	while (poll_one(&wc[1], 200))
		if (wc[1].wr_id == 9 && wc[1].status == IBV_WC_SUCCESS)
			extra++;
	result(status == IBV_WC_LOC_QP_OP_ERR && !extra &&
	       changed(rbuf, 0, 256, 0) < 0,
	       "UD send through another PD's AH completes LOC_QP_OP_ERR, sends nothing",
	       "status %d (want %d), %d receives", status, IBV_WC_LOC_QP_OP_ERR, extra);
	ibv_destroy_qp(qp);

	/* the same send through the QP's own PD's AH arrives */
	qp = ud_qp(rmr);
	wr.wr.ud.ah = own_ah;
	wr.wr.ud.remote_qpn = qp ? qp->qp_num : 0;
	status = -1;
	extra = 0;
	if (qp && !ibv_post_send(qp, &wr, &bad)) {
		int i;

		for (i = 0; i < 2 && poll_one(&wc[0], 5000); i++) {
			if (wc[0].wr_id == 3)
				status = wc[0].status;
			else if (wc[0].status == IBV_WC_SUCCESS)
				extra++;
		}
	}
	result(status == IBV_WC_SUCCESS && extra == 1 &&
	       changed(rbuf, 40, 40 + 64, FILL_SOURCE) < 0,
	       "the same UD send through its own PD's AH arrives",
	       "status %d, %d receives", status, extra);
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (own_ah)
		ibv_destroy_ah(own_ah);
	if (foreign_ah)
		ibv_destroy_ah(foreign_ah);
	if (smr)
		ibv_dereg_mr(smr);
	if (rmr)
		ibv_dereg_mr(rmr);
	if (other)
		ibv_dealloc_pd(other);
	free(sbuf);
	free(rbuf);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	const char *ipv4;

	if (!open_test_device(argc, argv, &list, &ipv4))
		return 1;
	gid_index = find_gid(ipv4);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (gid_index < 0 || !pd || !cq) {
		result(false, "set-up", "GID %d, PD %p, CQ %p", gid_index,
		       (void *)pd, (void *)cq);
		return 1;
	}
	test_rdma_bounds();
	test_kernel_only_opcodes();
	test_atomic_no_access();
	test_ud_foreign_ah();
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failures ? 1 : 0;
}
