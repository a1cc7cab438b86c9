// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Create verbs objects until the kernel refuses one: the process side of
 * the memory and rdma cgroup tests (scripts/guest/cgroup.sh) and of the
 * memory.current benchmark (scripts/guest/cgroup-bench.sh). Any librxe
 * device: qpnic or rdma_rxe.
 *
 *   cg_flood DEVICE qp|cq|srq|mix MAX [hold]
 *
 * Opens DEVICE and allocates a PD (plus, for qp and mix, one CQ that every
 * QP shares), then creates objects of one kind until a create fails or
 * MAX exist: QP (RC, 16 WRs and 1 SGE each way), CQ (64 CQEs), SRQ (16
 * WRs, 1 SGE); mix creates QP, CQ, SRQ in turn. Then it prints
 *   cg_flood: kind=K setup=S created=N errno=E alive=A qp=Q cq=C srq=R
 * S: objects made before the flood (PD, CQ); E: errno of the refused
 * create, 0 if MAX was reached; A: 1 if ibv_query_device still works
 * after the refusal. It destroys everything in reverse order, prints
 *   cg_flood: freed=N
 * and exits 0, or 1 if the set-up or any destroy failed (2: bad usage).
 *
 * Without hold, the heap and the stack are touched before the flood, so
 * the process's own page faults do not charge its memory cgroup near the
 * limit: a user page fault over memory.max ends in the OOM killer, which
 * no driver can prevent.
 *
 * hold (for measuring): no pre-touching, so the process's heap growth per
 * object counts too. After the set-up it prints "cg_flood: ready setup=S"
 * and waits for a line on stdin; after the created line it waits for
 * another one before destroying.
 */
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

enum kind { KIND_QP, KIND_CQ, KIND_SRQ, NR_KINDS };

static const char * const kind_names[NR_KINDS] = { "qp", "cq", "srq" };

struct obj {
	enum kind kind;
	void *p;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *qp_cq;		/* the CQ of every flood QP */

#define RESERVE_HEAP	(2UL << 20)
#define RESERVE_STACK	(64UL << 10)
#define TABLE_CHUNK	65536UL		/* objects in the first table */

static __attribute__((noinline)) void touch_stack(void)
{
	char buf[RESERVE_STACK];

	explicit_bzero(buf, sizeof(buf));
}

/*
 * Fault in RESERVE_HEAP of heap and keep it: no allocation is served by
 * its own mmap, and free() never gives the top of the heap back.
 */
static int touch_heap_and_stack(void)
{
	void *p;

	if (!mallopt(M_MMAP_THRESHOLD, 16 << 20) ||
	    !mallopt(M_TRIM_THRESHOLD, 1 << 30))
		return -1;
	p = malloc(RESERVE_HEAP);
	if (!p)
		return -1;
	explicit_bzero(p, RESERVE_HEAP);
	free(p);
	touch_stack();
	return 0;
}

static struct ibv_qp *create_qp(void)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RC, .send_cq = qp_cq, .recv_cq = qp_cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
	};

	return ibv_create_qp_ex(ctx, &a);
}

static struct ibv_srq *create_srq(void)
{
	struct ibv_srq_init_attr a = {
		.attr = { .max_wr = 16, .max_sge = 1 },
	};

	return ibv_create_srq(pd, &a);
}

/* Create one object; on failure NULL with errno kept. */
static void *create(enum kind k)
{
	errno = 0;
	switch (k) {
	case KIND_QP:
		return create_qp();
	case KIND_CQ:
		return ibv_create_cq(ctx, 64, NULL, NULL, 0);
	default:
		return create_srq();
	}
}

static int destroy(const struct obj *o)
{
	switch (o->kind) {
	case KIND_QP:
		return ibv_destroy_qp(o->p);
	case KIND_CQ:
		return ibv_destroy_cq(o->p);
	default:
		return ibv_destroy_srq(o->p);
	}
}

static void wait_line(void)
{
	int c;

	do
		c = getchar();
	while (c != EOF && c != '\n');
}

static int bad_usage(void)
{
	fprintf(stderr, "usage: cg_flood DEVICE qp|cq|srq|mix MAX [hold]\n");
	return 2;
}

int main(int argc, char **argv)
{
	unsigned long max, cap, n, i, freed = 0, count[NR_KINDS] = { 0 };
	struct ibv_device **list;
	struct ibv_device_attr attr;
	struct obj *objs;
	enum kind k = KIND_QP;
	bool hold, mix;
	int ndev, err = 0, alive, setup, ret, bad = 0;
	char *end;

	hold = argc == 5 && !strcmp(argv[4], "hold");
	if (argc != 4 && !hold)
		return bad_usage();
	mix = !strcmp(argv[2], "mix");
	for (i = 0; i < NR_KINDS; i++)
		if (!strcmp(argv[2], kind_names[i]))
			k = i;
	if (!mix && strcmp(argv[2], kind_names[k]))
		return bad_usage();
	errno = 0;
	max = strtoul(argv[3], &end, 10);
	if (errno || end == argv[3] || *end)
		return bad_usage();

	if (!hold && touch_heap_and_stack()) {
		fprintf(stderr, "cg_flood: reserving heap failed\n");
		return 1;
	}
	/* The table is touched now: it must not grow near the limit either. */
	cap = max < TABLE_CHUNK ? max : TABLE_CHUNK;
	objs = malloc((cap ?: 1) * sizeof(*objs));
	if (!objs) {
		fprintf(stderr, "cg_flood: no memory for the object table\n");
		return 1;
	}
	explicit_bzero(objs, (cap ?: 1) * sizeof(*objs));

	list = ibv_get_device_list(&ndev);
	for (i = 0; list && i < (unsigned long)ndev; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (pd && (mix || k == KIND_QP))
		qp_cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!ctx) {
		fprintf(stderr, "cg_flood: no device %s\n", argv[1]);
		return 1;
	}
	if (!pd || ((mix || k == KIND_QP) && !qp_cq)) {
		fprintf(stderr, "cg_flood: %s on %s failed: %s\n",
			pd ? "create_cq" : "alloc_pd", argv[1], strerror(errno));
		return 1;
	}
	setup = 1 + !!qp_cq;
	if (hold) {
		printf("cg_flood: ready setup=%d\n", setup);
		fflush(stdout);
		wait_line();
	}

	for (n = 0; n < max; n++) {
		if (mix)
			k = n % NR_KINDS;
		if (n == cap) {
			struct obj *more = realloc(objs, 2 * cap * sizeof(*objs));

			if (!more) {
				fprintf(stderr, "cg_flood: no memory for %lu objects\n",
					2 * cap);
				err = -1;
				bad = 1;
				break;
			}
			objs = more;
			cap *= 2;
		}
		objs[n].kind = k;
		objs[n].p = create(k);
		if (!objs[n].p) {
			/* -1: the create failed without saying why */
			err = errno ?: -1;
			break;
		}
		count[k]++;
	}
	alive = !ibv_query_device(ctx, &attr);
	printf("cg_flood: kind=%s setup=%d created=%lu errno=%d alive=%d qp=%lu cq=%lu srq=%lu\n",
	       argv[2], setup, n, err, alive, count[KIND_QP], count[KIND_CQ],
	       count[KIND_SRQ]);
	fflush(stdout);
	if (hold)
		wait_line();

	for (i = n; i-- > 0;) {
		ret = destroy(&objs[i]);
		if (ret) {
			fprintf(stderr, "cg_flood: destroying %s #%lu failed: %s\n",
				kind_names[objs[i].kind], i, strerror(ret));
			bad = 1;
			continue;
		}
		freed++;
	}
	ret = qp_cq ? ibv_destroy_cq(qp_cq) : 0;
	if (ret) {
		fprintf(stderr, "cg_flood: destroying the QPs' CQ failed: %s\n",
			strerror(ret));
		bad = 1;
	}
	ret = ibv_dealloc_pd(pd);
	if (ret) {
		fprintf(stderr, "cg_flood: dealloc_pd failed: %s\n", strerror(ret));
		bad = 1;
	}
	ret = ibv_close_device(ctx);
	if (ret) {
		fprintf(stderr, "cg_flood: close_device failed: %d\n", ret);
		bad = 1;
	}
	ibv_free_device_list(list);
	free(objs);
	printf("cg_flood: freed=%lu\n", freed);
	return bad;
}
