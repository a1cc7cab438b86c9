// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Address handles. Each gets a number librxe puts in its UD WQEs. */
#include <rdma/ib_cache.h>
#include <rdma/uverbs_ioctl.h>

#include "qpnic.h"

/* A RoCEv2 address: a GRH whose source GID exists on port 1. */
int qpnic_check_ah_attr(struct qpnic_dev *qdev, const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH)) {
		ibdev_dbg(&qdev->ibdev, "ah: type %d flags %#x: RoCE needs a GRH\n",
			  attr->type, rdma_ah_get_ah_flags(attr));
		return -EINVAL;
	}
	if (rdma_ah_get_port_num(attr) != 1) {
		ibdev_dbg(&qdev->ibdev, "ah: port %u, device has port 1\n",
			  rdma_ah_get_port_num(attr));
		return -EINVAL;
	}
	grh = rdma_ah_read_grh(attr);
	if (!grh->sgid_attr) {
		ibdev_dbg(&qdev->ibdev, "ah: sgid_index %u has no GID\n",
			  grh->sgid_index);
		return -EINVAL;
	}
	if (grh->sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP) {
		ibdev_dbg(&qdev->ibdev, "ah: sgid_index %u is GID type %d, need RoCEv2\n",
			  grh->sgid_index, grh->sgid_attr->gid_type);
		return -EINVAL;
	}
	return 0;
}

/* Any context, interrupts on or off (destroy_ah may be called atomic). */
static void qpnic_ah_erase(struct qpnic_dev *qdev, u32 ah_num)
{
	unsigned long flags;

	xa_lock_irqsave(&qdev->ahs, flags);
	__xa_erase(&qdev->ahs, ah_num);
	xa_unlock_irqrestore(&qdev->ahs, flags);
}

int qpnic_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	struct qpnic_dev *qdev = to_qdev(ibah->device);
	struct qpnic_ah *ah = to_qah(ibah);
	struct rxe_create_ah_resp resp = {};
	unsigned long flags;
	gfp_t gfp;
	int err;

	err = qpnic_check_ah_attr(qdev, init->ah_attr);
	if (err)
		return err;
	err = qpnic_count_get(qdev, &qdev->num_ah, QPNIC_MAX_AH, "AHs");
	if (err)
		return err;
	/*
	 * create_ah may run in atomic context (RDMA_CREATE_AH_SLEEPABLE
	 * clear), with interrupts off (ib_cm holds an irqsave lock): the
	 * xarray is locked irqsave, never _irq, which would turn them on. The
	 * number is reserved first and the AH stored there once it is built.
	 */
	gfp = (init->flags & RDMA_CREATE_AH_SLEEPABLE) ? GFP_KERNEL : GFP_ATOMIC;
	xa_lock_irqsave(&qdev->ahs, flags);
	err = __xa_alloc_cyclic(&qdev->ahs, &ah->ah_num, NULL,
				XA_LIMIT(1, QPNIC_MAX_AH), &qdev->next_ah, gfp);
	xa_unlock_irqrestore(&qdev->ahs, flags);
	if (err < 0) {
		ibdev_dbg(&qdev->ibdev, "create_ah: no AH number left (%d)\n", err);
		err = -ENOMEM;
		goto err_count;
	}
	err = qpnic_av_init(qdev, &ah->av, init->ah_attr);
	if (err)
		goto err_reserved;
	rdma_copy_ah_attr(&ah->attr, init->ah_attr);
	if (udata && udata->outlen >= sizeof(resp)) {
		resp.ah_num = ah->ah_num;
		err = qpnic_copy_resp(qdev, udata, &resp, sizeof(resp), "create_ah");
		if (err)
			goto err_num;
	}
	xa_lock_irqsave(&qdev->ahs, flags);
	err = xa_err(__xa_store(&qdev->ahs, ah->ah_num, ah, gfp));
	xa_unlock_irqrestore(&qdev->ahs, flags);
	if (err) {
		ibdev_dbg(&qdev->ibdev, "create_ah: publishing AH %u failed %d\n",
			  ah->ah_num, err);
		goto err_num;
	}
	return 0;

err_num:
	rdma_destroy_ah_attr(&ah->attr);
err_reserved:
	qpnic_ah_erase(qdev, ah->ah_num);
err_count:
	atomic_dec(&qdev->num_ah);
	return err;
}

/*
 * Copy the address of AH @ah_num, which must belong to @pd (a user WQE
 * names it by number: another process's AH is not its to use). Any
 * context; -ENOENT if there is no such AH in @pd.
 */
int qpnic_ah_av(struct qpnic_dev *qdev, u32 ah_num, struct ib_pd *pd,
		struct qpnic_av *av)
{
	struct qpnic_ah *ah;
	unsigned long flags;

	xa_lock_irqsave(&qdev->ahs, flags);
	ah = xa_load(&qdev->ahs, ah_num);
	if (ah && ah->ibah.pd == pd)
		*av = ah->av;
	else
		ah = NULL;
	xa_unlock_irqrestore(&qdev->ahs, flags);
	return ah ? 0 : -ENOENT;
}

int qpnic_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	*attr = to_qah(ibah)->attr;
	/* The caller does not own a reference on our GID attribute. */
	attr->grh.sgid_attr = NULL;
	return 0;
}

int qpnic_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct qpnic_dev *qdev = to_qdev(ibah->device);
	struct qpnic_ah *ah = to_qah(ibah);

	qpnic_ah_erase(qdev, ah->ah_num);
	rdma_destroy_ah_attr(&ah->attr);
	atomic_dec(&qdev->num_ah);
	return 0;
}
