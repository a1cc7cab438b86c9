// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The requester: turns send WQEs into packets, in posting order.
 *
 * It runs in the poster's context when it can (post_send with interrupts
 * on; BH is disabled around it as on the receive path), otherwise from the
 * QP's work item on qpnic_wq. One runner per QP: qpnic_req_kick() counts
 * run requests, and the runner loops until none came in while it ran. A
 * run sends at most QPNIC_REQ_BUDGET WQEs, then hands over to the work
 * item, so one QP never holds a CPU for long.
 *
 * The SQ lock is held only to claim a WQE and to complete it, never while
 * a packet is built or sent. A WQE claimed stays in its slot until it
 * completes (only completion and flush give a slot back), so the runner
 * reads it unlocked; a QP moved to ERR meanwhile flushes it, and the
 * completion sees that (the consumer index moved) and adds nothing.
 */
#include <linux/skbuff.h>
#include <rdma/ib_mad.h>

#include "qpnic.h"

#define QPNIC_REQ_BUDGET 64

/* Build and send the one packet of a UD SEND; the status to complete with. */
static enum ib_wc_status qpnic_req_send_ud(struct qpnic_qp *qp,
					   const struct qpnic_send_wqe *wqe,
					   u32 psn)
{
	struct qpnic_dev *qdev = to_qdev(qp->ibqp.device);
	struct qpnic_hdr_fields f = {
		.opcode = wqe->opcode == IB_WR_SEND_WITH_IMM ?
			  QPNIC_UD_SEND_ONLY_IMM : QPNIC_UD_SEND_ONLY,
		.se = wqe->send_flags & IB_SEND_SOLICITED,
		.pkey = IB_DEFAULT_PKEY_FULL,
		.dqpn = wqe->ud.remote_qpn,
		.psn = psn,
		.immdt = wqe->ex.imm_data,
	};
	u32 len = wqe->length, hdr_len, total;
	struct qpnic_av av;
	struct sk_buff *skb;
	u8 *buf;

	if (len > READ_ONCE(qdev->mtu)) {
		ibdev_dbg(&qdev->ibdev, "QP %u: UD send of %u bytes exceeds the MTU %u\n",
			  qp->ibqp.qp_num, len, READ_ONCE(qdev->mtu));
		return IB_WC_LOC_LEN_ERR;
	}
	if (qpnic_ah_av(qdev, wqe->ud.ah_num, &av)) {
		ibdev_dbg(&qdev->ibdev, "QP %u: UD send through AH %u, which is gone\n",
			  qp->ibqp.qp_num, wqe->ud.ah_num);
		return IB_WC_LOC_QP_OP_ERR;
	}
	/* IBTA 10.2.5: a Q_Key with the high bit set means "use the QP's" */
	f.deth.qkey = (wqe->ud.remote_qkey & 0x80000000) ? qpnic_qp_qkey(qp) :
							   wqe->ud.remote_qkey;
	f.deth.sqpn = qp->ibqp.qp_num;
	f.pad = -len & 3;
	hdr_len = qpnic_opcode_hdr_len(f.opcode);
	total = hdr_len + len + f.pad + QPNIC_ICRC_LEN;

	skb = qpnic_skb_alloc(qdev, &av, total);
	if (!skb)
		return IB_WC_SUCCESS;	/* lost on the way, as UD may be */
	buf = skb_put(skb, total);
	qpnic_hdr_build(buf, &f);
	if (!wqe->num_sge) {
		memcpy(buf + hdr_len, wqe->inline_data, len);
	} else {
		struct qpnic_copy c = { .buf = buf + hdr_len };

		if (qpnic_sgl_copy(qdev, qp->ibqp.pd, wqe->sge, wqe->num_sge, 0,
				   len, &c)) {
			kfree_skb(skb);
			return IB_WC_LOC_PROT_ERR;
		}
	}
	memset(buf + hdr_len + len, 0, f.pad + QPNIC_ICRC_LEN);
	qpnic_skb_send(qdev, &av, skb,
		       rdma_get_udp_sport(av.flow_label, qp->ibqp.qp_num,
					  f.dqpn));
	return IB_WC_SUCCESS;
}

/*
 * Complete the WQE at SQ index @index, unless a flush or a reset took it
 * meanwhile. An error moves the QP to ERR (the rest then flushes).
 */
static void qpnic_req_complete(struct qpnic_qp *qp, u32 index,
			       const struct qpnic_send_wqe *wqe,
			       enum ib_wc_status status)
{
	struct qpnic_cq *cq = to_qcq(qp->ibqp.send_cq);
	struct ib_wc wc = {
		.wr_id = wqe->wr_id,
		.status = status,
		.opcode = qpnic_wr_to_wc_opcode(wqe->opcode),
		.byte_len = wqe->length,
		.qp = &qp->ibqp,
	};
	bool notify = false;
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	if (qp->sq.queue.cons != index || qp->state == IB_QPS_RESET) {
		spin_unlock_irqrestore(&qp->sq.lock, flags);
		return;
	}
	if (status != IB_WC_SUCCESS || (wqe->send_flags & IB_SEND_SIGNALED))
		notify = qpnic_cq_push(cq, &wc, false);
	qpnic_queue_consumed(&qp->sq.queue);
	if (status != IB_WC_SUCCESS)
		qpnic_qp_error_locked(qp);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	if (notify)
		qpnic_cq_notify(cq);
}

/*
 * Whether the requester starts new WQEs: in RTS, and for now only on UD
 * QPs (GSI included); connected QPs keep theirs queued until the RC/UC
 * transport lands.
 */
static bool qpnic_req_sends(const struct qpnic_qp *qp)
{
	return qp->state == IB_QPS_RTS &&
	       (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI);
}

/* One run: returns true when the budget ran out with work left. */
static bool qpnic_req_run(struct qpnic_qp *qp)
{
	int budget = QPNIC_REQ_BUDGET;

	for (;;) {
		struct qpnic_send_wqe *wqe;
		enum ib_wc_status status;
		unsigned long flags;
		u32 index, psn;

		spin_lock_irqsave(&qp->sq.lock, flags);
		if (!qpnic_req_sends(qp) ||
		    qp->req.next == qp->sq.queue.prod) {
			spin_unlock_irqrestore(&qp->sq.lock, flags);
			return false;
		}
		if (!budget--) {
			spin_unlock_irqrestore(&qp->sq.lock, flags);
			return true;
		}
		index = qp->req.next;
		wqe = qpnic_queue_slot(&qp->sq.queue, index);
		psn = qp->req.psn;
		qp->req.next = (index + 1) & qp->sq.queue.wrap;
		qp->req.psn = (psn + 1) & QPNIC_PSN_MASK;
		spin_unlock_irqrestore(&qp->sq.lock, flags);

		status = qpnic_req_send_ud(qp, wqe, psn);
		qpnic_req_complete(qp, index, wqe, status);
	}
}

/*
 * Run the requester here, or have the running one go round again. Any
 * context; with interrupts off (a poster holding an irqsave lock, as the
 * MAD layer does) it runs from the work item instead.
 */
void qpnic_req_kick(struct qpnic_qp *qp)
{
	bool more;

	if (irqs_disabled() || in_hardirq()) {
		queue_work(qpnic_wq, &qp->req.work);
		return;
	}
	if (atomic_inc_return(&qp->req.runs) != 1)
		return;
	local_bh_disable();
	do {
		atomic_set(&qp->req.runs, 1);
		more = qpnic_req_run(qp);
	} while (!more && atomic_cmpxchg(&qp->req.runs, 1, 0) != 1);
	if (more) {
		atomic_set(&qp->req.runs, 0);
		queue_work(qpnic_wq, &qp->req.work);
	}
	local_bh_enable();
}

void qpnic_req_work(struct work_struct *work)
{
	qpnic_req_kick(container_of(work, struct qpnic_qp, req.work));
}
