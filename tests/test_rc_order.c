// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_rc_order: a responder answers in PSN order (IBTA 9.7.5.1). Two RC
 * QPs connected through the device's own GID; the requester posts 64 KiB
 * READs, each with an ATOMIC WRITE behind it (IBV_WR_ATOMIC_WRITE: kernel
 * ULPs cannot post it in 6.1, so KUnit cannot either). An ATOMIC WRITE's
 * answer, an empty READ RESPONSE, that overtook a READ's responses would
 * tell the requester they were lost: it would ask for the READ again.
 * On a clean loopback nothing may be resent, every completion comes in
 * order, and the data and the 8 bytes stored are right.
 *
 * usage: test_rc_order -d DEVICE [-a IPV4]
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "guest_test.h"

#define READ_LEN	65536
#define ROUNDS		4

/* A hardware counter of port 1, or -1. */
static long long hw_counter(const char *name)
{
	char path[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 ibv_get_device_name(ctx->device), name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* The next completion within 5 s: true if it came. */
static bool poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	time_t end = time(NULL) + 5;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0 && time(NULL) < end)
		;
	return n == 1;
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2 * ROUNDS, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 8 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_WRITE,
	};
	int access = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_device **list;
	struct ibv_qp *qp[2] = {};
	struct ibv_qp_ex *qpx;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	uint8_t *buf, *src, *dst;
	uint64_t *word, value;
	long long resent;
	const char *ipv4;
	bool in_order = true;
	struct ibv_wc wc;
	int i;

	if (!open_test_device(argc, argv, &list, &ipv4))
		return 1;
	gid_index = find_gid(ipv4);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4 * ROUNDS, NULL, NULL, 0);
	buf = aligned_alloc(4096, 2 * READ_LEN + 4096);
	if (gid_index < 0 || !pd || !cq || !buf) {
		result(false, "rc_order: setup", "gid %d, errno %d", gid_index, errno);
		return 1;
	}
	src = buf;
	dst = buf + READ_LEN;
	word = (uint64_t *)(buf + 2 * READ_LEN);
	for (i = 0; i < READ_LEN; i++)
		src[i] = (uint8_t)(i * 7 + 3);
	memset(dst, 0, READ_LEN);
	*word = 0;
	mr = ibv_reg_mr(pd, buf, 2 * READ_LEN + 4096, IBV_ACCESS_LOCAL_WRITE | access);
	init.send_cq = cq;
	init.recv_cq = cq;
	init.pd = pd;
	qp[0] = ibv_create_qp_ex(ctx, &init);
	qp[1] = ibv_create_qp_ex(ctx, &init);
	if (!mr || !qp[0] || !qp[1] || connect_rc(qp[0], qp[1]->qp_num, access) ||
	    connect_rc(qp[1], qp[0]->qp_num, access)) {
		result(false, "rc_order: RC QPs with ATOMIC WRITE connected", "errno %d", errno);
		return 1;
	}
	result(true, "rc_order: RC QPs with ATOMIC WRITE connected", NULL);
	resent = hw_counter("tx_retransmits");
	qpx = ibv_qp_to_qp_ex(qp[0]);
	ibv_wr_start(qpx);
	for (i = 0; i < ROUNDS; i++) {
		qpx->wr_id = 10 + i;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_read(qpx, mr->rkey, (uintptr_t)src);
		ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)dst, READ_LEN);
		value = 0x1111111111111111ULL * (i + 1);
		qpx->wr_id = 20 + i;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_atomic_write(qpx, mr->rkey, (uintptr_t)word, &value);
	}
	if (ibv_wr_complete(qpx)) {
		result(false, "rc_order: READs with ATOMIC WRITEs posted", "errno %d", errno);
		return 1;
	}
	for (i = 0; i < 2 * ROUNDS; i++) {
		uint64_t want = i % 2 ? 20 + i / 2 : 10 + i / 2;

		if (!poll_one(cq, &wc) || wc.status != IBV_WC_SUCCESS || wc.wr_id != want ||
		    wc.opcode != (i % 2 ? IBV_WC_ATOMIC_WRITE : IBV_WC_RDMA_READ)) {
			result(false, "rc_order: every READ and ATOMIC WRITE completes, in order",
			       "completion %d: wr_id %" PRIu64 " (want %" PRIu64 "), status %d, opcode %d",
			       i, (uint64_t)wc.wr_id, want, wc.status, wc.opcode);
			in_order = false;
			break;
		}
	}
	if (in_order)
		result(true, "rc_order: every READ and ATOMIC WRITE completes, in order", NULL);
	result(!memcmp(src, dst, READ_LEN), "rc_order: the READs brought the data", NULL);
	result(*word == 0x4444444444444444ULL, "rc_order: the last ATOMIC WRITE's 8 bytes stored",
	       "%#" PRIx64, *word);
	result_note(hw_counter("tx_retransmits") == resent,
		    "rc_order: no answer overtook a READ's responses (nothing resent)",
		    "tx_retransmits %lld -> %lld", resent, hw_counter("tx_retransmits"));
	ibv_destroy_qp(qp[0]);
	ibv_destroy_qp(qp[1]);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	free(buf);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failures ? 1 : 0;
}
