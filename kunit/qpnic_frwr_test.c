// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite for fast registration as kernel ULPs drive it: ib_alloc_mr,
 * ib_map_mr_sg, REG_MR and LOCAL_INV in SQ order, remote invalidation by
 * a SEND with invalidate, every misuse completing with its error and
 * changing nothing else, and a LOCAL_INV posted while a copy into its
 * MR is under way (a kprobe makes that happen). Two RC QPs on one device are connected through
 * its own GID; B owns the fast-reg MRs, A reaches them with READs and
 * WRITEs by their rkey.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <qpnic/qpnic.h>

#include "qpnic_test_util.h"

MODULE_IMPORT_NS(QPNIC_KUNIT);

#define FR_PAGES	4
#define FR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ)

static struct {
	struct net_device *ndev;
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_pd *pd2;	/* another PD: its MRs are not the QPs' */
	union ib_gid gid;
} fr;

struct fr_pair {
	struct ib_cq *cq_a, *cq_b;
	struct ib_qp *a, *b;
};

/* One fast-reg MR and the pages it maps (page aligned, FR_PAGES of them). */
struct fr_mr {
	struct ib_mr *mr;
	u8 *buf;
	struct scatterlist sg[FR_PAGES];
};

static void fr_connect(struct kunit *test, struct ib_qp *qp, u32 dqpn,
		       u8 timeout)
{
	const struct qpnic_test_rc_path path = {
		.dgid = &fr.gid, .psn = 100, .rd_atomic = 4, .timeout = timeout,
		.retry_cnt = 7, .rnr_retry = 7,
		.access = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ,
	};

	KUNIT_ASSERT_EQ(test, qpnic_test_rc_connect(qp, dqpn, &path), 0);
}

static struct ib_qp *fr_qp(struct kunit *test, struct ib_cq *cq)
{
	struct ib_qp_init_attr attr = {
		.qp_type = IB_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 4,
			 .max_recv_sge = 4 },
	};
	struct ib_qp *qp = ib_create_qp(fr.pd, &attr);

	KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
	return qp;
}

/* A pair whose local ACK timeout is @timeout (4.096 us * 2^timeout). */
static void fr_pair_init_timeout(struct kunit *test, struct fr_pair *p,
				 u8 timeout)
{
	p->cq_a = ib_create_cq(fr.ibdev, NULL, NULL, NULL,
			       &(struct ib_cq_init_attr){ .cqe = 64 });
	KUNIT_ASSERT_FALSE(test, IS_ERR(p->cq_a));
	p->cq_b = ib_create_cq(fr.ibdev, NULL, NULL, NULL,
			       &(struct ib_cq_init_attr){ .cqe = 64 });
	KUNIT_ASSERT_FALSE(test, IS_ERR(p->cq_b));
	p->a = fr_qp(test, p->cq_a);
	p->b = fr_qp(test, p->cq_b);
	fr_connect(test, p->a, p->b->qp_num, timeout);
	fr_connect(test, p->b, p->a->qp_num, timeout);
}

static void fr_pair_init(struct kunit *test, struct fr_pair *p)
{
	fr_pair_init_timeout(test, p, 12);
}

static void fr_pair_destroy(struct fr_pair *p)
{
	ib_destroy_qp(p->b);
	ib_destroy_qp(p->a);
	ib_destroy_cq(p->cq_b);
	ib_destroy_cq(p->cq_a);
}

/* An MR of @pd over FR_PAGES fresh pages, mapped from @offset on. */
static void fr_mr_init(struct kunit *test, struct fr_mr *m, struct ib_pd *pd,
		       unsigned int offset)
{
	int i, n;

	m->buf = (u8 *)__get_free_pages(GFP_KERNEL | __GFP_ZERO,
					get_order(FR_PAGES * PAGE_SIZE));
	KUNIT_ASSERT_NOT_NULL(test, m->buf);
	m->mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, FR_PAGES);
	KUNIT_ASSERT_FALSE(test, IS_ERR(m->mr));
	sg_init_table(m->sg, FR_PAGES);
	for (i = 0; i < FR_PAGES; i++)
		sg_set_buf(&m->sg[i], m->buf + i * PAGE_SIZE, PAGE_SIZE);
	n = ib_dma_map_sg(fr.ibdev, m->sg, FR_PAGES, DMA_BIDIRECTIONAL);
	KUNIT_ASSERT_EQ(test, n, FR_PAGES);
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(m->mr, m->sg, FR_PAGES, &offset,
					   PAGE_SIZE), FR_PAGES);
}

static void fr_mr_destroy(struct fr_mr *m)
{
	ib_dereg_mr(m->mr);
	free_pages((unsigned long)m->buf, get_order(FR_PAGES * PAGE_SIZE));
}

static int fr_post_reg(struct ib_qp *qp, struct ib_mr *mr, u32 key, int access,
		       int flags, u64 wr_id)
{
	struct ib_reg_wr wr = {
		.wr = { .wr_id = wr_id, .opcode = IB_WR_REG_MR, .send_flags = flags },
		.mr = mr, .key = key, .access = access,
	};

	return ib_post_send(qp, &wr.wr, NULL);
}

static int fr_post_inv(struct ib_qp *qp, u32 key, int flags, u64 wr_id)
{
	struct ib_send_wr wr = {
		.wr_id = wr_id, .opcode = IB_WR_LOCAL_INV, .send_flags = flags,
		.ex.invalidate_rkey = key,
	};

	return ib_post_send(qp, &wr, NULL);
}

static int fr_post_rdma(struct ib_qp *qp, enum ib_wr_opcode op, void *buf,
			u32 len, u64 remote, u32 rkey, u64 wr_id)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = fr.pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = remote, .rkey = rkey,
	};

	return ib_post_send(qp, &wr.wr, NULL);
}

static int fr_post_send(struct ib_qp *qp, void *buf, u32 len,
			enum ib_wr_opcode op, u32 rkey, u64 wr_id)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = fr.pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = op, .send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = rkey,
	};

	return ib_post_send(qp, &wr, NULL);
}

static int fr_post_send_inv(struct ib_qp *qp, void *buf, u32 len, u32 rkey,
			    u64 wr_id)
{
	return fr_post_send(qp, buf, len, IB_WR_SEND_WITH_INV, rkey, wr_id);
}

static int fr_post_recv(struct ib_qp *qp, void *buf, u32 len, u32 lkey,
			u64 wr_id)
{
	struct ib_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = lkey };
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };

	return ib_post_recv(qp, &wr, NULL);
}

static void fr_expect_none(struct kunit *test, struct ib_cq *cq)
{
	struct ib_wc wc;

	KUNIT_EXPECT_EQ(test, qpnic_test_poll(cq, &wc, 20), 0);
}

/* A fresh key for @mr, as ULPs rotate it before each registration. */
static u32 fr_next_key(struct ib_mr *mr)
{
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	return mr->rkey;
}

/* A fresh key for @mr, registered on B with FR_ACCESS (signaled, checked). */
static u32 fr_register(struct kunit *test, struct fr_pair *p, struct ib_mr *mr,
		       u64 wr_id)
{
	u32 key = fr_next_key(mr);
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, fr_post_reg(p->b, mr, key, FR_ACCESS,
					  IB_SEND_SIGNALED, wr_id), 0);
	qpnic_test_expect(test, p->cq_b, IB_WC_SUCCESS, IB_WC_REG_MR, wr_id, &wc);
	return key;
}

/*
 * What the device claims, and alloc_mr's limits: 257 pages (RDS) and the
 * 512 reported fit, 513 and a type it does not offer are EINVAL.
 */
static void qpnic_frwr_alloc_limits(struct kunit *test)
{
	const struct ib_device_attr *a = &fr.ibdev->attrs;
	struct ib_mr *mr;

	KUNIT_EXPECT_TRUE(test, a->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS);
	KUNIT_EXPECT_EQ(test, a->max_fast_reg_page_list_len, 512U);
	KUNIT_EXPECT_EQ(test, a->page_size_cap, (u64)PAGE_SIZE);
	KUNIT_EXPECT_FALSE(test, a->kernel_cap_flags & IBK_SG_GAPS_REG);
	mr = ib_alloc_mr(fr.pd, IB_MR_TYPE_MEM_REG, 257);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	KUNIT_EXPECT_EQ(test, mr->lkey, mr->rkey);
	KUNIT_EXPECT_EQ(test, ib_dereg_mr(mr), 0);
	mr = ib_alloc_mr(fr.pd, IB_MR_TYPE_MEM_REG, 512);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	KUNIT_EXPECT_EQ(test, ib_dereg_mr(mr), 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_alloc_mr(fr.pd, IB_MR_TYPE_MEM_REG, 513)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_alloc_mr(fr.pd, IB_MR_TYPE_SG_GAPS, 8)),
			-EINVAL);
}

/*
 * map_mr_sg: an unaligned first entry and a short last one map whole; a
 * gap stops the map (a partial count, as ib_srp relies on), so does a
 * full page list; a page size other than PAGE_SIZE is refused.
 */
static void qpnic_frwr_map(struct kunit *test)
{
	u8 *buf = (u8 *)__get_free_pages(GFP_KERNEL, get_order(8 * PAGE_SIZE));
	struct scatterlist sg[3];
	unsigned int off = 0;
	struct ib_mr *mr;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	mr = ib_alloc_mr(fr.pd, IB_MR_TYPE_MEM_REG, 3);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	sg_init_table(sg, 3);
	sg_set_buf(&sg[0], buf + 100, PAGE_SIZE - 100);
	sg_set_buf(&sg[1], buf + PAGE_SIZE, PAGE_SIZE);
	sg_set_buf(&sg[2], buf + 2 * PAGE_SIZE, 10);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(fr.ibdev, sg, 3, DMA_TO_DEVICE), 3);
	KUNIT_EXPECT_EQ(test, ib_map_mr_sg(mr, sg, 3, NULL, PAGE_SIZE), 3);
	KUNIT_EXPECT_EQ(test, mr->iova, (u64)(uintptr_t)(buf + 100));
	KUNIT_EXPECT_EQ(test, mr->length, (u64)(2 * PAGE_SIZE - 100 + 10));
	/* sg_offset moves the start into the first entry */
	off = 28;
	KUNIT_EXPECT_EQ(test, ib_map_mr_sg(mr, sg, 3, &off, PAGE_SIZE), 3);
	KUNIT_EXPECT_EQ(test, mr->iova, (u64)(uintptr_t)(buf + 128));
	/* a gap: the second entry does not start a page */
	sg_set_buf(&sg[1], buf + 4 * PAGE_SIZE + 8, 64);
	sg_dma_address(&sg[1]) = (uintptr_t)(buf + 4 * PAGE_SIZE + 8);
	sg_dma_len(&sg[1]) = 64;
	KUNIT_EXPECT_EQ(test, ib_map_mr_sg(mr, sg, 3, NULL, PAGE_SIZE), 1);
	/* four pages into a list of three: three entries' worth */
	sg_set_buf(&sg[0], buf, 2 * PAGE_SIZE);
	sg_dma_address(&sg[0]) = (uintptr_t)buf;
	sg_dma_len(&sg[0]) = 2 * PAGE_SIZE;
	sg_set_buf(&sg[1], buf + 2 * PAGE_SIZE, 2 * PAGE_SIZE);
	sg_dma_address(&sg[1]) = (uintptr_t)(buf + 2 * PAGE_SIZE);
	sg_dma_len(&sg[1]) = 2 * PAGE_SIZE;
	off = 0;
	KUNIT_EXPECT_LT(test, ib_map_mr_sg(mr, sg, 2, &off, PAGE_SIZE), 2);
	KUNIT_EXPECT_EQ(test, ib_map_mr_sg(mr, sg, 1, NULL, 2 * PAGE_SIZE), -EINVAL);
	KUNIT_EXPECT_EQ(test, ib_dereg_mr(mr), 0);
	free_pages((unsigned long)buf, get_order(8 * PAGE_SIZE));
}

/*
 * REG_MR with the iova rewritten after map_mr_sg (xprtrdma's XID in the
 * top 32 bits, then RDS' zero-based 0): the peer's WRITE lands and its
 * READ returns the bytes at the offsets the iova names. LOCAL_INV by the
 * lkey ends it: a WRITE through the old rkey is a remote access error and
 * no byte moves.
 */
static void qpnic_frwr_reg_write_read(struct kunit *test)
{
	u8 *src = kunit_kzalloc(test, 3000, GFP_KERNEL);
	u8 *dst = kunit_kzalloc(test, 3000, GFP_KERNEL);
	struct fr_pair p;
	struct fr_mr m;
	struct ib_wc wc;
	u64 iova;
	u32 key;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	for (i = 0; i < 3000; i++)
		src[i] = i * 13 + 5;
	fr_pair_init(test, &p);
	fr_mr_init(test, &m, fr.pd, 200);
	m.mr->iova = (0xfeedbeefULL << 32) | (m.mr->iova & 0xffffffff);
	iova = m.mr->iova;
	key = fr_register(test, &p, m.mr, 1);
	/* 3000 bytes from 1000 into the MR: across two page boundaries */
	KUNIT_ASSERT_EQ(test, fr_post_rdma(p.a, IB_WR_RDMA_WRITE, src, 3000,
					   iova + 1000, key, 2), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, 2, &wc);
	KUNIT_EXPECT_TRUE(test, !memcmp(m.buf + 200 + 1000, src, 3000));
	KUNIT_ASSERT_EQ(test, fr_post_rdma(p.a, IB_WR_RDMA_READ, dst, 3000,
					   iova + 1000, key, 3), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_READ, 3, &wc);
	KUNIT_EXPECT_TRUE(test, !memcmp(dst, src, 3000));
	/* past the end of the registration (mapped length), and before it */
	KUNIT_ASSERT_EQ(test, fr_post_rdma(p.a, IB_WR_RDMA_READ, dst, 16,
					   iova + m.mr->length - 8, key, 4), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_REM_ACCESS_ERR, IB_WC_RDMA_READ, 4, &wc);
	fr_pair_destroy(&p);

	/* invalidated by the lkey: the old rkey moves nothing */
	fr_pair_init(test, &p);
	KUNIT_ASSERT_EQ(test, fr_post_inv(p.b, m.mr->lkey, IB_SEND_SIGNALED, 5), 0);
	qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_LOCAL_INV, 5, &wc);
	memset(m.buf, 0, FR_PAGES * PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, fr_post_rdma(p.a, IB_WR_RDMA_WRITE, src, 64,
					   iova, key, 6), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_REM_ACCESS_ERR, IB_WC_RDMA_WRITE, 6, &wc);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(m.buf, 0, FR_PAGES * PAGE_SIZE));
	fr_pair_destroy(&p);

	/* zero-based: iova 0 names the first mapped byte */
	fr_pair_init(test, &p);
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg_zbva(m.mr, m.sg, FR_PAGES, NULL,
						PAGE_SIZE), FR_PAGES);
	key = fr_register(test, &p, m.mr, 7);
	KUNIT_ASSERT_EQ(test, fr_post_rdma(p.a, IB_WR_RDMA_WRITE, src, 100,
					   5000, key, 8), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, 8, &wc);
	KUNIT_EXPECT_TRUE(test, !memcmp(m.buf + 5000, src, 100));
	fr_pair_destroy(&p);
	/* dereg of a VALID MR */
	fr_mr_destroy(&m);
}

/* One REG_MR that must fail: @status, the QP in ERR, the MR unchanged. */
static void fr_reg_fails(struct kunit *test, struct ib_mr *mr, u32 key,
			 int access, enum ib_wc_status status)
{
	struct ib_qp_attr attr;
	struct ib_qp_init_attr init;
	struct fr_pair p;
	struct ib_wc wc;

	fr_pair_init(test, &p);
	/* unsignaled: an error completes all the same */
	KUNIT_ASSERT_EQ(test, fr_post_reg(p.b, mr, key, access, 0, 9), 0);
	qpnic_test_expect(test, p.cq_b, status, IB_WC_REG_MR, 9, &wc);
	KUNIT_EXPECT_EQ(test, ib_query_qp(p.b, &attr, IB_QP_STATE, &init), 0);
	KUNIT_EXPECT_EQ(test, attr.qp_state, IB_QPS_ERR);
	fr_pair_destroy(&p);
}

/*
 * Misused registrations: a VALID MR again, a key of another index, an MR
 * of another PD, remote write without local write, a length past the
 * mapped pages. Each completes in error and the MR keeps its state: the
 * first registration still serves the peer.
 */
static void qpnic_frwr_reg_errors(struct kunit *test)
{
	u8 *src = kunit_kzalloc(test, 64, GFP_KERNEL);
	struct fr_mr m, other;
	struct fr_pair p;
	struct ib_wc wc;
	u32 key;

	KUNIT_ASSERT_NOT_NULL(test, src);
	memset(src, 0x5a, 64);
	fr_mr_init(test, &m, fr.pd, 0);
	fr_mr_init(test, &other, fr.pd2, 0);
	fr_pair_init(test, &p);
	key = fr_register(test, &p, m.mr, 1);
	fr_pair_destroy(&p);

	fr_reg_fails(test, m.mr, key + 1, FR_ACCESS, IB_WC_LOC_QP_OP_ERR);
	fr_reg_fails(test, other.mr, other.mr->rkey, FR_ACCESS, IB_WC_LOC_PROT_ERR);

	/* the first registration is intact: the peer still writes through it */
	fr_pair_init(test, &p);
	KUNIT_ASSERT_EQ(test, fr_post_rdma(p.a, IB_WR_RDMA_WRITE, src, 64,
					   m.mr->iova + 8, key, 2), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, 2, &wc);
	KUNIT_EXPECT_TRUE(test, !memcmp(m.buf + 8, src, 64));
	KUNIT_ASSERT_EQ(test, fr_post_inv(p.b, key, IB_SEND_SIGNALED, 3), 0);
	qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_LOCAL_INV, 3, &wc);
	/* invalidating a FREE MR succeeds too */
	KUNIT_ASSERT_EQ(test, fr_post_inv(p.b, key, IB_SEND_SIGNALED, 4), 0);
	qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_LOCAL_INV, 4, &wc);
	fr_pair_destroy(&p);

	/* FREE now, but these still fail */
	fr_reg_fails(test, m.mr, (key & ~0xffU) ^ 0x100, FR_ACCESS,
		     IB_WC_LOC_QP_OP_ERR);
	fr_reg_fails(test, m.mr, key, IB_ACCESS_REMOTE_WRITE, IB_WC_LOC_QP_OP_ERR);
	m.mr->length = FR_PAGES * PAGE_SIZE + 1;
	fr_reg_fails(test, m.mr, key, FR_ACCESS, IB_WC_LOC_QP_OP_ERR);
	m.mr->length = FR_PAGES * PAGE_SIZE;

	/* LOCAL_INV of keys that may not be invalidated */
	fr_pair_init(test, &p);
	KUNIT_ASSERT_EQ(test, fr_post_inv(p.b, fr.pd->local_dma_lkey, 0, 5), 0);
	qpnic_test_expect(test, p.cq_b, IB_WC_LOC_QP_OP_ERR, IB_WC_LOCAL_INV, 5, &wc);
	fr_pair_destroy(&p);
	fr_pair_init(test, &p);
	KUNIT_ASSERT_EQ(test, fr_post_inv(p.b, other.mr->rkey, 0, 6), 0);
	qpnic_test_expect(test, p.cq_b, IB_WC_LOC_PROT_ERR, IB_WC_LOCAL_INV, 6, &wc);
	fr_pair_destroy(&p);

	/* and after all that, a correct registration works */
	fr_pair_init(test, &p);
	key = fr_register(test, &p, m.mr, 7);
	fr_pair_destroy(&p);
	fr_mr_destroy(&other);
	fr_mr_destroy(&m);
}

/*
 * A SEND with invalidate from the peer: the receive completes with
 * IB_WC_WITH_INVALIDATE and the key, the MR is FREE already (the next
 * REG_MR, with no LOCAL_INV, works at once) and the old rkey is refused.
 */
static void qpnic_frwr_remote_inv(struct kunit *test)
{
	u8 *msg = kunit_kzalloc(test, 64, GFP_KERNEL);
	u8 *rbuf = kunit_kzalloc(test, 64, GFP_KERNEL);
	struct fr_pair p;
	struct fr_mr m;
	struct ib_wc wc;
	u32 key;

	KUNIT_ASSERT_NOT_NULL(test, msg);
	KUNIT_ASSERT_NOT_NULL(test, rbuf);
	memset(msg, 0x77, 64);
	fr_mr_init(test, &m, fr.pd, 0);
	fr_pair_init(test, &p);
	key = fr_next_key(m.mr);
	KUNIT_ASSERT_EQ(test, fr_post_reg(p.b, m.mr, key, FR_ACCESS, 0, 1), 0);
	KUNIT_ASSERT_EQ(test, fr_post_recv(p.b, rbuf, 64, fr.pd->local_dma_lkey, 2), 0);
	KUNIT_ASSERT_EQ(test, fr_post_send_inv(p.a, msg, 40, key, 3), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_SEND, 3, &wc);
	qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_RECV, 2, &wc);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, wc.ex.invalidate_rkey, key);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 40U);
	KUNIT_EXPECT_TRUE(test, !memcmp(rbuf, msg, 40));
	/* no REG_MR completion: it was unsignaled */
	fr_expect_none(test, p.cq_b);
	KUNIT_ASSERT_EQ(test, fr_post_rdma(p.a, IB_WR_RDMA_WRITE, msg, 8,
					   m.mr->iova, key, 4), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_REM_ACCESS_ERR, IB_WC_RDMA_WRITE, 4, &wc);
	fr_pair_destroy(&p);

	fr_pair_init(test, &p);
	key = fr_register(test, &p, m.mr, 5);
	fr_pair_destroy(&p);
	fr_mr_destroy(&m);
}

/* A SEND with invalidate of @key fails on both sides; QPs go to ERR. */
static void fr_remote_inv_fails(struct kunit *test, u32 key)
{
	u8 *buf = kunit_kzalloc(test, 128, GFP_KERNEL);
	struct fr_pair p;
	struct ib_wc wc;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	fr_pair_init(test, &p);
	KUNIT_ASSERT_EQ(test, fr_post_recv(p.b, buf + 64, 64, fr.pd->local_dma_lkey,
					   1), 0);
	KUNIT_ASSERT_EQ(test, fr_post_send_inv(p.a, buf, 16, key, 2), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_REM_INV_REQ_ERR, IB_WC_SEND, 2, &wc);
	qpnic_test_expect(test, p.cq_b, IB_WC_REM_INV_REQ_ERR, IB_WC_RECV, 1, &wc);
	fr_pair_destroy(&p);
}

/*
 * Keys a peer may not invalidate: the DMA MR's, another PD's fast-reg MR,
 * a stale key of a registered MR. The registered one stays VALID.
 */
static void qpnic_frwr_remote_inv_refused(struct kunit *test)
{
	u8 *src = kunit_kzalloc(test, 16, GFP_KERNEL);
	struct fr_mr m, other;
	struct fr_pair p;
	struct ib_wc wc;
	u32 key;

	KUNIT_ASSERT_NOT_NULL(test, src);
	fr_mr_init(test, &m, fr.pd, 0);
	fr_mr_init(test, &other, fr.pd2, 0);
	fr_pair_init(test, &p);
	key = fr_register(test, &p, m.mr, 1);
	fr_pair_destroy(&p);

	fr_remote_inv_fails(test, fr.pd->unsafe_global_rkey);
	fr_remote_inv_fails(test, other.mr->rkey);
	fr_remote_inv_fails(test, ib_inc_rkey(key));

	fr_pair_init(test, &p);
	KUNIT_ASSERT_EQ(test, fr_post_rdma(p.a, IB_WR_RDMA_WRITE, src, 16,
					   m.mr->iova, key, 2), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, 2, &wc);
	fr_pair_destroy(&p);
	fr_mr_destroy(&other);
	fr_mr_destroy(&m);
}

/*
 * The chains ULPs post, with interrupts off as nvme's and iser's posters
 * may: [LOCAL_INV, REG_MR] unsignaled then a signaled SEND carrying the
 * lkey as its SGE (the MR as a local buffer): one completion, in order.
 * Then unsignaled local WRs in ERR flush with their opcodes.
 */
static void qpnic_frwr_chains_and_flush(struct kunit *test)
{
	u8 *rbuf = kunit_kzalloc(test, 256, GFP_KERNEL);
	struct ib_qp_attr err_attr = { .qp_state = IB_QPS_ERR };
	struct ib_reg_wr reg;
	struct ib_send_wr inv, send;
	struct ib_sge sge;
	unsigned long flags;
	struct fr_pair p;
	struct fr_mr m;
	struct ib_wc wc;
	u32 old_key;
	int err, i;

	KUNIT_ASSERT_NOT_NULL(test, rbuf);
	fr_mr_init(test, &m, fr.pd, 0);
	for (i = 0; i < 256; i++)
		m.buf[i] = 0xa0 + i;
	fr_pair_init(test, &p);
	old_key = m.mr->rkey;
	inv = (struct ib_send_wr){ .wr_id = 1, .opcode = IB_WR_LOCAL_INV,
				   .ex.invalidate_rkey = old_key };
	reg = (struct ib_reg_wr){
		.wr = { .wr_id = 2, .opcode = IB_WR_REG_MR },
		.mr = m.mr, .key = fr_next_key(m.mr), .access = IB_ACCESS_LOCAL_WRITE,
	};
	sge = (struct ib_sge){ .addr = m.mr->iova, .length = 256, .lkey = m.mr->lkey };
	send = (struct ib_send_wr){ .wr_id = 3, .opcode = IB_WR_SEND,
				    .send_flags = IB_SEND_SIGNALED,
				    .sg_list = &sge, .num_sge = 1 };
	inv.next = &reg.wr;
	reg.wr.next = &send;
	KUNIT_ASSERT_EQ(test, fr_post_recv(p.a, rbuf, 256, fr.pd->local_dma_lkey, 4), 0);
	local_irq_save(flags);
	err = ib_post_send(p.b, &inv, NULL);
	local_irq_restore(flags);
	KUNIT_ASSERT_EQ(test, err, 0);
	qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_SEND, 3, &wc);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RECV, 4, &wc);
	KUNIT_EXPECT_TRUE(test, !memcmp(rbuf, m.buf, 256));
	fr_expect_none(test, p.cq_b);
	/* only LOCAL_WRITE: the rkey gives the peer nothing */
	KUNIT_ASSERT_EQ(test, fr_post_rdma(p.a, IB_WR_RDMA_READ, rbuf, 8,
					   m.mr->iova, m.mr->rkey, 5), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_REM_ACCESS_ERR, IB_WC_RDMA_READ, 5, &wc);

	/* B in ERR: unsignaled local WRs flush, with their opcodes */
	KUNIT_ASSERT_EQ(test, ib_modify_qp(p.b, &err_attr, IB_QP_STATE), 0);
	inv.next = NULL;
	inv.ex.invalidate_rkey = m.mr->rkey;
	reg.wr.wr_id = 6;
	reg.wr.next = &inv;
	inv.wr_id = 7;
	KUNIT_ASSERT_EQ(test, ib_post_send(p.b, &reg.wr, NULL), 0);
	qpnic_test_expect(test, p.cq_b, IB_WC_WR_FLUSH_ERR, IB_WC_REG_MR, 6, &wc);
	qpnic_test_expect(test, p.cq_b, IB_WC_WR_FLUSH_ERR, IB_WC_LOCAL_INV, 7, &wc);
	fr_pair_destroy(&p);
	fr_mr_destroy(&m);
}

/*
 * REG_MR runs in SQ order behind a WRITE still unacknowledged, and the
 * SEND behind it carries the new key, which the peer then writes
 * through: the completions come in posting order (WRITE, REG_MR, SEND)
 * though the registration ran before the WRITE was acknowledged.
 */
static void qpnic_frwr_in_order(struct kunit *test)
{
	u8 *big = kunit_kzalloc(test, 64 * 1024, GFP_KERNEL);
	u8 *dst = kunit_kzalloc(test, 64 * 1024, GFP_KERNEL);
	u8 *rbuf = kunit_kzalloc(test, 64, GFP_KERNEL);
	struct fr_pair p;
	struct fr_mr m;
	struct ib_wc wc;
	u32 key;

	KUNIT_ASSERT_NOT_NULL(test, big);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	KUNIT_ASSERT_NOT_NULL(test, rbuf);
	memset(big, 0x3c, 64 * 1024);
	fr_mr_init(test, &m, fr.pd, 0);
	fr_pair_init(test, &p);
	KUNIT_ASSERT_EQ(test, fr_post_recv(p.a, rbuf, 64, fr.pd->local_dma_lkey, 1), 0);
	KUNIT_ASSERT_EQ(test, fr_post_rdma(p.b, IB_WR_RDMA_WRITE, big, 64 * 1024,
					   (uintptr_t)dst, fr.pd->unsafe_global_rkey,
					   2), 0);
	key = fr_next_key(m.mr);
	KUNIT_ASSERT_EQ(test, fr_post_reg(p.b, m.mr, key, FR_ACCESS,
					  IB_SEND_SIGNALED, 3), 0);
	KUNIT_ASSERT_EQ(test, fr_post_send(p.b, &key, sizeof(key), IB_WR_SEND,
					   0, 4), 0);
	qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, 2, &wc);
	qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_REG_MR, 3, &wc);
	qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_SEND, 4, &wc);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RECV, 1, &wc);
	KUNIT_EXPECT_TRUE(test, !memcmp(dst, big, 64 * 1024));
	KUNIT_ASSERT_EQ(test, fr_post_rdma(p.a, IB_WR_RDMA_WRITE, big, 32,
					   m.mr->iova, *(u32 *)rbuf, 5), 0);
	qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, 5, &wc);
	KUNIT_EXPECT_TRUE(test, !memcmp(m.buf, big, 32));
	fr_pair_destroy(&p);
	fr_mr_destroy(&m);
}

/*
 * rdma_rw's chain per MR puts a LOCAL_INV right behind an unsignaled
 * WRITE (ib_srpt posts one per page for an initiator that registers
 * nothing). The LOCAL_INV waits for the WRITE's ACK: a WRITE posted with
 * it behind asks for the ACK on the wire, and a LOCAL_INV posted once
 * the WRITE went sends it again at once, asking (a probe). With an ACK
 * timeout of 1.07 s, neither may take half of it; the first may not
 * even probe. (Each waited 0.54 s, and an SRP test of 16 MiB minutes.)
 */
static void qpnic_frwr_inv_behind_unasked_write(struct kunit *test)
{
	u8 *src = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	u8 *dst = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	struct ib_sge sge;
	struct ib_rdma_wr write;
	struct ib_send_wr inv;
	unsigned long start;
	struct fr_pair p;
	struct fr_mr m;
	struct ib_wc wc;
	u64 probes;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	fr_mr_init(test, &m, fr.pd, 0);
	fr_pair_init_timeout(test, &p, 18);
	sge = (struct ib_sge){ .addr = (uintptr_t)src, .length = PAGE_SIZE,
			       .lkey = fr.pd->local_dma_lkey };
	write = (struct ib_rdma_wr){
		.wr = { .wr_id = 2, .opcode = IB_WR_RDMA_WRITE, .sg_list = &sge,
			.num_sge = 1, .next = &inv },
		.remote_addr = (uintptr_t)dst, .rkey = fr.pd->unsafe_global_rkey,
	};
	inv = (struct ib_send_wr){ .wr_id = 3, .opcode = IB_WR_LOCAL_INV,
				   .send_flags = IB_SEND_SIGNALED };

	/* posted together: the WRITE asks, nothing is probed */
	memset(src, 0x5a, PAGE_SIZE);
	inv.ex.invalidate_rkey = fr_register(test, &p, m.mr, 1);
	probes = qpnic_test_counter(test, fr.ibdev, "ack_probes");
	start = jiffies;
	KUNIT_ASSERT_EQ(test, ib_post_send(p.b, &write.wr, NULL), 0);
	qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_LOCAL_INV, 3, &wc);
	KUNIT_EXPECT_LT(test, jiffies - start, msecs_to_jiffies(500));
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, fr.ibdev, "ack_probes"),
			probes);
	KUNIT_EXPECT_TRUE(test, !memcmp(dst, src, PAGE_SIZE));

	/* the LOCAL_INV after the WRITE landed: it probes at once */
	memset(src, 0xa5, PAGE_SIZE);
	inv.ex.invalidate_rkey = fr_register(test, &p, m.mr, 4);
	write.wr.next = NULL;
	KUNIT_ASSERT_EQ(test, ib_post_send(p.b, &write.wr, NULL), 0);
	for (i = 0; i < 1000 && memcmp(dst, src, PAGE_SIZE); i++)
		usleep_range(500, 1000);
	KUNIT_ASSERT_TRUE(test, !memcmp(dst, src, PAGE_SIZE));
	start = jiffies;
	KUNIT_ASSERT_EQ(test, ib_post_send(p.b, &inv, NULL), 0);
	qpnic_test_expect(test, p.cq_b, IB_WC_SUCCESS, IB_WC_LOCAL_INV, 3, &wc);
	KUNIT_EXPECT_LT(test, jiffies - start, msecs_to_jiffies(500));
	KUNIT_EXPECT_EQ(test, qpnic_test_counter(test, fr.ibdev, "ack_probes"),
			probes + 1);
	fr_expect_none(test, p.cq_b);
	fr_pair_destroy(&p);
	fr_mr_destroy(&m);
}

/*
 * The race of an invalidation against a copy into its MR, made to happen:
 * a kprobe on qpnic_mr_copy() (the access passed its lookup) sees a copy
 * into fr_race.mr, tells a work item waiting on the other CPU to post a
 * LOCAL_INV of it, and holds the copy back 2 ms. A LOCAL_INV that
 * completed before the copy's bytes landed would let them land through a
 * key already invalidated. (The kprobe handler runs in int3 context: it
 * only sets a flag.)
 */
static struct {
	struct ib_mr *mr;	/* the MR whose copies trigger it, while armed */
	u8 *buf;		/* its first KiB */
	struct ib_qp *qp;	/* where the LOCAL_INV goes */
	struct ib_cq *cq;	/* and completes */
	u32 key;
	int armed;
	int go;			/* the kprobe saw the copy */
	int cpu;		/* the other CPU */
	int post_err;
	struct ib_wc wc;	/* the LOCAL_INV's completion */
	u8 snap[1024];		/* the MR as the completion found it */
	bool done;
	struct work_struct inv_work;
} fr_race;

/*
 * On the other CPU: wait for the copy to start, then LOCAL_INV, its
 * completion, and what the MR holds then.
 */
static void fr_race_inv(struct work_struct *work)
{
	unsigned long end = jiffies + 3 * HZ;

	while (!READ_ONCE(fr_race.go) && time_before(jiffies, end))
		cond_resched();
	fr_race.post_err = fr_post_inv(fr_race.qp, fr_race.key, IB_SEND_SIGNALED, 2);
	/* (yield: a kernel post may be carried out by a work item here) */
	while (!fr_race.post_err && ib_poll_cq(fr_race.cq, 1, &fr_race.wc) < 1 &&
	       time_before(jiffies, end))
		cond_resched();
	memcpy(fr_race.snap, fr_race.buf, sizeof(fr_race.snap));
	/* the snapshot and the completion before @done; the test acquires it */
	smp_store_release(&fr_race.done, true);
}

static int fr_race_copy(struct kprobe *kp, struct pt_regs *regs)
{
	if (regs_get_kernel_argument(regs, 0) != (unsigned long)READ_ONCE(fr_race.mr) ||
	    !xchg(&fr_race.armed, 0))
		return 0;
	WRITE_ONCE(fr_race.go, 1);
	mdelay(2);
	return 0;
}

static struct kprobe fr_copy_kprobe = {
	.symbol_name = "qpnic_mr_copy",
	.pre_handler = fr_race_copy,
};

/*
 * LOCAL_INV posted while a WRITE's copy into the MR is under way: it
 * completes only once that copy is done, so the MR holds the WRITE's bytes
 * when the invalidation's completion is seen, and nothing changes after.
 */
static void qpnic_frwr_inv_waits_for_copy(struct kunit *test)
{
	u8 *src = kunit_kmalloc(test, 1024, GFP_KERNEL);
	struct fr_mr m;
	int round;

	KUNIT_ASSERT_NOT_NULL(test, src);
	if (!IS_ENABLED(CONFIG_KPROBES) || num_online_cpus() < 2)
		kunit_skip(test, "needs kprobes and a second CPU");
	fr_mr_init(test, &m, fr.pd, 0);
	INIT_WORK(&fr_race.inv_work, fr_race_inv);
	WRITE_ONCE(fr_race.mr, m.mr);
	KUNIT_ASSERT_EQ(test, register_kprobe(&fr_copy_kprobe), 0);
	for (round = 0; round < 3; round++) {
		struct fr_pair p;
		struct ib_wc wc;

		fr_pair_init(test, &p);
		fr_race.qp = p.b;
		fr_race.cq = p.cq_b;
		fr_race.buf = m.buf;
		fr_race.done = false;
		fr_race.go = 0;
		fr_race.wc.status = IB_WC_GENERAL_ERR;
		fr_race.key = fr_register(test, &p, m.mr, 1);
		fr_race.cpu = cpumask_any_but(cpu_online_mask, raw_smp_processor_id());
		memset(m.buf, 0, 1024);
		memset(src, round + 1, 1024);
		WRITE_ONCE(fr_race.armed, 1);
		queue_work_on(fr_race.cpu, system_highpri_wq, &fr_race.inv_work);
		KUNIT_ASSERT_EQ(test, fr_post_rdma(p.a, IB_WR_RDMA_WRITE, src, 1024,
						   m.mr->iova, fr_race.key, 3), 0);
		/* the WRITE passed its lookup: it lands, and is acknowledged */
		qpnic_test_expect(test, p.cq_a, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, 3, &wc);
		KUNIT_EXPECT_TRUE(test, !memcmp(m.buf, src, 1024));
		KUNIT_EXPECT_EQ(test, READ_ONCE(fr_race.armed), 0);
		flush_work(&fr_race.inv_work);
		/* pairs with fr_race_inv()'s release: its results are visible */
		KUNIT_ASSERT_TRUE(test, smp_load_acquire(&fr_race.done));
		KUNIT_EXPECT_EQ(test, fr_race.post_err, 0);
		KUNIT_EXPECT_EQ(test, fr_race.wc.status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, fr_race.wc.opcode, IB_WC_LOCAL_INV);
		KUNIT_EXPECT_TRUE_MSG(test, !memcmp(fr_race.snap, src, 1024),
				      "round %d: the WRITE landed after its key's LOCAL_INV completed",
				      round);
		fr_pair_destroy(&p);
	}
	unregister_kprobe(&fr_copy_kprobe);
	WRITE_ONCE(fr_race.mr, NULL);
	fr_mr_destroy(&m);
}

static int qpnic_frwr_suite_init(struct kunit_suite *suite)
{
	int err;

	fr.ndev = qpnic_test_netdev_create("qpfr%d");
	if (IS_ERR(fr.ndev))
		return PTR_ERR(fr.ndev);
	err = qpnic_device_add("qpnic_fr%d", fr.ndev, &fr.ibdev);
	if (err)
		goto err_ndev;
	err = qpnic_test_gid0(fr.ibdev, &fr.gid);
	if (err)
		goto err_dev;
	fr.pd = ib_alloc_pd(fr.ibdev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(fr.pd)) {
		err = PTR_ERR(fr.pd);
		goto err_dev;
	}
	fr.pd2 = ib_alloc_pd(fr.ibdev, 0);
	if (IS_ERR(fr.pd2)) {
		err = PTR_ERR(fr.pd2);
		goto err_pd;
	}
	return 0;

err_pd:
	ib_dealloc_pd(fr.pd);
err_dev:
	qpnic_device_remove(fr.ibdev);
err_ndev:
	qpnic_test_netdev_destroy(fr.ndev);
	return err;
}

static void qpnic_frwr_suite_exit(struct kunit_suite *suite)
{
	ib_dealloc_pd(fr.pd2);
	ib_dealloc_pd(fr.pd);
	qpnic_device_remove(fr.ibdev);
	qpnic_test_netdev_destroy(fr.ndev);
}

static struct kunit_case qpnic_frwr_cases[] = {
	KUNIT_CASE(qpnic_frwr_alloc_limits),
	KUNIT_CASE(qpnic_frwr_map),
	KUNIT_CASE(qpnic_frwr_reg_write_read),
	KUNIT_CASE(qpnic_frwr_reg_errors),
	KUNIT_CASE(qpnic_frwr_remote_inv),
	KUNIT_CASE(qpnic_frwr_remote_inv_refused),
	KUNIT_CASE(qpnic_frwr_chains_and_flush),
	KUNIT_CASE(qpnic_frwr_in_order),
	KUNIT_CASE(qpnic_frwr_inv_behind_unasked_write),
	KUNIT_CASE(qpnic_frwr_inv_waits_for_copy),
	{}
};

static struct kunit_suite qpnic_frwr_suite = {
	.name = "qpnic_frwr",
	.suite_init = qpnic_frwr_suite_init,
	.suite_exit = qpnic_frwr_suite_exit,
	.test_cases = qpnic_frwr_cases,
};

kunit_test_suite(qpnic_frwr_suite);
