// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The rings a device shares with librxe, attacked from userspace through
 * unmodified libibverbs + librxe:
 *  - ring pages outlive every mapping of them: a second mapping of a CQ,
 *    SQ, RQ or SRQ ring (or one a forked child inherited) keeps exactly
 *    what was written to it after the object is destroyed and the kernel
 *    allocated, wrote and freed many other rings;
 *  - the kernel never spins on ring indices userspace keeps moving;
 *  - a CQ overrun is one IBV_EVENT_CQ_ERR, not one per lost completion;
 *  - a resize_cq whose response cannot be written fails with EFAULT and
 *    leaves the CQ on the ring librxe polls.
 * Each check prints "@@RESULT PASS|FAIL|SKIP name [why]" for the host to
 * count. A watchdog turns a call that never returns into a FAIL.
 *
 * usage: test_ring_hostile -d DEVICE [-a IPV4] [-s SEED]
 *        test_ring_hostile -d DEVICE -H [-n LABEL]
 *   (IPV4 is accepted like the other tests take it; no check here needs a
 *   path. SEED makes the random attack repeatable; it is printed.)
 *
 * -H, holder mode: the device goes away under the process. It maps the
 * rings of a CQ, an RC QP and an SRQ a second time, canaries them, prints
 * "test_ring_hostile: holding N rings" and waits for a line (or EOF) on
 * stdin; meanwhile the device is removed (`rdma link delete`, or its
 * netdev goes) and the core destroys the process's objects. Then, after
 * memory churn, each second mapping must hold exactly its canary and take
 * a rewrite: "ring held across device removal (LABEL): cq" (sq, rq, srq).
 * Cleanup on the disassociated context may fail but must not hang. Exits
 * 0 if every check passed.
 *
 * On rdma_rxe (a device named rxe*): a ring can be mmap()ed only once, so
 * the checks that need a second mapping are skipped; the hostile-index
 * attack leaves out its "chase" pattern, on which rdma_rxe's flush loops
 * are known to spin; and one CQ_ERR per lost completion is reported as
 * SKIP, as rdma_rxe does that.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>
#include "guest_test.h"	/* before <rdma/rdma_user_rxe.h>, see there */
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#define PROD_OFF	offsetof(struct rxe_queue_buf, producer_index)
#define CONS_OFF	offsetof(struct rxe_queue_buf, consumer_index)
#define DATA_OFF	offsetof(struct rxe_queue_buf, data)
#define CANARY		0x5a
#define CANARY_MARK	0xc0ffee5a00000000ULL
#define MAX_VMAS	256
#define CHURN_ROUNDS	10
#define CHURN_BATCH	10
#define CHURN_MEM	(32UL << 20)
#define HOSTILE_MS	3000
#define HOSTILE_MAX_MS	10000
#define HOLD_MEM	(64UL << 20)
#define HOLD_CHILDREN	4
#define HOLD_CHILD_MEM	(16UL << 20)

static struct ibv_pd *pd;
static bool is_rxe;
static long page_size;
static uint64_t seed;

static void skip(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("SKIP", name, fmt, ap);
	va_end(ap);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * Watchdog: a check that is still running at its deadline is reported as
 * failed and the program exits (a thread stuck in the kernel cannot be
 * recovered from userspace).
 */
static int64_t wd_deadline;
static const char *wd_name;

static void watch(const char *name, int seconds)
{
	if (!seconds) {
		__atomic_store_n(&wd_deadline, 0, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&wd_name, name, __ATOMIC_RELAXED);
	__atomic_store_n(&wd_deadline, now_ms() + seconds * 1000LL, __ATOMIC_RELEASE);
}

static void *watchdog(void *arg)
{
	char line[256];
	int64_t deadline;
	int n;

	(void)arg;
	for (;;) {
		deadline = __atomic_load_n(&wd_deadline, __ATOMIC_ACQUIRE);
		if (deadline && now_ms() > deadline) {
			n = snprintf(line, sizeof(line),
				     "@@RESULT FAIL %s timed out: a verbs call did not return\n",
				     __atomic_load_n(&wd_name, __ATOMIC_RELAXED));
			if (write(STDOUT_FILENO, line, n) < 0)
				_exit(2);
			_exit(1);
		}
		usleep(100000);
	}
	return NULL;
}

/* Run @fn, turning a SIGBUS or SIGSEGV in it into a return value. */
static sigjmp_buf guard_env;

static void guard_handler(int sig)
{
	siglongjmp(guard_env, sig);
}

static int guarded(void (*fn)(void *), void *arg)
{
	struct sigaction sa = { .sa_handler = guard_handler };
	struct sigaction old_bus, old_segv;
	int sig;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old_bus);
	sigaction(SIGSEGV, &sa, &old_segv);
	sig = sigsetjmp(guard_env, 1);
	if (!sig)
		fn(arg);
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	return sig;
}

/* --- verbs helpers (to_init() and to_state() are in guest_test.h) --- */

static struct ibv_qp *rc_qp(struct ibv_cq *cq, uint32_t send_wr, uint32_t recv_wr)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = send_wr, .max_recv_wr = recv_wr,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	errno = 0;
	return ibv_create_qp(pd, &a);
}

/* Post up to @n empty receives with wr_id @base.. ; returns how many went. */
static int post_recvs(struct ibv_qp *qp, int n, uint64_t base)
{
	struct ibv_sge sge = {};
	struct ibv_recv_wr wr = { .sg_list = &sge }, *bad;
	int i;

	for (i = 0; i < n; i++) {
		wr.wr_id = base + i;
		if (ibv_post_recv(qp, &wr, &bad))
			break;
	}
	return i;
}

/* Poll until @want completions or @ms milliseconds went by. */
static int poll_until(struct ibv_cq *cq, struct ibv_wc *wc, int want, int ms)
{
	int64_t end = now_ms() + ms;
	int got = 0, n;

	while (got < want) {
		n = ibv_poll_cq(cq, want - got, wc + got);
		if (n < 0)
			break;
		got += n;
		if (!n) {
			if (now_ms() > end)
				break;
			usleep(1000);
		}
	}
	return got;
}

/* Completions that are not flushed receives @base.. of @qp, in order. */
static int bad_flushes(const struct ibv_wc *wc, int n, struct ibv_qp *qp,
		       uint64_t base)
{
	int i, bad = 0;

	for (i = 0; i < n; i++)
		bad += wc[i].status != IBV_WC_WR_FLUSH_ERR ||
		       wc[i].wr_id != base + i || wc[i].qp_num != qp->qp_num;
	return bad;
}

/* Read and acknowledge every pending async event; returns how many. */
static int drain_async(void)
{
	struct ibv_async_event ev;
	int n = 0;

	while (!ibv_get_async_event(ctx, &ev)) {
		ibv_ack_async_event(&ev);
		n++;
	}
	return n;
}

/* --- finding the rings librxe mapped --- */

struct vma {
	uintptr_t start, end;
	unsigned long long off;
};

static int uverbs_vmas(struct vma *v, int max)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char *line = NULL;
	size_t cap = 0;
	int n = 0;

	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		unsigned long start, end;
		unsigned long long off;

		if (!strstr(line, "/dev/infiniband/uverbs"))
			continue;
		if (sscanf(line, "%lx-%lx %*s %llx", &start, &end, &off) != 3)
			continue;
		if (n < max)
			v[n++] = (struct vma){ start, end, off };
	}
	free(line);
	fclose(f);
	return n;
}

/* The uverbs mappings that appeared since @before was taken. */
static int new_vmas(const struct vma *before, int nb, struct vma *out, int max)
{
	struct vma now[MAX_VMAS];
	int nn = uverbs_vmas(now, MAX_VMAS), i, j, n = 0;

	for (i = 0; i < nn; i++) {
		for (j = 0; j < nb; j++)
			if (before[j].start == now[i].start && before[j].off == now[i].off)
				break;
		if (j == nb && n < max)
			out[n++] = now[i];
	}
	return n;
}

struct ring {
	const char *name;	/* the check's @@RESULT name */
	uint8_t *lib;		/* librxe's own mapping */
	uint8_t *mine;		/* our second mapping, or MAP_FAILED */
	size_t size;
	off_t off;
	uint64_t tag;
	int map_err;
	int fill_sig;
};

static void ring_from_vma(struct ring *r, const struct vma *v)
{
	r->lib = (uint8_t *)v->start;
	r->size = v->end - v->start;
	r->off = (off_t)v->off;
	r->mine = MAP_FAILED;
}

static int map_again(struct ring *r)
{
	r->mine = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ctx->cmd_fd, r->off);
	r->map_err = r->mine == MAP_FAILED ? errno : 0;
	return r->map_err;
}

static uint32_t ring_index(const uint8_t *base, size_t off)
{
	return __atomic_load_n((const uint32_t *)(base + off), __ATOMIC_ACQUIRE);
}

/* --- canary: 0x5a everywhere, an 8-byte marker at the start of each page --- */

static uint8_t canary_byte(size_t off, uint64_t tag, uint8_t fill)
{
	size_t in = off % page_size;
	uint64_t mark;

	if (in >= 8)
		return fill;
	mark = CANARY_MARK ^ tag ^ (off / page_size);
	return mark >> (8 * in);
}

static void canary_fill(uint8_t *p, size_t size, uint64_t tag, uint8_t fill)
{
	size_t off, i;

	memset(p, fill, size);
	for (off = 0; off < size; off += page_size)
		for (i = 0; i < 8 && off + i < size; i++)
			p[off + i] = canary_byte(off + i, tag, fill);
}

struct miss {
	size_t bad;		/* bytes that differ from the pattern */
	size_t zero;		/* of which are 0 (a freed page under init_on_free) */
	size_t first;
	unsigned int got, want;
};

struct probe {
	uint8_t *p;
	size_t size;
	uint64_t tag;
	struct miss canary;	/* the canary, after destroy and churn */
	struct miss again;	/* a second pattern written after that */
};

static size_t canary_check(const uint8_t *p, size_t size, uint64_t tag,
			   uint8_t fill, struct miss *m)
{
	size_t off;
	uint8_t want;

	memset(m, 0, sizeof(*m));
	for (off = 0; off < size; off++) {
		want = canary_byte(off, tag, fill);
		if (p[off] == want)
			continue;
		if (!m->bad++) {
			m->first = off;
			m->got = p[off];
			m->want = want;
		}
		m->zero += !p[off];
	}
	return m->bad;
}

/*
 * Check the canary; if it is intact the pages are still ours alone, so
 * write them all again and read that back.
 */
static void probe_fn(void *arg)
{
	struct probe *pr = arg;

	if (canary_check(pr->p, pr->size, pr->tag, CANARY, &pr->canary))
		return;
	canary_fill(pr->p, pr->size, ~pr->tag, (uint8_t)~CANARY);
	canary_check(pr->p, pr->size, ~pr->tag, (uint8_t)~CANARY, &pr->again);
}

struct fill {
	uint8_t *p;
	size_t size;
	uint64_t tag;
};

static void fill_fn(void *arg)
{
	struct fill *f = arg;

	canary_fill(f->p, f->size, f->tag, CANARY);
}

static int guarded_fill(uint8_t *p, size_t size, uint64_t tag)
{
	struct fill f = { p, size, tag };

	return guarded(fill_fn, &f);
}

static void fill_ring(struct ring *r)
{
	if (r->mine != MAP_FAILED)
		r->fill_sig = guarded_fill(r->mine, r->size, r->tag);
}

/*
 * Report one probed ring; @sig is the signal the probe took, if any;
 * @after names what the mapping outlived ("destroy").
 */
static void report_probe(const char *name, const struct probe *pr, int sig,
			 const char *after)
{
	const struct miss *m = &pr->canary;

	if (sig)
		result(false, name, "signal %d touching the mapping after %s", sig, after);
	else if (m->bad)
		result(false, name,
		       "%zu of %zu bytes changed after %s (%zu now 0), first at %#zx: %#x, want %#x",
		       m->bad, pr->size, after, m->zero, m->first, m->got, m->want);
	else
		result(!pr->again.bad, name, "%zu bytes did not read back after a rewrite",
		       pr->again.bad);
}

/*
 * Make the kernel allocate, write and free many rings, and reuse free
 * pages: 100 CQs and 100 RC QPs, ten at a time, each QP flushing 16
 * receives into its CQ; then touch and free CHURN_MEM of anonymous memory.
 */
static void churn(void)
{
	struct ibv_cq *cqs[CHURN_BATCH];
	struct ibv_qp *qps[CHURN_BATCH];
	struct ibv_wc wc[32];
	int round, i, j, fails = 0;
	uint8_t *mem;

	for (round = 0; round < CHURN_ROUNDS; round++) {
		for (i = 0; i < CHURN_BATCH; i++) {
			cqs[i] = ibv_create_cq(ctx, 64, NULL, NULL, 0);
			qps[i] = cqs[i] ? rc_qp(cqs[i], 16, 16) : NULL;
			if (!qps[i] || to_init(qps[i])) {
				fails++;
				continue;
			}
			post_recvs(qps[i], 16, 0);
			to_state(qps[i], IBV_QPS_ERR);
		}
		for (i = 0; i < CHURN_BATCH; i++) {
			for (j = 0; cqs[i] && j < 4; j++)
				if (ibv_poll_cq(cqs[i], 32, wc) <= 0)
					break;
			if (qps[i])
				ibv_destroy_qp(qps[i]);
			if (cqs[i])
				ibv_destroy_cq(cqs[i]);
		}
	}
	if (fails)
		printf("# page churn: %d of %d CQ+QP pairs failed to come up\n", fails,
		       CHURN_ROUNDS * CHURN_BATCH);
	mem = mmap(NULL, CHURN_MEM, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem != MAP_FAILED) {
		memset(mem, 0xa5, CHURN_MEM);
		munmap(mem, CHURN_MEM);
	}
}

/* --- 1. ring lifetime through a second mapping --- */

enum { R_CQ, R_SQ, R_RQ, R_SRQ, R_NUM };

/*
 * Create a CQ (64 CQEs), an RC QP on it (16 WRs each way, one receive
 * posted) and an SRQ (16 WRs), and find the ring librxe mapped for each.
 * A failure is reported as "@what: find the cq ring" (qp rings, srq ring)
 * and returns -1; what was created is in *@cq, *@qp and *@srq either way.
 */
static int find_rings(struct ring *rings, struct ibv_cq **cq, struct ibv_qp **qp,
		      struct ibv_srq **srq, const char *what)
{
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct vma before[MAX_VMAS], got[4];
	char name[256];
	bool rq_first;
	int nb, n;

	nb = uverbs_vmas(before, MAX_VMAS);
	*cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	n = *cq ? new_vmas(before, nb, got, 4) : 0;
	if (n != 1) {
		snprintf(name, sizeof(name), "%s: find the cq ring", what);
		result(false, name, "cq %p, %d new mappings", (void *)*cq, n);
		return -1;
	}
	ring_from_vma(&rings[R_CQ], &got[0]);

	nb = uverbs_vmas(before, MAX_VMAS);
	*qp = rc_qp(*cq, 16, 16);
	n = *qp ? new_vmas(before, nb, got, 4) : 0;
	if (n != 2 || to_init(*qp) || post_recvs(*qp, 1, 7) != 1) {
		snprintf(name, sizeof(name), "%s: find the qp rings", what);
		result(false, name, "qp %p, %d new mappings, errno %d", (void *)*qp, n,
		       errno);
		return -1;
	}
	/* the one receive just posted tells the RQ from the SQ */
	if (ring_index((uint8_t *)got[0].start, PROD_OFF) !=
	    ring_index((uint8_t *)got[1].start, PROD_OFF))
		rq_first = ring_index((uint8_t *)got[0].start, PROD_OFF) == 1;
	else	/* a send WQE is the larger element */
		rq_first = ((struct rxe_queue_buf *)got[0].start)->log2_elem_size <
			   ((struct rxe_queue_buf *)got[1].start)->log2_elem_size;
	ring_from_vma(&rings[R_RQ], &got[rq_first ? 0 : 1]);
	ring_from_vma(&rings[R_SQ], &got[rq_first ? 1 : 0]);

	nb = uverbs_vmas(before, MAX_VMAS);
	*srq = ibv_create_srq(pd, &sattr);
	n = *srq ? new_vmas(before, nb, got, 4) : 0;
	if (n != 1) {
		snprintf(name, sizeof(name), "%s: find the srq ring", what);
		result(false, name, "srq %p, %d new mappings", (void *)*srq, n);
		return -1;
	}
	ring_from_vma(&rings[R_SRQ], &got[0]);
	return 0;
}

static void test_lifetime(void)
{
	static const char *const names[R_NUM] = {
		"cq ring outlives destroy", "sq ring outlives destroy",
		"rq ring outlives destroy", "srq ring outlives destroy",
	};
	struct ring rings[R_NUM] = {};
	struct ibv_srq *srq = NULL;
	struct ibv_qp *qp = NULL;
	struct ibv_cq *cq = NULL;
	int i, err = 0, sig;

	watch("ring lifetime", 60);
	for (i = 0; i < R_NUM; i++) {
		rings[i].name = names[i];
		rings[i].mine = MAP_FAILED;
		rings[i].tag = seed + i + 1;
	}

	if (find_rings(rings, &cq, &qp, &srq, "ring lifetime"))
		goto out;

	for (i = 0; i < R_NUM; i++) {
		if (!map_again(&rings[i]))
			continue;
		if (is_rxe && rings[i].map_err == EINVAL)
			skip(names[i], "rdma_rxe lets a ring offset be mapped once only");
		else
			result(false, names[i], "second mmap of %zu bytes at %#llx: errno %d",
			       rings[i].size, (unsigned long long)rings[i].off,
			       rings[i].map_err);
	}

	/* Canary each ring just before its object goes; nothing writes it after. */
	fill_ring(&rings[R_SQ]);
	fill_ring(&rings[R_RQ]);
	err = ibv_destroy_qp(qp);
	qp = NULL;
	fill_ring(&rings[R_CQ]);
	err = err ?: ibv_destroy_cq(cq);
	cq = NULL;
	fill_ring(&rings[R_SRQ]);
	err = err ?: ibv_destroy_srq(srq);
	srq = NULL;
	if (err) {
		result(false, "ring lifetime: destroy qp, cq and srq", "err %d", err);
		goto out;
	}
	for (i = 0; i < R_NUM && rings[i].mine == MAP_FAILED; i++)
		;
	if (i == R_NUM)
		goto out;
	churn();
	for (i = 0; i < R_NUM; i++) {
		struct probe pr = { .p = rings[i].mine, .size = rings[i].size,
				    .tag = rings[i].tag };

		if (rings[i].mine == MAP_FAILED)
			continue;
		if (rings[i].fill_sig) {
			result(false, names[i], "signal %d writing the canary",
			       rings[i].fill_sig);
			continue;
		}
		sig = guarded(probe_fn, &pr);
		report_probe(names[i], &pr, sig, "destroy");
	}

out:
	for (i = 0; i < R_NUM; i++)
		if (rings[i].mine != MAP_FAILED)
			munmap(rings[i].mine, rings[i].size);
	if (qp)
		ibv_destroy_qp(qp);
	if (srq)
		ibv_destroy_srq(srq);
	if (cq)
		ibv_destroy_cq(cq);
	watch(NULL, 0);
}

/* --- 2. ring lifetime through a mapping a child inherited --- */

struct child_report {
	int fill_sig;
	int probe_sig;
	struct probe pr;
};

static void __attribute__((noreturn))
fork_child(struct ring *r, int rd, int wr)
{
	struct child_report rep = { .pr = { .p = r->lib, .size = r->size, .tag = r->tag } };
	char c = 'r';

	alarm(60);
	rep.fill_sig = guarded_fill(r->lib, r->size, r->tag);
	if (write(wr, &c, 1) != 1 || read(rd, &c, 1) != 1)
		_exit(2);
	if (!rep.fill_sig)
		rep.probe_sig = guarded(probe_fn, &rep.pr);
	if (write(wr, &rep, sizeof(rep)) != sizeof(rep))
		_exit(2);
	_exit(rep.fill_sig || rep.probe_sig || rep.pr.canary.bad || rep.pr.again.bad ? 1 : 0);
}

static void test_fork(void)
{
	const char *name = "cq ring outlives destroy in a forked child";
	struct vma before[MAX_VMAS], got[2];
	struct child_report rep = {};
	int p2c[2], c2p[2], nb, n, status = 0, err;
	struct ring r = { .name = name, .tag = seed ^ 0xf0f0 };
	struct ibv_cq *cq;
	ssize_t len;
	pid_t pid;
	char c = 0;

	watch(name, 60);
	nb = uverbs_vmas(before, MAX_VMAS);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	n = cq ? new_vmas(before, nb, got, 2) : 0;
	if (n != 1) {
		result(false, name, "cq %p, %d new mappings", (void *)cq, n);
		goto out;
	}
	ring_from_vma(&r, &got[0]);
	if (pipe(p2c) || pipe(c2p)) {
		result(false, name, "pipe: errno %d", errno);
		goto out;
	}
	fflush(stdout);
	pid = fork();
	if (!pid) {
		close(p2c[1]);
		close(c2p[0]);
		fork_child(&r, p2c[0], c2p[1]);
	}
	close(p2c[0]);
	close(c2p[1]);
	if (pid < 0 || read(c2p[0], &c, 1) != 1 || c != 'r') {
		result(false, name, "child did not start (pid %d)", pid);
		close(p2c[1]);
		close(c2p[0]);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		goto out;
	}
	/* librxe unmaps its own mapping here: the child's is the last one */
	err = ibv_destroy_cq(cq);
	cq = NULL;
	churn();
	c = 'g';
	len = write(p2c[1], &c, 1) == 1 ? read(c2p[0], &rep, sizeof(rep)) : -1;
	close(p2c[1]);
	close(c2p[0]);
	waitpid(pid, &status, 0);
	if (err)
		result(false, name, "destroy_cq: err %d", err);
	else if (len != sizeof(rep))
		result(false, name, "no report from the child (status %#x)", status);
	else if (rep.fill_sig)
		result(false, name, "signal %d writing the inherited mapping", rep.fill_sig);
	else
		report_probe(name, &rep.pr, rep.probe_sig, "destroy");
out:
	if (cq)
		ibv_destroy_cq(cq);
	watch(NULL, 0);
}

/* --- 3. hostile indices --- */

struct hring {
	uint8_t *base;
	size_t size;
	uint32_t mask;
};

static struct hring hr[3];
static unsigned int hphase;	/* odd: tame, indices stay within index_mask */
static int hstop;
static unsigned int hack[2];
static unsigned long hops[2];
static bool hchase;

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * One hostile write: an index (random, 0xffffffff, past index_mask, or
 * chasing the other index so that the ring always looks full) or 8 random
 * bytes anywhere in the element array. Tame writes keep indices within
 * index_mask, because librxe uses them unmasked while it posts or polls.
 */
static void hostile_op(uint64_t *s, bool tame)
{
	uint64_t x = xorshift(s);
	struct hring *r = &hr[x % 3];
	uint32_t *idx[2] = { (uint32_t *)(r->base + PROD_OFF),
			     (uint32_t *)(r->base + CONS_OFF) };
	unsigned int which = (x >> 8) & 1;
	size_t off;
	uint32_t v;

	switch ((x >> 9) & 7) {
	case 0:
		v = x >> 32;
		break;
	case 1:
		v = 0xffffffff;
		break;
	case 2:
		v = r->mask + 1 + ((x >> 32) & r->mask);
		break;
	case 3:
		if (hchase) {
			/* prod = cons - 1 or cons = prod + 1: full */
			v = __atomic_load_n(idx[!which], __ATOMIC_RELAXED);
			v = which ? v + 1 : v - 1;
		} else {
			v = x >> 32;
		}
		break;
	default:
		off = DATA_OFF + (((x >> 16) % (r->size - DATA_OFF - 8)) & ~7UL);
		__atomic_store_n((uint64_t *)(r->base + off), xorshift(s),
				 __ATOMIC_RELAXED);
		return;
	}
	if (tame)
		v &= r->mask;
	__atomic_store_n(idx[which], v, __ATOMIC_RELEASE);
}

static void *hostile_thread(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg;
	uint64_t s = (seed + id + 1) * 0x9e3779b97f4a7c15ULL | 1;
	unsigned long ops = 0;
	unsigned int ph;
	int i;

	while (!__atomic_load_n(&hstop, __ATOMIC_ACQUIRE)) {
		ph = __atomic_load_n(&hphase, __ATOMIC_ACQUIRE);
		for (i = 0; i < 256; i++)
			hostile_op(&s, ph & 1);
		ops += 256;
		/* release: every write made under @ph is done */
		__atomic_store_n(&hack[id], ph, __ATOMIC_RELEASE);
	}
	hops[id] = ops;
	return NULL;
}

/*
 * Tame: wait until both threads write only in-range indices, then bring
 * every index back within index_mask before librxe touches the rings.
 */
static void hostile_phase(bool tame)
{
	unsigned int ph = __atomic_load_n(&hphase, __ATOMIC_RELAXED);
	uint32_t *p;
	int i;

	if ((ph & 1) == tame)
		return;
	__atomic_store_n(&hphase, ++ph, __ATOMIC_RELEASE);
	if (!tame)
		return;
	for (i = 0; i < 2; i++)
		while (__atomic_load_n(&hack[i], __ATOMIC_ACQUIRE) != ph)
			usleep(20);
	for (i = 0; i < 3; i++) {
		p = (uint32_t *)(hr[i].base + PROD_OFF);
		__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) & hr[i].mask,
				 __ATOMIC_RELEASE);
		p = (uint32_t *)(hr[i].base + CONS_OFF);
		__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) & hr[i].mask,
				 __ATOMIC_RELEASE);
	}
}

/* The POST_SEND doorbell librxe rings, made directly: no ring access. */
static int doorbell(struct ibv_qp *qp)
{
	struct ib_uverbs_cmd_hdr hdr = {
		.command = IB_USER_VERBS_CMD_POST_SEND,
		.in_words = (sizeof(hdr) + sizeof(struct ib_uverbs_post_send)) / 4,
		.out_words = sizeof(struct ib_uverbs_post_send_resp) / 4,
	};
	struct ib_uverbs_post_send_resp resp;
	struct ib_uverbs_post_send cmd = {
		.response = (uintptr_t)&resp,
		.qp_handle = qp->handle,
		.wqe_size = sizeof(struct ib_uverbs_send_wr),
	};
	uint8_t buf[sizeof(hdr) + sizeof(cmd)];

	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), &cmd, sizeof(cmd));
	return write(ctx->cmd_fd, buf, sizeof(buf)) == sizeof(buf) ? 0 : errno;
}

static void test_hostile(void)
{
	const char *name = "hostile ring indices never stall the kernel";
	struct ring rings[3] = {};
	struct vma before[MAX_VMAS], got[2];
	struct ibv_sge sge = {};
	struct ibv_send_wr swr = { .wr_id = 1, .sg_list = &sge, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &sge }, *rbad;
	struct ibv_wc wc[16];
	pthread_t th[2];
	int64_t start, t, worst = 0, total;
	int nb, n, i, iters = 0, threads = 0, err_qp, err_cq, second = 0;
	struct ibv_qp *qp = NULL;
	struct ibv_cq *cq;

	watch(name, HOSTILE_MAX_MS / 1000 + 2);
	start = now_ms();
	nb = uverbs_vmas(before, MAX_VMAS);
	cq = ibv_create_cq(ctx, 128, NULL, NULL, 0);
	n = cq ? new_vmas(before, nb, got, 2) : 0;
	if (n != 1) {
		result(false, name, "cq %p, %d new mappings", (void *)cq, n);
		goto out;
	}
	ring_from_vma(&rings[0], &got[0]);
	nb = uverbs_vmas(before, MAX_VMAS);
	qp = rc_qp(cq, 64, 64);
	n = qp ? new_vmas(before, nb, got, 2) : 0;
	if (n != 2 || to_init(qp)) {
		result(false, name, "qp %p, %d new mappings, errno %d", (void *)qp, n, errno);
		goto out;
	}
	ring_from_vma(&rings[1], &got[0]);
	ring_from_vma(&rings[2], &got[1]);
	for (i = 0; i < 3; i++) {
		/* rdma_rxe maps a ring once: attack librxe's mapping then */
		second += !map_again(&rings[i]);
		hr[i].base = rings[i].mine != MAP_FAILED ? rings[i].mine : rings[i].lib;
		hr[i].size = rings[i].size;
		hr[i].mask = ((struct rxe_queue_buf *)rings[i].lib)->index_mask;
		if (hr[i].size <= DATA_OFF + 8 || !hr[i].mask) {
			result(false, name, "ring of %zu bytes, index_mask %#x", hr[i].size,
			       hr[i].mask);
			goto out;
		}
	}
	hchase = !is_rxe;
	hstop = 0;
	hphase = 0;
	for (i = 0; i < 2; i++) {
		hack[i] = 0;
		hops[i] = 0;
		if (pthread_create(&th[i], NULL, hostile_thread, (void *)(uintptr_t)i))
			break;
	}
	threads = i;
	if (threads < 2) {
		result(false, name, "pthread_create failed");
		goto out_threads;
	}

	while (now_ms() - start < HOSTILE_MS) {
		t = now_ms();
		/* wild: only system calls, the rings are all the threads' */
		hostile_phase(false);
		to_state(qp, IBV_QPS_ERR);
		doorbell(qp);
		ibv_req_notify_cq(cq, 0);
		doorbell(qp);
		to_state(qp, IBV_QPS_RESET);
		doorbell(qp);
		to_init(qp);
		to_state(qp, IBV_QPS_ERR);
		doorbell(qp);
		/* tame: librxe writes and reads the rings as well */
		hostile_phase(true);
		ibv_post_send(qp, &swr, &sbad);
		ibv_post_recv(qp, &rwr, &rbad);
		ibv_poll_cq(cq, 16, wc);
		to_state(qp, IBV_QPS_RESET);
		to_init(qp);
		ibv_post_recv(qp, &rwr, &rbad);
		ibv_post_recv(qp, &rwr, &rbad);
		to_state(qp, IBV_QPS_ERR);
		ibv_post_send(qp, &swr, &sbad);
		ibv_poll_cq(cq, 16, wc);
		t = now_ms() - t;
		if (t > worst)
			worst = t;
		iters++;
	}

out_threads:
	__atomic_store_n(&hstop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	if (threads < 2)
		goto out;
	err_qp = ibv_destroy_qp(qp);
	qp = NULL;
	err_cq = ibv_destroy_cq(cq);
	cq = NULL;
	drain_async();
	total = now_ms() - start;
	result_note(iters > 0 && hops[0] && hops[1] && !err_qp && !err_cq &&
		    total < HOSTILE_MAX_MS, name,
		    "(%d iterations, %lu hostile writes, worst iteration %lld ms, total %lld ms%s%s; destroy qp %d cq %d)",
		    iters, hops[0] + hops[1], (long long)worst, (long long)total,
		    second == 3 ? "" : ", on librxe's mappings",
		    hchase ? "" : ", no chase", err_qp, err_cq);
out:
	for (i = 0; i < 3; i++)
		if (rings[i].mine != MAP_FAILED && rings[i].mine)
			munmap(rings[i].mine, rings[i].size);
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	watch(NULL, 0);
}

/* --- 4. a CQ overrun is one event --- */

static void test_overrun(void)
{
	const char *name = "cq overrun raises exactly one cq_err event";
	struct ibv_async_event ev;
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	int64_t start, last;
	int posted, cq_err = 0, other = 0;
	struct ibv_qp *qp = NULL;
	struct ibv_cq *cq;

	watch(name, 30);
	drain_async();
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	qp = cq ? rc_qp(cq, 1, 64) : NULL;
	if (!qp || to_init(qp)) {
		result(false, name, "cq %p qp %p errno %d", (void *)cq, (void *)qp, errno);
		goto out;
	}
	if (cq->cqe >= 32) {
		result(false, name, "asked for 4 CQEs, the CQ holds %d", cq->cqe);
		goto out;
	}
	posted = post_recvs(qp, 32, 0);
	if (posted != 32 || to_state(qp, IBV_QPS_ERR)) {
		result(false, name, "posted %d of 32, errno %d", posted, errno);
		goto out;
	}
	/* until 250 ms pass without an event (3 s at most) */
	start = last = now_ms();
	while (now_ms() - last < 250 && now_ms() - start < 3000) {
		poll(&pfd, 1, 50);
		while (!ibv_get_async_event(ctx, &ev)) {
			if (ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == cq)
				cq_err++;
			else
				other++;
			ibv_ack_async_event(&ev);
			last = now_ms();
		}
	}
	if (cq_err > 1 && is_rxe)
		skip(name, "rdma_rxe raises one per lost CQE: %d for 32 flushes into %d CQEs",
		     cq_err, cq->cqe);
	else
		result(cq_err == 1, name,
		       "%d CQ_ERR events for 32 flushes into %d CQEs (%d other events)",
		       cq_err, cq->cqe, other);
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	watch(NULL, 0);
}

/* --- 5. resize_cq whose driver response faults --- */

static void test_resize_fault(void)
{
	struct ib_uverbs_cmd_hdr hdr = {
		.command = IB_USER_VERBS_CMD_RESIZE_CQ,
		.in_words = (sizeof(hdr) + sizeof(struct ib_uverbs_resize_cq)) / 4,
		.out_words = (sizeof(struct ib_uverbs_resize_cq_resp) +
			      sizeof(struct rxe_resize_cq_resp)) / 4,
	};
	struct ib_uverbs_resize_cq cmd = { .cqe = 64 };
	uint8_t buf[sizeof(hdr) + sizeof(cmd)];
	struct ibv_wc wc[16];
	struct ibv_qp *qp = NULL;
	struct ibv_cq *cq;
	uint8_t *pages;
	int err, posted, n;
	ssize_t ret;

	watch("resize_cq with a faulting response", 30);
	pages = mmap(NULL, 2 * page_size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	qp = cq ? rc_qp(cq, 1, 8) : NULL;
	if (pages == MAP_FAILED || !qp || to_init(qp) ||
	    mprotect(pages + page_size, page_size, PROT_NONE)) {
		result(false, "resize_cq with a faulting response is efault",
		       "setup: cq %p qp %p errno %d", (void *)cq, (void *)qp, errno);
		goto out;
	}
	/* the core's 8 bytes end the writable page, the driver's mminfo faults */
	cmd.response = (uintptr_t)(pages + page_size -
				   sizeof(struct ib_uverbs_resize_cq_resp));
	cmd.cq_handle = cq->handle;
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), &cmd, sizeof(cmd));
	errno = 0;
	ret = write(ctx->cmd_fd, buf, sizeof(buf));
	err = ret < 0 ? errno : 0;
	result(ret < 0 && err == EFAULT, "resize_cq with a faulting response is efault",
	       "write returned %zd, errno %d", ret, err);

	posted = post_recvs(qp, 8, 100);
	to_state(qp, IBV_QPS_ERR);
	n = poll_until(cq, wc, 8, 3000);
	result(posted == 8 && n == 8 && !bad_flushes(wc, n, qp, 100),
	       "cq keeps its ring after a failed resize_cq",
	       "posted %d, polled %d of 8 flushed receives, %d wrong", posted, n,
	       bad_flushes(wc, n, qp, 100));

	err = ibv_resize_cq(cq, 64);
	result(!err && cq->cqe >= 64, "resize_cq after a failed one", "err %d cqe %d",
	       err, cq->cqe);
	if (err)
		goto out;
	if (to_state(qp, IBV_QPS_RESET) || to_init(qp)) {
		result(false, "completions arrive after resize_cq", "RESET/INIT: errno %d",
		       errno);
		goto out;
	}
	posted = post_recvs(qp, 8, 200);
	to_state(qp, IBV_QPS_ERR);
	n = poll_until(cq, wc, 8, 3000);
	result(posted == 8 && n == 8 && !bad_flushes(wc, n, qp, 200),
	       "completions arrive after resize_cq",
	       "posted %d, polled %d of 8 flushed receives, %d wrong", posted, n,
	       bad_flushes(wc, n, qp, 200));
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	if (pages != MAP_FAILED)
		munmap(pages, 2 * page_size);
	watch(NULL, 0);
}

/* --- 6. rings held while the device goes away (-H) --- */

/* Touch @size bytes of fresh anonymous memory with @v and free it. */
static bool touch_free(size_t size, uint8_t v)
{
	uint8_t *mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED)
		return false;
	memset(mem, v, size);
	munmap(mem, size);
	return true;
}

/*
 * Make the kernel hand out the pages it freed, the device's among them:
 * HOLD_MEM here, HOLD_CHILD_MEM in each of HOLD_CHILDREN children at once,
 * then HOLD_MEM here again. Nothing is created on the device: it is gone.
 */
static void churn_memory(void)
{
	pid_t pids[HOLD_CHILDREN];
	int i, status, started = 0, bad = 0;

	if (!touch_free(HOLD_MEM, 0xa5))
		bad++;
	fflush(stdout);
	for (i = 0; i < HOLD_CHILDREN; i++) {
		pids[i] = fork();
		if (!pids[i]) {
			alarm(30);
			_exit(touch_free(HOLD_CHILD_MEM, 0x3c + i) ? 0 : 1);
		}
		started += pids[i] > 0;
	}
	for (i = 0; i < HOLD_CHILDREN; i++) {
		if (pids[i] <= 0)
			continue;
		if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			bad++;
	}
	if (!touch_free(HOLD_MEM, 0x5c))
		bad++;
	if (bad || started < HOLD_CHILDREN)
		printf("# memory churn: %d of %d children started, %d allocations failed\n",
		       started, HOLD_CHILDREN, bad);
}

/*
 * Hold a second mapping of each ring of a CQ, an RC QP and an SRQ while
 * the device is removed (between "holding N rings" and a line or EOF on
 * stdin): the core disassociates the process, destroying its objects
 * through the driver's destroy verbs, but the pages stay the process's
 * own. Each mapping must then hold exactly its canary (no zeros of a freed
 * page under init_on_free, nothing another object wrote) and take a
 * rewrite. librxe's own mappings are left alone.
 */
static void hold_rings(const char *label)
{
	static const char *const kinds[R_NUM] = { "cq", "sq", "rq", "srq" };
	static char prefix[160], names[R_NUM][192], wd_setup[200], wd_after[200],
		    wd_clean[200];
	struct ring rings[R_NUM] = {};
	struct ibv_async_event ev;
	struct ibv_srq *srq = NULL;
	struct ibv_qp *qp = NULL;
	struct ibv_cq *cq = NULL;
	bool done[R_NUM] = {};
	int i, held = 0, sig, events = 0, fatal = 0;
	int err_qp, err_srq, err_cq, err_pd, err_close;
	char line[64];

	snprintf(prefix, sizeof(prefix), "ring held across device removal%s%s%s",
		 label ? " (" : "", label ? label : "", label ? ")" : "");
	snprintf(wd_setup, sizeof(wd_setup), "%s: setup", prefix);
	snprintf(wd_after, sizeof(wd_after), "%s: check after removal", prefix);
	snprintf(wd_clean, sizeof(wd_clean), "%s: cleanup after removal", prefix);
	for (i = 0; i < R_NUM; i++) {
		snprintf(names[i], sizeof(names[i]), "%s: %s", prefix, kinds[i]);
		rings[i].name = names[i];
		rings[i].mine = MAP_FAILED;
		rings[i].tag = (seed ^ 0x401d) + i + 1;
	}

	watch(wd_setup, 60);
	find_rings(rings, &cq, &qp, &srq, prefix);
	for (i = 0; i < R_NUM; i++) {
		if (!rings[i].size)	/* not found: reported after the wait */
			continue;
		if (map_again(&rings[i])) {
			if (is_rxe && rings[i].map_err == EINVAL)
				skip(names[i], "rdma_rxe lets a ring offset be mapped once only");
			else
				result(false, names[i],
				       "second mmap of %zu bytes at %#llx: errno %d",
				       rings[i].size, (unsigned long long)rings[i].off,
				       rings[i].map_err);
			done[i] = true;
			continue;
		}
		fill_ring(&rings[i]);
		if (rings[i].fill_sig) {
			result(false, names[i], "signal %d writing the canary",
			       rings[i].fill_sig);
			done[i] = true;
			continue;
		}
		held++;
	}
	watch(NULL, 0);

	/* The device goes away now; no watchdog while we wait for word of it. */
	printf("test_ring_hostile: holding %d rings\n", held);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin) && ferror(stdin))
		printf("# reading stdin: errno %d\n", errno);

	watch(wd_after, 60);
	churn_memory();
	for (i = 0; i < R_NUM; i++) {
		struct probe pr = { .p = rings[i].mine, .size = rings[i].size,
				    .tag = rings[i].tag };

		if (done[i])
			continue;
		if (rings[i].mine == MAP_FAILED) {
			result(false, names[i], "no ring to hold (see the setup failure)");
			continue;
		}
		sig = guarded(probe_fn, &pr);
		report_probe(names[i], &pr, sig, "device removal");
	}
	while (!ibv_get_async_event(ctx, &ev)) {
		fatal += ev.event_type == IBV_EVENT_DEVICE_FATAL;
		events++;
		ibv_ack_async_event(&ev);
	}
	printf("# after removal: %d async events, %d of them DEVICE_FATAL\n", events,
	       fatal);
	fflush(stdout);

	/* Whatever these return on a disassociated context, they must return. */
	watch(wd_clean, 60);
	err_qp = qp ? ibv_destroy_qp(qp) : 0;
	err_srq = srq ? ibv_destroy_srq(srq) : 0;
	err_cq = cq ? ibv_destroy_cq(cq) : 0;
	for (i = 0; i < R_NUM; i++)
		if (rings[i].mine != MAP_FAILED)
			munmap(rings[i].mine, rings[i].size);
	err_pd = ibv_dealloc_pd(pd);
	err_close = ibv_close_device(ctx);
	printf("# cleanup after removal: destroy qp %d srq %d cq %d, dealloc pd %d, close %d\n",
	       err_qp, err_srq, err_cq, err_pd, err_close);
	fflush(stdout);
	watch(NULL, 0);
}

int main(int argc, char **argv)
{
	const char *devname = NULL, *label = NULL;
	struct ibv_device **list, *dev;
	bool hold = false;
	pthread_t wd;
	int n = 0, opt, flags;

	seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	while ((opt = getopt(argc, argv, "d:a:s:Hn:")) != -1) {
		if (opt == 'd')
			devname = optarg;
		else if (opt == 's')
			seed = strtoull(optarg, NULL, 0);
		else if (opt == 'H')
			hold = true;
		else if (opt == 'n')
			label = optarg;
	}
	page_size = sysconf(_SC_PAGESIZE);
	list = ibv_get_device_list(&n);
	dev = find_device(list, n, devname);
	if (!dev) {
		result(false, "ring hostile: open device", "%s not found",
		       devname ? devname : "any");
		return 1;
	}
	is_rxe = !strncmp(ibv_get_device_name(dev), "rxe", 3);
	ctx = ibv_open_device(dev);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd) {
		result(false, "ring hostile: open device", "ctx %p errno %d", (void *)ctx,
		       errno);
		return 1;
	}
	flags = fcntl(ctx->async_fd, F_GETFL);
	if (flags < 0 || fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK) ||
	    pthread_create(&wd, NULL, watchdog, NULL)) {
		result(false, "ring hostile: setup", "errno %d", errno);
		return 1;
	}
	printf("# test_ring_hostile on %s: seed %llu\n", ibv_get_device_name(dev),
	       (unsigned long long)seed);
	fflush(stdout);

	if (hold) {
		/* closes the device itself */
		hold_rings(label);
		ibv_free_device_list(list);
		return failures ? 1 : 0;
	}

	test_lifetime();
	test_fork();
	test_overrun();
	test_resize_fault();
	/* last: a kernel that spins here takes the process with it */
	test_hostile();

	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failures ? 1 : 0;
}
