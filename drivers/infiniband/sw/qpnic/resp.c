// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The responder: executes requests that passed the receive path's checks
 * (recv.c), in the UDP socket's softirq or the loopback work item with BH
 * off: UD SENDs, RC/UC SENDs and RDMA WRITEs, and (RC) RDMA READs and
 * atomics. An atomic runs on the target's memory with the CPU's atomic
 * instructions, and its original value is kept in a responder resource
 * so a duplicate request gets the same answer without running again.
 *
 * UD holds the receive queue's lock from taking a WQE until its
 * completion is queued, so completions come out in WQE order and a flush
 * never interleaves with a placement. Connected QPs hold resp_lock for
 * each packet: a SEND takes its WQE out of the ring at its first packet
 * and keeps the copy until its last; a flush completes that one first.
 *
 * A WQE from a user ring is copied once into qp->resp.wqe and only the
 * copy is used: its SGE count is bounded by the queue's max_sge, its
 * lengths summed in 64 bits, and every SGE is checked against its MR (PD,
 * local write, bounds) before a byte lands. A WRITE or READ is checked
 * against its R_Key's MR (PD, remote access, the whole range) first.
 * ACKs, NAKs and READ responses are sent after resp_lock is dropped.
 */
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <qpnic/compat.h>
#include <rdma/ib_mad.h>

#include "qpnic.h"
#include "trace.h"

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

void qpnic_resp_ud(struct qpnic_qp *qp, struct sk_buff *skb,
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
		qpnic_drop(qdev, QPNIC_CNT_RX_DROP_QKEY, pkt);
		return;
	}
	if (pkt->flags & QPNIC_OP_IMMDT) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		/* skb->data is 2 mod 4 behind an Ethernet header */
		wc.ex.imm_data = get_unaligned((__be32 *)(skb->data +
			qpnic_hdr_offset(pkt->opcode, QPNIC_OP_IMMDT)));
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
		qpnic_drop(qdev, QPNIC_CNT_RX_DROP_NO_RECV_WQE, pkt);
		return;
	}
	qpnic_resp_copy_wqe(qp, &rq);
	wc.wr_id = qp->resp.wqe->wr_id;
	wc.status = qpnic_resp_place_ud(qp, skb, pkt);
	/* the slot back first, as the requester does (qpnic_req_complete_locked) */
	qpnic_queue_consumed(rq.queue);
	notify = qpnic_cq_push(cq, &wc, pkt->se);
	if (rq.srq)
		limit = qpnic_srq_below_limit(rq.srq);
	spin_unlock_irqrestore(rq.lock, flags);
	if (notify)
		qpnic_cq_notify(cq);
	if (limit)
		qpnic_srq_limit_event(rq.srq);
}

/* What a connected QP's packet leaves to do once resp_lock is dropped. */
struct qpnic_resp_out {
	struct qpnic_av av;
	bool ack;		/* an ACK or NAK: @syndrome, @psn */
	u8 syndrome;
	u32 psn;
	u32 msn;
	bool atomic;		/* the ACK is an ATOMIC ACKNOWLEDGE of @orig */
	u64 orig;
	bool empty_read_resp;	/* ATOMIC WRITE's answer: READ RESPONSE ONLY, no payload */
	bool read_work;		/* a READ resource has responses due */
	u32 read_len;
	bool notify;		/* the receive CQ was armed */
	bool srq_limit;
	bool cnp;		/* a request came marked CE: tell the requester */
};

/* CNPs to one requester are this far apart at least (ns). */
#define QPNIC_CNP_GAP_NS	(50 * NSEC_PER_USEC)

#define QPNIC_AETH_ACK_CREDITS	0x1f	/* an ACK with no credit count */
#define QPNIC_NAK_SEQ		(QPNIC_AETH_NAK | 0)
#define QPNIC_NAK_INV_REQ	(QPNIC_AETH_NAK | 1)
#define QPNIC_NAK_REM_ACCESS	(QPNIC_AETH_NAK | 2)
#define QPNIC_NAK_REM_OP	(QPNIC_AETH_NAK | 3)

static void qpnic_resp_ack(struct qpnic_qp *qp, struct qpnic_resp_out *out,
			   u8 syndrome, u32 psn)
{
	if (qp->ibqp.qp_type != IB_QPT_RC)
		return;
	out->ack = true;
	out->syndrome = syndrome;
	out->psn = psn;
	out->msn = qp->resp.msn;
	if ((syndrome & QPNIC_AETH_TYPE_MASK) == QPNIC_AETH_RNR_NAK)
		qpnic_count(to_qdev(qp->ibqp.device), QPNIC_CNT_TX_RNR_NAKS);
	else if (syndrome != QPNIC_AETH_ACK_CREDITS && syndrome != QPNIC_NAK_SEQ)
		qpnic_count(to_qdev(qp->ibqp.device), QPNIC_CNT_TX_ERROR_NAKS);
}

/* A receive completion for the WQE in qp->resp.wqe. */
static void qpnic_resp_complete(struct qpnic_qp *qp, struct qpnic_resp_out *out,
				enum ib_wc_status status, enum ib_wc_opcode opcode,
				u32 byte_len, const __be32 *imm, bool solicited)
{
	struct ib_wc wc = {
		.wr_id = qp->resp.wqe->wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = byte_len,
		.qp = &qp->ibqp,
		.src_qp = qp->attr.dest_qp_num,
		.port_num = 1,
	};

	if (imm) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = get_unaligned(imm);
	}
	out->notify |= qpnic_cq_push(to_qcq(qp->ibqp.recv_cq), &wc, solicited);
	qp->resp.wqe_valid = false;
}

/* A SEND with invalidate completes: it names the key it invalidated. */
static void qpnic_resp_complete_inv(struct qpnic_qp *qp,
				    struct qpnic_resp_out *out, u32 byte_len,
				    u32 rkey, bool solicited)
{
	struct ib_wc wc = {
		.wr_id = qp->resp.wqe->wr_id,
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
		.byte_len = byte_len,
		.qp = &qp->ibqp,
		.src_qp = qp->attr.dest_qp_num,
		.port_num = 1,
		.wc_flags = IB_WC_WITH_INVALIDATE,
		.ex.invalidate_rkey = rkey,
	};

	out->notify |= qpnic_cq_push(to_qcq(qp->ibqp.recv_cq), &wc, solicited);
	qp->resp.wqe_valid = false;
}

/* The responder's QP must stop: ERR, with the flush deferred. */
static void qpnic_resp_error(struct qpnic_qp *qp)
{
	spin_lock(&qp->sq.lock);
	qpnic_qp_error_locked(qp);
	spin_unlock(&qp->sq.lock);
}

/*
 * A request the responder refuses: RC NAKs it with @nak and the QP stops
 * (IBTA 9.7.5.2); UC drops the message it belongs to and goes on (IBTA
 * 9.9.4.2), so one forged packet cannot take a UC QP down. A receive WQE
 * taken for the dropped SEND stays for the next one.
 */
static void qpnic_resp_refuse(struct qpnic_qp *qp, struct qpnic_resp_out *out,
			      u8 nak, u32 psn)
{
	if (qp->ibqp.qp_type == IB_QPT_RC) {
		qpnic_resp_ack(qp, out, nak, psn);
		qpnic_resp_error(qp);
		return;
	}
	qpnic_drop(to_qdev(qp->ibqp.device), QPNIC_CNT_RX_UC_DROPS, NULL);
	qp->resp.in_send = false;
	qp->resp.in_write = false;
}

/* Take the next receive WQE for a connected QP; false if there is none. */
static bool qpnic_resp_fetch(struct qpnic_qp *qp, struct qpnic_resp_out *out)
{
	struct qpnic_rq_ref rq;

	if (qp->resp.wqe_valid)
		return true;
	qpnic_rq_ref(qp, &rq);
	spin_lock(rq.lock);
	if (!qpnic_queue_count(rq.queue)) {
		spin_unlock(rq.lock);
		return false;
	}
	qpnic_resp_copy_wqe(qp, &rq);
	qpnic_queue_consumed(rq.queue);
	if (rq.srq)
		out->srq_limit = qpnic_srq_below_limit(rq.srq);
	spin_unlock(rq.lock);
	qp->resp.wqe_valid = true;
	qp->resp.offset = 0;
	return true;
}

static const __be32 *qpnic_pkt_imm(const struct sk_buff *skb,
				   const struct qpnic_pkt *pkt)
{
	if (!(pkt->flags & QPNIC_OP_IMMDT))
		return NULL;
	return (const __be32 *)(skb->data +
				qpnic_hdr_offset(pkt->opcode, QPNIC_OP_IMMDT));
}

/* A SEND packet at the expected PSN. Returns false to stop (NAK, error). */
static bool qpnic_resp_send(struct qpnic_qp *qp, struct sk_buff *skb,
			    const struct qpnic_pkt *pkt, struct qpnic_resp_out *out)
{
	struct qpnic_dev *qdev = to_qdev(qp->ibqp.device);
	struct qpnic_copy c = { .skb = skb, .skb_offset = pkt->hdr_len,
				.to_mr = true };
	bool last = pkt->flags & QPNIC_OP_LAST;
	int err;

	if (pkt->flags & QPNIC_OP_FIRST) {
		if (!qpnic_resp_fetch(qp, out)) {
			/* RC: not ready, ask again later; UC: the message is lost */
			qpnic_drop(qdev, QPNIC_CNT_RX_DROP_NO_RECV_WQE, pkt);
			qpnic_resp_ack(qp, out, QPNIC_AETH_RNR_NAK |
				       (qp->attr.min_rnr_timer & 0x1f), pkt->psn);
			return false;
		}
		qp->resp.offset = 0;
	}
	err = qpnic_sgl_copy(qdev, qp->ibqp.pd, qp->resp.wqe->sge,
			     qp->resp.wqe->num_sge, qp->resp.offset,
			     pkt->paylen, &c);
	if (err == -EINVAL && qp->ibqp.qp_type == IB_QPT_UC) {
		/* longer than the receive buffer: the message is dropped */
		qpnic_resp_refuse(qp, out, QPNIC_NAK_INV_REQ, pkt->psn);
		return false;
	}
	if (err) {
		/* the receive WQE's own fault (a bad SGE), or RC's length error */
		qpnic_resp_complete(qp, out, err == -EACCES ? IB_WC_LOC_PROT_ERR :
				    IB_WC_LOC_LEN_ERR, IB_WC_RECV, 0, NULL, false);
		qpnic_resp_ack(qp, out, err == -EACCES ? QPNIC_NAK_REM_OP :
			       QPNIC_NAK_INV_REQ, pkt->psn);
		qpnic_resp_error(qp);
		return false;
	}
	qp->resp.offset += pkt->paylen;
	qp->resp.in_send = !last;
	if (pkt->flags & QPNIC_OP_IETH) {
		u32 rkey = get_unaligned_be32(skb->data +
					      qpnic_hdr_offset(pkt->opcode, QPNIC_OP_IETH));

		/*
		 * Only a fast-reg MR of the QP's PD, or a type 2 window bound
		 * to this QP, can be invalidated remotely (IBTA 9.4.3.1.3);
		 * it is free before the receive completes, so the consumer
		 * may register or bind it again at once. Any other key is an
		 * invalid request (class J).
		 */
		if (qpnic_key_invalidate(qp, rkey, true)) {
			qpnic_resp_complete(qp, out, IB_WC_REM_INV_REQ_ERR,
					    IB_WC_RECV, 0, NULL, false);
			qpnic_resp_ack(qp, out, QPNIC_NAK_INV_REQ, pkt->psn);
			qpnic_resp_error(qp);
			return false;
		}
		qp->resp.msn = (qp->resp.msn + 1) & 0xffffff;
		qpnic_resp_complete_inv(qp, out, qp->resp.offset, rkey, pkt->se);
		return true;
	}
	if (last) {
		qp->resp.msn = (qp->resp.msn + 1) & 0xffffff;
		qpnic_resp_complete(qp, out, IB_WC_SUCCESS, IB_WC_RECV,
				    qp->resp.offset, qpnic_pkt_imm(skb, pkt), pkt->se);
	}
	return true;
}

/* Whether @rkey allows @access on [@va, @va + @len) for @qp. */
static bool qpnic_resp_rkey_ok(struct qpnic_qp *qp, u32 rkey, u64 va, u32 len,
			       int access)
{
	struct qpnic_rkey_ref ref;

	if (!len)
		return true;
	if (!qpnic_rkey_get(qp, rkey, va, len, access, &ref))
		return false;
	qpnic_rkey_put(&ref);
	return true;
}

/* An RDMA WRITE packet at the expected PSN. Returns false to stop. */
static bool qpnic_resp_write(struct qpnic_qp *qp, struct sk_buff *skb,
			     const struct qpnic_pkt *pkt, struct qpnic_resp_out *out)
{
	struct qpnic_dev *qdev = to_qdev(qp->ibqp.device);
	struct qpnic_copy c = { .skb = skb, .skb_offset = pkt->hdr_len,
				.to_mr = true };
	const __be32 *imm = qpnic_pkt_imm(skb, pkt);
	bool last = pkt->flags & QPNIC_OP_LAST;
	struct qpnic_rkey_ref ref = {};

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_WRITE)) {
		qpnic_resp_refuse(qp, out, QPNIC_NAK_INV_REQ, pkt->psn);
		return false;
	}
	if (pkt->flags & QPNIC_OP_FIRST) {
		const u8 *reth = skb->data + qpnic_hdr_offset(pkt->opcode,
							      QPNIC_OP_RETH);

		qp->resp.va = get_unaligned_be64(reth);
		qp->resp.rkey = get_unaligned_be32(reth + 8);
		qp->resp.resid = get_unaligned_be32(reth + 12);
		qp->resp.write_len = qp->resp.resid;
		/* the whole message's range; held for this packet's bytes */
		if (qp->resp.resid &&
		    !qpnic_rkey_get(qp, qp->resp.rkey, qp->resp.va,
				    qp->resp.resid, IB_ACCESS_REMOTE_WRITE, &ref)) {
			qpnic_resp_refuse(qp, out, QPNIC_NAK_REM_ACCESS, pkt->psn);
			return false;
		}
	}
	/* a packet longer than the RETH allows, or a message that ends short */
	if (pkt->paylen > qp->resp.resid ||
	    (last && pkt->paylen != qp->resp.resid)) {
		qpnic_resp_refuse(qp, out, QPNIC_NAK_INV_REQ, pkt->psn);
		goto put;
	}
	/* the receive WQE an immediate consumes must be there before a byte lands */
	if (imm && !qpnic_resp_fetch(qp, out)) {
		qpnic_drop(qdev, QPNIC_CNT_RX_DROP_NO_RECV_WQE, pkt);
		qpnic_resp_ack(qp, out, QPNIC_AETH_RNR_NAK |
			       (qp->attr.min_rnr_timer & 0x1f), pkt->psn);
		goto put;
	}
	if (pkt->paylen) {
		/* an MR deregistered, or a key invalidated, during the message */
		if (!ref.mr &&
		    !qpnic_rkey_get(qp, qp->resp.rkey, qp->resp.va, pkt->paylen,
				    IB_ACCESS_REMOTE_WRITE, &ref)) {
			qpnic_resp_refuse(qp, out, QPNIC_NAK_REM_ACCESS, pkt->psn);
			return false;
		}
		qpnic_mr_copy(ref.mr, qp->resp.va, pkt->paylen, &c);
	}
	if (ref.mr)
		qpnic_rkey_put(&ref);
	qp->resp.va += pkt->paylen;
	qp->resp.resid -= pkt->paylen;
	qp->resp.in_write = !last;
	if (last) {
		qp->resp.msn = (qp->resp.msn + 1) & 0xffffff;
		if (imm)
			qpnic_resp_complete(qp, out, IB_WC_SUCCESS,
					    IB_WC_RECV_RDMA_WITH_IMM,
					    qp->resp.write_len, imm, pkt->se);
	}
	return true;
put:
	if (ref.mr)
		qpnic_rkey_put(&ref);
	return false;
}

/*
 * Set whether @res has answers due, keeping the QP's count of such
 * resources, which spares the request path a look at every resource.
 * Caller holds resp_lock.
 */
static void qpnic_resp_res_set_sending(struct qpnic_qp *qp,
				       struct qpnic_resp_res *res, bool sending)
{
	if (res->sending == sending)
		return;
	res->sending = sending;
	if (sending)
		qp->resp.num_sending++;
	else
		qp->resp.num_sending--;
}

/*
 * The responder resource to use for a new READ or atomic: the oldest, which
 * a requester keeping to max_rd_atomic is done with (one that is not loses
 * it, and asks again). Caller holds resp_lock; NULL for a QP without any.
 */
static struct qpnic_resp_res *qpnic_resp_res_new(struct qpnic_qp *qp,
						 enum qpnic_res_type type,
						 u32 psn, u32 npkts)
{
	struct qpnic_resp_res *res;

	if (!qp->resp.num_res)
		return NULL;
	res = &qp->resp.res[qp->resp.next_res];
	qp->resp.next_res = (qp->resp.next_res + 1) % qp->resp.num_res;
	qpnic_resp_res_set_sending(qp, res, false);
	memset(res, 0, sizeof(*res));
	res->type = type;
	res->first_psn = psn;
	res->last_psn = (psn + npkts - 1) & QPNIC_PSN_MASK;
	return res;
}

/* The resource of @type whose PSNs hold @psn; caller holds resp_lock. */
static struct qpnic_resp_res *qpnic_resp_res_find(struct qpnic_qp *qp,
						  enum qpnic_res_type type,
						  u32 psn)
{
	u32 i;

	for (i = 0; i < qp->resp.num_res; i++) {
		struct qpnic_resp_res *res = &qp->resp.res[i];

		if (res->type == type &&
		    qpnic_psn_diff(psn, res->first_psn) >= 0 &&
		    qpnic_psn_diff(psn, res->last_psn) <= 0)
			return res;
	}
	return NULL;
}

/*
 * An RDMA READ request: checked here and kept as a responder resource;
 * the receive path sends its first response, the READ work the rest.
 */
static bool qpnic_resp_read(struct qpnic_qp *qp, struct sk_buff *skb,
			    const struct qpnic_pkt *pkt, struct qpnic_resp_out *out)
{
	const u8 *reth = skb->data + qpnic_hdr_offset(pkt->opcode, QPNIC_OP_RETH);
	u64 va = get_unaligned_be64(reth);
	u32 rkey = get_unaligned_be32(reth + 8);
	u32 len = get_unaligned_be32(reth + 12);
	struct qpnic_resp_res *res;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_READ)) {
		qpnic_resp_ack(qp, out, QPNIC_NAK_INV_REQ, pkt->psn);
		qpnic_resp_error(qp);
		return false;
	}
	if (len > QPNIC_MAX_MSG_SIZE ||
	    !qpnic_resp_rkey_ok(qp, rkey, va, len, IB_ACCESS_REMOTE_READ)) {
		qpnic_resp_ack(qp, out, QPNIC_NAK_REM_ACCESS, pkt->psn);
		qpnic_resp_error(qp);
		return false;
	}
	out->read_len = len;
	res = qpnic_resp_res_new(qp, QPNIC_RES_READ, pkt->psn,
				 qpnic_packets(len, qp->mtu));
	if (!res)
		return true;
	res->va = va;
	res->rkey = rkey;
	res->len = len;
	res->mtu = qp->mtu;
	/* the MSN counts this READ once its responses go */
	res->msn = (qp->resp.msn + 1) & 0xffffff;
	qpnic_resp_res_set_sending(qp, res, true);
	out->read_work = true;
	return true;
}

/*
 * Remember an atomic (with the original value it found) or an ATOMIC
 * WRITE at @psn, whose answer may have to wait for READs before it;
 * caller holds resp_lock.
 */
static void qpnic_resp_atomic_save(struct qpnic_qp *qp, enum qpnic_res_type type,
				   u32 psn, u64 orig)
{
	struct qpnic_resp_res *res = qpnic_resp_res_new(qp, type, psn, 1);

	if (res)
		res->orig = orig;
}

/*
 * CMP_SWAP, FETCH_ADD or ATOMIC WRITE at the expected PSN, executed here:
 * the QP must allow it, the target be 8 bytes, aligned and inside an MR
 * that allows it. Answered once resp_lock is dropped.
 */
static bool qpnic_resp_atomic(struct qpnic_qp *qp, struct sk_buff *skb,
			      const struct qpnic_pkt *pkt,
			      struct qpnic_resp_out *out)
{
	bool write = pkt->opcode == QPNIC_ATOMIC_WRITE;
	int access = write ? IB_ACCESS_REMOTE_WRITE : IB_ACCESS_REMOTE_ATOMIC;
	enum qpnic_atomic_op op = QPNIC_ATOMIC_WRITE_8;
	u64 va, val, compare = 0;
	struct qpnic_rkey_ref ref = {};
	const u8 *h;
	u8 nak = 0;
	u32 rkey;

	if (write) {
		h = skb->data + qpnic_hdr_offset(pkt->opcode, QPNIC_OP_RETH);
		va = get_unaligned_be64(h);
		rkey = get_unaligned_be32(h + 8);
		/* the payload is stored as it came, like a WRITE's */
		if (get_unaligned_be32(h + 12) != sizeof(val) ||
		    pkt->paylen != sizeof(val) ||
		    skb_copy_bits(skb, pkt->hdr_len, &val, sizeof(val)))
			nak = QPNIC_NAK_INV_REQ;
	} else {
		h = skb->data + qpnic_hdr_offset(pkt->opcode, QPNIC_OP_ATMETH);
		va = get_unaligned_be64(h);
		rkey = get_unaligned_be32(h + 8);
		val = get_unaligned_be64(h + 12);
		compare = get_unaligned_be64(h + 20);
		op = pkt->opcode == QPNIC_COMPARE_SWAP ? QPNIC_ATOMIC_CMP_SWAP :
							 QPNIC_ATOMIC_FETCH_ADD;
	}
	if (!(qp->attr.qp_access_flags & access) || (va & (sizeof(u64) - 1)))
		nak = QPNIC_NAK_INV_REQ;
	if (!nak && !qpnic_rkey_get(qp, rkey, va, sizeof(u64), access, &ref))
		nak = QPNIC_NAK_REM_ACCESS;
	/* aligned where the CPU's atomic lands, not only in iova space */
	if (ref.mr && !qpnic_mr_aligned_u64(ref.mr, va)) {
		qpnic_rkey_put(&ref);
		nak = QPNIC_NAK_INV_REQ;
	}
	if (nak) {
		qpnic_resp_ack(qp, out, nak, pkt->psn);
		qpnic_resp_error(qp);
		return false;
	}
	out->orig = qpnic_mr_atomic(ref.mr, va, op, val, compare);
	qpnic_rkey_put(&ref);
	out->psn = pkt->psn;
	if (write) {
		qpnic_resp_atomic_save(qp, QPNIC_RES_EMPTY_ANSWER, pkt->psn, 0);
		out->empty_read_resp = true;
		out->read_len = 0;
	} else {
		qpnic_resp_atomic_save(qp, QPNIC_RES_ATOMIC, pkt->psn, out->orig);
		out->ack = true;
		out->atomic = true;
		out->syndrome = QPNIC_AETH_ACK_CREDITS;
	}
	return true;
}

/*
 * FLUSH (IBTA 1.5 oA19) at the expected PSN: what was placed in the RETH's
 * range (or the whole region, at the MR selectivity level) is made
 * globally visible. The QP and the key must allow the placement type
 * asked for; no MR allows persistence (qpnic has no persistent memory),
 * so a FLUSH for it is a remote access error. qpnic's stores are the
 * CPU's, done by the time it answers: a barrier is all visibility takes.
 */
static bool qpnic_resp_flush(struct qpnic_qp *qp, struct sk_buff *skb,
			     const struct qpnic_pkt *pkt,
			     struct qpnic_resp_out *out)
{
	const u8 *feth = skb->data + qpnic_hdr_offset(pkt->opcode, QPNIC_OP_FETH);
	const u8 *reth = skb->data + qpnic_hdr_offset(pkt->opcode, QPNIC_OP_RETH);
	u32 bits = get_unaligned_be32(feth);
	u8 type = bits & QPNIC_FETH_PLT_MASK;
	u8 level = (bits & QPNIC_FETH_SEL_MASK) >> QPNIC_FETH_SEL_SHIFT;
	u64 va = get_unaligned_be64(reth);
	u32 rkey = get_unaligned_be32(reth + 8);
	u32 len = get_unaligned_be32(reth + 12);
	struct qpnic_rkey_ref ref = {};
	int access = 0;
	u8 nak = 0;
	bool ok;

	if (type & QPNIC_FLUSH_GLOBAL)
		access |= QPNIC_ACCESS_FLUSH_GLOBAL;
	if (type & QPNIC_FLUSH_PERSISTENT)
		access |= QPNIC_ACCESS_FLUSH_PERSISTENT;
	if (!access || !qpnic_feth_valid(type, level) ||
	    (qp->attr.qp_access_flags & access) != access) {
		ibdev_dbg(qp->ibqp.device, "QP %u: FLUSH type %u level %u: not offered or not allowed (QP access %#x)\n",
			  qp->ibqp.qp_num, type, level, qp->attr.qp_access_flags);
		nak = QPNIC_NAK_INV_REQ;
	} else {
		ok = level == QPNIC_FLUSH_MR ?
		     qpnic_rkey_get_whole(qp, rkey, access, &ref) :
		     qpnic_rkey_get(qp, rkey, va, len, access, &ref);
		if (!ok)
			nak = QPNIC_NAK_REM_ACCESS;
	}
	if (nak) {
		qpnic_resp_ack(qp, out, nak, pkt->psn);
		qpnic_resp_error(qp);
		return false;
	}
	/* the stores before it are visible before the answer is */
	smp_mb();
	qpnic_rkey_put(&ref);
	qpnic_resp_atomic_save(qp, QPNIC_RES_EMPTY_ANSWER, pkt->psn, 0);
	out->psn = pkt->psn;
	out->empty_read_resp = true;
	out->read_len = 0;
	return true;
}

/* One READ response packet, claimed under resp_lock and sent without it. */
struct qpnic_read_pkt {
	struct qpnic_hdr_fields f;
	struct qpnic_av av;
	struct qpnic_rkey_ref ref;	/* held; ref.mr NULL for no payload */
	u64 va;
	u32 len;
	u32 npkts;			/* more than 1: a loopback segment */
};

/*
 * The oldest responder resource with answers still to send, or NULL.
 * Caller holds resp_lock.
 */
static struct qpnic_resp_res *qpnic_resp_res_sending(struct qpnic_qp *qp)
{
	struct qpnic_resp_res *res;
	u32 i;

	if (!qp->resp.num_sending)
		return NULL;
	for (i = 0; i < qp->resp.num_res; i++) {
		res = &qp->resp.res[(qp->resp.next_res + i) % qp->resp.num_res];
		if (res->sending)
			return res;
	}
	return NULL;
}

/*
 * Claim the next READ response due: the oldest resource's, so READs are
 * answered in order. Its R_Key is resolved (and held) for each packet: one
 * deregistered meanwhile ends the READ, which the requester then asks
 * for again and is refused. Once no READ is left, an ACK that waited for
 * them is due. False when nothing is due.
 */
static bool qpnic_resp_read_claim(struct qpnic_qp *qp, struct qpnic_read_pkt *rp)
{
	struct qpnic_dev *qdev = to_qdev(qp->ibqp.device);
	struct qpnic_resp_res *res;
	unsigned long flags;
	bool claimed = false, first, last;
	u32 npkts, off;

	spin_lock_irqsave(&qp->resp_lock, flags);
	if (!qpnic_resp_state_ok(qp->state) || qp->dying)
		goto out;
next_res:
	res = qpnic_resp_res_sending(qp);
	if (!res) {
		if (qp->resp.ack_deferred) {
			/* the READs before it are answered: now the ACK */
			memset(rp, 0, sizeof(*rp));
			rp->av = qp->av;
			rp->f.opcode = QPNIC_ACKNOWLEDGE;
			rp->f.pkey = IB_DEFAULT_PKEY_FULL;
			rp->f.dqpn = qp->attr.dest_qp_num;
			rp->f.psn = qp->resp.deferred_psn;
			rp->f.aeth.syndrome = QPNIC_AETH_ACK_CREDITS;
			rp->f.aeth.msn = qp->resp.deferred_msn;
			qp->resp.ack_deferred = false;
			claimed = true;
		}
		goto out;
	}
	if (res->type != QPNIC_RES_READ) {
		/* an atomic's or ATOMIC WRITE's answer that waited for READs */
		memset(rp, 0, sizeof(*rp));
		rp->av = qp->av;
		rp->f.opcode = res->type == QPNIC_RES_ATOMIC ? QPNIC_ATOMIC_ACKNOWLEDGE :
							       QPNIC_READ_RESPONSE_ONLY;
		rp->f.pkey = IB_DEFAULT_PKEY_FULL;
		rp->f.dqpn = qp->attr.dest_qp_num;
		rp->f.psn = res->first_psn;
		rp->f.aeth.syndrome = QPNIC_AETH_ACK_CREDITS;
		rp->f.aeth.msn = res->msn;
		rp->f.atmack_orig = res->orig;
		qpnic_resp_res_set_sending(qp, res, false);
		claimed = true;
		goto out;
	}
	npkts = qpnic_packets(res->len, res->mtu);
	off = res->next * res->mtu;
	memset(rp, 0, sizeof(*rp));
	rp->av = qp->av;
	rp->npkts = 1;
	if (qpnic_lo_segments(&rp->av))
		rp->npkts = min(QPNIC_LO_SEG_BYTES / res->mtu, npkts - res->next);
	first = !res->next;
	last = res->next + rp->npkts == npkts;
	rp->va = res->va + off;
	rp->len = min(rp->npkts * res->mtu, res->len - off);
	rp->f.pkey = IB_DEFAULT_PKEY_FULL;
	rp->f.dqpn = qp->attr.dest_qp_num;
	rp->f.psn = (res->first_psn + res->next) & QPNIC_PSN_MASK;
	rp->f.aeth.syndrome = QPNIC_AETH_ACK_CREDITS;
	rp->f.aeth.msn = res->msn;
	if (first)
		rp->f.opcode = last ? QPNIC_READ_RESPONSE_ONLY :
				      QPNIC_READ_RESPONSE_FIRST;
	else
		rp->f.opcode = last ? QPNIC_READ_RESPONSE_LAST :
				      QPNIC_READ_RESPONSE_MIDDLE;
	res->next += rp->npkts;
	if (last) {
		qpnic_resp_res_set_sending(qp, res, false);
		res->restarted = false;
	}
	if (rp->len) {
		if (!qpnic_rkey_get(qp, res->rkey, rp->va, rp->len,
				    IB_ACCESS_REMOTE_READ, &rp->ref)) {
			ibdev_dbg(&qdev->ibdev, "QP %u: READ at PSN %u: R_Key %#x is gone, READ ends\n",
				  qp->ibqp.qp_num, rp->f.psn, res->rkey);
			qpnic_resp_res_set_sending(qp, res, false);
			goto next_res;
		}
	}
	claimed = true;
out:
	spin_unlock_irqrestore(&qp->resp_lock, flags);
	return claimed;
}

static void qpnic_resp_read_send(struct qpnic_qp *qp, struct qpnic_read_pkt *rp)
{
	struct qpnic_copy c = {};
	struct sk_buff *skb;

	if (rp->npkts > 1) {
		skb = qpnic_seg_alloc(qp, &rp->av, &rp->f, rp->len, rp->npkts);
		c.skb = skb;
		c.skb_offset = qpnic_opcode_hdr_len(rp->f.opcode);
	} else {
		u8 *payload = NULL;

		skb = qpnic_pkt_alloc(qp, &rp->av, &rp->f, rp->len, &payload);
		c.buf = payload;
	}
	if (skb && rp->ref.mr)
		qpnic_mr_copy(rp->ref.mr, rp->va, rp->len, &c);
	if (rp->ref.mr)
		qpnic_rkey_put(&rp->ref);
	if (skb)	/* else lost: the requester asks again */
		qpnic_pkt_send(qp, &rp->av, skb, rp->f.dqpn);
}

/*
 * Whether READ responses, or answers that wait for them, are due: what
 * qpnic_resp_read_claim() would find. Takes resp_lock.
 */
static bool qpnic_resp_read_due(struct qpnic_qp *qp)
{
	unsigned long flags;
	bool due;

	spin_lock_irqsave(&qp->resp_lock, flags);
	due = qpnic_resp_state_ok(qp->state) && !qp->dying &&
	      (qp->resp.ack_deferred || qpnic_resp_res_sending(qp));
	spin_unlock_irqrestore(&qp->resp_lock, flags);
	return due;
}

/*
 * Send up to @budget of the READ responses due, BH off for each as on
 * the receive path, each in an inline loopback section (one to this
 * device is delivered here, not by the loopback work item). One context
 * at a time sends them (bit 0 of read_busy), so they leave in PSN order;
 * one that finds the bit taken leaves them to its holder, which looks
 * again once it has let go (a request that came in meanwhile set what
 * qpnic_resp_read_due() sees under resp_lock before it tried the bit).
 * What is left once @budget is spent goes to the READ work; a full
 * flow's destructor queues the work once there is room.
 */
static void qpnic_resp_read_run(struct qpnic_qp *qp, int budget)
{
	struct qpnic_dev *qdev = to_qdev(qp->ibqp.device);
	struct qpnic_read_pkt rp;
	bool inline_lo;

	do {
		if (test_and_set_bit_lock(0, &qp->resp.read_busy))
			return;
		while (budget && !qpnic_tx_flow_full(qp) &&
		       qpnic_resp_read_claim(qp, &rp)) {
			budget--;
			local_bh_disable();
			inline_lo = qpnic_loopback_inline_begin(qdev);
			qpnic_resp_read_send(qp, &rp);
			if (inline_lo)
				qpnic_loopback_inline_end(qdev);
			local_bh_enable();
		}
		clear_bit_unlock(0, &qp->resp.read_busy);
	} while (budget && !qpnic_tx_flow_full(qp) && qpnic_resp_read_due(qp));
	if (!budget && qpnic_resp_read_due(qp))
		queue_work(qpnic_wq, &qp->resp.read_work);
}

/*
 * The READ work: at most QPNIC_READ_BUDGET responses a run, then it
 * queues itself again behind other work. What it may send is bounded by
 * the QP's responder resources.
 */
#define QPNIC_READ_BUDGET	64

void qpnic_resp_read_work(struct work_struct *work)
{
	qpnic_resp_read_run(container_of(work, struct qpnic_qp, resp.read_work),
			    QPNIC_READ_BUDGET);
}

/* ATOMIC WRITE's answer: a READ RESPONSE ONLY without payload. */
static void qpnic_resp_send_empty_read(struct qpnic_qp *qp,
				       struct qpnic_resp_out *out)
{
	struct qpnic_hdr_fields f = {
		.opcode = QPNIC_READ_RESPONSE_ONLY,
		.pkey = IB_DEFAULT_PKEY_FULL,
		.dqpn = qp->attr.dest_qp_num,
		.psn = out->psn,
		.aeth = { QPNIC_AETH_ACK_CREDITS, out->msn },
	};
	struct sk_buff *skb;
	u8 *payload;

	skb = qpnic_pkt_alloc(qp, &out->av, &f, 0, &payload);
	if (skb)
		qpnic_pkt_send(qp, &out->av, skb, f.dqpn);
}

/*
 * A CNP to the requester whose packets came marked CE: BTH (BECN set,
 * PSN 0) and 16 reserved bytes (RoCEv2, Annex A17.9.3).
 */
static void qpnic_resp_send_cnp(struct qpnic_qp *qp,
				const struct qpnic_resp_out *out)
{
	struct qpnic_hdr_fields f = {
		.opcode = QPNIC_CNP,
		.pkey = IB_DEFAULT_PKEY_FULL,
		.dqpn = qp->attr.dest_qp_num,
	};
	struct sk_buff *skb;
	u8 *payload;

	skb = qpnic_pkt_alloc(qp, &out->av, &f, 0, &payload);
	if (skb) {
		qpnic_count(to_qdev(qp->ibqp.device), QPNIC_CNT_TX_CNPS);
		qpnic_pkt_send(qp, &out->av, skb, f.dqpn);
	}
}

/*
 * An ACK, a NAK or an ATOMIC ACKNOWLEDGE; to this device, it may go to
 * its completer without a packet.
 */
static void qpnic_resp_send_ack(struct qpnic_qp *qp, struct qpnic_resp_out *out)
{
	struct qpnic_hdr_fields f = {
		.opcode = QPNIC_ACKNOWLEDGE,
		.pkey = IB_DEFAULT_PKEY_FULL,
		.dqpn = qp->attr.dest_qp_num,
		.psn = out->psn,
		.aeth = { out->syndrome, out->msn },
		.atmack_orig = out->orig,
	};
	struct sk_buff *skb;
	u8 *payload;

	if (out->atomic)
		f.opcode = QPNIC_ATOMIC_ACKNOWLEDGE;
	if (out->av.loopback && qpnic_loopback_ack(to_qdev(qp->ibqp.device), &f))
		return;
	skb = qpnic_pkt_alloc(qp, &out->av, &f, 0, &payload);
	if (skb)
		qpnic_pkt_send(qp, &out->av, skb, f.dqpn);
}

/*
 * Whether @pkt's opcode may come now: a FIRST or ONLY outside a message,
 * a MIDDLE or LAST of the message in progress (IBTA 9.7.5.1.2).
 */
static bool qpnic_resp_opcode_in_sequence(const struct qpnic_qp *qp,
					  const struct qpnic_pkt *pkt)
{
	bool starts = pkt->flags & QPNIC_OP_FIRST;

	if (pkt->flags & (QPNIC_OP_READ | QPNIC_OP_ATOMIC))
		return !qp->resp.in_send && !qp->resp.in_write;
	if (pkt->flags & QPNIC_OP_SEND)
		return starts ? !qp->resp.in_send && !qp->resp.in_write :
				qp->resp.in_send;
	return starts ? !qp->resp.in_send && !qp->resp.in_write :
			qp->resp.in_write;
}

/*
 * A SEND's or WRITE's packet carries exactly the path MTU when more of the
 * message follows (FIRST, MIDDLE), at most that when it ends it (IBTA
 * 9.7.5.1.2, length errors). A loopback segment of n packets: n full
 * ones, or n - 1 and the message's last.
 */
static bool qpnic_resp_paylen_ok(const struct qpnic_qp *qp,
				 const struct qpnic_pkt *pkt)
{
	u32 most = pkt->npkts * qp->mtu;

	if (!(pkt->flags & (QPNIC_OP_SEND | QPNIC_OP_WRITE)))
		return true;
	if (pkt->flags & QPNIC_OP_LAST)
		return pkt->paylen <= most &&
		       (pkt->npkts == 1 || pkt->paylen > most - qp->mtu);
	return pkt->paylen == most;
}

/*
 * An invalid request at the expected PSN: RC NAKs it and the QP stops;
 * UC drops it with the message in progress.
 */
static void qpnic_resp_invalid(struct qpnic_qp *qp, struct qpnic_resp_out *out,
			       const struct qpnic_pkt *pkt)
{
	qpnic_resp_refuse(qp, out, QPNIC_NAK_INV_REQ, pkt->psn);
	if (qp->ibqp.qp_type == IB_QPT_UC)
		qp->resp.psn = (pkt->psn + pkt->npkts) & QPNIC_PSN_MASK;
}

/*
 * A duplicate READ (IBTA 9.7.5.1.4) is answered again only inside a READ
 * this QP accepted and still remembers, from the duplicate's PSN: its
 * RETH must name the rest of that READ from there. The QP's remote read
 * permission is checked again (modify_qp may have taken it away). A
 * pass of responses goes back at most once: a storm of duplicates moves
 * no more than that.
 */
static void qpnic_resp_duplicate_read(struct qpnic_qp *qp, struct sk_buff *skb,
				      const struct qpnic_pkt *pkt,
				      struct qpnic_resp_out *out)
{
	const u8 *reth = skb->data + qpnic_hdr_offset(pkt->opcode, QPNIC_OP_RETH);
	struct qpnic_resp_res *res;
	u32 next;
	u64 off;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_READ))
		return;
	/* (counted as a duplicate; what the wire sends is never logged) */
	res = qpnic_resp_res_find(qp, QPNIC_RES_READ, pkt->psn);
	if (!res)
		return;
	next = qpnic_psn_diff(pkt->psn, res->first_psn);
	off = (u64)next * res->mtu;
	if (get_unaligned_be32(reth + 8) != res->rkey ||
	    get_unaligned_be64(reth) != res->va + off ||
	    get_unaligned_be32(reth + 12) != res->len - off)
		return;
	if (res->sending) {
		if (next >= res->next || res->restarted)
			return;		/* those responses are still to come */
		res->restarted = true;
	}
	res->next = next;
	qpnic_resp_res_set_sending(qp, res, true);
	out->read_work = true;
}

/* A duplicate RC request (IBTA 9.7.5.1.4): answer again, execute nothing new. */
static void qpnic_resp_duplicate(struct qpnic_qp *qp, struct sk_buff *skb,
				 const struct qpnic_pkt *pkt,
				 struct qpnic_resp_out *out)
{
	qpnic_count(to_qdev(qp->ibqp.device), QPNIC_CNT_RX_DUP_REQUESTS);
	if (pkt->opcode == QPNIC_ATOMIC_WRITE || pkt->opcode == QPNIC_FLUSH) {
		/* it was done: answer again, do nothing */
		out->empty_read_resp = true;
		out->read_len = 0;
		out->psn = pkt->psn;
		out->msn = qp->resp.msn;
		return;
	}
	if (pkt->flags & QPNIC_OP_ATOMIC) {
		/* the same original value again; one too old is not answered */
		const struct qpnic_resp_res *res =
			qpnic_resp_res_find(qp, QPNIC_RES_ATOMIC, pkt->psn);

		if (res && res->first_psn == pkt->psn) {
			out->ack = true;
			out->atomic = true;
			out->orig = res->orig;
			out->syndrome = QPNIC_AETH_ACK_CREDITS;
			out->psn = pkt->psn;
			out->msn = qp->resp.msn;
		}
		return;
	}
	if (pkt->flags & QPNIC_OP_READ) {
		qpnic_resp_duplicate_read(qp, skb, pkt, out);
		return;
	}
	/* the latest ACK covers it */
	qpnic_resp_ack(qp, out, QPNIC_AETH_ACK_CREDITS,
		       (qp->resp.psn - 1) & QPNIC_PSN_MASK);
}

/*
 * Responses leave in PSN order (IBTA 9.7.5.1): an ACK for requests behind
 * a READ the READ work is still answering would tell the requester that
 * the READ's responses were lost. It waits for them instead; a later one
 * replaces it (an ACK covers every PSN before its own). An ATOMIC
 * ACKNOWLEDGE or an ATOMIC WRITE's empty READ response cannot be merged:
 * its resource answers it from the READ work in its turn, and it covers
 * a plain ACK waiting before it. Caller holds resp_lock.
 */
static void qpnic_resp_defer_ack(struct qpnic_qp *qp, struct qpnic_resp_out *out)
{
	enum qpnic_res_type type = QPNIC_RES_FREE;
	struct qpnic_resp_res *res;

	if (out->empty_read_resp)
		type = QPNIC_RES_EMPTY_ANSWER;
	else if (!out->ack || out->syndrome != QPNIC_AETH_ACK_CREDITS)
		return;
	else if (out->atomic)
		type = QPNIC_RES_ATOMIC;
	if (!qp->resp.num_sending)
		return;
	if (type != QPNIC_RES_FREE) {
		res = qpnic_resp_res_find(qp, type, out->psn);
		if (!res || res->first_psn != out->psn)
			return;
		res->msn = out->msn;
		qpnic_resp_res_set_sending(qp, res, true);
		/* (a duplicate's answer covers no ACK of a later request) */
		if (qpnic_psn_diff(qp->resp.deferred_psn, out->psn) < 0)
			qp->resp.ack_deferred = false;
	} else {
		qp->resp.ack_deferred = true;
		qp->resp.deferred_psn = out->psn;
		qp->resp.deferred_msn = out->msn;
	}
	out->ack = false;
	out->empty_read_resp = false;
	out->read_work = true;	/* (it runs until nothing is due) */
}

/*
 * ACK coalescing on loopback. A deliverer takes up to
 * QPNIC_LOOPBACK_BUDGET packets in a pass, often a burst of requests of
 * one QP; an ACK acknowledges every PSN up to its own, so the pass sends
 * one ACK per QP at its end instead of one per request. Only plain ACKs
 * are held (NAKs, atomic answers and READ responses go at once), and a
 * QP's held ACK goes out before anything else its responder sends, so the
 * requester sees its answers in PSN order as without the batch. The
 * batch is per CPU: a deliverer runs with BH off and never nests.
 */
#define QPNIC_ACK_BATCH	16

struct qpnic_ack_batch {
	bool active;
	unsigned int n;
	struct qpnic_qp *qp[QPNIC_ACK_BATCH];	/* each holds a reference */
};

static DEFINE_PER_CPU(struct qpnic_ack_batch, qpnic_ack_batch);

/* The held ACK into @out, to send once resp_lock is dropped. */
static void qpnic_resp_take_held_ack(struct qpnic_qp *qp,
				     struct qpnic_resp_out *out)
{
	out->av = qp->av;
	out->ack = true;
	out->syndrome = QPNIC_AETH_ACK_CREDITS;
	out->psn = qp->resp.held_psn;
	out->msn = qp->resp.held_msn;
	qp->resp.ack_held = false;
}

void qpnic_resp_ack_batch_begin(void)
{
	this_cpu_ptr(&qpnic_ack_batch)->active = true;
}

/*
 * The held ACKs of the pass, one per QP. BH off. A QP being destroyed
 * still sends its own: what it acknowledges was received and completed,
 * and its consumer may have seen that and destroyed it at once (as
 * ibv_rc_pingpong's last receiver does); without the ACK the requester
 * would retry into a QP that is gone. The batch's reference keeps it.
 */
void qpnic_resp_ack_batch_end(void)
{
	struct qpnic_ack_batch *b = this_cpu_ptr(&qpnic_ack_batch);
	unsigned int i;

	for (i = 0; i < b->n; i++) {
		struct qpnic_qp *qp = b->qp[i];
		struct qpnic_resp_out out = {};
		unsigned long flags;

		spin_lock_irqsave(&qp->resp_lock, flags);
		if (qp->resp.ack_held && qpnic_resp_state_ok(qp->state))
			qpnic_resp_take_held_ack(qp, &out);
		qp->resp.ack_held = false;
		spin_unlock_irqrestore(&qp->resp_lock, flags);
		if (out.ack)
			qpnic_resp_send_ack(qp, &out);
		qpnic_qp_put(qp);
	}
	b->n = 0;
	b->active = false;
}

/*
 * Hold @out's plain ACK in the pass's batch, or send a held one ahead of
 * what @out sends (into @held). Caller holds resp_lock.
 */
static void qpnic_resp_hold_ack(struct qpnic_qp *qp, struct qpnic_resp_out *out,
				struct qpnic_resp_out *held)
{
	struct qpnic_ack_batch *b = this_cpu_ptr(&qpnic_ack_batch);

	if (out->ack && out->syndrome == QPNIC_AETH_ACK_CREDITS &&
	    !out->atomic && b->active &&
	    (qp->resp.ack_held || b->n < QPNIC_ACK_BATCH)) {
		if (!qp->resp.ack_held) {
			/* (the receive path's reference keeps it meanwhile) */
			refcount_inc(&qp->ref);
			b->qp[b->n++] = qp;
		}
		qp->resp.ack_held = true;
		qp->resp.held_psn = out->psn;
		qp->resp.held_msn = out->msn;
		out->ack = false;
		return;
	}
	if (qp->resp.ack_held &&
	    (out->ack || out->empty_read_resp || out->read_work))
		qpnic_resp_take_held_ack(qp, held);
}

static void qpnic_resp_connected(struct qpnic_qp *qp, struct sk_buff *skb,
				 const struct qpnic_pkt *pkt)
{
	struct qpnic_dev *qdev = to_qdev(qp->ibqp.device);
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	struct qpnic_resp_out out = {}, held = {};
	unsigned long flags;
	bool done;
	s32 ahead;

	spin_lock_irqsave(&qp->resp_lock, flags);
	if (!qpnic_resp_state_ok(qp->state) || qp->dying)
		goto unlock;
	out.av = qp->av;
	if (rc && pkt->ce) {
		u64 now = ktime_get_ns();

		qpnic_count(qdev, QPNIC_CNT_RX_ECN_MARKED);
		if (now - qp->resp.cnp_ns >= QPNIC_CNP_GAP_NS) {
			qp->resp.cnp_ns = now;
			out.cnp = true;
		}
	}
	ahead = qpnic_psn_diff(pkt->psn, qp->resp.psn);
	if (rc && ahead > 0) {
		/* a gap: one NAK until the missing packet comes */
		qpnic_drop(qdev, QPNIC_CNT_RX_OUT_OF_SEQUENCE, pkt);
		if (!qp->resp.nak_sent) {
			qp->resp.nak_sent = true;
			qpnic_resp_ack(qp, &out, QPNIC_NAK_SEQ, qp->resp.psn);
		}
		goto unlock;
	}
	if (rc && ahead < 0 && ahead + (s32)pkt->npkts > 0) {
		/*
		 * A loopback segment built again, after a rewind, across the
		 * expected PSN: the requester goes back to that PSN at once.
		 */
		qpnic_drop(qdev, QPNIC_CNT_RX_OUT_OF_SEQUENCE, pkt);
		qp->resp.nak_sent = true;
		qpnic_resp_ack(qp, &out, QPNIC_NAK_SEQ, qp->resp.psn);
		goto unlock;
	}
	if (rc && ahead < 0) {
		qpnic_resp_duplicate(qp, skb, pkt, &out);
		goto unlock;
	}
	if (!rc && ahead) {
		/* UC: packets were lost; the message in progress is dropped */
		qpnic_drop(qdev, QPNIC_CNT_RX_OUT_OF_SEQUENCE, pkt);
		qp->resp.in_send = false;
		qp->resp.in_write = false;
		qp->resp.psn = pkt->psn;
	}
	if (!qpnic_resp_paylen_ok(qp, pkt)) {
		qpnic_drop(qdev, QPNIC_CNT_RX_DROP_MALFORMED, pkt);
		qpnic_resp_invalid(qp, &out, pkt);
		goto unlock;
	}
	if (!rc && (pkt->flags & QPNIC_OP_FIRST) &&
	    (qp->resp.in_send || qp->resp.in_write)) {
		/* UC: the message in progress lost its end; this one starts */
		qpnic_drop(qdev, QPNIC_CNT_RX_OUT_OF_SEQUENCE, pkt);
		qp->resp.in_send = false;
		qp->resp.in_write = false;
	}
	if (!qpnic_resp_opcode_in_sequence(qp, pkt)) {
		qpnic_drop(qdev, QPNIC_CNT_RX_OUT_OF_SEQUENCE, pkt);
		qpnic_resp_invalid(qp, &out, pkt);
		goto unlock;
	}
	if (pkt->flags & QPNIC_OP_SEND)
		done = qpnic_resp_send(qp, skb, pkt, &out);
	else if (pkt->flags & QPNIC_OP_WRITE)
		done = qpnic_resp_write(qp, skb, pkt, &out);
	else if (pkt->opcode == QPNIC_FLUSH)
		done = qpnic_resp_flush(qp, skb, pkt, &out);
	else if (pkt->flags & QPNIC_OP_ATOMIC)
		done = qpnic_resp_atomic(qp, skb, pkt, &out);
	else
		done = qpnic_resp_read(qp, skb, pkt, &out);
	if (!done && rc)
		goto unlock;
	qp->resp.nak_sent = false;
	if (pkt->flags & (QPNIC_OP_READ | QPNIC_OP_ATOMIC)) {
		qp->resp.psn = (pkt->psn + qpnic_packets(out.read_len, qp->mtu)) &
			       QPNIC_PSN_MASK;
		qp->resp.msn = (qp->resp.msn + 1) & 0xffffff;
		out.msn = qp->resp.msn;
	} else {
		qp->resp.psn = (pkt->psn + pkt->npkts) & QPNIC_PSN_MASK;
		if (done && pkt->ackreq)
			qpnic_resp_ack(qp, &out, QPNIC_AETH_ACK_CREDITS,
				       (pkt->psn + pkt->npkts - 1) & QPNIC_PSN_MASK);
	}
unlock:
	qpnic_resp_defer_ack(qp, &out);
	qpnic_resp_hold_ack(qp, &out, &held);
	spin_unlock_irqrestore(&qp->resp_lock, flags);
	if (out.notify)
		qpnic_cq_notify(to_qcq(qp->ibqp.recv_cq));
	if (out.srq_limit)
		qpnic_srq_limit_event(to_qsrq(qp->ibqp.srq));
	if (out.cnp)
		qpnic_resp_send_cnp(qp, &out);
	if (held.ack)
		qpnic_resp_send_ack(qp, &held);
	if (out.ack)
		qpnic_resp_send_ack(qp, &out);
	if (out.empty_read_resp)
		qpnic_resp_send_empty_read(qp, &out);
	/* one response per request here, as one ACK; the rest from the work */
	if (out.read_work)
		qpnic_resp_read_run(qp, 1);
}

/*
 * A flush of the RQ: the SEND in progress completes first (it was taken
 * from the ring before everything still there). Caller holds resp_lock.
 */
void qpnic_resp_flush_locked(struct qpnic_qp *qp, bool *notify)
{
	struct qpnic_resp_out out = {};

	if (!qp->resp.wqe_valid)
		return;
	qpnic_resp_complete(qp, &out, IB_WC_WR_FLUSH_ERR, IB_WC_RECV, 0, NULL,
			    false);
	qp->resp.in_send = false;
	*notify |= out.notify;
}

/* A request for @qp that passed the receive checks. Consumes the skb. */
void qpnic_resp_rcv(struct qpnic_qp *qp, struct sk_buff *skb,
		    const struct qpnic_pkt *pkt)
{
	if (QPNIC_OPC_CLASS(pkt->opcode) == QPNIC_OPC_UD)
		qpnic_resp_ud(qp, skb, pkt);
	else
		qpnic_resp_connected(qp, skb, pkt);
	consume_skb(skb);
}
