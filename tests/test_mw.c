// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_mw: memory windows through librxe, type 1 (ibv_bind_mw()) and type
 * 2B (IBV_WR_BIND_MW), between RC QPs connected through the device's own
 * GID. A window grants remote access to part of an MR that has none of
 * its own; what is checked is what the IBTA asks:
 *
 *  - an access must lie inside the window, not only inside its MR, and
 *    use only what the window grants; a type 2 window serves the QP it is
 *    bound to alone, a type 1 window every QP of its PD;
 *  - every refused bind (no MW_BIND on the MR, a window past its MR, a
 *    writable window on an MR without local write, another PD's MR or
 *    window, a type 2 window bound already or of length 0, a zero-based
 *    window, a key of another index) completes IBV_WC_MW_BIND_ERR and
 *    leaves the window and the MR as they were;
 *  - LOCAL_INV and SEND with invalidate free a type 2 window (the latter
 *    only from the peer of the QP it is bound to), never a type 1 window;
 *    once an invalidation completes no byte moves through the key, even
 *    with WRITEs through it in flight;
 *  - an MR with a window bound cannot be deregistered; dealloc unbinds;
 *    a process that exits with windows bound leaves nothing behind.
 *
 * usage: test_mw -d DEVICE [-a IPV4]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

#include "guest_test.h"

#define BUF_LEN		16384	/* the target MR */
#define WIN_OFF		4096	/* the window: [WIN_OFF, WIN_OFF + WIN_LEN) of it */
#define WIN_LEN		4096
#define SRC_CHUNKS	64	/* the source: WIN_LEN chunks of their own byte */
#define FILL		0xaa
#define REMOTE		(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)
#define BINDABLE	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND)

static struct ibv_pd *pd, *pd2;
static struct ibv_cq *cq;
static uint8_t *target, *source;
static struct ibv_mr *tmr, *smr;	/* target: BINDABLE only; source: local */
static uint64_t next_id = 1;

struct pair {
	struct ibv_qp *req;	/* posts the remote accesses */
	struct ibv_qp *resp;	/* the window's side: binds, receives */
};

/* Completions polled while waiting for another one. */
static struct ibv_wc stash[256];
static int nstash;

/* Forget every completion so far: a case starts from an empty CQ. */
static void drain(void)
{
	struct ibv_wc wc;

	while (ibv_poll_cq(cq, 1, &wc) > 0)
		;
	nstash = 0;
}

/* The completion of @wr_id within 5 s into *@out. */
static bool wait_wc(uint64_t wr_id, struct ibv_wc *out)
{
	struct timespec ts = { 0, 1000000 };
	struct ibv_wc wc;
	int i, n, ms = 0;

	for (i = 0; i < nstash; i++) {
		if (stash[i].wr_id == wr_id) {
			*out = stash[i];
			stash[i] = stash[--nstash];
			return true;
		}
	}
	while (ms < 5000) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0)
			return false;
		if (!n) {
			nanosleep(&ts, NULL);
			ms++;
		} else if (wc.wr_id == wr_id) {
			*out = wc;
			return true;
		} else if (nstash < (int)(sizeof(stash) / sizeof(stash[0]))) {
			stash[nstash++] = wc;
		}
	}
	return false;
}

/* The status of @wr_id's completion, -1 if none came. */
static int wait_status(uint64_t wr_id)
{
	struct ibv_wc wc;

	return wait_wc(wr_id, &wc) ? (int)wc.status : -1;
}

static void free_pair(struct pair *p)
{
	if (p->req)
		ibv_destroy_qp(p->req);
	if (p->resp)
		ibv_destroy_qp(p->resp);
	p->req = p->resp = NULL;
}

/*
 * Two RC QPs of @qpd connected to each other, taking every remote access;
 * the requester's completions go to @req_cq, the responder's to cq.
 */
static bool make_pair_cq(struct ibv_pd *qpd, struct pair *p, struct ibv_cq *req_cq)
{
	struct ibv_qp_init_attr_ex init = qp_init_attr(qpd, req_cq, IBV_QPT_RC);

	p->req = ibv_create_qp_ex(ctx, &init);
	init.send_cq = init.recv_cq = cq;
	p->resp = ibv_create_qp_ex(ctx, &init);
	if (p->req && p->resp && !connect_rc(p->req, p->resp->qp_num, REMOTE) &&
	    !connect_rc(p->resp, p->req->qp_num, REMOTE))
		return true;
	result(false, "connect an RC pair", "errno %d", errno);
	free_pair(p);
	return false;
}

static bool make_pair(struct ibv_pd *qpd, struct pair *p)
{
	return make_pair_cq(qpd, p, cq);
}

/* @key with its low byte moved on, as a bind's new key. */
static uint32_t next_key(uint32_t key)
{
	return (key & ~0xffu) | ((key + 1) & 0xff);
}

/* Bind @mw (type 2) on @qp under @key over @len bytes at @off of @mr. */
static int bind2(struct ibv_qp *qp, struct ibv_mw *mw, uint32_t key,
		 struct ibv_mr *mr, uint64_t off, uint64_t len, unsigned int access)
{
	struct ibv_send_wr wr = {
		.wr_id = ++next_id, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = key;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)mr->addr + off;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	if (ibv_post_send(qp, &wr, &bad))
		return -2;
	return wait_status(wr.wr_id);
}

/* Bind @mw (type 1) through ibv_bind_mw(), which moves mw->rkey on. */
static int bind1(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mr *mr,
		 uint64_t off, uint64_t len, unsigned int access)
{
	struct ibv_mw_bind b = {
		.wr_id = ++next_id, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = (uintptr_t)mr->addr + off,
			       .length = len, .mw_access_flags = access },
	};

	if (ibv_bind_mw(qp, mw, &b))
		return -2;
	return wait_status(b.wr_id);
}

/* Post a signaled @op of @len bytes from @src by p->req at @off of the target. */
static uint64_t post_rdma(struct pair *p, enum ibv_wr_opcode op, uint32_t rkey,
			  long off, uint32_t len, const uint8_t *src)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)src, .length = len, .lkey = smr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = ++next_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		sge.length = 8;
		wr.wr.atomic.remote_addr = (uintptr_t)target + off;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)target + off;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(p->req, &wr, &bad) ? 0 : wr.wr_id;
}

static int rdma(struct pair *p, enum ibv_wr_opcode op, uint32_t rkey, long off,
		uint32_t len)
{
	uint64_t id = post_rdma(p, op, rkey, off, len, source);

	return id ? wait_status(id) : -2;
}

/* LOCAL_INV of @key on @qp: its completion's status, -2 if not posted. */
static int local_inv(struct ibv_qp *qp, uint32_t key)
{
	struct ibv_send_wr wr = {
		.wr_id = ++next_id, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = key,
	}, *bad;

	return ibv_post_send(qp, &wr, &bad) ? -2 : wait_status(wr.wr_id);
}

/*
 * A SEND with invalidate of @key from p->req into a receive posted on
 * p->resp: the send's status, -2 if not posted. With @rwc, the receive's
 * completion too (status IBV_WC_GENERAL_ERR if none came).
 */
static int send_inv(struct pair *p, uint32_t key, struct ibv_wc *rwc)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)source + WIN_LEN, .length = 64, .lkey = smr->lkey,
	};
	struct ibv_recv_wr rwr = {
		.wr_id = ++next_id, .sg_list = &sge, .num_sge = 1,
	}, *rbad;
	struct ibv_send_wr wr = {
		.wr_id = ++next_id, .opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = key,
	}, *bad;
	int status;

	if (ibv_post_recv(p->resp, &rwr, &rbad) || ibv_post_send(p->req, &wr, &bad))
		return -2;
	status = wait_status(wr.wr_id);
	if (rwc && !wait_wc(rwr.wr_id, rwc))
		*rwc = (struct ibv_wc){ .status = IBV_WC_GENERAL_ERR };
	return status;
}

/* A fresh pair's WRITE of 64 bytes at the window through @key: its status. */
static int fresh_write(uint32_t key)
{
	struct pair q;
	int status;

	if (!make_pair(pd, &q))
		return -2;
	status = rdma(&q, IBV_WR_RDMA_WRITE, key, WIN_OFF, 64);
	free_pair(&q);
	return status;
}

/* The first offset of the target that is not @fill, or -1. */
static long target_changed(uint8_t fill)
{
	long i;

	for (i = 0; i < BUF_LEN; i++)
		if (target[i] != fill)
			return i;
	return -1;
}

static bool qp_in_error(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	return !ibv_query_qp(qp, &a, IBV_QP_STATE, &init) && a.qp_state == IBV_QPS_ERR;
}

/* A type 2 window over the target's window range, bound on p->resp. */
static struct ibv_mw *bound_window(struct pair *p, unsigned int access,
				   uint32_t *key)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	if (!mw) {
		result(false, "allocate a type 2 window", "errno %d", errno);
		return NULL;
	}
	*key = next_key(mw->rkey);
	if (bind2(p->resp, mw, *key, tmr, WIN_OFF, WIN_LEN, access)) {
		result(false, "bind a type 2 window", "for the next case");
		ibv_dealloc_mw(mw);
		return NULL;
	}
	return mw;
}

static void test_claims(void)
{
	struct ibv_device_attr a;
	int err = ibv_query_device(ctx, &a);

	result(!err && (a.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
	       (a.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) && a.max_mw > 0,
	       "the device claims windows of type 1 and 2B",
	       "err %d, flags %#x, max_mw %d", err, a.device_cap_flags, a.max_mw);
}

/* What a bound type 2 window lets the peer do, and moves, byte for byte. */
static void test_type2_serves(void)
{
	struct pair p;
	struct ibv_mw *mw;
	uint32_t key;
	uint64_t orig;
	int st[3];

	drain();
	if (!make_pair(pd, &p))
		return;
	mw = bound_window(&p, REMOTE | IBV_ACCESS_LOCAL_WRITE, &key);
	if (!mw)
		goto out;
	memset(target, FILL, BUF_LEN);
	memset(source, 0x5a, WIN_LEN);
	st[0] = rdma(&p, IBV_WR_RDMA_WRITE, key, WIN_OFF, WIN_LEN);
	result(!st[0] && target[WIN_OFF] == 0x5a && target[WIN_OFF + WIN_LEN - 1] == 0x5a &&
	       target[WIN_OFF - 1] == FILL && target[WIN_OFF + WIN_LEN] == FILL,
	       "type 2: an RDMA WRITE of the whole window lands in it, and only there",
	       "status %d", st[0]);
	target[WIN_OFF + 100] = 0x77;
	memset(source, 0, WIN_LEN);
	st[1] = rdma(&p, IBV_WR_RDMA_READ, key, WIN_OFF + 100, 200);
	result(!st[1] && source[0] == 0x77 && source[1] == 0x5a,
	       "type 2: an RDMA READ inside the window reads the MR",
	       "status %d, %#x %#x", st[1], source[0], source[1]);
	memcpy(&orig, target + WIN_OFF + 8, 8);
	st[2] = rdma(&p, IBV_WR_ATOMIC_FETCH_AND_ADD, key, WIN_OFF + 8, 8);
	result(!st[2] && !memcmp(source, &orig, 8) && target[WIN_OFF + 8] == 0x5b,
	       "type 2: a fetch-and-add inside the window",
	       "status %d", st[2]);
	ibv_dealloc_mw(mw);
out:
	free_pair(&p);
}

/* Accesses a window refuses: each completes REM_ACCESS_ERR and writes nothing. */
static void test_type2_refuses(void)
{
	static const struct {
		const char *name;
		unsigned int grant;
		enum ibv_wr_opcode op;
		long off;
		uint32_t len;
		int key;	/* 0: the window's, 1: its alloc key, 2: another pair */
	} cases[] = {
		{ "a WRITE running 64 bytes past the window's end, inside the MR",
		  REMOTE, IBV_WR_RDMA_WRITE, WIN_OFF + WIN_LEN - 64, 128, 0 },
		{ "a WRITE of 3 packets whose last leaves the window",
		  REMOTE, IBV_WR_RDMA_WRITE, WIN_OFF + WIN_LEN - 2500, 3000, 0 },
		{ "a WRITE starting 64 bytes before the window",
		  REMOTE, IBV_WR_RDMA_WRITE, WIN_OFF - 64, 128, 0 },
		{ "a READ past the window's end", REMOTE, IBV_WR_RDMA_READ,
		  WIN_OFF + WIN_LEN - 8, 16, 0 },
		{ "a WRITE through a read-only window", IBV_ACCESS_REMOTE_READ,
		  IBV_WR_RDMA_WRITE, WIN_OFF, 64, 0 },
		{ "a READ through a write-only window", IBV_ACCESS_REMOTE_WRITE,
		  IBV_WR_RDMA_READ, WIN_OFF, 64, 0 },
		{ "an atomic through a window without atomic access",
		  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		  IBV_WR_ATOMIC_FETCH_AND_ADD, WIN_OFF, 8, 0 },
		{ "a WRITE with the window's key before the bind", REMOTE,
		  IBV_WR_RDMA_WRITE, WIN_OFF, 64, 1 },
		{ "a WRITE from a QP the type 2 window is not bound to", REMOTE,
		  IBV_WR_RDMA_WRITE, WIN_OFF, 64, 2 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pair p, q = {};
		struct ibv_mw *mw;
		uint32_t key, use;
		char name[160];
		int status;

		drain();
		if (!make_pair(pd, &p))
			continue;
		mw = bound_window(&p, cases[i].grant, &key);
		if (!mw) {
			free_pair(&p);
			continue;
		}
		use = cases[i].key == 1 ? mw->rkey : key;
		memset(target, FILL, BUF_LEN);
		if (cases[i].key == 2 && make_pair(pd, &q))
			status = rdma(&q, cases[i].op, use, cases[i].off, cases[i].len);
		else
			status = rdma(&p, cases[i].op, use, cases[i].off, cases[i].len);
		snprintf(name, sizeof(name), "type 2 refuses %s", cases[i].name);
		result(status == IBV_WC_REM_ACCESS_ERR && target_changed(FILL) < 0,
		       name, "status %d (want %d), byte %ld changed", status,
		       IBV_WC_REM_ACCESS_ERR, target_changed(FILL));
		free_pair(&q);
		ibv_dealloc_mw(mw);
		free_pair(&p);
	}
}

enum bind_fault {
	NO_MW_BIND,		/* the MR lacks MW_BIND */
	PAST_MR,		/* the window runs past the MR's end */
	NO_LOCAL_WRITE,		/* a writable window on an MR without local write */
	MR_OTHER_PD,
	MW_OTHER_PD,
	LENGTH_ZERO,
	ZERO_BASED,
	OTHER_INDEX,		/* the new key names another index */
	BOUND_ALREADY,
	LENGTH_HUGE,		/* past 4 GiB: longer than any MR */
	NAMES_AN_MR,		/* the WQE's window key is an MR's */
	NAMES_NOTHING,		/* ... an index no window has */
};

/*
 * Binds the IBTA refuses: each completes MW_BIND_ERR with the QP in ERR,
 * the window stays unbound (its would-be key moves nothing), and a
 * correct bind of the same window works afterwards.
 */
static void test_bind_refused(void)
{
	static const struct {
		const char *name;
		enum bind_fault fault;
	} cases[] = {
		{ "an MR without MW_BIND access", NO_MW_BIND },
		{ "a window running past its MR's end", PAST_MR },
		{ "a writable window on an MR without local write", NO_LOCAL_WRITE },
		{ "an MR of another PD", MR_OTHER_PD },
		{ "a window of another PD", MW_OTHER_PD },
		{ "a type 2 window of length 0", LENGTH_ZERO },
		{ "a zero-based window", ZERO_BASED },
		{ "a new key of another index", OTHER_INDEX },
		{ "a type 2 window bound already", BOUND_ALREADY },
		{ "a window of 4 GiB + 4 KiB", LENGTH_HUGE },
		{ "a WQE naming an MR's key as the window", NAMES_AN_MR },
		{ "a WQE naming a window index never allocated", NAMES_NOTHING },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum bind_fault f = cases[i].fault;
		struct ibv_mr *mr = tmr, *own = NULL;
		unsigned int access = IBV_ACCESS_REMOTE_WRITE;
		uint64_t off = WIN_OFF, len = WIN_LEN;
		struct ibv_mw *mw, fake;
		struct pair p;
		uint32_t key;
		char name[160];
		int status, again, dereg = 0;
		bool err_state;

		drain();
		mw = ibv_alloc_mw(f == MW_OTHER_PD ? pd2 : pd, IBV_MW_TYPE_2);
		if (!mw || !make_pair(pd, &p)) {
			result(false, cases[i].name, "set-up: errno %d", errno);
			if (mw)
				ibv_dealloc_mw(mw);
			continue;
		}
		key = next_key(mw->rkey);
		if (f == NO_MW_BIND)
			mr = own = ibv_reg_mr(pd, target, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
		else if (f == NO_LOCAL_WRITE)
			mr = own = ibv_reg_mr(pd, target, BUF_LEN, IBV_ACCESS_MW_BIND);
		else if (f == MR_OTHER_PD)
			mr = own = ibv_reg_mr(pd2, target, BUF_LEN, BINDABLE);
		else if (f == PAST_MR)
			off = BUF_LEN - 1024;
		else if (f == LENGTH_ZERO)
			len = 0;
		else if (f == ZERO_BASED)
			access |= IBV_ACCESS_ZERO_BASED;
		else if (f == OTHER_INDEX)
			key += 0x100;
		else if (f == LENGTH_HUGE)
			len = (1ull << 32) + WIN_LEN;
		/* librxe takes the WQE's window key from the ibv_mw it is given */
		fake = *mw;
		if (f == NAMES_AN_MR)
			fake.rkey = tmr->lkey;
		else if (f == NAMES_NOTHING)
			fake.rkey = 0xfffffe00u | (mw->rkey & 0xff);
		if (!mr) {
			result(false, cases[i].name, "MR: errno %d", errno);
			goto next;
		}
		if (f == BOUND_ALREADY &&
		    bind2(p.resp, mw, key, tmr, WIN_OFF, WIN_LEN, access)) {
			result(false, cases[i].name, "the first bind failed");
			goto next;
		}
		status = bind2(p.resp, &fake, f == BOUND_ALREADY ? next_key(key) : key,
			       mr, off, len, access);
		err_state = qp_in_error(p.resp);
		snprintf(name, sizeof(name), "bind refuses %s: MW_BIND_ERR, QP in ERR",
			 cases[i].name);
		result(status == IBV_WC_MW_BIND_ERR && err_state, name,
		       "status %d (want %d), QP in ERR %d", status,
		       IBV_WC_MW_BIND_ERR, err_state);
		free_pair(&p);
		if (f == BOUND_ALREADY) {
			/* the first binding stands: its MR cannot go */
			dereg = ibv_dereg_mr(tmr);
			snprintf(name, sizeof(name), "after %s the first binding holds its MR",
				 cases[i].name);
			result(dereg == EBUSY, name, "dereg_mr %d (want EBUSY)", dereg);
			if (!dereg)
				tmr = ibv_reg_mr(pd, target, BUF_LEN, BINDABLE);
			goto next;
		}
		memset(target, FILL, BUF_LEN);
		status = fresh_write(f == OTHER_INDEX ? key - 0x100 : key);
		snprintf(name, sizeof(name), "after %s the window is unbound", cases[i].name);
		result(status == IBV_WC_REM_ACCESS_ERR && target_changed(FILL) < 0, name,
		       "WRITE status %d", status);
		if (f == MW_OTHER_PD)
			goto next;
		if (!make_pair(pd, &p))
			goto next;
		again = bind2(p.resp, mw, next_key(mw->rkey), tmr, WIN_OFF, WIN_LEN,
			      IBV_ACCESS_REMOTE_WRITE);
		snprintf(name, sizeof(name), "after %s a correct bind works", cases[i].name);
		result(!again, name, "status %d", again);
		free_pair(&p);
next:
		free_pair(&p);
		ibv_dealloc_mw(mw);
		if (own) {
			dereg = ibv_dereg_mr(own);
			snprintf(name, sizeof(name), "after %s its MR deregisters", cases[i].name);
			result(!dereg, name, "dereg_mr %d", dereg);
		}
	}
}

/* LOCAL_INV and SEND with invalidate of a type 2 window. */
static void test_type2_invalidate(void)
{
	struct pair p, q;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	uint32_t key;
	int status;

	/* LOCAL_INV on the QP it is bound to */
	drain();
	if (!make_pair(pd, &p))
		return;
	mw = bound_window(&p, IBV_ACCESS_REMOTE_WRITE, &key);
	if (mw) {
		status = local_inv(p.resp, key);
		result(!status, "LOCAL_INV of a bound type 2 window", "status %d", status);
		memset(target, FILL, BUF_LEN);
		status = rdma(&p, IBV_WR_RDMA_WRITE, key, WIN_OFF, 64);
		result(status == IBV_WC_REM_ACCESS_ERR && target_changed(FILL) < 0,
		       "after LOCAL_INV its key moves no byte", "status %d", status);
		free_pair(&p);
		/* FREE again: it binds anew, under a new key only */
		if (make_pair(pd, &p)) {
			status = bind2(p.resp, mw, next_key(key), tmr, WIN_OFF, WIN_LEN,
				       IBV_ACCESS_REMOTE_WRITE);
			result(!status && !rdma(&p, IBV_WR_RDMA_WRITE, next_key(key),
						WIN_OFF, 64),
			       "an invalidated window binds again and serves its new key",
			       "bind %d", status);
		}
		ibv_dealloc_mw(mw);
	}
	free_pair(&p);

	/* SEND with invalidate from the peer of the QP it is bound to */
	drain();
	if (!make_pair(pd, &p))
		return;
	mw = bound_window(&p, IBV_ACCESS_REMOTE_WRITE, &key);
	if (mw) {
		status = send_inv(&p, key, &wc);
		result(!status && !wc.status && wc.wc_flags == IBV_WC_WITH_INV &&
		       wc.invalidated_rkey == key,
		       "SEND with invalidate frees the window bound to the receiving QP (IBV_WC_WITH_INV)",
		       "send %d, recv status %d flags %#x rkey %#x", status,
		       wc.status, wc.wc_flags, wc.invalidated_rkey);
		status = rdma(&p, IBV_WR_RDMA_WRITE, key, WIN_OFF, 64);
		result(status == IBV_WC_REM_ACCESS_ERR,
		       "after a remote invalidation its key moves no byte", "status %d", status);
		ibv_dealloc_mw(mw);
	}
	free_pair(&p);

	/* SEND with invalidate arriving on another QP of the PD */
	drain();
	if (!make_pair(pd, &p))
		return;
	mw = bound_window(&p, IBV_ACCESS_REMOTE_WRITE, &key);
	if (mw && make_pair(pd, &q)) {
		status = send_inv(&q, key, NULL);
		result(status == IBV_WC_REM_INV_REQ_ERR,
		       "SEND with invalidate of a window bound to another QP: REM_INV_REQ_ERR",
		       "status %d (want %d)", status, IBV_WC_REM_INV_REQ_ERR);
		status = rdma(&p, IBV_WR_RDMA_WRITE, key, WIN_OFF, 64);
		result(!status, "the window still serves the QP it is bound to",
		       "status %d", status);
		free_pair(&q);
	}
	if (mw)
		ibv_dealloc_mw(mw);
	free_pair(&p);
}

/* Type 1: bound through ibv_bind_mw(), for every QP of the PD, never invalidated. */
static void test_type1(void)
{
	struct pair p, q;
	struct ibv_mw *mw;
	uint32_t old;
	int status;

	drain();
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	if (!mw || !make_pair(pd, &p)) {
		result(false, "type 1 set-up", "errno %d", errno);
		if (mw)
			ibv_dealloc_mw(mw);
		return;
	}
	status = bind1(p.resp, mw, tmr, WIN_OFF, WIN_LEN, IBV_ACCESS_REMOTE_WRITE);
	result(!status, "bind a type 1 window with ibv_bind_mw", "status %d", status);
	status = rdma(&p, IBV_WR_RDMA_WRITE, mw->rkey, WIN_OFF, 64);
	result(!status, "type 1: the binding QP's peer writes", "status %d", status);
	status = fresh_write(mw->rkey);
	result(!status, "type 1: another QP of the PD writes too", "status %d", status);

	status = local_inv(p.resp, mw->rkey);
	result(status == IBV_WC_LOC_QP_OP_ERR,
	       "LOCAL_INV of a type 1 window: LOC_QP_OP_ERR", "status %d", status);
	free_pair(&p);
	if (make_pair(pd, &q)) {
		status = send_inv(&q, mw->rkey, NULL);
		result(status == IBV_WC_REM_INV_REQ_ERR,
		       "SEND with invalidate of a type 1 window: REM_INV_REQ_ERR",
		       "status %d", status);
		free_pair(&q);
	}
	status = fresh_write(mw->rkey);
	result(!status, "type 1: still bound after both invalidations failed",
	       "status %d", status);

	/* bound again elsewhere: the old key and the old range go */
	old = mw->rkey;
	if (!make_pair(pd, &p))
		goto out;
	status = bind1(p.resp, mw, tmr, WIN_OFF + WIN_LEN, WIN_LEN,
		       IBV_ACCESS_REMOTE_WRITE);
	result(!status && mw->rkey != old, "bind the type 1 window again, further on",
	       "status %d", status);
	status = rdma(&p, IBV_WR_RDMA_WRITE, mw->rkey, WIN_OFF + WIN_LEN, 64);
	result(!status, "type 1: the new key writes the new range", "status %d", status);
	free_pair(&p);
	memset(target, FILL, BUF_LEN);
	status = fresh_write(old);
	result(status == IBV_WC_REM_ACCESS_ERR && target_changed(FILL) < 0,
	       "type 1: the old key is refused after a rebind", "status %d", status);
	status = fresh_write(mw->rkey);	/* WIN_OFF: the old range */
	result(status == IBV_WC_REM_ACCESS_ERR && target_changed(FILL) < 0,
	       "type 1: the new key is refused in the old range", "status %d", status);

	/* length 0 unbinds */
	if (!make_pair(pd, &p))
		goto out;
	status = bind1(p.resp, mw, tmr, 0, 0, 0);
	result(!status, "unbind the type 1 window with a length of 0", "status %d", status);
	free_pair(&p);
	status = ibv_dereg_mr(tmr);
	result(!status, "type 1: an unbound window holds its MR no more",
	       "dereg_mr %d", status);
	tmr = ibv_reg_mr(pd, target, BUF_LEN, BINDABLE);
out:
	free_pair(&p);
	ibv_dealloc_mw(mw);
}

/* The MR a window is bound to stays until the window lets it go. */
static void test_mr_held(void)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, target, BUF_LEN, BINDABLE);
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct pair p;
	uint32_t key;
	int err, status;

	drain();
	if (!mr || !mw || !make_pair(pd, &p)) {
		result(false, "MR hold set-up", "errno %d", errno);
		goto out;
	}
	key = next_key(mw->rkey);
	status = bind2(p.resp, mw, key, mr, WIN_OFF, WIN_LEN, IBV_ACCESS_REMOTE_WRITE);
	err = ibv_dereg_mr(mr);
	result(!status && err == EBUSY,
	       "dereg_mr of an MR with a window bound fails EBUSY",
	       "bind %d, dereg_mr %d", status, err);
	if (!err)
		mr = NULL;
	status = rdma(&p, IBV_WR_RDMA_WRITE, key, WIN_OFF, 64);
	result(!status, "the window serves on after the refused dereg", "status %d", status);
	status = local_inv(p.resp, key);
	err = mr ? ibv_dereg_mr(mr) : -1;
	result(!status && !err, "after LOCAL_INV the MR deregisters",
	       "LOCAL_INV %d, dereg_mr %d", status, err);
	if (!err)
		mr = NULL;
	free_pair(&p);

	/* dealloc unbinds */
	if (!mr)
		mr = ibv_reg_mr(pd, target, BUF_LEN, BINDABLE);
	if (mr && make_pair(pd, &p)) {
		key = next_key(key);
		status = bind2(p.resp, mw, key, mr, WIN_OFF, WIN_LEN,
			       IBV_ACCESS_REMOTE_WRITE);
		err = ibv_dealloc_mw(mw);
		mw = NULL;
		memset(target, FILL, BUF_LEN);
		status = status ?: rdma(&p, IBV_WR_RDMA_WRITE, key, WIN_OFF, 64);
		result(!err && status == IBV_WC_REM_ACCESS_ERR && target_changed(FILL) < 0,
		       "dealloc of a bound window unbinds it: its key moves no byte",
		       "dealloc %d, WRITE %d", err, status);
		err = ibv_dereg_mr(mr);
		result(!err, "after dealloc the MR deregisters", "dereg_mr %d", err);
		mr = NULL;
	}
	free_pair(&p);
out:
	if (mw)
		ibv_dealloc_mw(mw);
	if (mr)
		ibv_dereg_mr(mr);
}

/* A requester that WRITEs through a window until one is refused. */
struct racer {
	struct ibv_qp *qp;
	struct ibv_cq *cq;	/* the requester's own: polled by its thread */
	uint32_t key;
	int ok, refused, other;	/* completions by status */
};

#define RACER_DEPTH	16
#define RACER_MAX	200000	/* posts: a bound on a round that never ends */

static void *racer_run(void *arg)
{
	struct racer *r = arg;
	int inflight = 0, posted = 0, i, n;
	struct ibv_wc wc[RACER_DEPTH];
	bool stop = false;

	while (!stop || inflight) {
		while (!stop && inflight < RACER_DEPTH) {
			struct ibv_sge sge = {
				.addr = (uintptr_t)source + (posted % SRC_CHUNKS) * WIN_LEN,
				.length = WIN_LEN, .lkey = smr->lkey,
			};
			struct ibv_send_wr wr = {
				.wr_id = posted, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
				.send_flags = IBV_SEND_SIGNALED,
			}, *bad;

			wr.wr.rdma.remote_addr = (uintptr_t)target + WIN_OFF;
			wr.wr.rdma.rkey = r->key;
			if (ibv_post_send(r->qp, &wr, &bad) || ++posted == RACER_MAX) {
				stop = true;
				break;
			}
			inflight++;
		}
		n = ibv_poll_cq(r->cq, RACER_DEPTH, wc);
		if (n < 0)
			break;
		for (i = 0; i < n; i++) {
			inflight--;
			if (wc[i].status == IBV_WC_SUCCESS) {
				r->ok++;
				continue;
			}
			stop = true;
			if (wc[i].status == IBV_WC_REM_ACCESS_ERR)
				r->refused++;
			else if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
				r->other++;
		}
	}
	return NULL;
}

/*
 * LOCAL_INV racing a stream of WRITEs through the window, each chunk with
 * its own byte: whatever got through before it, nothing lands once it
 * completed, and the next WRITE is refused.
 */
static void test_invalidate_race(void)
{
	static uint8_t snapshot[WIN_LEN];
	int round, i, bad_rounds = 0, unrefused = 0, before = 0, failed = 0;
	struct ibv_cq *rcq = ibv_create_cq(ctx, RACER_DEPTH * 2, NULL, NULL, 0);

	if (!rcq) {
		result(false, "a CQ for the racing requester", "errno %d", errno);
		return;
	}
	for (i = 0; i < SRC_CHUNKS; i++)
		memset(source + i * WIN_LEN, i + 1, WIN_LEN);
	for (round = 0; round < 20; round++) {
		struct timespec delay = { 0, (round % 5) * 500000 };
		struct racer r = { 0 };
		struct ibv_mw *mw;
		pthread_t thread;
		struct pair p;
		int status;

		drain();
		if (!make_pair_cq(pd, &p, rcq))
			break;
		mw = bound_window(&p, IBV_ACCESS_REMOTE_WRITE, &r.key);
		if (!mw) {
			free_pair(&p);
			break;
		}
		memset(target, FILL, BUF_LEN);
		r.qp = p.req;
		r.cq = rcq;
		if (pthread_create(&thread, NULL, racer_run, &r)) {
			ibv_dealloc_mw(mw);
			free_pair(&p);
			break;
		}
		nanosleep(&delay, NULL);
		status = local_inv(p.resp, r.key);
		memcpy(snapshot, target + WIN_OFF, WIN_LEN);
		pthread_join(thread, NULL);
		if (status || memcmp(snapshot, target + WIN_OFF, WIN_LEN) ||
		    target[WIN_OFF - 1] != FILL || target[WIN_OFF + WIN_LEN] != FILL)
			bad_rounds++;
		unrefused += r.refused != 1;
		failed += r.other;
		before += r.ok;
		ibv_dealloc_mw(mw);
		free_pair(&p);
	}
	result_note(round == 20 && !bad_rounds && !unrefused && !failed,
		    "no WRITE lands once a racing LOCAL_INV completed",
		    "%d rounds: %d changed the window after, %d without one refused WRITE, %d other errors, %d WRITEs landed before",
		    round, bad_rounds, unrefused, failed, before);
	ibv_destroy_cq(rcq);
}

/*
 * A process that exits with windows bound and every object still there:
 * the kernel cleans up (a window first, then its MR), with no leak or
 * warning in the guest log. The device serves the next user.
 */
static void test_exit_with_windows(void)
{
	const char *name = ibv_get_device_name(ctx->device);
	int wstatus = 0;
	pid_t pid = fork();

	if (pid == 0) {
		struct ibv_device **list = ibv_get_device_list(NULL);
		struct ibv_mw *mw1, *mw2;
		struct pair p;
		int n = 0;

		ctx = NULL;
		while (list && list[n] && !ctx)
			if (!strcmp(ibv_get_device_name(list[n++]), name))
				ctx = ibv_open_device(list[n - 1]);
		pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		cq = pd ? ibv_create_cq(ctx, 256, NULL, NULL, 0) : NULL;
		tmr = cq ? ibv_reg_mr(pd, target, BUF_LEN, BINDABLE) : NULL;
		if (!tmr || !make_pair(pd, &p))
			_exit(2);
		mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
		mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		if (!mw1 || !mw2 ||
		    bind1(p.resp, mw1, tmr, 0, WIN_LEN, IBV_ACCESS_REMOTE_WRITE) ||
		    bind2(p.resp, mw2, next_key(mw2->rkey), tmr, WIN_OFF, WIN_LEN,
			  IBV_ACCESS_REMOTE_WRITE))
			_exit(3);
		_exit(0);	/* no cleanup: the kernel's to do */
	}
	if (pid > 0)
		waitpid(pid, &wstatus, 0);
	result(pid > 0 && WIFEXITED(wstatus) && !WEXITSTATUS(wstatus),
	       "a process exits with two windows bound to its MR",
	       "pid %d, wait status %#x", pid, wstatus);
	drain();
	{
		struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		struct pair p;
		uint32_t key;
		int status = -2;

		if (mw && make_pair(pd, &p)) {
			key = next_key(mw->rkey);
			status = bind2(p.resp, mw, key, tmr, WIN_OFF, WIN_LEN,
				       IBV_ACCESS_REMOTE_WRITE) ?:
				 rdma(&p, IBV_WR_RDMA_WRITE, key, WIN_OFF, 64);
			free_pair(&p);
		}
		result(!status, "the device serves windows after that exit",
		       "status %d", status);
		if (mw)
			ibv_dealloc_mw(mw);
	}
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	const char *ipv4;

	if (!open_test_device(argc, argv, &list, &ipv4))
		return 1;
	gid_index = find_gid(ipv4);
	pd = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	target = aligned_alloc(4096, BUF_LEN);
	source = aligned_alloc(4096, SRC_CHUNKS * WIN_LEN);
	if (target && source) {
		tmr = ibv_reg_mr(pd, target, BUF_LEN, BINDABLE);
		smr = ibv_reg_mr(pd, source, SRC_CHUNKS * WIN_LEN,
				 IBV_ACCESS_LOCAL_WRITE);
	}
	if (gid_index < 0 || !pd || !pd2 || !cq || !tmr || !smr) {
		result(false, "set-up", "GID %d, errno %d", gid_index, errno);
		return 1;
	}
	test_claims();
	test_type2_serves();
	test_type2_refuses();
	test_bind_refused();
	test_type2_invalidate();
	test_type1();
	test_mr_held();
	test_invalidate_race();
	test_exit_with_windows();
	if (tmr)
		result(!ibv_dereg_mr(tmr), "the target MR deregisters at the end",
		       "errno %d", errno);
	ibv_dereg_mr(smr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd2);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(target);
	free(source);
	return failures ? 1 : 0;
}
