// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The responder: executes requests that passed the receive path's checks
 * (recv.c), in the UDP socket's softirq or the loopback work item with BH
 * off. Today: UD SENDs into the RQ or SRQ.
 *
 * The receive queue's lock is held from taking a WQE until its completion
 * is queued, so completions come out in WQE order and a flush never
 * interleaves with a placement. A WQE from a user ring is copied once
 * into qp->resp.wqe and only the copy is used: its SGE count is bounded
 * by the queue's max_sge, its lengths summed in 64 bits, and every SGE is
 * checked against its MR (PD, local write, bounds) before a byte lands.
 */
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <asm/unaligned.h>
#include <rdma/ib_mad.h>

#include "qpnic.h"

/* The 40 bytes a UD receive buffer starts with (IBTA A17.4.5.1). */
#define QPNIC_GRH_LEN	40

u32 qpnic_qp_qkey(const struct qpnic_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_GSI ? IB_QP1_QKEY : qp->attr.qkey;
}

/* The queue a QP receives from: its RQ, or its SRQ. */
struct qpnic_rq_ref {
	spinlock_t *lock;		/* the queue's own lock */
	struct qpnic_queue *queue;
	struct qpnic_srq *srq;
	u32 max_sge;
};

static void qpnic_rq_ref(struct qpnic_qp *qp, struct qpnic_rq_ref *rq)
{
	rq->srq = qp->ibqp.srq ? to_qsrq(qp->ibqp.srq) : NULL;
	if (rq->srq) {
		rq->lock = &rq->srq->lock;
		rq->queue = &rq->srq->queue;
		rq->max_sge = rq->srq->max_sge;
	} else {
		rq->lock = &qp->rq.lock;
		rq->queue = &qp->rq.queue;
		rq->max_sge = qp->rq.max_sge;
	}
}

/* Copy the WQE at the ring's consumer index; caller holds the ring's lock. */
static void qpnic_resp_copy_wqe(struct qpnic_qp *qp, struct qpnic_rq_ref *rq)
{
	const struct rxe_recv_wqe *slot = qpnic_queue_slot(rq->queue,
							   rq->queue->cons);
	struct qpnic_recv_wqe *wqe = qp->resp.wqe;
	u64 length = 0;
	u32 i;

	wqe->wr_id = READ_ONCE(slot->wr_id);
	wqe->num_sge = min_t(u32, READ_ONCE(slot->dma.num_sge), rq->max_sge);
	for (i = 0; i < wqe->num_sge; i++) {
		wqe->sge[i].addr = READ_ONCE(slot->dma.sge[i].addr);
		wqe->sge[i].length = READ_ONCE(slot->dma.sge[i].length);
		wqe->sge[i].lkey = READ_ONCE(slot->dma.sge[i].lkey);
		length += wqe->sge[i].length;
	}
	wqe->length = min_t(u64, length, U32_MAX);
}

/* The SRQ limit event is armed by a non-zero limit and fires once. */
static bool qpnic_srq_below_limit(struct qpnic_srq *srq)
{
	if (!srq->limit || qpnic_queue_count(&srq->queue) >= srq->limit)
		return false;
	srq->limit = 0;
	return true;
}

static void qpnic_srq_limit_event(struct qpnic_srq *srq)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
		.element.srq = &srq->ibsrq,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/* The GRH image of the packet's IP header: IPv4 goes in the last 20 bytes. */
static void qpnic_grh_image(const struct sk_buff *skb, u8 *grh)
{
	memset(grh, 0, QPNIC_GRH_LEN);
	if (skb->protocol == htons(ETH_P_IP))
		memcpy(grh + QPNIC_GRH_LEN - sizeof(struct iphdr),
		       skb_network_header(skb), sizeof(struct iphdr));
	else
		memcpy(grh, skb_network_header(skb), sizeof(struct ipv6hdr));
}

/* Place the GRH and the payload; the completion status. */
static enum ib_wc_status qpnic_resp_place_ud(struct qpnic_qp *qp,
					     struct sk_buff *skb,
					     const struct qpnic_pkt *pkt)
{
	struct qpnic_dev *qdev = to_qdev(qp->ibqp.device);
	struct qpnic_recv_wqe *wqe = qp->resp.wqe;
	u8 grh[QPNIC_GRH_LEN];
	struct qpnic_copy c = { .buf = grh, .to_mr = true };
	int err;

	if ((u64)QPNIC_GRH_LEN + pkt->paylen > wqe->length)
		return IB_WC_LOC_LEN_ERR;
	qpnic_grh_image(skb, grh);
	err = qpnic_sgl_copy(qdev, qp->ibqp.pd, wqe->sge, wqe->num_sge, 0,
			     QPNIC_GRH_LEN, &c);
	if (!err && pkt->paylen) {
		c = (struct qpnic_copy){ .skb = skb, .skb_offset = pkt->hdr_len,
					 .to_mr = true };
		err = qpnic_sgl_copy(qdev, qp->ibqp.pd, wqe->sge, wqe->num_sge,
				     QPNIC_GRH_LEN, pkt->paylen, &c);
	}
	return err ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
}

static bool qpnic_resp_state_ok(enum ib_qp_state state)
{
	return state == IB_QPS_RTR || state == IB_QPS_RTS ||
	       state == IB_QPS_SQD || state == IB_QPS_SQE;
}

static void qpnic_resp_ud(struct qpnic_qp *qp, struct sk_buff *skb,
			  const struct qpnic_pkt *pkt)
{
	struct qpnic_dev *qdev = to_qdev(qp->ibqp.device);
	struct qpnic_cq *cq = to_qcq(qp->ibqp.recv_cq);
	const u8 *deth = skb->data + qpnic_hdr_offset(pkt->opcode, QPNIC_OP_DETH);
	struct ib_wc wc = {
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
		.src_qp = get_unaligned_be32(deth + 4) & QPNIC_QPN_MASK,
		.wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE,
		.network_hdr_type = skb->protocol == htons(ETH_P_IP) ?
				    RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6,
		.port_num = 1,
		.byte_len = QPNIC_GRH_LEN + pkt->paylen,
	};
	bool notify = false, limit = false;
	struct qpnic_rq_ref rq;
	unsigned long flags;

	if (get_unaligned_be32(deth) != qpnic_qp_qkey(qp)) {
		qpnic_count(qdev, QPNIC_CNT_RX_DROP_QKEY);
		return;
	}
	if (pkt->flags & QPNIC_OP_IMMDT) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = *(__be32 *)(skb->data +
			qpnic_hdr_offset(pkt->opcode, QPNIC_OP_IMMDT));
	}
	if (skb->dev && is_vlan_dev(skb->dev)) {
		wc.wc_flags |= IB_WC_WITH_VLAN;
		wc.vlan_id = vlan_dev_vlan_id(skb->dev);
	}

	qpnic_rq_ref(qp, &rq);
	spin_lock_irqsave(rq.lock, flags);
	if (!qpnic_resp_state_ok(READ_ONCE(qp->state)) ||
	    !qpnic_queue_count(rq.queue)) {
		spin_unlock_irqrestore(rq.lock, flags);
		qpnic_count(qdev, QPNIC_CNT_RX_DROP_NO_RECV_WQE);
		return;
	}
	qpnic_resp_copy_wqe(qp, &rq);
	wc.wr_id = qp->resp.wqe->wr_id;
	wc.status = qpnic_resp_place_ud(qp, skb, pkt);
	notify = qpnic_cq_push(cq, &wc, pkt->se);
	qpnic_queue_consumed(rq.queue);
	if (rq.srq)
		limit = qpnic_srq_below_limit(rq.srq);
	spin_unlock_irqrestore(rq.lock, flags);
	if (notify)
		qpnic_cq_notify(cq);
	if (limit)
		qpnic_srq_limit_event(rq.srq);
}

/* A request for @qp that passed the receive checks. Consumes the skb. */
void qpnic_resp_rcv(struct qpnic_qp *qp, struct sk_buff *skb,
		    const struct qpnic_pkt *pkt)
{
	qpnic_resp_ud(qp, skb, pkt);
	kfree_skb(skb);
}
