// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues. Kernel CQs hold struct ib_wc, user CQs hold
 * struct ib_uverbs_wc in a ring librxe polls directly.
 */
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "qpnic.h"
#include "trace.h"

static u32 qpnic_cqe_size(bool user)
{
	return user ? sizeof(struct ib_uverbs_wc) : sizeof(struct ib_wc);
}

static int qpnic_cq_check_size(struct qpnic_dev *qdev, int cqe)
{
	if (cqe < 1 || cqe > QPNIC_MAX_CQE) {
		ibdev_dbg(&qdev->ibdev, "cq: %d entries asked, range is 1..%u\n",
			  cqe, QPNIC_MAX_CQE);
		return -EINVAL;
	}
	return 0;
}

/*
 * A CQ overrun: the CQ_ERR event, then its QPs to ERR; from process
 * context with no lock held.
 */
static void qpnic_cq_overflow_work(struct work_struct *work)
{
	struct qpnic_cq *cq = container_of(work, struct qpnic_cq, overflow_work);
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.event = IB_EVENT_CQ_ERR,
		.element.cq = &cq->ibcq,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	qpnic_cq_error_qps(to_qdev(cq->ibcq.device), &cq->ibcq);
}

int qpnic_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct qpnic_create_cq_arg *arg)
{
	struct ib_udata *udata = qpnic_create_cq_udata(arg);
	struct qpnic_dev *qdev = to_qdev(ibcq->device);
	struct qpnic_cq *cq = to_qcq(ibcq);
	struct rxe_create_cq_resp resp = {};
	int err;

	if (attr->flags) {
		ibdev_dbg(&qdev->ibdev, "cq: unsupported flags %#x\n", attr->flags);
		return -EOPNOTSUPP;
	}
	if (attr->comp_vector >= qdev->ibdev.num_comp_vectors) {
		ibdev_dbg(&qdev->ibdev, "cq: comp_vector %u, device has %d\n",
			  attr->comp_vector, qdev->ibdev.num_comp_vectors);
		return -EINVAL;
	}
	err = qpnic_cq_check_size(qdev, attr->cqe);
	if (err)
		return err;
	err = qpnic_check_resp_len(qdev, udata, sizeof(resp), "create_cq") ?:
	      qpnic_count_get(qdev, &qdev->num_cq, QPNIC_MAX_CQ, "CQs");
	if (err)
		return err;

	spin_lock_init(&cq->lock);
	INIT_WORK(&cq->overflow_work, qpnic_cq_overflow_work);
	cq->user = !!udata;
	err = qpnic_queue_init(qdev, &cq->queue, attr->cqe, QPNIC_MAX_CQE,
			       qpnic_cqe_size(cq->user), QPNIC_Q_FROM_KERNEL,
			       udata, &resp.mi);
	if (err)
		goto err_count;
	ibcq->cqe = cq->queue.capacity;
	if (udata) {
		err = qpnic_copy_resp(qdev, udata, &resp, sizeof(resp), "create_cq");
		if (err)
			goto err_queue;
	}
	return 0;

err_queue:
	qpnic_queue_free(&cq->queue);
err_count:
	atomic_dec(&qdev->num_cq);
	return err;
}

int qpnic_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct qpnic_cq *cq = to_qcq(ibcq);

	/* The core refuses while a QP or SRQ still uses this CQ. */
	cancel_work_sync(&cq->overflow_work);
	qpnic_queue_free(&cq->queue);
	atomic_dec(&to_qdev(ibcq->device)->num_cq);
	return 0;
}

int qpnic_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct qpnic_dev *qdev = to_qdev(ibcq->device);
	struct qpnic_cq *cq = to_qcq(ibcq);
	struct rxe_resize_cq_resp resp = {};
	struct qpnic_queue newq, oldq;
	int err;

	err = qpnic_cq_check_size(qdev, cqe);
	if (err)
		return err;
	err = qpnic_check_resp_len(qdev, udata, sizeof(resp), "resize_cq");
	if (err)
		return err;
	err = qpnic_queue_init(qdev, &newq, cqe, QPNIC_MAX_CQE,
			       qpnic_cqe_size(cq->user),
			       QPNIC_Q_FROM_KERNEL, udata, &resp.mi);
	if (err)
		return err;
	/*
	 * Tell userspace about the new ring before switching to it: if the
	 * copy fails, the CQ keeps the ring librxe polls.
	 */
	if (udata) {
		err = qpnic_copy_resp(qdev, udata, &resp, sizeof(resp), "resize_cq");
		if (err)
			goto err_free;
	}

	spin_lock_irq(&cq->lock);
	err = qpnic_queue_move(&newq, &cq->queue);
	if (err) {
		spin_unlock_irq(&cq->lock);
		ibdev_dbg(&qdev->ibdev, "resize_cq: %u CQEs queued, asked %d\n",
			  qpnic_queue_count(&cq->queue), cqe);
		goto err_free;
	}
	oldq = cq->queue;
	cq->queue = newq;
	ibcq->cqe = newq.capacity;
	spin_unlock_irq(&cq->lock);
	qpnic_queue_free(&oldq);
	return 0;

err_free:
	qpnic_queue_free(&newq);
	return err;
}

int qpnic_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct qpnic_cq *cq = to_qcq(ibcq);
	unsigned long flags;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	while (n < num_entries && qpnic_queue_count(&cq->queue)) {
		wc[n++] = *(struct ib_wc *)qpnic_queue_slot(&cq->queue,
							    cq->queue.cons);
		qpnic_queue_consumed(&cq->queue);
	}
	if (!qpnic_queue_count(&cq->queue))
		cq->handed = false;
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

int qpnic_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct qpnic_cq *cq = to_qcq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* NEXT_COMP is the wider request and wins over SOLICITED. */
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && qpnic_queue_count(&cq->queue))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/*
 * librxe hands a user CQE's flags to the application as they are, so
 * they are libibverbs' (enum ibv_wc_flags), which part from the kernel's
 * after WITH_IMM: a received invalidation is bit 3 (the kernel's
 * IP_CSUM_OK), and the kernel-only flags (SMAC, VLAN, network header
 * type) would read as tag matching flags.
 */
#define QPNIC_UWC_GRH		BIT(0)
#define QPNIC_UWC_WITH_IMM	BIT(1)
#define QPNIC_UWC_WITH_INV	BIT(3)

static u8 qpnic_uwc_flags(int flags)
{
	return (flags & IB_WC_GRH ? QPNIC_UWC_GRH : 0) |
	       (flags & IB_WC_WITH_IMM ? QPNIC_UWC_WITH_IMM : 0) |
	       (flags & IB_WC_WITH_INVALIDATE ? QPNIC_UWC_WITH_INV : 0);
}

static void qpnic_wc_to_uverbs(const struct ib_wc *wc, struct ib_uverbs_wc *uwc)
{
	memset(uwc, 0, sizeof(*uwc));
	uwc->wr_id = wc->wr_id;
	uwc->status = wc->status;
	uwc->opcode = wc->opcode;
	uwc->vendor_err = wc->vendor_err;
	uwc->byte_len = wc->byte_len;
	uwc->ex.imm_data = wc->ex.imm_data;
	uwc->qp_num = wc->qp->qp_num;
	uwc->src_qp = wc->src_qp;
	uwc->wc_flags = qpnic_uwc_flags(wc->wc_flags);
	uwc->pkey_index = wc->pkey_index;
	uwc->slid = wc->slid;
	uwc->sl = wc->sl;
	uwc->dlid_path_bits = wc->dlid_path_bits;
	uwc->port_num = wc->port_num;
}

/*
 * Queue one completion. Returns true when the CQ was armed for it: the
 * caller then runs qpnic_cq_notify() once it holds no lock a completion
 * handler could need (handlers may post new work). A full CQ is a CQ
 * overrun (IB spec 10.10.2.3, 11.6.3): the CQE is lost, the CQ stays in
 * error and the consumer gets one IB_EVENT_CQ_ERR, raised from a work item
 * so that no lock of the caller is held and nothing is allocated per lost
 * CQE.
 */
bool qpnic_cq_push(struct qpnic_cq *cq, const struct ib_wc *wc, bool solicited)
{
	unsigned long flags;
	bool notify;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->overflowed || qpnic_queue_full(&cq->queue)) {
		if (!cq->overflowed) {
			cq->overflowed = true;
			ibdev_dbg(cq->ibcq.device, "cq overrun at %u entries: CQ in error\n",
				  cq->queue.capacity);
			schedule_work(&cq->overflow_work);
		}
		spin_unlock_irqrestore(&cq->lock, flags);
		trace_qpnic_complete(&cq->ibcq, wc, true);
		return false;
	}
	trace_qpnic_complete(&cq->ibcq, wc, false);
	if (cq->user)
		qpnic_wc_to_uverbs(wc, qpnic_queue_slot(&cq->queue, cq->queue.prod));
	else
		*(struct ib_wc *)qpnic_queue_slot(&cq->queue, cq->queue.prod) = *wc;
	qpnic_queue_produced(&cq->queue);
	notify = cq->notify == IB_CQ_NEXT_COMP ||
		 (cq->notify == IB_CQ_SOLICITED &&
		  (solicited || wc->status != IB_WC_SUCCESS));
	if (notify) {
		cq->notify = 0;
		cq->handed = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return notify;
}

/*
 * Whether @cq holds a completion of @ibqp that its consumer was told of
 * (its handler was called) and has not polled yet.
 */
static bool qpnic_cq_owes(struct qpnic_cq *cq, struct ib_qp *ibqp)
{
	struct qpnic_queue *q = &cq->queue;
	bool owes = false;
	u32 i;

	spin_lock_irq(&cq->lock);
	for (i = q->cons; cq->handed && !owes && i != q->prod; i++)
		owes = ((struct ib_wc *)qpnic_queue_slot(q, i))->qp == ibqp;
	spin_unlock_irq(&cq->lock);
	return owes;
}

/*
 * Before destroy_qp purges a kernel QP's completions, those its CQs'
 * consumers were told of get up to QPNIC_DESTROY_POLL_WAIT to be polled
 * while the QP still exists, so that their done callbacks run: a ULP that
 * posted after its drain counts on every one of them (6.1's cifs requeues
 * a work that reposts receives, then waits for each buffer forever). Not
 * from the CQ's own poll work, which cannot poll meanwhile.
 */
void qpnic_cq_let_consumer_poll(struct ib_qp *ibqp)
{
	struct qpnic_cq *scq = to_qcq(ibqp->send_cq), *rcq = to_qcq(ibqp->recv_cq);
	unsigned long deadline = jiffies + QPNIC_DESTROY_POLL_WAIT;

	if (current_work() == &scq->ibcq.work || current_work() == &rcq->ibcq.work)
		return;
	while (qpnic_cq_owes(scq, ibqp) || (rcq != scq && qpnic_cq_owes(rcq, ibqp))) {
		if (time_after(jiffies, deadline)) {
			ibdev_dbg(ibqp->device, "destroy_qp: QP %u: completions not polled in %u ms\n",
				  ibqp->qp_num, jiffies_to_msecs(QPNIC_DESTROY_POLL_WAIT));
			return;
		}
		usleep_range(200, 1000);
	}
}

/*
 * Drop the entries of a kernel CQ that belong to @ibqp (being destroyed),
 * keeping the others in order, so that no ib_wc outlives its wc->qp.
 */
u32 qpnic_cq_purge_qp(struct qpnic_cq *cq, struct ib_qp *ibqp)
{
	struct qpnic_queue *q = &cq->queue;
	unsigned long flags;
	u32 from, to, dropped;

	spin_lock_irqsave(&cq->lock, flags);
	for (from = to = q->cons; from != q->prod; from++) {
		struct ib_wc *wc = qpnic_queue_slot(q, from);

		if (wc->qp == ibqp)
			continue;
		if (from != to)
			*(struct ib_wc *)qpnic_queue_slot(q, to) = *wc;
		to++;
	}
	dropped = q->prod - to;
	q->prod = to;
	spin_unlock_irqrestore(&cq->lock, flags);
	return dropped;
}

void qpnic_cq_notify(struct qpnic_cq *cq)
{
	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}
