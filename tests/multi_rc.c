// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * multi_rc: the aggregate message rate of PAIRS RC QP pairs streaming
 * SENDs of SIZE bytes at once for SECONDS, each pair a sending and a
 * receiving QP connected through the device's own GID. Every message
 * carries its pair and sequence number and a pattern of both; the
 * receiver checks that each pair's messages arrive in order, whole and
 * unchanged. One process, one thread polling one send and one receive
 * CQ: the device's cost per message as QPs multiply, not a scheduler's.
 *
 * usage: multi_rc -d DEVICE [-a IPV4] PAIRS SIZE SECONDS
 * prints "multi_rc pairs=N size=S msgs=M Mpps=F MBps=F errors=E"
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "guest_test.h"

#define MAX_PAIRS	4096
#define INFLIGHT	256	/* SENDs in flight over all pairs, at least 2 a pair */

struct pair {
	struct ibv_qp *sq, *rq;	/* the sending QP and the receiving one */
	uint32_t sent, received;
};

static struct pair *pairs;
/*
 * Per pair: depth slots of size bytes to send from, twice as many to
 * receive into (so a SEND seldom finds no receive posted: no RNR wait).
 */
static uint8_t *sbuf, *rbuf;
static struct ibv_mr *smr, *rmr;
static uint32_t npairs, size, depth;
static uint64_t errors;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint8_t pattern(uint32_t pair, uint32_t seq, uint32_t i)
{
	return (uint8_t)(pair * 7 + seq * 13 + i);
}

static uint8_t *slot(uint8_t *buf, uint32_t slots, uint32_t pair, uint32_t n)
{
	return buf + ((size_t)pair * slots + n % slots) * size;
}

/* The next SEND of @p: its header and pattern into its slot, then post. */
static int post_send(uint32_t p)
{
	uint8_t *b = slot(sbuf, depth, p, pairs[p].sent);
	struct ibv_sge sge = { (uintptr_t)b, size, smr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = p, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint32_t i, hdr[2] = { p, pairs[p].sent };

	memcpy(b, hdr, sizeof(hdr));
	for (i = sizeof(hdr); i < size; i++)
		b[i] = pattern(p, pairs[p].sent, i);
	if (ibv_post_send(pairs[p].sq, &wr, &bad))
		return -1;
	pairs[p].sent++;
	return 0;
}

/* A receive into slot @n of @p (its wr_id names both). */
static int post_recv(uint32_t p, uint32_t n)
{
	struct ibv_sge sge = { (uintptr_t)slot(rbuf, 2 * depth, p, n), size, rmr->lkey };
	struct ibv_recv_wr wr = {
		.wr_id = (uint64_t)p << 32 | (n % (2 * depth)), .sg_list = &sge, .num_sge = 1,
	}, *bad;

	return ibv_post_recv(pairs[p].rq, &wr, &bad);
}

/* Check a message that arrived in slot @n of @p: next in order, whole. */
static void check_message(const struct ibv_wc *wc, uint32_t p, uint32_t n)
{
	const uint8_t *b = slot(rbuf, 2 * depth, p, n);
	uint32_t i, hdr[2];

	memcpy(hdr, b, sizeof(hdr));
	if (wc->byte_len != size || hdr[0] != p || hdr[1] != pairs[p].received) {
		if (errors++ < 5)
			fprintf(stderr, "pair %u: got pair %u seq %u (%u bytes), want seq %u\n",
				p, hdr[0], hdr[1], wc->byte_len, pairs[p].received);
		return;
	}
	for (i = sizeof(hdr); i < size; i++)
		if (b[i] != pattern(p, hdr[1], i)) {
			if (errors++ < 5)
				fprintf(stderr, "pair %u seq %u: byte %u wrong\n", p, hdr[1], i);
			return;
		}
}

/*
 * Take the receive completions there are: check each message, count it
 * and, with @repost, post its receive again. -1 on a failed receive.
 */
static int poll_receives(struct ibv_cq *rcq, bool repost, uint64_t *msgs)
{
	struct ibv_wc wc[64];
	int i, n = ibv_poll_cq(rcq, 64, wc);

	for (i = 0; i < n; i++) {
		uint32_t p = wc[i].wr_id >> 32, n_slot = (uint32_t)wc[i].wr_id;

		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "receive: %s\n", ibv_wc_status_str(wc[i].status));
			return -1;
		}
		check_message(&wc[i], p, n_slot);
		pairs[p].received++;
		(*msgs)++;
		if (repost && post_recv(p, n_slot))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_cq *scq, *rcq;
	struct ibv_device **list;
	uint64_t msgs = 0, outstanding = 0;
	struct ibv_wc wc[64];
	double t0, t, end;
	const char *ipv4;
	struct ibv_pd *pd;
	uint32_t p, i;
	int n, secs;

	if (!open_test_device(argc, argv, &list, &ipv4) || argc - optind != 3)
		return 2;
	npairs = strtoul(argv[optind], NULL, 0);
	size = strtoul(argv[optind + 1], NULL, 0);
	secs = atoi(argv[optind + 2]);
	if (!npairs || npairs > MAX_PAIRS || size < 8 || size > 65536 || secs < 1) {
		fprintf(stderr, "multi_rc: PAIRS 1..%u, SIZE 8..65536, SECONDS >= 1\n", MAX_PAIRS);
		return 2;
	}
	gid_index = find_gid(ipv4);
	depth = INFLIGHT / npairs < 2 ? 2 : INFLIGHT / npairs;
	pairs = calloc(npairs, sizeof(*pairs));
	sbuf = calloc((size_t)npairs * depth, size);
	rbuf = calloc((size_t)npairs * 2 * depth, size);
	pd = ibv_alloc_pd(ctx);
	if (gid_index < 0 || !pairs || !sbuf || !rbuf || !pd) {
		fprintf(stderr, "multi_rc: set-up failed (GID of %s: %d)\n", ipv4, gid_index);
		return 1;
	}
	smr = ibv_reg_mr(pd, sbuf, (size_t)npairs * depth * size, 0);
	rmr = ibv_reg_mr(pd, rbuf, (size_t)npairs * 2 * depth * size, IBV_ACCESS_LOCAL_WRITE);
	scq = ibv_create_cq(ctx, npairs * depth, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, npairs * 2 * depth, NULL, NULL, 0);
	if (!smr || !rmr || !scq || !rcq) {
		fprintf(stderr, "multi_rc: MR or CQ: errno %d\n", errno);
		return 1;
	}
	for (p = 0; p < npairs; p++) {
		struct ibv_qp_init_attr a = {
			.send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = depth, .max_recv_wr = 2 * depth,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		pairs[p].sq = ibv_create_qp(pd, &a);
		pairs[p].rq = ibv_create_qp(pd, &a);
		if (!pairs[p].sq || !pairs[p].rq ||
		    connect_rc(pairs[p].sq, pairs[p].rq->qp_num, 0) ||
		    connect_rc(pairs[p].rq, pairs[p].sq->qp_num, 0)) {
			fprintf(stderr, "multi_rc: pair %u: errno %d\n", p, errno);
			return 1;
		}
		for (i = 0; i < 2 * depth; i++)
			if (post_recv(p, i))
				return 1;
	}
	t0 = now();
	end = t0 + secs;
	for (p = 0; p < npairs; p++)
		for (i = 0; i < depth; i++, outstanding++)
			if (post_send(p))
				return 1;
	/* stream until the time is up, then let what is in flight land */
	for (t = t0; outstanding; ) {
		if (poll_receives(rcq, true, &msgs))
			return 1;
		n = ibv_poll_cq(scq, 64, wc);
		if (n)
			t = now();
		for (i = 0; i < (uint32_t)n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "send: %s\n", ibv_wc_status_str(wc[i].status));
				return 1;
			}
			outstanding--;
			if (t < end) {
				if (post_send(wc[i].wr_id))
					return 1;
				outstanding++;
			}
		}
	}
	/* a receive's completion may trail its SEND's: wait for the last ones */
	for (p = 0; p < npairs; p++)
		while (pairs[p].received < pairs[p].sent && now() < t + 5)
			if (poll_receives(rcq, false, &msgs))
				return 1;
	t = now() - t0;
	for (p = 0; p < npairs; p++)
		errors += pairs[p].received != pairs[p].sent;
	printf("multi_rc pairs=%u size=%u msgs=%" PRIu64 " Mpps=%.4f MBps=%.1f errors=%" PRIu64
	       "\n", npairs, size, msgs, msgs / t / 1e6, msgs * (double)size / t / 1e6, errors);
	for (p = 0; p < npairs; p++)
		if (ibv_destroy_qp(pairs[p].sq) || ibv_destroy_qp(pairs[p].rq))
			return 1;
	if (ibv_destroy_cq(scq) || ibv_destroy_cq(rcq) || ibv_dereg_mr(smr) ||
	    ibv_dereg_mr(rmr) || ibv_dealloc_pd(pd) || ibv_close_device(ctx))
		return 1;
	ibv_free_device_list(list);
	free(pairs);
	free(sbuf);
	free(rbuf);
	return errors ? 1 : 0;
}
