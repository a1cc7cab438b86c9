// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * QP lifecycle benchmark through ibv_create_qp_ex/ibv_destroy_qp (any
 * librxe device: qpnic or rdma_rxe).
 *
 *   bench_qp DEVICE rates TYPE WR SGE ITERS
 *     prints "bench_qp: ... pairs_per_s=N creates_per_s=N destroys_per_s=N"
 *   bench_qp DEVICE live TYPE WR SGE COUNT
 *     creates COUNT QPs, prints "bench_qp: live=N", then waits for a line
 *     on stdin (the caller measures memory meanwhile) and destroys them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static enum ibv_qp_type qp_type;
static unsigned int nwr, nsge;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static struct ibv_qp *create(void)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = qp_type, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = nwr, .max_recv_wr = nwr,
			 .max_send_sge = nsge, .max_recv_sge = nsge },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
	};

	return ibv_create_qp_ex(ctx, &a);
}

static uint64_t rate(uint64_t n, uint64_t ns)
{
	return ns ? n * 1000000000ull / ns : 0;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_qp **qps;
	unsigned int i, n, made;
	uint64_t t0, pair_ns, create_ns, destroy_ns;
	int ndev;

	if (argc != 7) {
		fprintf(stderr, "usage: bench_qp DEVICE rates|live rc|uc|ud WR SGE N\n");
		return 2;
	}
	qp_type = !strcmp(argv[3], "ud") ? IBV_QPT_UD :
		  !strcmp(argv[3], "uc") ? IBV_QPT_UC : IBV_QPT_RC;
	nwr = atoi(argv[4]);
	nsge = atoi(argv[5]);
	n = atoi(argv[6]);
	list = ibv_get_device_list(&ndev);
	for (i = 0; list && i < (unsigned int)ndev; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = pd ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	qps = calloc(n, sizeof(*qps));
	if (!cq || !qps) {
		fprintf(stderr, "bench_qp: setup on %s failed: %s\n", argv[1], strerror(errno));
		return 1;
	}

	if (!strcmp(argv[2], "live")) {
		for (made = 0; made < n; made++) {
			qps[made] = create();
			if (!qps[made])
				break;
		}
		printf("bench_qp: dev=%s live=%u errno=%d\n", argv[1], made,
		       made < n ? errno : 0);
		fflush(stdout);
		getchar();
		for (i = 0; i < made; i++)
			ibv_destroy_qp(qps[i]);
		return 0;
	}

	t0 = now_ns();
	for (i = 0; i < n; i++) {
		struct ibv_qp *qp = create();

		if (!qp) {
			printf("bench_qp: dev=%s create failed: %s\n", argv[1], strerror(errno));
			return 1;
		}
		ibv_destroy_qp(qp);
	}
	pair_ns = now_ns() - t0;
	t0 = now_ns();
	for (made = 0; made < n; made++) {
		qps[made] = create();
		if (!qps[made])
			break;
	}
	create_ns = now_ns() - t0;
	t0 = now_ns();
	for (i = 0; i < made; i++)
		ibv_destroy_qp(qps[i]);
	destroy_ns = now_ns() - t0;
	printf("bench_qp: dev=%s type=%s wr=%u sge=%u iters=%u pairs_per_s=%llu creates_per_s=%llu destroys_per_s=%llu\n",
	       argv[1], argv[3], nwr, nsge, n, (unsigned long long)rate(n, pair_ns),
	       (unsigned long long)rate(made, create_ns),
	       (unsigned long long)rate(made, destroy_ns));
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(qps);
	return 0;
}
