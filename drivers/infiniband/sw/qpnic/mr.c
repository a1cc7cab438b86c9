// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions: the DMA MR of kernel callers, user MRs (pinned through
 * ib_umem) and fast-registration MRs (a page list map_mr_sg builds, which
 * REG_MR makes valid under a key and LOCAL_INV or a remote invalidation
 * frees again), their keys, and the lookups by key that take a reference
 * dereg_mr waits for. Data movement is mem.c's.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "qpnic.h"

#define QPNIC_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_MW_BIND | QPNIC_ACCESS_FLUSH_GLOBAL)

/* Allocate the MR and its key: index in bits 31..8, a varying tag in 7..0. */
static struct qpnic_mr *qpnic_mr_alloc(struct qpnic_dev *qdev, int access,
				       enum qpnic_mr_type type)
{
	bool user = type == QPNIC_MR_USER;
	struct qpnic_mr *mr;
	int err;

	/* Optional flags (relaxed ordering) are hints a device may ignore. */
	access &= ~IB_ACCESS_OPTIONAL;
	if (access & ~QPNIC_MR_ACCESS) {
		ibdev_dbg(&qdev->ibdev, "reg_mr: access flags %#x not supported\n",
			  access);
		return ERR_PTR(-EOPNOTSUPP);
	}
	/* IB spec 10.6.3.1: remote write or atomic needs local write. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE)) {
		ibdev_dbg(&qdev->ibdev, "reg_mr: access %#x: remote write without local write\n",
			  access);
		return ERR_PTR(-EINVAL);
	}
	err = qpnic_count_get(qdev, &qdev->num_mr, QPNIC_MAX_MR, "MRs");
	if (err)
		return ERR_PTR(err);
	/* A user MR lives as long as its process wants: charge it to its cgroup. */
	mr = kzalloc(sizeof(*mr), user ? GFP_KERNEL_ACCOUNT : GFP_KERNEL);
	if (!mr) {
		err = -ENOMEM;
		goto err_count;
	}
	/* Reserve the index; qpnic_mr_publish() stores the built MR there. */
	err = xa_alloc_cyclic_irq(&qdev->mrs, &mr->index, NULL,
				  XA_LIMIT(1, QPNIC_MAX_MR), &qdev->next_mr,
				  GFP_KERNEL);
	if (err < 0) {
		ibdev_dbg(&qdev->ibdev, "reg_mr: no MR index left (%d)\n", err);
		goto err_free;
	}
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	spin_lock_init(&mr->lock);
	atomic_set(&mr->inflight, 0);
	mr->type = type;
	mr->access = access;
	mr->key = mr->index << 8 | (get_random_u32() & 0xff);
	mr->ibmr.lkey = mr->key;
	/* a fast-reg MR's key is its rkey once a REG_MR grants remote access */
	mr->ibmr.rkey = (type == QPNIC_MR_FAST ||
			 (access & (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE |
				    IB_ACCESS_REMOTE_ATOMIC))) ? mr->key : 0;
	mr->state = type == QPNIC_MR_FAST ? QPNIC_MR_FREE : QPNIC_MR_VALID;
	return mr;

err_free:
	kfree(mr);
err_count:
	atomic_dec(&qdev->num_mr);
	return ERR_PTR(err == -EBUSY ? -ENOMEM : err);
}

static int qpnic_mr_publish(struct qpnic_dev *qdev, struct qpnic_mr *mr)
{
	int err = xa_err(xa_store_irq(&qdev->mrs, mr->index, mr, GFP_KERNEL));

	if (err)
		ibdev_dbg(&qdev->ibdev, "reg_mr: publishing MR %#x failed %d\n",
			  mr->ibmr.lkey, err);
	return err;
}

/* Undo qpnic_mr_alloc() for an MR that was never published. */
static void qpnic_mr_free(struct qpnic_dev *qdev, struct qpnic_mr *mr)
{
	xa_erase_irq(&qdev->mrs, mr->index);
	kfree(mr);
	atomic_dec(&qdev->num_mr);
}

/*
 * The MR at @key's index, with a reference, from any context, without a
 * lock every lookup of the device would share: dereg_mr unpublishes, waits
 * for the references, and frees the MR only after an RCU grace period,
 * so one found just before it went can still be looked at (its count,
 * at 0 then, refuses the reference).
 */
static struct qpnic_mr *qpnic_mr_ref(struct qpnic_dev *qdev, u32 key)
{
	struct qpnic_mr *mr;

	rcu_read_lock();
	mr = xa_load(&qdev->mrs, key >> 8);
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

static void qpnic_mr_unref(struct qpnic_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
}

/*
 * Whether @mr allows @access on [@iova, @iova + @len) through @key, or
 * anywhere in it if @whole.
 */
static bool qpnic_mr_allows(const struct qpnic_mr *mr, struct ib_pd *pd,
			    u32 key, u64 iova, u32 len, int access, bool whole)
{
	if (READ_ONCE(mr->state) != QPNIC_MR_VALID || mr->key != key ||
	    mr->ibmr.pd != pd || (mr->access & access) != access)
		return false;
	if (mr->type == QPNIC_MR_DMA || whole)
		return true;
	/* no sum that can wrap: an iova may lie anywhere in 64 bits */
	return len <= mr->length && iova - mr->iova <= mr->length - len;
}

/*
 * The MR that @key names, with a reference, if it belongs to @pd, allows
 * @access and covers [@iova, @iova + @len) (or is looked up @whole); NULL
 * otherwise. A fast-reg MR stays registered until qpnic_mr_put(): an
 * invalidation waits for it.
 */
struct qpnic_mr *qpnic_mr_find(struct qpnic_dev *qdev, struct ib_pd *pd,
			       u32 key, u64 iova, u32 len, int access, bool whole)
{
	struct qpnic_mr *mr = qpnic_mr_ref(qdev, key);
	unsigned long flags;
	bool ok;

	if (!mr)
		return NULL;
	if (mr->type != QPNIC_MR_FAST) {
		ok = qpnic_mr_allows(mr, pd, key, iova, len, access, whole);
	} else {
		spin_lock_irqsave(&mr->lock, flags);
		ok = qpnic_mr_allows(mr, pd, key, iova, len, access, whole);
		if (ok)
			atomic_inc(&mr->inflight);
		spin_unlock_irqrestore(&mr->lock, flags);
	}
	if (!ok) {
		qpnic_mr_unref(mr);
		return NULL;
	}
	return mr;
}

struct qpnic_mr *qpnic_mr_lookup(struct qpnic_dev *qdev, struct ib_pd *pd,
				 u32 key, u64 iova, u32 len, int access)
{
	return qpnic_mr_find(qdev, pd, key, iova, len, access, false);
}

void qpnic_mr_put(struct qpnic_mr *mr)
{
	if (mr->type == QPNIC_MR_FAST)
		atomic_dec(&mr->inflight);
	qpnic_mr_unref(mr);
}

/* KUnit: whether @key names an MR of @pd now (looked up and let go). */
bool qpnic_kunit_mr_lookup(struct ib_pd *pd, u32 key)
{
	struct qpnic_mr *mr = qpnic_mr_lookup(to_qdev(pd->device), pd, key,
					      0, 0, 0);

	if (mr)
		qpnic_mr_put(mr);
	return mr;
}
EXPORT_SYMBOL_NS_GPL(qpnic_kunit_mr_lookup, QPNIC_KUNIT);

/*
 * The user MR @lkey names, for a window of @pd to bind to over [@addr,
 * @addr + @len) with remote @access (IBTA C10-73..75: MW_BIND access, local
 * write for remote write or atomic, the window inside the MR). It counts
 * the binding: dereg_mr refuses it until qpnic_mr_bind_put(). NULL if the
 * MR does not qualify.
 */
struct qpnic_mr *qpnic_mr_bind_get(struct qpnic_dev *qdev, struct ib_pd *pd,
				   u32 lkey, u64 addr, u64 len, int access)
{
	struct qpnic_mr *mr = qpnic_mr_ref(qdev, lkey);
	const char *why = NULL;
	unsigned long flags;

	if (!mr) {
		ibdev_dbg(&qdev->ibdev, "bind_mw: L_Key %#x names no MR\n", lkey);
		return NULL;
	}
	spin_lock_irqsave(&mr->lock, flags);
	if (mr->state != QPNIC_MR_VALID || mr->key != lkey)
		why = "a stale key";
	else if (mr->type != QPNIC_MR_USER || mr->ibmr.pd != pd)
		why = "not a user MR of the QP's PD";
	else if (!(mr->access & IB_ACCESS_MW_BIND))
		why = "no MW_BIND access";
	else if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
		 !(mr->access & IB_ACCESS_LOCAL_WRITE))
		why = "a writable window without local write";
	else if (len > mr->length || addr - mr->iova > mr->length - len)
		why = "a window outside the MR";
	else
		mr->num_mw++;
	spin_unlock_irqrestore(&mr->lock, flags);
	qpnic_mr_unref(mr);	/* the binding holds it now */
	if (why) {
		ibdev_dbg(&qdev->ibdev, "bind_mw: MR %#x, window %#llx+%llu access %#x: %s\n",
			  lkey, addr, len, access, why);
		return NULL;
	}
	return mr;
}

void qpnic_mr_bind_put(struct qpnic_mr *mr)
{
	unsigned long flags;

	spin_lock_irqsave(&mr->lock, flags);
	mr->num_mw--;
	spin_unlock_irqrestore(&mr->lock, flags);
}

/*
 * Wait for the accesses that passed a lookup before @mr stopped being
 * VALID; caller holds its lock, so no new one passes. They copy at most a
 * packet, in BH-off or interrupts-off sections that take no lock of ours,
 * and none of them runs on this CPU under us: the wait is short.
 */
static void qpnic_mr_quiesce(struct qpnic_mr *mr)
{
	lockdep_assert_held(&mr->lock);
	while (atomic_read(&mr->inflight))
		cpu_relax();
}

struct ib_mr *qpnic_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct qpnic_dev *qdev = to_qdev(ibpd->device);
	struct qpnic_mr *mr = qpnic_mr_alloc(qdev, access, QPNIC_MR_DMA);
	int err;

	if (IS_ERR(mr))
		return ERR_CAST(mr);
	err = qpnic_mr_publish(qdev, mr);
	if (err) {
		qpnic_mr_free(qdev, mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/* The umem's pages in order, so a byte offset finds its page at once. */
static int qpnic_mr_map_pages(struct qpnic_dev *qdev, struct qpnic_mr *mr)
{
	size_t npages = ib_umem_num_pages(mr->umem);
	struct sg_page_iter piter;
	size_t i = 0;

	mr->pages = kvcalloc(npages, sizeof(*mr->pages), GFP_KERNEL_ACCOUNT);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &piter, 0) {
		if (i == npages)
			break;
		mr->pages[i++] = sg_page_iter_page(&piter);
	}
	if (i != npages) {
		ibdev_dbg(&qdev->ibdev, "reg_user_mr: umem has %zu of %zu pages\n",
			  i, npages);
		return -EFAULT;
	}
	return 0;
}

struct ib_mr *qpnic_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct qpnic_dev *qdev = to_qdev(ibpd->device);
	struct ib_umem *umem;
	struct qpnic_mr *mr;
	int err;

	if (!length || length > U32_MAX) {
		ibdev_dbg(&qdev->ibdev, "reg_user_mr: length %llu, range is 1..%u\n",
			  length, U32_MAX);
		return ERR_PTR(-EINVAL);
	}
	umem = ib_umem_get(&qdev->ibdev, start, length, access);
	if (IS_ERR(umem)) {
		ibdev_dbg(&qdev->ibdev, "reg_user_mr: pinning %#llx+%llu failed %ld\n",
			  start, length, PTR_ERR(umem));
		return ERR_CAST(umem);
	}
	mr = qpnic_mr_alloc(qdev, access, QPNIC_MR_USER);
	if (IS_ERR(mr)) {
		ib_umem_release(umem);
		return ERR_CAST(mr);
	}
	mr->umem = umem;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	mr->iova = iova;
	mr->length = length;
	err = qpnic_mr_map_pages(qdev, mr) ?: qpnic_mr_publish(qdev, mr);
	if (err) {
		kvfree(mr->pages);
		qpnic_mr_free(qdev, mr);
		ib_umem_release(umem);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

int qpnic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct qpnic_dev *qdev = to_qdev(ibmr->device);
	struct qpnic_mr *mr = to_qmr(ibmr);
	unsigned long flags;
	u32 num_mw;

	/* IBTA 10.6.7.2.2: not while windows are bound to it */
	spin_lock_irqsave(&mr->lock, flags);
	num_mw = mr->num_mw;
	if (!num_mw)
		WRITE_ONCE(mr->state, QPNIC_MR_FREE);	/* no bind passes now */
	spin_unlock_irqrestore(&mr->lock, flags);
	if (num_mw) {
		ibdev_dbg(&qdev->ibdev, "dereg_mr: MR %#x has %u windows bound\n",
			  mr->key, num_mw);
		return -EBUSY;
	}
	/* Unpublish, then wait until no lookup holds the MR any more. */
	xa_erase_irq(&qdev->mrs, mr->index);
	qpnic_mr_unref(mr);
	wait_for_completion(&mr->released);
	kfree(mr->page_list);
	kvfree(mr->pages);
	ib_umem_release(mr->umem);
	kfree_rcu(mr, rcu);	/* (qpnic_mr_ref) */
	atomic_dec(&qdev->num_mr);
	return 0;
}

/* IB_MR_TYPE_MEM_REG: a page list of @max_num_sg pages, FREE until REG_MR. */
struct ib_mr *qpnic_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct qpnic_dev *qdev = to_qdev(ibpd->device);
	struct qpnic_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG) {
		ibdev_dbg(&qdev->ibdev, "alloc_mr: MR type %d not supported\n", type);
		return ERR_PTR(-EINVAL);
	}
	if (!max_num_sg || max_num_sg > QPNIC_MAX_FAST_REG_PAGES) {
		ibdev_dbg(&qdev->ibdev, "alloc_mr: %u pages, range is 1..%u\n",
			  max_num_sg, QPNIC_MAX_FAST_REG_PAGES);
		return ERR_PTR(-EINVAL);
	}
	mr = qpnic_mr_alloc(qdev, 0, QPNIC_MR_FAST);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->max_pages = max_num_sg;
	mr->page_list = kcalloc(max_num_sg, sizeof(*mr->page_list), GFP_KERNEL);
	err = mr->page_list ? qpnic_mr_publish(qdev, mr) : -ENOMEM;
	if (err) {
		kfree(mr->page_list);
		qpnic_mr_free(qdev, mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

static int qpnic_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct qpnic_mr *mr = to_qmr(ibmr);

	if (mr->num_pages == mr->max_pages)
		return -ENOMEM;	/* ib_sg_to_pages() stops: a partial map */
	mr->page_list[mr->num_pages++] = addr;
	return 0;
}

/*
 * The page list of @sg for the next REG_MR, in PAGE_SIZE pages (the page
 * size page_size_cap reports). With virtual DMA the addresses are kernel
 * addresses. Returns how many entries it mapped: fewer when the list is
 * full or at a gap, as ib_map_mr_sg() says.
 */
int qpnic_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct qpnic_mr *mr = to_qmr(ibmr);
	int n;

	if (ibmr->page_size != PAGE_SIZE) {
		ibdev_dbg(ibmr->device, "map_mr_sg: page size %u, only %lu\n",
			  ibmr->page_size, PAGE_SIZE);
		return -EINVAL;
	}
	mr->num_pages = 0;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, qpnic_mr_set_page);
	mr->map_offset = ibmr->iova & ~PAGE_MASK;
	return n;
}

#define QPNIC_FAST_REG_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			       IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

/*
 * Execute the REG_MR @wqe of @qp: a FREE fast-reg MR of the QP's PD
 * becomes VALID under the WR's key (only its low byte may differ) and
 * access, over the iova and length it has now (a ULP may have moved the
 * iova since map_mr_sg) and the page list last mapped. Caller holds the
 * SQ lock; returns the WQE's status.
 */
enum ib_wc_status qpnic_mr_fast_reg(struct qpnic_qp *qp,
				    const struct qpnic_send_wqe *wqe)
{
	struct qpnic_dev *qdev = to_qdev(qp->ibqp.device);
	struct qpnic_mr *mr = wqe->reg.mr;
	enum ib_wc_status status = IB_WC_LOC_QP_OP_ERR;
	int access = wqe->reg.access;
	u32 key = wqe->reg.key;
	unsigned long flags;
	u64 length;

	if (mr->type != QPNIC_MR_FAST || mr->ibmr.pd != qp->ibqp.pd) {
		ibdev_dbg(&qdev->ibdev, "QP %u: REG_MR of MR %#x: not a fast-reg MR of the QP's PD\n",
			  qp->ibqp.qp_num, mr->key);
		return IB_WC_LOC_PROT_ERR;
	}
	if ((access & ~QPNIC_FAST_REG_ACCESS) ||
	    ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & IB_ACCESS_LOCAL_WRITE))) {
		ibdev_dbg(&qdev->ibdev, "QP %u: REG_MR of MR %#x: access %#x\n",
			  qp->ibqp.qp_num, mr->key, access);
		return status;
	}
	spin_lock_irqsave(&mr->lock, flags);
	length = mr->ibmr.length;
	if (mr->state != QPNIC_MR_FREE) {
		ibdev_dbg(&qdev->ibdev, "QP %u: REG_MR of MR %#x: not FREE\n",
			  qp->ibqp.qp_num, mr->key);
	} else if (key >> 8 != mr->index) {
		ibdev_dbg(&qdev->ibdev, "QP %u: REG_MR of MR %#x: key %#x of another index\n",
			  qp->ibqp.qp_num, mr->key, key);
	} else if (mr->map_offset + length > (u64)mr->num_pages << PAGE_SHIFT) {
		ibdev_dbg(&qdev->ibdev, "QP %u: REG_MR of MR %#x: %llu bytes past its %u pages\n",
			  qp->ibqp.qp_num, mr->key, length, mr->num_pages);
	} else {
		mr->key = key;
		mr->access = access;
		mr->iova = mr->ibmr.iova;
		mr->length = length;
		mr->reg_pages = mr->num_pages;
		mr->reg_offset = mr->map_offset;
		mr->state = QPNIC_MR_VALID;
		status = IB_WC_SUCCESS;
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	return status;
}

/*
 * Invalidate @key (LOCAL_INV, or a SEND with invalidate from the peer):
 * it must name a fast-reg MR of @pd by its current key; it is FREE once
 * this returns, with no access through it still under way. Invalidating
 * a FREE MR succeeds. Returns -EINVAL for a key that may not be
 * invalidated, -EACCES for another PD's.
 */
int qpnic_mr_invalidate(struct qpnic_dev *qdev, struct ib_pd *pd, u32 key)
{
	struct qpnic_mr *mr = qpnic_mr_ref(qdev, key);
	unsigned long flags;
	int err = 0;

	if (!mr || mr->type != QPNIC_MR_FAST) {
		ibdev_dbg(&qdev->ibdev, "invalidate: key %#x names no fast-reg MR\n",
			  key);
		err = -EINVAL;
		goto out;
	}
	if (mr->ibmr.pd != pd) {
		ibdev_dbg(&qdev->ibdev, "invalidate: MR %#x of another PD\n", key);
		err = -EACCES;
		goto out;
	}
	spin_lock_irqsave(&mr->lock, flags);
	if (mr->key != key) {
		ibdev_dbg(&qdev->ibdev, "invalidate: key %#x, the MR's is %#x\n",
			  key, mr->key);
		err = -EINVAL;
	} else {
		mr->state = QPNIC_MR_FREE;
		qpnic_mr_quiesce(mr);
	}
	spin_unlock_irqrestore(&mr->lock, flags);
out:
	if (mr)
		qpnic_mr_unref(mr);
	return err;
}
