// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_send_race: what a hostile unprivileged process does to the
 * requester. Threads post sends (SGEs and inline, UD and RC, to the
 * device's own GID) while another thread moves the sending QP to ERR,
 * resets it and brings it back to RTS, over and over, so flushes, resets
 * and reposts land while the kernel builds packets of WQEs it is giving
 * back. Every message that arrives is checked byte for byte: its
 * immediate data names the buffer and the length it was sent from, and
 * nothing else may arrive (not a byte of a recycled WQE slot, not a byte
 * past a WQE's inline data).
 *
 * usage: test_send_race -d DEVICE [-a IPV4] [-t SECONDS]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "guest_test.h"

#define NBUF		64	/* send buffers, never written after setup */
#define BUF_LEN		2048
#define GRH_LEN		40
#define NRECV		32
#define MAX_INLINE	256
#define UD_MAX		1024	/* UD messages fit the 1024-byte IB MTU */
/*
 * One packet at path MTU 1024: a sender reset in the middle of a message
 * would leave its receiver expecting the rest, which IBTA makes an
 * invalid request (the KUnit race suite covers messages of many packets).
 */
#define RC_MAX		1024

static atomic_bool stop;

/* One sending QP and its receiver, with the threads' shared state. */
struct lane {
	const char *name;
	enum ibv_qp_type type;
	struct ibv_pd *pd;
	struct ibv_mr *send_mr, *recv_mr;
	uint8_t *send_buf, *recv_buf;
	struct ibv_cq *send_cq, *recv_cq;
	struct ibv_qp *sender, *receiver;
	struct ibv_ah *ah;		/* UD */
	atomic_ulong posted, received, bad, cycles;
	char first_bad[160];
	pthread_mutex_t bad_lock;
};

static uint8_t pattern(unsigned int buf, unsigned int i)
{
	return (uint8_t)(buf * 37 + i * 11 + (i >> 7));
}

static void __attribute__((format(printf, 2, 3)))
note_bad(struct lane *l, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&l->bad_lock);
	if (!l->bad) {
		va_start(ap, fmt);
		vsnprintf(l->first_bad, sizeof(l->first_bad), fmt, ap);
		va_end(ap);
	}
	l->bad++;
	pthread_mutex_unlock(&l->bad_lock);
}

static uint32_t rnd(uint32_t *seed)
{
	*seed = *seed * 1103515245 + 12345;
	return *seed >> 8;
}

/* RC: INIT -> RTR towards @dqpn through the device's own GID. */
static int rc_to_rtr(struct ibv_qp *qp, uint32_t dqpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn, .rq_psn = 0x123,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = local_gid, .sgid_index = gid_index,
				      .hop_limit = 64 } },
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

/* RC: the sender goes back to RTS at the PSN the receiver expects next. */
static int sender_to_rts(struct lane *l)
{
	struct ibv_qp_attr a = { 0 };
	struct ibv_qp_init_attr ia;

	if (to_init(l->sender))
		return -1;
	if (l->type == IBV_QPT_UD)
		return to_rtr(l->sender) || to_rts(l->sender);
	if (ibv_query_qp(l->receiver, &a, IBV_QP_RQ_PSN, &ia) ||
	    rc_to_rtr(l->sender, l->receiver->qp_num))
		return -1;
	a.sq_psn = a.rq_psn;
	/* a short ACK timeout: retransmissions overlap the ACKs */
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 1;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(l->sender, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Post sends from the immutable buffers: SGE lists, or inline. */
static void *poster(void *arg, bool inline_data)
{
	struct lane *l = arg;
	uint32_t seed = inline_data ? 7 : 3;
	unsigned int max = l->type == IBV_QPT_UD ? UD_MAX : RC_MAX;

	while (!stop) {
		unsigned int buf = rnd(&seed) % NBUF;
		unsigned int len = 1 + rnd(&seed) % (inline_data ? MAX_INLINE : max);
		uint8_t *src = l->send_buf + (size_t)buf * BUF_LEN;
		struct ibv_sge sge[3];
		struct ibv_send_wr wr = {
			.wr_id = buf, .sg_list = sge, .opcode = IBV_WR_SEND_WITH_IMM,
			.send_flags = IBV_SEND_SIGNALED |
				      (inline_data ? IBV_SEND_INLINE : 0),
			.imm_data = htonl(buf << 16 | len),
		}, *bad;
		unsigned int i, n = inline_data ? 1 : 1 + rnd(&seed) % 3, off = 0;

		for (i = 0; i < n; i++) {
			unsigned int part = i == n - 1 ? len - off : len / n;

			sge[i] = (struct ibv_sge){ .addr = (uintptr_t)(src + off),
						   .length = part,
						   .lkey = l->send_mr->lkey };
			off += part;
		}
		wr.num_sge = n;
		if (l->type == IBV_QPT_UD) {
			wr.wr.ud.ah = l->ah;
			wr.wr.ud.remote_qpn = l->receiver->qp_num;
			wr.wr.ud.remote_qkey = QKEY;
		}
		if (!ibv_post_send(l->sender, &wr, &bad))
			l->posted++;
		else
			sched_yield();	/* full, or the QP is being reset */
	}
	return NULL;
}

static void *sge_poster(void *arg)
{
	return poster(arg, false);
}

static void *inline_poster(void *arg)
{
	return poster(arg, true);
}

/* Flush, reset and bring back the sender; drain its CQ meanwhile. */
static void *chaos(void *arg)
{
	struct lane *l = arg;
	struct ibv_wc wc[64];
	uint32_t seed = 11;

	while (!stop) {
		struct timespec ts = { 0, (rnd(&seed) % 2000) * 1000 };

		while (ibv_poll_cq(l->send_cq, 64, wc) > 0)
			;
		nanosleep(&ts, NULL);
		to_state(l->sender, IBV_QPS_ERR);
		ts.tv_nsec = (rnd(&seed) % 500) * 1000;
		nanosleep(&ts, NULL);
		to_state(l->sender, IBV_QPS_RESET);
		while (ibv_poll_cq(l->send_cq, 64, wc) > 0)
			;
		if (sender_to_rts(l)) {
			note_bad(l, "sender back to RTS failed (errno %d)", errno);
			break;
		}
		l->cycles++;
	}
	return NULL;
}

static int post_recv(struct lane *l, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(l->recv_buf + (size_t)slot * (GRH_LEN + BUF_LEN)),
		.length = GRH_LEN + BUF_LEN, .lkey = l->recv_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(l->receiver, &wr, &bad);
}

/* Check one arrived message against the buffer its immediate names. */
static void check_message(struct lane *l, const struct ibv_wc *wc)
{
	const uint8_t *p = l->recv_buf + wc->wr_id * (GRH_LEN + BUF_LEN);
	unsigned int hdr = l->type == IBV_QPT_UD ? GRH_LEN : 0;
	uint32_t imm = ntohl(wc->imm_data);
	unsigned int buf = imm >> 16, len = imm & 0xffff, i;

	if (wc->status != IBV_WC_SUCCESS) {
		note_bad(l, "receive completion status %d (wr_id %llu)",
			 wc->status, (unsigned long long)wc->wr_id);
		return;
	}
	if (!(wc->wc_flags & IBV_WC_WITH_IMM) || buf >= NBUF || !len ||
	    len > BUF_LEN) {
		note_bad(l, "message with immediate %#x, flags %#x, %u bytes",
			 imm, wc->wc_flags, wc->byte_len);
		return;
	}
	if (wc->byte_len != hdr + len) {
		note_bad(l, "buffer %u sent %u bytes, %u arrived", buf, len,
			 wc->byte_len - hdr);
		return;
	}
	for (i = 0; i < len; i++) {
		if (p[hdr + i] != pattern(buf, i)) {
			note_bad(l, "buffer %u: byte %u of %u is not what was sent",
				 buf, i, len);
			return;
		}
	}
	l->received++;
}

static void *receiver(void *arg)
{
	struct lane *l = arg;
	struct ibv_wc wc[16];

	while (!stop) {
		int i, n = ibv_poll_cq(l->recv_cq, 16, wc);

		if (n <= 0) {
			sched_yield();
			continue;
		}
		for (i = 0; i < n; i++) {
			check_message(l, &wc[i]);
			if (post_recv(l, wc[i].wr_id))
				note_bad(l, "reposting receive %llu failed",
					 (unsigned long long)wc[i].wr_id);
		}
	}
	return NULL;
}

static bool lane_setup(struct lane *l)
{
	struct ibv_qp_init_attr_ex qa;
	size_t i, j;

	pthread_mutex_init(&l->bad_lock, NULL);
	l->pd = ibv_alloc_pd(ctx);
	l->send_buf = malloc((size_t)NBUF * BUF_LEN);
	l->recv_buf = calloc(NRECV, GRH_LEN + BUF_LEN);
	if (!l->pd || !l->send_buf || !l->recv_buf)
		return false;
	for (i = 0; i < NBUF; i++)
		for (j = 0; j < BUF_LEN; j++)
			l->send_buf[i * BUF_LEN + j] = pattern(i, j);
	l->send_mr = ibv_reg_mr(l->pd, l->send_buf, (size_t)NBUF * BUF_LEN, 0);
	l->recv_mr = ibv_reg_mr(l->pd, l->recv_buf, NRECV * (GRH_LEN + BUF_LEN),
				IBV_ACCESS_LOCAL_WRITE);
	l->send_cq = ibv_create_cq(ctx, 4096, NULL, NULL, 0);
	l->recv_cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (!l->send_mr || !l->recv_mr || !l->send_cq || !l->recv_cq)
		return false;
	qa = qp_init_attr(l->pd, l->send_cq, l->type);
	qa.cap.max_send_wr = 64;
	qa.cap.max_send_sge = 3;
	qa.cap.max_inline_data = MAX_INLINE;
	l->sender = ibv_create_qp_ex(ctx, &qa);
	qa = qp_init_attr(l->pd, l->recv_cq, l->type);
	qa.cap.max_recv_wr = NRECV;
	l->receiver = ibv_create_qp_ex(ctx, &qa);
	if (!l->sender || !l->receiver)
		return false;
	if (l->type == IBV_QPT_UD) {
		struct ibv_ah_attr ah = {
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = local_gid, .sgid_index = gid_index,
				 .hop_limit = 64 },
		};

		l->ah = ibv_create_ah(l->pd, &ah);
		if (!l->ah || to_init(l->receiver) || to_rtr(l->receiver) ||
		    to_rts(l->receiver))
			return false;
	} else if (to_init(l->receiver) ||
		   rc_to_rtr(l->receiver, l->sender->qp_num)) {
		return false;
	}
	for (i = 0; i < NRECV; i++)
		if (post_recv(l, i))
			return false;
	return !sender_to_rts(l);
}

static void lane_teardown(struct lane *l)
{
	if (l->ah)
		ibv_destroy_ah(l->ah);
	if (l->sender)
		ibv_destroy_qp(l->sender);
	if (l->receiver)
		ibv_destroy_qp(l->receiver);
	if (l->send_cq)
		ibv_destroy_cq(l->send_cq);
	if (l->recv_cq)
		ibv_destroy_cq(l->recv_cq);
	if (l->send_mr)
		ibv_dereg_mr(l->send_mr);
	if (l->recv_mr)
		ibv_dereg_mr(l->recv_mr);
	if (l->pd)
		ibv_dealloc_pd(l->pd);
	free(l->send_buf);
	free(l->recv_buf);
}

int main(int argc, char **argv)
{
	static struct lane lanes[] = {
		{ .name = "UD", .type = IBV_QPT_UD },
		{ .name = "RC", .type = IBV_QPT_RC },
	};
	void *(*const roles[])(void *) = { sge_poster, inline_poster, chaos, receiver };
	pthread_t threads[2][4];
	struct ibv_device **list;
	const char *ipv4;
	unsigned int seconds = 10, i, r;
	int n = 0, a;

	/* -t is this test's own; the rest is open_test_device()'s */
	for (a = 0; a < argc; a++) {
		if (a + 1 < argc && !strcmp(argv[a], "-t"))
			seconds = atoi(argv[++a]);
		else
			argv[n++] = argv[a];
	}
	argv[n] = NULL;
	if (!open_test_device(n, argv, &list, &ipv4))
		return 1;
	gid_index = find_gid(ipv4);
	if (gid_index < 0) {
		result(false, "send race: RoCEv2 GID", "none for %s", ipv4);
		return 1;
	}
	for (i = 0; i < 2; i++) {
		bool ok = lane_setup(&lanes[i]);

		result(ok, lanes[i].type == IBV_QPT_UD ?
		       "send race: UD sender and receiver on the device's own GID" :
		       "send race: RC sender and receiver connected through the device's own GID",
		       "errno %d", errno);
		if (!ok)
			return 1;
	}
	for (i = 0; i < 2; i++)
		for (r = 0; r < 4; r++)
			pthread_create(&threads[i][r], NULL, roles[r], &lanes[i]);
	sleep(seconds);
	stop = true;
	for (i = 0; i < 2; i++)
		for (r = 0; r < 4; r++)
			pthread_join(threads[i][r], NULL);
	for (i = 0; i < 2; i++) {
		struct lane *l = &lanes[i];
		char name[160];

		snprintf(name, sizeof(name),
			 "send race (%s, %u s): every message that arrives is what was sent",
			 l->name, seconds);
		result_note(!l->bad, name, "%lu posted, %lu checked, %lu flush/reset cycles%s%s",
			    (unsigned long)l->posted, (unsigned long)l->received,
			    (unsigned long)l->cycles, l->bad ? "; first bad: " : "",
			    l->bad ? l->first_bad : "");
		/* the race only proves something if data and resets both happened */
		snprintf(name, sizeof(name),
			 "send race (%s): messages arrived and the sender was reset under them",
			 l->name);
		result_note(l->received >= 100 && l->cycles >= 20, name,
			    "%lu messages, %lu cycles", (unsigned long)l->received,
			    (unsigned long)l->cycles);
		lane_teardown(l);
	}
	ibv_free_device_list(list);
	ibv_close_device(ctx);
	return failures ? 1 : 0;
}
