// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: creation (validation kept apart from construction), the IB
 * state machine, flushing, events and synchronous destruction. Posting is
 * post.c's.
 */
#include <linux/log2.h>
#include <linux/overflow.h>
#include <rdma/ib_cache.h>
#include <rdma/rdma_netlink.h>
#include <rdma/uverbs_ioctl.h>

#include "qpnic.h"
#include "trace.h"

/* Kernel SQs hold struct qpnic_send_wqe, user SQs librxe's rxe_send_wqe. */
static u32 qpnic_send_wqe_hdr(bool user)
{
	return user ? sizeof(struct rxe_send_wqe) : sizeof(struct qpnic_send_wqe);
}

static u32 qpnic_send_wqe_size(u32 max_sge, u32 max_inline, bool user)
{
	u32 payload = max_t(u32, max_sge * sizeof(struct rxe_sge), max_inline);

	return roundup_pow_of_two(qpnic_send_wqe_hdr(user) + payload);
}

u32 qpnic_recv_wqe_size(u32 max_sge)
{
	return roundup_pow_of_two(sizeof(struct rxe_recv_wqe) +
				  max_sge * sizeof(struct rxe_sge));
}

static int qpnic_check_cap(struct qpnic_dev *qdev, const char *what, u32 val,
			   u32 limit)
{
	if (val > limit) {
		ibdev_dbg(&qdev->ibdev, "create_qp: %s %u exceeds limit %u\n",
			  what, val, limit);
		return -EINVAL;
	}
	return 0;
}

/* Everything create_qp refuses, before anything is allocated. */
static int qpnic_qp_check_init(struct qpnic_dev *qdev,
			       const struct ib_qp_init_attr *init,
			       struct ib_udata *udata)
{
	const struct ib_qp_cap *cap = &init->cap;
	int err;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		if (udata) {
			ibdev_dbg(&qdev->ibdev, "create_qp: GSI QP from userspace\n");
			return -EOPNOTSUPP;
		}
		if (init->port_num != 1) {
			ibdev_dbg(&qdev->ibdev, "create_qp: GSI on port %u, device has port 1\n",
				  init->port_num);
			return -EINVAL;
		}
		break;
	default:
		ibdev_dbg(&qdev->ibdev, "create_qp: QP type %d not supported\n",
			  init->qp_type);
		return -EOPNOTSUPP;
	}
	if (init->create_flags) {
		ibdev_dbg(&qdev->ibdev, "create_qp: unsupported create_flags %#x\n",
			  init->create_flags);
		return -EOPNOTSUPP;
	}
	if (init->rwq_ind_tbl) {
		ibdev_dbg(&qdev->ibdev, "create_qp: RSS indirection table not supported\n");
		return -EOPNOTSUPP;
	}
	if (init->source_qpn) {
		ibdev_dbg(&qdev->ibdev, "create_qp: source_qpn %u not supported\n",
			  init->source_qpn);
		return -EOPNOTSUPP;
	}
	if (init->sq_sig_type != IB_SIGNAL_ALL_WR &&
	    init->sq_sig_type != IB_SIGNAL_REQ_WR) {
		ibdev_dbg(&qdev->ibdev, "create_qp: sq_sig_type %d invalid\n",
			  init->sq_sig_type);
		return -EINVAL;
	}
	if (!init->send_cq || !init->recv_cq) {
		ibdev_dbg(&qdev->ibdev, "create_qp: send_cq %p recv_cq %p: both needed\n",
			  init->send_cq, init->recv_cq);
		return -EINVAL;
	}
	if (init->srq && init->srq->srq_type != IB_SRQT_BASIC) {
		ibdev_dbg(&qdev->ibdev, "create_qp: SRQ type %d needs an XRC QP\n",
			  init->srq->srq_type);
		return -EINVAL;
	}
	err = qpnic_check_cap(qdev, "max_send_wr", cap->max_send_wr, QPNIC_MAX_QP_WR);
	err = err ?: qpnic_check_cap(qdev, "max_send_sge", cap->max_send_sge,
				     QPNIC_MAX_SGE);
	err = err ?: qpnic_check_cap(qdev, "max_inline_data", cap->max_inline_data,
				     QPNIC_MAX_INLINE);
	if (err || init->srq)
		return err;
	err = qpnic_check_cap(qdev, "max_recv_wr", cap->max_recv_wr, QPNIC_MAX_QP_WR);
	return err ?: qpnic_check_cap(qdev, "max_recv_sge", cap->max_recv_sge,
				      QPNIC_MAX_SGE);
}

/*
 * Build the rings and write the real capacity back into @cap: the WR
 * counts are what the rings hold, the SGE and inline sizes are what the
 * (power of two) WQE slots hold, capped at the device limits.
 */
static int qpnic_qp_init_queues(struct qpnic_dev *qdev, struct qpnic_qp *qp,
				struct ib_qp_init_attr *init,
				struct ib_udata *udata,
				struct rxe_create_qp_resp *resp)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 wqe_size, payload;
	int err;

	wqe_size = qpnic_send_wqe_size(cap->max_send_sge, cap->max_inline_data,
				       !!udata);
	err = qpnic_queue_init(qdev, &qp->sq.queue, cap->max_send_wr,
			       QPNIC_MAX_QP_WR, wqe_size,
			       QPNIC_Q_TO_KERNEL, udata, &resp->sq_mi);
	if (err)
		return err;
	payload = wqe_size - qpnic_send_wqe_hdr(!!udata);
	qp->sq.max_wr = qp->sq.queue.capacity;
	qp->sq.max_sge = min_t(u32, payload / sizeof(struct rxe_sge), QPNIC_MAX_SGE);
	qp->max_inline = min_t(u32, payload, QPNIC_MAX_INLINE);
	if (udata) {
		/* the kernel's own copy of each ring slot, in its own format */
		qp->sq.shadow_log2 = order_base_2(qpnic_send_wqe_size(qp->sq.max_sge,
								      qp->max_inline,
								      false));
		qp->sq.shadow = kvzalloc((size_t)(qp->sq.queue.mask + 1) <<
					 qp->sq.shadow_log2, GFP_KERNEL_ACCOUNT);
		if (!qp->sq.shadow) {
			qpnic_queue_free(&qp->sq.queue);
			return -ENOMEM;
		}
	}

	if (!init->srq) {
		wqe_size = qpnic_recv_wqe_size(cap->max_recv_sge);
		err = qpnic_queue_init(qdev, &qp->rq.queue, cap->max_recv_wr,
				       QPNIC_MAX_QP_WR, wqe_size, QPNIC_Q_TO_KERNEL, udata,
				       &resp->rq_mi);
		if (err) {
			kvfree(qp->sq.shadow);
			qpnic_queue_free(&qp->sq.queue);
			return err;
		}
		payload = wqe_size - sizeof(struct rxe_recv_wqe);
		qp->rq.max_wr = qp->rq.queue.capacity;
		qp->rq.max_sge = min_t(u32, payload / sizeof(struct rxe_sge),
				       QPNIC_MAX_SGE);
	}

	cap->max_send_wr = qp->sq.max_wr;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_inline_data = qp->max_inline;
	cap->max_recv_wr = qp->rq.max_wr;
	cap->max_recv_sge = qp->rq.max_sge;
	return 0;
}

static void qpnic_qp_free_queues(struct qpnic_qp *qp)
{
	kvfree(qp->sq.shadow);
	qpnic_queue_free(&qp->sq.queue);
	if (qp->rq.queue.data)
		qpnic_queue_free(&qp->rq.queue);
}

/*
 * Reserve a QP number (QP1 for GSI, otherwise the next free one,
 * cyclically). The slot stays empty to lookups until qpnic_qp_publish().
 */
static int qpnic_qp_alloc_qpn(struct qpnic_dev *qdev, struct qpnic_qp *qp,
			      enum ib_qp_type type)
{
	u32 qpn;
	int err;

	if (type == IB_QPT_GSI) {
		err = xa_insert_irq(&qdev->qps, QPNIC_GSI_QPN, NULL, GFP_KERNEL);
		if (err) {
			ibdev_dbg(&qdev->ibdev, "create_qp: port 1 already has its GSI QP (%d)\n",
				  err);
			return err;
		}
		qp->ibqp.qp_num = QPNIC_GSI_QPN;
		return 0;
	}
	err = xa_alloc_cyclic_irq(&qdev->qps, &qpn, NULL,
				  XA_LIMIT(QPNIC_FIRST_QPN,
					   QPNIC_FIRST_QPN + QPNIC_MAX_QP - 1),
				  &qdev->next_qpn, GFP_KERNEL);
	if (err < 0) {
		ibdev_dbg(&qdev->ibdev, "create_qp: no QP number left (%d, max_qp %u)\n",
			  err, QPNIC_MAX_QP);
		return err == -EBUSY ? -ENOMEM : err;
	}
	qp->ibqp.qp_num = qpn;
	return 0;
}

/* Make a fully built QP visible to qpnic_qp_get(). */
static int qpnic_qp_publish(struct qpnic_dev *qdev, struct qpnic_qp *qp)
{
	int err = xa_err(xa_store_irq(&qdev->qps, qp->ibqp.qp_num, qp,
				      GFP_KERNEL));

	if (err)
		ibdev_dbg(&qdev->ibdev, "create_qp: publishing QP %u failed %d\n",
			  qp->ibqp.qp_num, err);
	return err;
}

static void qpnic_qp_free_qpn(struct qpnic_dev *qdev, struct qpnic_qp *qp)
{
	xa_erase_irq(&qdev->qps, qp->ibqp.qp_num);
}

/*
 * Look a QP up by number from any context. The core frees a QP with a
 * plain kfree once destroy_qp returns, so the reference is taken under
 * the xarray's lock; destroy_qp unpublishes, then waits for it.
 */
struct qpnic_qp *qpnic_qp_get(struct qpnic_dev *qdev, u32 qpn)
{
	struct qpnic_qp *qp;
	unsigned long flags;

	xa_lock_irqsave(&qdev->qps, flags);
	qp = xa_load(&qdev->qps, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	xa_unlock_irqrestore(&qdev->qps, flags);
	return qp;
}

void qpnic_qp_put(struct qpnic_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}

static void qpnic_qp_async_work(struct work_struct *work);

int qpnic_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct qpnic_dev *qdev = to_qdev(ibqp->device);
	struct qpnic_qp *qp = to_qqp(ibqp);
	struct rxe_create_qp_resp resp = {};
	int err;

	err = qpnic_qp_check_init(qdev, init, udata);
	if (err)
		return err;
	if (udata) {
		if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen)) {
			ibdev_dbg(&qdev->ibdev, "create_qp: %zu bytes of unknown driver input\n",
				  udata->inlen);
			return -EOPNOTSUPP;
		}
	}
	err = qpnic_check_resp_len(qdev, udata, sizeof(resp), "create_qp") ?:
	      qpnic_count_get(qdev, &qdev->num_qp, qpnic_max_qp, "QPs");
	if (err)
		return err;

	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	qp->serial = atomic64_inc_return(&qdev->qp_serial);
	mutex_init(&qp->state_lock);
	spin_lock_init(&qp->sq.lock);
	spin_lock_init(&qp->rq.lock);
	qp->state = IB_QPS_RESET;
	qp->user = !!udata;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	spin_lock_init(&qp->resp_lock);
	INIT_WORK(&qp->req.work, qpnic_req_work);
	INIT_WORK(&qp->post_work, qpnic_req_post_work);
	qp->req.window = QPNIC_WINDOW_MAX;
	INIT_WORK(&qp->async_work, qpnic_qp_async_work);
	INIT_WORK(&qp->resp.read_work, qpnic_resp_read_work);
	qpnic_comp_init(qp);

	err = qpnic_qp_alloc_qpn(qdev, qp, init->qp_type);
	if (err)
		goto err_count;
	err = qpnic_qp_init_queues(qdev, qp, init, udata, &resp);
	if (err)
		goto err_qpn;
	qp->resp.wqe = kmalloc(struct_size(qp->resp.wqe, sge,
					   init->srq ? to_qsrq(init->srq)->max_sge :
						       qp->rq.max_sge),
			       udata ? GFP_KERNEL_ACCOUNT : GFP_KERNEL);
	qp->tx_flow = qpnic_tx_flow_alloc(qp, udata ? GFP_KERNEL_ACCOUNT : GFP_KERNEL);
	if (!qp->resp.wqe || !qp->tx_flow) {
		err = -ENOMEM;
		goto err_queues;
	}
	if (udata) {
		err = qpnic_copy_resp(qdev, udata, &resp, sizeof(resp), "create_qp");
		if (err)
			goto err_queues;
	}
	err = qpnic_qp_publish(qdev, qp);
	if (err)
		goto err_queues;
	return 0;

err_queues:
	if (qp->tx_flow)
		qpnic_tx_flow_put(qp->tx_flow);
	kfree(qp->resp.wqe);
	qpnic_qp_free_queues(qp);
err_qpn:
	qpnic_qp_free_qpn(qdev, qp);
err_count:
	atomic_dec(&qdev->num_qp);
	return err;
}

/*
 * Stop everything of @qp's that could run later: posts, lookups, its
 * packets' wake-ups, timers and the work they queue. The poster is the
 * caller.
 */
static void qpnic_qp_quiesce(struct qpnic_dev *qdev, struct qpnic_qp *qp)
{
	/*
	 * Nothing arms a timer, sends or takes a post from here on (a
	 * completion handler may still try while destroy_qp lets the
	 * consumer poll; a loopback pass still sends the ACK it holds for
	 * this QP).
	 */
	spin_lock_irq(&qp->sq.lock);
	qp->dying = true;
	spin_unlock_irq(&qp->sq.lock);
	spin_lock_irq(&qp->rq.lock);	/* a post_recv after this sees it */
	spin_unlock_irq(&qp->rq.lock);
	/* Unpublish, then wait until no lookup holds the QP any more. */
	qpnic_qp_free_qpn(qdev, qp);
	qpnic_qp_put(qp);
	wait_for_completion(&qp->released);
	/* Its packets in the stack queue no work from here on ... */
	qpnic_tx_flow_detach(qp->tx_flow);
	/* Timers, then the work they may queue (a post's run may queue more). */
	qpnic_comp_stop(qp);
	cancel_work_sync(&qp->post_work);
	cancel_work_sync(&qp->req.work);
	cancel_work_sync(&qp->resp.read_work);
	cancel_work_sync(&qp->async_work);
}

/*
 * A kernel QP still listed when its device goes: its ULP never destroyed
 * it (the core reports the leak). Nothing of it may run once the module
 * is gone, and its packets' flow must not hold the module's exit.
 */
void qpnic_qp_abandon(struct qpnic_dev *qdev, struct qpnic_qp *qp)
{
	ibdev_warn(&qdev->ibdev, "QP %u was never destroyed; stopping it\n",
		   qp->ibqp.qp_num);
	qpnic_qp_quiesce(qdev, qp);
	qpnic_tx_flow_put(qp->tx_flow);
	qp->tx_flow = NULL;
}

int qpnic_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct qpnic_dev *qdev = to_qdev(ibqp->device);
	struct qpnic_qp *qp = to_qqp(ibqp);

	qpnic_qp_quiesce(qdev, qp);
	/* A kernel CQ entry must not outlive the QP it points to. */
	if (!qp->user) {
		u32 n;

		qpnic_cq_let_consumer_poll(ibqp);
		n = qpnic_cq_purge_qp(to_qcq(ibqp->send_cq), ibqp);
		if (ibqp->recv_cq != ibqp->send_cq)
			n += qpnic_cq_purge_qp(to_qcq(ibqp->recv_cq), ibqp);
		if (n)
			ibdev_dbg(&qdev->ibdev, "destroy_qp: QP %u: %u completions purged\n",
				  ibqp->qp_num, n);
	}
	/* ... and hold the flow, not the QP, until the stack frees them */
	qpnic_tx_flow_put(qp->tx_flow);
	kfree(qp->resp.wqe);
	kfree(qp->resp.res);
	qpnic_qp_free_queues(qp);
	rdma_destroy_ah_attr(&qp->attr.ah_attr);
	mutex_destroy(&qp->state_lock);
	atomic_dec(&qdev->num_qp);
	return 0;
}

static void qpnic_qp_event(struct qpnic_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.event = type,
		.element.qp = &qp->ibqp,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/* The kernel's WQE at SQ index @index: the slot, or a user slot's copy. */
struct qpnic_send_wqe *qpnic_sq_wqe(struct qpnic_qp *qp, u32 index)
{
	if (!qp->user)
		return qpnic_queue_slot(&qp->sq.queue, index);
	return (void *)(qp->sq.shadow +
			((size_t)(index & qp->sq.queue.mask) << qp->sq.shadow_log2));
}

/* The end of the WQEs the requester may take; caller holds the SQ lock. */
u32 qpnic_sq_end(struct qpnic_qp *qp)
{
	return qp->user ? qp->sq.copied : qp->sq.queue.prod;
}

/*
 * Complete the WRs queued on the SQ (@send) or the RQ with
 * IB_WC_WR_FLUSH_ERR, in order, if the QP is (still) in a flushing state.
 * A user SQ's new WQEs are copied in first and flushed from the copies.
 * The producer index is read once: a flush completes at most what was
 * queued then, never more than the ring holds, whatever userspace writes
 * meanwhile, QPNIC_WQE_BATCH at a time. Only wr_id is read from a user
 * receive WQE, once. An SRQ's WRs are not the QP's to flush.
 */
void qpnic_qp_flush(struct qpnic_qp *qp, bool send)
{
	struct qpnic_wq *wq = send ? &qp->sq : &qp->rq;
	struct qpnic_cq *cq = to_qcq(send ? qp->ibqp.send_cq : qp->ibqp.recv_cq);
	struct ib_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.qp = &qp->ibqp,
		.opcode = IB_WC_RECV,
	};
	unsigned long flags;
	bool notify = false, first = true;
	u32 budget = 0, n;

	if (!send) {
		/* the SEND the responder is placing came out of the ring first */
		spin_lock_irqsave(&qp->resp_lock, flags);
		if (qp->state == IB_QPS_ERR)
			qpnic_resp_flush_locked(qp, &notify);
		spin_unlock_irqrestore(&qp->resp_lock, flags);
		if (qp->ibqp.srq)
			goto out;
	}
	do {
		spin_lock_irqsave(&wq->lock, flags);
		if (send ? !qpnic_sq_flushing(qp->state) : qp->state != IB_QPS_ERR) {
			n = 0;
		} else if (send) {
			if (first)
				budget = (qp->user ? qpnic_sq_to_copy(qp) : 0) +
					 ((qpnic_sq_end(qp) - wq->queue.cons) &
					  wq->queue.wrap);
			if (qp->user)
				qpnic_sq_copy_in(qp, QPNIC_WQE_BATCH);
			n = (qpnic_sq_end(qp) - wq->queue.cons) & wq->queue.wrap;
		} else {
			if (first)
				budget = qpnic_queue_count(&wq->queue);
			n = (wq->queue.prod - wq->queue.cons) & wq->queue.wrap;
		}
		first = false;
		n = min3(n, budget, (u32)QPNIC_WQE_BATCH);
		/* nothing more to flush (a reset, a flush meanwhile): done */
		budget = n ? budget - n : 0;
		while (n--) {
			if (send) {
				struct qpnic_send_wqe *wqe = qpnic_sq_wqe(qp, wq->queue.cons);

				wc.wr_id = wqe->wr_id;
				wc.opcode = qpnic_wr_to_wc_opcode(wqe->opcode);
			} else {
				struct rxe_recv_wqe *wqe = qpnic_queue_slot(&wq->queue,
									    wq->queue.cons);

				wc.wr_id = READ_ONCE(wqe->wr_id);
			}
			/* the slot back before the completion shows */
			qpnic_queue_consumed(&wq->queue);
			notify |= qpnic_cq_push(cq, &wc, false);
		}
		spin_unlock_irqrestore(&wq->lock, flags);
		/* Outside the WQ lock: a completion handler may post new work. */
		if (notify)
			qpnic_cq_notify(cq);
		notify = false;
	} while (budget);
out:
	if (notify)
		qpnic_cq_notify(cq);
}

/*
 * Posting paths and the transport read the state under the queue locks.
 * The requester starts at the SQ's head with sq_psn on entering RTS.
 */
static void qpnic_qp_set_state(struct qpnic_qp *qp, enum ib_qp_state state,
			       const struct qpnic_av *av)
{
	struct qpnic_dev *qdev = to_qdev(qp->ibqp.device);

	spin_lock_irq(&qp->resp_lock);
	spin_lock(&qp->sq.lock);
	spin_lock(&qp->rq.lock);
	if (state == IB_QPS_RTS && qp->state != IB_QPS_RTS &&
	    qp->state != IB_QPS_SQD) {
		qp->req.next = qp->sq.queue.cons;
		qp->req.offset = 0;
		qp->req.psn = qp->attr.sq_psn;
		qp->req.max_psn = qp->attr.sq_psn;
		qp->req.rd_atomic = 0;
		qp->req.paused = false;
		qp->req.window = QPNIC_WINDOW_MAX;
		qp->req.window_acked = 0;
		qp->req.cut_psn = (qp->attr.sq_psn - 1) & QPNIC_PSN_MASK;
		qp->req.asked_psn = qp->req.cut_psn;
		qp->comp.psn = qp->attr.sq_psn;
		qp->comp.rewound = false;
		qp->comp.probed = false;
		qp->comp.timing = false;
		qp->comp.backoff = 0;
		qp->comp.retries = qp->attr.retry_cnt;
		qp->comp.rnr_retries = qp->attr.rnr_retry;
	}
	if (state == IB_QPS_RTR && qp->state != IB_QPS_RTR) {
		qp->resp.psn = qp->attr.rq_psn;
		qp->resp.msn = 0;
		qp->resp.in_send = false;
		qp->resp.in_write = false;
		qp->resp.nak_sent = false;
		qp->resp.ack_deferred = false;
		qp->resp.ack_held = false;
		qp->resp.wqe_valid = false;
		qp->resp.next_res = 0;
		qp->resp.num_sending = 0;
		if (qp->resp.res)
			memset(qp->resp.res, 0, qp->resp.num_res *
			       sizeof(*qp->resp.res));
	}
	/* the path MTU, never above the netdev's */
	qp->mtu = min_t(u32, ib_mtu_enum_to_int(qp->attr.path_mtu ?: IB_MTU_256),
			READ_ONCE(qdev->mtu));
	if (av)
		qp->av = *av;
	if (state != qp->state) {
		qp->sqd_notify = false;
		qp->sqd_pending = false;
		qp->fatal_pending = false;
	}
	/* SQD: SQ_DRAINED once what was started completes, now if nothing was */
	if (state == IB_QPS_SQD && qp->state != IB_QPS_SQD &&
	    qp->attr.en_sqd_async_notify)
		qp->sqd_notify = true;
	if (state != qp->state)
		trace_qpnic_qp_state(&qp->ibqp, qp->state, state);
	qp->state = state;
	qpnic_qp_sq_drained_check(qp);
	qpnic_comp_sqd_ask(qp);
	if (state == IB_QPS_RESET) {
		qpnic_queue_discard(&qp->sq.queue);
		qp->sq.copied = qp->sq.queue.cons;
		if (qp->rq.queue.data)
			qpnic_queue_discard(&qp->rq.queue);
	}
	spin_unlock(&qp->rq.lock);
	spin_unlock(&qp->sq.lock);
	spin_unlock_irq(&qp->resp_lock);
}

/*
 * The transport found an error the QP cannot go on from (IBTA 10.3.1):
 * move it to ERR now, with the SQ lock held by the caller and the RQ lock
 * taken here, and flush from a work item, with no lock held.
 */
void qpnic_qp_error_locked(struct qpnic_qp *qp)
{
	lockdep_assert_held(&qp->sq.lock);
	spin_lock(&qp->rq.lock);
	if (qp->state != IB_QPS_ERR)
		trace_qpnic_qp_state(&qp->ibqp, qp->state, IB_QPS_ERR);
	qp->state = IB_QPS_ERR;
	spin_unlock(&qp->rq.lock);
	qp->fatal_pending = true;
	queue_work(qpnic_wq, &qp->async_work);
}

/*
 * In SQD with en_sqd_async_notify: IB_EVENT_SQ_DRAINED is due once no
 * message the SQ started is left to complete (the started ones follow the
 * head). Caller holds the SQ lock, after a completion.
 */
void qpnic_qp_sq_drained_check(struct qpnic_qp *qp)
{
	if (!qp->sqd_notify || qp->state != IB_QPS_SQD || qpnic_comp_head(qp))
		return;
	qp->sqd_notify = false;
	qp->sqd_pending = true;
	queue_work(qpnic_wq, &qp->async_work);
}

/*
 * What the transport left to do with no lock held. After a transport
 * error (or an overrun of one of its CQs): flush, then tell the consumer,
 * IB_EVENT_QP_FATAL and, for a QP on an SRQ, the
 * IB_EVENT_QP_LAST_WQE_REACHED its teardown may wait for. After SQD's
 * last completion: IB_EVENT_SQ_DRAINED. Nothing is raised for a state the
 * QP left before this ran (a reset meanwhile).
 */
static void qpnic_qp_async_work(struct work_struct *work)
{
	struct qpnic_qp *qp = container_of(work, struct qpnic_qp, async_work);
	bool fatal, drained;

	qpnic_qp_flush(qp, true);
	qpnic_qp_flush(qp, false);
	spin_lock_irq(&qp->sq.lock);
	fatal = qp->fatal_pending && qp->state == IB_QPS_ERR;
	drained = qp->sqd_pending && qp->state == IB_QPS_SQD;
	qp->fatal_pending = false;
	qp->sqd_pending = false;
	spin_unlock_irq(&qp->sq.lock);
	if (fatal) {
		qpnic_qp_event(qp, IB_EVENT_QP_FATAL);
		if (qp->ibqp.srq)
			qpnic_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
	}
	if (drained)
		qpnic_qp_event(qp, IB_EVENT_SQ_DRAINED);
}

/* The first QP numbered @*index or above, with a reference; NULL if none. */
static struct qpnic_qp *qpnic_qp_get_next(struct qpnic_dev *qdev,
					  unsigned long *index)
{
	struct qpnic_qp *qp;
	unsigned long flags;

	xa_lock_irqsave(&qdev->qps, flags);
	xa_for_each_start(&qdev->qps, *index, qp, *index)
		if (refcount_inc_not_zero(&qp->ref))
			break;
	xa_unlock_irqrestore(&qdev->qps, flags);
	return qp;
}

/* Move @qp to ERR for @why unless it is in RESET or ERR already. */
static void qpnic_qp_fail(struct qpnic_qp *qp, const char *why, u32 val)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	if (qp->state != IB_QPS_RESET && qp->state != IB_QPS_ERR && !qp->dying) {
		ibdev_dbg(qp->ibqp.device, "QP %u: %s %u: QP in error\n",
			  qp->ibqp.qp_num, why, val);
		qpnic_qp_error_locked(qp);
	}
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}

/*
 * IBTA 11.6.3: a CQ overrun is an error of every QP that completes into
 * the CQ; they move to ERR (and flush into the CQ in error, which keeps
 * nothing). From the CQ's overflow work: process context, no lock held.
 */
void qpnic_cq_error_qps(struct qpnic_dev *qdev, struct ib_cq *ibcq)
{
	unsigned long index;
	struct qpnic_qp *qp;

	for (index = 0; (qp = qpnic_qp_get_next(qdev, &index)); index++) {
		if (qp->ibqp.send_cq == ibcq || qp->ibqp.recv_cq == ibcq)
			qpnic_qp_fail(qp, "overrun of CQ", ibcq->res.id);
		qpnic_qp_put(qp);
	}
}

/* The netdev now carries IB MTU @mtu: connected QPs above it fail. */
void qpnic_qps_check_mtu(struct qpnic_dev *qdev, u32 mtu)
{
	unsigned long index;
	struct qpnic_qp *qp;

	for (index = 0; (qp = qpnic_qp_get_next(qdev, &index)); index++) {
		/* qp->mtu is set on entering RTR, where it starts to count */
		if ((qp->ibqp.qp_type == IB_QPT_RC || qp->ibqp.qp_type == IB_QPT_UC) &&
		    qp->state != IB_QPS_INIT && READ_ONCE(qp->mtu) > mtu)
			qpnic_qp_fail(qp, "path MTU above the netdev's, now", mtu);
		qpnic_qp_put(qp);
	}
}

static int qpnic_qp_check_attr(struct qpnic_dev *qdev, struct qpnic_qp *qp,
			       const struct ib_qp_attr *attr, int mask)
{
	if ((mask & IB_QP_PORT) && attr->port_num != 1) {
		ibdev_dbg(&qdev->ibdev, "modify_qp: port %u, device has port 1\n",
			  attr->port_num);
		return -EINVAL;
	}
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index) {
		ibdev_dbg(&qdev->ibdev, "modify_qp: pkey_index %u, table has 1 entry\n",
			  attr->pkey_index);
		return -EINVAL;
	}
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC |
				       QPNIC_ACCESS_FLUSH))) {
		ibdev_dbg(&qdev->ibdev, "modify_qp: access flags %#x not supported\n",
			  attr->qp_access_flags);
		return -EINVAL;
	}
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096)) {
		ibdev_dbg(&qdev->ibdev, "modify_qp: path_mtu %d invalid\n",
			  attr->path_mtu);
		return -EINVAL;
	}
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > QPNIC_MAX_RD_ATOMIC) {
		ibdev_dbg(&qdev->ibdev, "modify_qp: max_rd_atomic %u exceeds %u\n",
			  attr->max_rd_atomic, QPNIC_MAX_RD_ATOMIC);
		return -EINVAL;
	}
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > QPNIC_MAX_RD_ATOMIC) {
		ibdev_dbg(&qdev->ibdev, "modify_qp: max_dest_rd_atomic %u exceeds %u\n",
			  attr->max_dest_rd_atomic, QPNIC_MAX_RD_ATOMIC);
		return -EINVAL;
	}
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7) {
		ibdev_dbg(&qdev->ibdev, "modify_qp: retry_cnt %u exceeds 7\n",
			  attr->retry_cnt);
		return -EINVAL;
	}
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7) {
		ibdev_dbg(&qdev->ibdev, "modify_qp: rnr_retry %u exceeds 7\n",
			  attr->rnr_retry);
		return -EINVAL;
	}
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31) {
		ibdev_dbg(&qdev->ibdev, "modify_qp: min_rnr_timer %u exceeds 31\n",
			  attr->min_rnr_timer);
		return -EINVAL;
	}
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31) {
		ibdev_dbg(&qdev->ibdev, "modify_qp: timeout %u exceeds 31\n",
			  attr->timeout);
		return -EINVAL;
	}
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > QPNIC_QPN_MASK) {
		ibdev_dbg(&qdev->ibdev, "modify_qp: dest_qp_num %#x exceeds 24 bits\n",
			  attr->dest_qp_num);
		return -EINVAL;
	}
	if ((mask & IB_QP_RQ_PSN) && attr->rq_psn > QPNIC_PSN_MASK) {
		ibdev_dbg(&qdev->ibdev, "modify_qp: rq_psn %#x exceeds 24 bits\n",
			  attr->rq_psn);
		return -EINVAL;
	}
	if ((mask & IB_QP_SQ_PSN) && attr->sq_psn > QPNIC_PSN_MASK) {
		ibdev_dbg(&qdev->ibdev, "modify_qp: sq_psn %#x exceeds 24 bits\n",
			  attr->sq_psn);
		return -EINVAL;
	}
	if (mask & (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE)) {
		ibdev_dbg(&qdev->ibdev, "modify_qp: path migration not supported (mask %#x)\n",
			  mask);
		return -EOPNOTSUPP;
	}
	if (mask & IB_QP_RATE_LIMIT) {
		ibdev_dbg(&qdev->ibdev, "modify_qp: rate limit not supported\n");
		return -EOPNOTSUPP;
	}
	if (mask & IB_QP_AV)
		return qpnic_check_ah_attr(qdev, &attr->ah_attr);
	return 0;
}

/*
 * An RC responder has max_dest_rd_atomic responder resources (at least
 * one) for the READs it answers and the atomics it keeps for duplicates:
 * sized here, when the attribute is set, so the receive path never
 * allocates. The READ work holds no pointer into the old table.
 */
static int qpnic_qp_size_res(struct qpnic_qp *qp, u32 max_dest_rd_atomic)
{
	u32 n = max_t(u32, max_dest_rd_atomic, 1);
	struct qpnic_resp_res *res;

	if (qp->ibqp.qp_type != IB_QPT_RC || n == qp->resp.num_res)
		return 0;
	res = kcalloc(n, sizeof(*res), qp->user ? GFP_KERNEL_ACCOUNT : GFP_KERNEL);
	if (!res)
		return -ENOMEM;
	spin_lock_irq(&qp->resp_lock);
	swap(qp->resp.res, res);
	qp->resp.num_res = n;
	qp->resp.next_res = 0;
	qp->resp.num_sending = 0;
	spin_unlock_irq(&qp->resp_lock);
	kfree(res);
	return 0;
}

/* Keep what was set so query_qp can report it. */
static void qpnic_qp_store_attr(struct qpnic_qp *qp, const struct ib_qp_attr *attr,
				int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_AV)
		rdma_replace_ah_attr(&a->ah_attr, &attr->ah_attr);
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
}

int qpnic_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct qpnic_dev *qdev = to_qdev(ibqp->device);
	struct qpnic_qp *qp = to_qqp(ibqp);
	enum ib_qp_state cur, new;
	struct qpnic_av av;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS) {
		ibdev_dbg(&qdev->ibdev, "modify_qp: unknown attribute mask %#x\n",
			  mask & ~IB_QP_ATTR_STANDARD_BITS);
		return -EOPNOTSUPP;
	}
	if (udata && udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen)) {
		ibdev_dbg(&qdev->ibdev, "modify_qp: %zu bytes of unknown driver input\n",
			  udata->inlen);
		return -EOPNOTSUPP;
	}

	mutex_lock(&qp->state_lock);
	cur = qp->state;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		ibdev_dbg(&qdev->ibdev, "modify_qp: QP %u is in state %d, caller says %d\n",
			  ibqp->qp_num, cur, attr->cur_qp_state);
		err = -EINVAL;
		goto out;
	}
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, new, ibqp->qp_type, mask)) {
		ibdev_dbg(&qdev->ibdev, "modify_qp: QP %u: %d -> %d with mask %#x not allowed\n",
			  ibqp->qp_num, cur, new, mask);
		err = -EINVAL;
		goto out;
	}
	err = qpnic_qp_check_attr(qdev, qp, attr, mask);
	if (!err && (mask & IB_QP_AV))
		err = qpnic_av_init(qdev, &av, &attr->ah_attr);
	if (!err && (mask & IB_QP_MAX_DEST_RD_ATOMIC))
		err = qpnic_qp_size_res(qp, attr->max_dest_rd_atomic);
	if (err)
		goto out;

	qpnic_qp_store_attr(qp, attr, mask);
	if (new == IB_QPS_RESET) {
		/* Back to the state create_qp left: attributes forgotten. */
		rdma_destroy_ah_attr(&qp->attr.ah_attr);
		memset(&qp->attr, 0, sizeof(qp->attr));
	}
	if (new != cur || new == IB_QPS_RESET || (mask & IB_QP_AV))
		qpnic_qp_set_state(qp, new, (mask & IB_QP_AV) ? &av : NULL);
	mutex_unlock(&qp->state_lock);

	/*
	 * Flushes and events run with no lock of ours held: a completion or
	 * event handler may call back into the verbs. Every move into ERR
	 * flushes again (librxe posts receives without a system call).
	 */
	if (new == IB_QPS_ERR) {
		qpnic_qp_flush(qp, true);
		qpnic_qp_flush(qp, false);
		if (ibqp->srq && cur != IB_QPS_ERR)
			qpnic_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
	}
	return 0;

out:
	mutex_unlock(&qp->state_lock);
	return err;
}

/*
 * A connected QP's PSNs as they stand, as hardware and rdma_rxe report
 * them: the next one the responder expects once it receives, and the one
 * after the highest the requester has sent once it sends. A peer that
 * reconnects to this QP starts from these.
 */
static void qpnic_query_psns(struct qpnic_qp *qp, struct ib_qp_attr *attr)
{
	spin_lock_irq(&qp->resp_lock);
	spin_lock(&qp->sq.lock);
	if (qp->state != IB_QPS_RESET && qp->state != IB_QPS_INIT)
		attr->rq_psn = qp->resp.psn;
	if (qp->state != IB_QPS_RESET && qp->state != IB_QPS_INIT &&
	    qp->state != IB_QPS_RTR)
		attr->sq_psn = qp->req.max_psn;
	spin_unlock(&qp->sq.lock);
	spin_unlock_irq(&qp->resp_lock);
}

int qpnic_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct qpnic_qp *qp = to_qqp(ibqp);

	mutex_lock(&qp->state_lock);
	*attr = qp->attr;
	/* The caller does not own a reference on our GID attribute. */
	attr->ah_attr.grh.sgid_attr = NULL;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->sq_draining = 0;
	attr->cap.max_send_wr = qp->sq.max_wr;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_inline_data = qp->max_inline;
	attr->cap.max_recv_wr = qp->rq.max_wr;
	attr->cap.max_recv_sge = qp->rq.max_sge;
	if (ibqp->qp_type == IB_QPT_RC || ibqp->qp_type == IB_QPT_UC)
		qpnic_query_psns(qp, attr);
	mutex_unlock(&qp->state_lock);

	memset(init, 0, sizeof(*init));
	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->qp_type = ibqp->qp_type;
	init->port_num = ibqp->port;
	return 0;
}

static u32 qpnic_wq_queued(struct qpnic_wq *wq)
{
	unsigned long flags;
	u32 n;

	spin_lock_irqsave(&wq->lock, flags);
	n = qpnic_queue_count(&wq->queue);
	spin_unlock_irqrestore(&wq->lock, flags);
	return n;
}

/*
 * `rdma res show qp -dd`: the driver's view of a QP's queues, next to the
 * PSNs and state the core reports from query_qp.
 */
int qpnic_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct qpnic_qp *qp = to_qqp(ibqp);
	u32 sq = qpnic_wq_queued(&qp->sq), rq = 0;
	u32 next_psn, unacked_psn, rd_atomic, window, expected_psn;
	struct nlattr *table;
	unsigned long flags;

	if (!ibqp->srq)
		rq = qpnic_wq_queued(&qp->rq);
	/* the transport's view: the requester's, completer's and responder's PSNs */
	spin_lock_irqsave(&qp->sq.lock, flags);
	next_psn = qp->req.psn;
	unacked_psn = qp->comp.psn;
	rd_atomic = qp->req.rd_atomic;
	window = qp->req.window;
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	spin_lock_irqsave(&qp->resp_lock, flags);
	expected_psn = qp->resp.psn;
	spin_unlock_irqrestore(&qp->resp_lock, flags);
	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "sq_queued", sq) ||
	    rdma_nl_put_driver_u32(msg, "sq_depth", qp->sq.max_wr) ||
	    rdma_nl_put_driver_u32(msg, "rq_queued", rq) ||
	    rdma_nl_put_driver_u32(msg, "rq_depth", qp->rq.max_wr) ||
	    rdma_nl_put_driver_u32_hex(msg, "sq_next_psn", next_psn) ||
	    rdma_nl_put_driver_u32_hex(msg, "sq_unacked_psn", unacked_psn) ||
	    rdma_nl_put_driver_u32(msg, "rd_atomic_outstanding", rd_atomic) ||
	    (ibqp->qp_type == IB_QPT_RC &&
	     rdma_nl_put_driver_u32(msg, "sq_window", window)) ||
	    rdma_nl_put_driver_u32_hex(msg, "rq_expected_psn", expected_psn)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}
