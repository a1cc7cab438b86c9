// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Shared receive queues: one receive ring that several QPs draw from. */
#include <rdma/uverbs_ioctl.h>

#include "qpnic.h"

static int qpnic_srq_check(struct qpnic_dev *qdev, u32 max_wr, u32 max_sge)
{
	if (max_wr < 1 || max_wr > QPNIC_MAX_SRQ_WR) {
		ibdev_dbg(&qdev->ibdev, "srq: max_wr %u, range is 1..%u\n",
			  max_wr, QPNIC_MAX_SRQ_WR);
		return -EINVAL;
	}
	if (max_sge > QPNIC_MAX_SGE) {
		ibdev_dbg(&qdev->ibdev, "srq: max_sge %u exceeds %u\n",
			  max_sge, QPNIC_MAX_SGE);
		return -EINVAL;
	}
	return 0;
}

int qpnic_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct qpnic_dev *qdev = to_qdev(ibsrq->device);
	struct qpnic_srq *srq = to_qsrq(ibsrq);
	struct rxe_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init->attr;
	u32 wqe_size;
	int err;

	if (init->srq_type != IB_SRQT_BASIC) {
		ibdev_dbg(&qdev->ibdev, "create_srq: type %d not supported\n",
			  init->srq_type);
		return -EOPNOTSUPP;
	}
	err = qpnic_srq_check(qdev, attr->max_wr, attr->max_sge);
	if (err)
		return err;
	if (attr->srq_limit > attr->max_wr) {
		ibdev_dbg(&qdev->ibdev, "create_srq: srq_limit %u above max_wr %u\n",
			  attr->srq_limit, attr->max_wr);
		return -EINVAL;
	}
	err = qpnic_check_resp_len(qdev, udata, sizeof(resp), "create_srq") ?:
	      qpnic_count_get(qdev, &qdev->num_srq, QPNIC_MAX_SRQ, "SRQs");
	if (err)
		return err;

	spin_lock_init(&srq->lock);
	srq->user = !!udata;
	wqe_size = qpnic_recv_wqe_size(attr->max_sge);
	err = qpnic_queue_init(qdev, &srq->queue, attr->max_wr,
			       QPNIC_MAX_SRQ_WR, wqe_size,
			       QPNIC_Q_TO_KERNEL, udata, &resp.mi);
	if (err)
		goto err_count;
	srq->max_sge = min_t(u32, (wqe_size - sizeof(struct rxe_recv_wqe)) /
				  sizeof(struct rxe_sge), QPNIC_MAX_SGE);
	srq->limit = attr->srq_limit;
	/* Reserve the number; the SRQ is stored there once it is built. */
	err = xa_alloc_cyclic_irq(&qdev->srqs, &srq->srq_num, NULL,
				  XA_LIMIT(1, QPNIC_MAX_SRQ), &qdev->next_srq,
				  GFP_KERNEL);
	if (err < 0) {
		ibdev_dbg(&qdev->ibdev, "create_srq: no SRQ number left (%d)\n", err);
		err = err == -EBUSY ? -ENOMEM : err;
		goto err_queue;
	}
	attr->max_wr = srq->queue.capacity;
	attr->max_sge = srq->max_sge;
	if (udata) {
		resp.srq_num = srq->srq_num;
		err = qpnic_copy_resp(qdev, udata, &resp, sizeof(resp), "create_srq");
		if (err)
			goto err_num;
	}
	err = xa_err(xa_store_irq(&qdev->srqs, srq->srq_num, srq, GFP_KERNEL));
	if (err) {
		ibdev_dbg(&qdev->ibdev, "create_srq: publishing SRQ %u failed %d\n",
			  srq->srq_num, err);
		goto err_num;
	}
	return 0;

err_num:
	xa_erase_irq(&qdev->srqs, srq->srq_num);
err_queue:
	qpnic_queue_free(&srq->queue);
err_count:
	atomic_dec(&qdev->num_srq);
	return err;
}

/* Move the queued WQEs into a ring of @max_wr entries. */
static int qpnic_srq_resize(struct qpnic_dev *qdev, struct qpnic_srq *srq,
			    u32 max_wr, struct ib_udata *udata)
{
	struct rxe_modify_srq_cmd cmd = {};
	struct qpnic_queue newq, oldq;
	struct mminfo mi = {};
	int err;

	if (udata) {
		if (udata->inlen < sizeof(cmd)) {
			ibdev_dbg(&qdev->ibdev, "modify_srq: command of %zu bytes, need %zu\n",
				  udata->inlen, sizeof(cmd));
			return -EINVAL;
		}
		err = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
		if (err) {
			ibdev_dbg(&qdev->ibdev, "modify_srq: %zu-byte command not readable\n",
				  sizeof(cmd));
			return err;
		}
	}
	err = qpnic_queue_init(qdev, &newq, max_wr, QPNIC_MAX_SRQ_WR,
			       1U << srq->queue.log2_elem, QPNIC_Q_TO_KERNEL,
			       udata, &mi);
	if (err)
		return err;
	if (udata &&
	    copy_to_user(u64_to_user_ptr(cmd.mmap_info_addr), &mi, sizeof(mi))) {
		ibdev_dbg(&qdev->ibdev, "modify_srq: mmap info address %#llx not writable\n",
			  cmd.mmap_info_addr);
		err = -EFAULT;
		goto err_free;
	}

	spin_lock_irq(&srq->lock);
	err = qpnic_queue_move(&newq, &srq->queue);
	if (err) {
		spin_unlock_irq(&srq->lock);
		ibdev_dbg(&qdev->ibdev, "modify_srq: %u WQEs queued, asked %u\n",
			  qpnic_queue_count(&srq->queue), max_wr);
		goto err_free;
	}
	oldq = srq->queue;
	srq->queue = newq;
	spin_unlock_irq(&srq->lock);
	qpnic_queue_free(&oldq);
	return 0;

err_free:
	qpnic_queue_free(&newq);
	return err;
}

int qpnic_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct qpnic_dev *qdev = to_qdev(ibsrq->device);
	struct qpnic_srq *srq = to_qsrq(ibsrq);
	u32 max_wr = srq->queue.capacity;
	int err;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT)) {
		ibdev_dbg(&qdev->ibdev, "modify_srq: unknown mask %#x\n", mask);
		return -EINVAL;
	}
	if (mask & IB_SRQ_MAX_WR) {
		err = qpnic_srq_check(qdev, attr->max_wr, 0);
		if (err)
			return err;
		max_wr = attr->max_wr;
	}
	if ((mask & IB_SRQ_LIMIT) && attr->srq_limit > max_wr) {
		ibdev_dbg(&qdev->ibdev, "modify_srq: srq_limit %u above max_wr %u\n",
			  attr->srq_limit, max_wr);
		return -EINVAL;
	}
	if (mask & IB_SRQ_MAX_WR) {
		err = qpnic_srq_resize(qdev, srq, attr->max_wr, udata);
		if (err)
			return err;
	}
	if (mask & IB_SRQ_LIMIT)
		srq->limit = attr->srq_limit;
	return 0;
}

int qpnic_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct qpnic_srq *srq = to_qsrq(ibsrq);

	attr->max_wr = srq->queue.capacity;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->limit;
	return 0;
}

int qpnic_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct qpnic_dev *qdev = to_qdev(ibsrq->device);
	struct qpnic_srq *srq = to_qsrq(ibsrq);

	xa_erase_irq(&qdev->srqs, srq->srq_num);
	qpnic_queue_free(&srq->queue);
	atomic_dec(&qdev->num_srq);
	return 0;
}

int qpnic_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct qpnic_srq *srq = to_qsrq(ibsrq);
	unsigned long flags;
	int err = 0;

	if (srq->user) {
		if (!wr)
			return 0;
		ibdev_dbg(ibsrq->device, "post_srq_recv: user SRQ posts through its ring\n");
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		err = qpnic_recv_wqe_write(&srq->queue, srq->max_sge, wr);
		if (err) {
			ibdev_dbg(ibsrq->device, "post_srq_recv: %s (num_sge %d, max %u)\n",
				  err == -ENOMEM ? "queue full" : "bad num_sge",
				  wr->num_sge, srq->max_sge);
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	return err;
}
