// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Protection domains and memory regions. */
#include <linux/slab.h>

#include "qpnic.h"

#define QPNIC_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_MW_BIND)

int qpnic_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct qpnic_dev *qdev = to_qdev(ibpd->device);

	return qpnic_count_get(qdev, &qdev->num_pd, QPNIC_MAX_PD, "PDs");
}

int qpnic_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_qdev(ibpd->device)->num_pd);
	return 0;
}

/* Allocate the MR and its key: index in bits 31..8, a varying tag in 7..0. */
static struct qpnic_mr *qpnic_mr_alloc(struct qpnic_dev *qdev, int access)
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
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		err = -ENOMEM;
		goto err_count;
	}
	err = xa_alloc_cyclic(&qdev->mrs, &mr->index, mr,
			      XA_LIMIT(1, QPNIC_MAX_MR), &qdev->next_mr,
			      GFP_KERNEL);
	if (err < 0)
		goto err_free;
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

struct ib_mr *qpnic_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct qpnic_mr *mr = qpnic_mr_alloc(to_qdev(ibpd->device), access);

	return IS_ERR(mr) ? ERR_CAST(mr) : &mr->ibmr;
}

struct ib_mr *qpnic_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct qpnic_dev *qdev = to_qdev(ibpd->device);
	struct ib_umem *umem;
	struct qpnic_mr *mr;

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
	mr = qpnic_mr_alloc(qdev, access);
	if (IS_ERR(mr)) {
		ib_umem_release(umem);
		return ERR_CAST(mr);
	}
	mr->umem = umem;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	return &mr->ibmr;
}

int qpnic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct qpnic_dev *qdev = to_qdev(ibmr->device);
	struct qpnic_mr *mr = to_qmr(ibmr);

	xa_erase(&qdev->mrs, mr->index);
	ib_umem_release(mr->umem);
	kfree(mr);
	atomic_dec(&qdev->num_mr);
	return 0;
}
