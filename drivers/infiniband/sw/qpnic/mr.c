// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions: the DMA MR of kernel callers and user MRs (pinned
 * through ib_umem), their keys, and the lookups by key that take a
 * reference dereg_mr waits for. Data movement is mem.c's.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "qpnic.h"

#define QPNIC_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_MW_BIND)

/* Allocate the MR and its key: index in bits 31..8, a varying tag in 7..0. */
static struct qpnic_mr *qpnic_mr_alloc(struct qpnic_dev *qdev, int access,
				       bool user)
{
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
	mr->access = access;
	mr->ibmr.lkey = mr->index << 8 | (get_random_u32() & 0xff);
	mr->ibmr.rkey = (access & (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE |
				   IB_ACCESS_REMOTE_ATOMIC)) ? mr->ibmr.lkey : 0;
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
 * Look an MR up by lkey/rkey from any context: the key's index finds it,
 * its tag must match too. The reference is taken under the xarray's lock;
 * dereg_mr unpublishes, then waits for it.
 */
struct qpnic_mr *qpnic_mr_get(struct qpnic_dev *qdev, u32 key)
{
	struct qpnic_mr *mr;
	unsigned long flags;

	xa_lock_irqsave(&qdev->mrs, flags);
	mr = xa_load(&qdev->mrs, key >> 8);
	if (mr && (mr->ibmr.lkey != key || !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	xa_unlock_irqrestore(&qdev->mrs, flags);
	return mr;
}

void qpnic_mr_put(struct qpnic_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
}

struct ib_mr *qpnic_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct qpnic_dev *qdev = to_qdev(ibpd->device);
	struct qpnic_mr *mr = qpnic_mr_alloc(qdev, access, false);
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
	mr = qpnic_mr_alloc(qdev, access, true);
	if (IS_ERR(mr)) {
		ib_umem_release(umem);
		return ERR_CAST(mr);
	}
	mr->umem = umem;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
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

	/* Unpublish, then wait until no lookup holds the MR any more. */
	xa_erase_irq(&qdev->mrs, mr->index);
	qpnic_mr_put(mr);
	wait_for_completion(&mr->released);
	kvfree(mr->pages);
	ib_umem_release(mr->umem);
	kfree(mr);
	atomic_dec(&qdev->num_mr);
	return 0;
}
