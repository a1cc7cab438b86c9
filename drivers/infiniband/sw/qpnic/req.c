// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The requester: turns send WQEs into packets, in posting order.
 *
 * It runs in the poster's context when it can (post_send with interrupts
 * on; BH is disabled around it as on the receive path), otherwise from the
 * QP's work item on qpnic_wq. A kernel post from a task queues the QP's
 * post work instead (qpnic_req_kick_posted()). One runner per QP:
 * qpnic_req_kick() counts run requests, and the runner loops until none
 * came in while it ran. A run sends at most QPNIC_REQ_BUDGET packets, then
 * hands over to the work item, so one QP never holds a CPU for long.
 *
 * Each packet is claimed and built under the SQ lock: which WQE, which
 * PSN, which bytes, and then the skb with its headers and its payload,
 * copied out of the WQE's SGEs or inline bytes. Only the finished skb
 * leaves the lock, so a flush, a RESET or a completion that gives the
 * slot back (and a post that rewrites it) once the lock is dropped cannot
 * change what is sent, and nothing of the slot is read again: its index
 * is not kept either. Transmit runs with no lock held. The completer
 * (comp.c) may rewind the requester after that (go-back-N from a NAK or a
 * timeout): a packet built before is a duplicate the responder
 * recognises by its PSN.
 *
 * UD and UC messages complete once their last packet is built (its bytes
 * are in the skb); RC messages when the completer sees them acknowledged.
 */
#include <linux/skbuff.h>
#include <net/inet_ecn.h>
#include <rdma/ib_mad.h>

#include "qpnic.h"

#define QPNIC_REQ_BUDGET	64
/*
 * Ask for an ACK at least this often, and at least twice per window (see
 * qpnic_req_ackreq). Fewer ACKs leave more of a shared link to the data:
 * across two guests, 16 QPs of 64 KiB WRITEs sent 8,000 ACKs a run at 16
 * PSNs and 3,300 at 64.
 */
#define QPNIC_ACKREQ_EVERY	64

/*
 * What one claimed packet carries. @wqe and @index name the slot: valid
 * only under the SQ lock the claim ran under; the rest are copies.
 */
struct qpnic_req_pkt {
	struct qpnic_send_wqe *wqe;
	struct qpnic_hdr_fields f;
	struct qpnic_av av;
	u32 index;		/* the WQE's SQ index */
	u32 offset;		/* the payload's offset in the message */
	u32 paylen;
	u32 npkts;		/* more than 1: a loopback segment */
	bool complete;		/* UD, UC: the message is out, complete it */
};

/*
 * An skb for a loopback segment of @npkts packets (see qpnic_lo_cb):
 * headers from @f, then @paylen payload bytes in page fragments for the
 * caller to fill from the end of the headers, pad and ICRC zeroed. NULL
 * when there is no memory (counted), as for a packet.
 */
struct sk_buff *qpnic_seg_alloc(struct qpnic_qp *qp, const struct qpnic_av *av,
				struct qpnic_hdr_fields *f, u32 paylen,
				u32 npkts)
{
	static const u8 zeros[3 + QPNIC_ICRC_LEN];
	u32 hdr_len = qpnic_opcode_hdr_len(f->opcode);
	struct sk_buff *skb;

	f->pad = -paylen & 3;
	skb = qpnic_skb_alloc_paged(to_qdev(qp->ibqp.device), av, hdr_len,
				    paylen + f->pad + QPNIC_ICRC_LEN);
	if (!skb)
		return NULL;
	qpnic_hdr_build(skb->data, f);
	skb_store_bits(skb, hdr_len + paylen, zeros, f->pad + QPNIC_ICRC_LEN);
	((struct qpnic_lo_cb *)skb->cb)->npkts = npkts;
	return skb;
}

/*
 * An skb for one packet of @qp to @av: headers from @f (the pad is set
 * here), @paylen payload bytes at *@payload for the caller to fill, pad
 * and ICRC zeroed. NULL when it cannot be sent (counted).
 */
struct sk_buff *qpnic_pkt_alloc(struct qpnic_qp *qp, const struct qpnic_av *av,
				struct qpnic_hdr_fields *f, u32 paylen,
				u8 **payload)
{
	u32 hdr_len = qpnic_opcode_hdr_len(f->opcode);
	struct sk_buff *skb;
	u32 total;
	u8 *buf;

	f->pad = -paylen & 3;
	total = hdr_len + paylen + f->pad + QPNIC_ICRC_LEN;
	skb = qpnic_skb_alloc(to_qdev(qp->ibqp.device), av, total);
	if (!skb)
		return NULL;
	buf = skb_put(skb, total);
	qpnic_hdr_build(buf, f);
	memset(buf + hdr_len + paylen, 0, f->pad + QPNIC_ICRC_LEN);
	*payload = buf + hdr_len;
	return skb;
}

/* False when this host dropped the packet (see qpnic_skb_send()). */
bool qpnic_pkt_send(struct qpnic_qp *qp, const struct qpnic_av *av,
		    struct sk_buff *skb, u32 dqpn)
{
	return qpnic_skb_send(to_qdev(qp->ibqp.device), av, skb,
			      rdma_get_udp_sport(av->flow_label,
						 qp->ibqp.qp_num, dqpn),
			      qp->tx_flow);
}

/*
 * Complete @wqe, the SQ's head, and give its slot back; caller holds the
 * SQ lock and runs qpnic_cq_notify() after dropping it when *@notify.
 * An error moves the QP to ERR (what follows then flushes).
 */
void qpnic_req_complete_locked(struct qpnic_qp *qp,
			       const struct qpnic_send_wqe *wqe,
			       enum ib_wc_status status, bool *notify)
{
	for (;;) {
		struct ib_wc wc = {
			.wr_id = wqe->wr_id,
			.status = status,
			.opcode = qpnic_wr_to_wc_opcode(wqe->opcode),
			.byte_len = wqe->length,
			.qp = &qp->ibqp,
		};
		bool signal = status != IB_WC_SUCCESS ||
			      (wqe->send_flags & IB_SEND_SIGNALED);

		if (qpnic_is_rd_atomic(wqe) && wqe->started && qp->req.rd_atomic)
			qp->req.rd_atomic--;
		/*
		 * The slot goes back before the completion shows: a user
		 * that polls it may post into the slot at once (a full SQ of
		 * depth 1 found no room otherwise: post_send's ENOMEM).
		 */
		qpnic_queue_consumed(&qp->sq.queue);
		if (signal)
			*notify |= qpnic_cq_push(to_qcq(qp->ibqp.send_cq), &wc, false);
		if (status != IB_WC_SUCCESS) {
			qpnic_qp_error_locked(qp);
			return;
		}
		/* local operations executed behind it complete in their turn */
		if (qp->sq.queue.cons == qpnic_sq_end(qp))
			break;
		wqe = qpnic_sq_wqe(qp, qp->sq.queue.cons);
		if (!wqe->local_done || wqe->status != IB_WC_SUCCESS)
			break;
	}
	qpnic_qp_sq_drained_check(qp);
}

/*
 * A WQE marked in error (a user WQE that failed validation, an SGE whose
 * key failed) completes so when it is the SQ's head. Returns true when it
 * did (the QP is then in ERR). Caller holds the SQ lock.
 */
bool qpnic_req_head_error(struct qpnic_qp *qp, bool *notify)
{
	struct qpnic_send_wqe *wqe;

	if (qp->sq.queue.cons == qpnic_sq_end(qp))
		return false;
	wqe = qpnic_sq_wqe(qp, qp->sq.queue.cons);
	if (wqe->status == IB_WC_SUCCESS)
		return false;
	qpnic_req_complete_locked(qp, wqe, wqe->status, notify);
	return true;
}

/*
 * Move the requester to @psn: back (a NAK's PSN, or the oldest one not
 * acknowledged) or forward (an ACK covered what it was about to resend).
 * The started WQEs, from the SQ's head on, hold contiguous PSN ranges; the
 * requester resends from the WQE and byte @psn stands for, or goes on
 * with the first WQE not started if @psn is one past them all. A PSN
 * before the head's is stale and changes nothing. Caller holds the SQ lock.
 */
void qpnic_req_rewind(struct qpnic_qp *qp, u32 psn)
{
	u32 index = qp->sq.queue.cons, end = qpnic_sq_end(qp);
	u64 offset = 0;

	for (; index != end; index = (index + 1) & qp->sq.queue.wrap) {
		struct qpnic_send_wqe *wqe = qpnic_sq_wqe(qp, index);
		s32 into = qpnic_psn_diff(psn, wqe->first_psn);

		if (!wqe->started || into < 0)
			break;
		if (qpnic_psn_diff(psn, wqe->last_psn) <= 0) {
			offset = min_t(u64, (u64)into * qp->mtu, wqe->length);
			goto found;
		}
	}
	if (psn != qp->req.max_psn)
		return;
found:
	qp->req.next = index;
	qp->req.offset = offset;
	qp->req.psn = psn;
	qp->req.paused = false;
}

static u8 qpnic_send_opcode(const struct qpnic_send_wqe *wqe, bool first,
			    bool last)
{
	bool imm = wqe->opcode == IB_WR_SEND_WITH_IMM ||
		   wqe->opcode == IB_WR_RDMA_WRITE_WITH_IMM;

	if (wqe->opcode == IB_WR_SEND_WITH_INV) {
		if (first && last)
			return QPNIC_SEND_ONLY_INV;
		if (first)
			return QPNIC_SEND_FIRST;
		return last ? QPNIC_SEND_LAST_INV : QPNIC_SEND_MIDDLE;
	}
	if (wqe->opcode == IB_WR_SEND || wqe->opcode == IB_WR_SEND_WITH_IMM) {
		if (first && last)
			return imm ? QPNIC_SEND_ONLY_IMM : QPNIC_SEND_ONLY;
		if (first)
			return QPNIC_SEND_FIRST;
		return last ? (imm ? QPNIC_SEND_LAST_IMM : QPNIC_SEND_LAST) :
			      QPNIC_SEND_MIDDLE;
	}
	if (first && last)
		return imm ? QPNIC_WRITE_ONLY_IMM : QPNIC_WRITE_ONLY;
	if (first)
		return QPNIC_WRITE_FIRST;
	return last ? (imm ? QPNIC_WRITE_LAST_IMM : QPNIC_WRITE_LAST) :
		      QPNIC_WRITE_MIDDLE;
}

static bool qpnic_is_local_op(const struct qpnic_send_wqe *wqe)
{
	return wqe->opcode == IB_WR_REG_MR || wqe->opcode == IB_WR_LOCAL_INV ||
	       wqe->opcode == IB_WR_BIND_MW;
}

/*
 * Execute the WQE at the requester if it is a local operation (REG_MR,
 * LOCAL_INV, BIND_MW) of a connected QP: it sends nothing, and what
 * follows it in the SQ sees its effect. LOCAL_INV is fenced: it waits
 * until everything before it completed, so none of that can still use
 * the key. A local operation executes once: one passed again after a
 * rewind is skipped. It completes now if it is the head, else when the
 * WQEs before it do. Returns 1 when the requester moved on (or back, to
 * probe what a LOCAL_INV waits for), 0 when the WQE is not a local
 * operation to execute (a failed one completes as marked), -EAGAIN when
 * it must wait. Caller holds the SQ lock.
 */
static int qpnic_req_local(struct qpnic_qp *qp, bool *notify)
{
	struct qpnic_send_wqe *wqe = qpnic_sq_wqe(qp, qp->req.next);
	bool head = qp->req.next == qp->sq.queue.cons;
	enum ib_wc_status status = IB_WC_SUCCESS;
	int err;

	if (!qpnic_is_local_op(wqe) || wqe->status != IB_WC_SUCCESS)
		return 0;
	if (!wqe->local_done) {
		/* (what it waits for, unasked, is sent again asking) */
		if (wqe->opcode == IB_WR_LOCAL_INV && !head)
			return qpnic_comp_probe_now(qp) ? 1 : -EAGAIN;
		if (wqe->opcode == IB_WR_REG_MR) {
			status = qpnic_mr_fast_reg(qp, wqe);
		} else if (wqe->opcode == IB_WR_BIND_MW) {
			status = qpnic_mw_bind(qp, wqe);
		} else {
			err = qpnic_key_invalidate(qp, wqe->ex.invalidate_rkey,
						   false);
			if (err)
				status = err == -EACCES ? IB_WC_LOC_PROT_ERR :
							  IB_WC_LOC_QP_OP_ERR;
		}
		if (status != IB_WC_SUCCESS) {
			wqe->status = status;
			return 0;
		}
		/* no PSN of its own: a rewind passes over it */
		wqe->started = true;
		wqe->local_done = true;
		wqe->first_psn = qp->req.psn;
		wqe->last_psn = (qp->req.psn - 1) & QPNIC_PSN_MASK;
	}
	qp->req.next = (qp->req.next + 1) & qp->sq.queue.wrap;
	qp->req.offset = 0;
	if (head)
		qpnic_req_complete_locked(qp, wqe, IB_WC_SUCCESS, notify);
	return 1;
}

/* Whether an RC packet with @psn would be past the window. */
static bool qpnic_req_window_full(const struct qpnic_qp *qp, u32 psn)
{
	return qpnic_psn_diff(psn, qp->comp.psn) >= (s32)qp->req.window;
}

/*
 * Whether the WQE after the one being sent is a LOCAL_INV, which waits
 * for it to complete (see qpnic_req_local()). rdma_rw chains LOCAL_INV,
 * REG_MR and an unsignaled WRITE per MR; unasked, each WRITE's ACK came
 * only after the ACK timeout's probe. Caller holds the SQ lock.
 */
static bool qpnic_req_inv_follows(struct qpnic_qp *qp)
{
	u32 after = (qp->req.next + 1) & qp->sq.queue.wrap;

	return after != qpnic_sq_end(qp) &&
	       qpnic_sq_wqe(qp, after)->opcode == IB_WR_LOCAL_INV;
}

/*
 * Whether a packet asks for an ACK: one due by its PSN, or the end of a
 * message someone waits for. Asking at least every half window means
 * that whatever was sent since the last ask fits in the window even
 * after a CNP halved it: the ACK to that ask always lets the requester
 * go on, where a longer tail left blocked behind a cut window would wait
 * for the ACK timeout.
 *
 * The end of an unsignaled message need not ask while the SQ is less
 * than half full: an ACK is cumulative, and the next ask (a signaled
 * WR's, one due by PSN, or one as the SQ fills) acknowledges it too. A
 * stream of small unsignaled messages, what bandwidth tests and ULPs
 * post, then draws an ACK per 64 PSNs instead of one per message: on a
 * link, half the packets. A tail nothing asked for is asked for by
 * the ACK timer (qpnic_retrans_timeout() sends its last packet again),
 * so this needs an ACK timeout; resends, SQD's last messages and a
 * message a LOCAL_INV waits for always ask (a LOCAL_INV posted after the
 * tail went probes at once).
 */
static bool qpnic_req_ackreq(struct qpnic_qp *qp,
			     const struct qpnic_send_wqe *wqe, u32 psn,
			     u32 npkts, bool last)
{
	u32 every = min_t(u32, QPNIC_ACKREQ_EVERY, qp->req.window / 2);
	u32 started;

	/* (a segment asks when one of its PSNs is due; PSN 0 always is) */
	if (psn + npkts - 1 > QPNIC_PSN_MASK || !(psn % every) ||
	    psn % every + npkts > every)
		return true;
	if (!last)
		return false;
	/* (WQEs sent and not completed, this one's predecessors) */
	started = (qp->req.next - qp->sq.queue.cons) & qp->sq.queue.wrap;
	return (wqe->send_flags & IB_SEND_SIGNALED) ||
	       qp->state != IB_QPS_RTS || !qp->attr.timeout ||
	       qpnic_psn_diff(psn, qp->req.max_psn) < 0 ||
	       started + 1 >= qp->sq.queue.capacity / 2 ||
	       qpnic_req_inv_follows(qp);
}

/*
 * How many packets of a SEND or WRITE go in one skb: more than one only
 * to this device (a loopback segment, see qpnic_lo_cb), as many as
 * QPNIC_LO_SEG_BYTES, the rest of the message and the window allow.
 * Inline data goes in plain packets. Caller holds the SQ lock.
 */
static u32 qpnic_req_npkts(const struct qpnic_qp *qp,
			   const struct qpnic_send_wqe *wqe, u32 psn, u32 rem)
{
	u32 n;

	if (!wqe->num_sge || !qpnic_lo_segments(&qp->av))
		return 1;
	n = min(QPNIC_LO_SEG_BYTES / qp->mtu, qpnic_packets(rem, qp->mtu));
	if (qp->ibqp.qp_type == IB_QPT_RC)
		n = min_t(u32, n, qp->req.window -
			  qpnic_psn_diff(psn, qp->comp.psn));
	return max(n, 1U);
}

/*
 * Claim the next packet of a connected QP into @p; caller holds the SQ
 * lock. Returns false when there is nothing to send now.
 */
static bool qpnic_req_claim_rc(struct qpnic_qp *qp, struct qpnic_req_pkt *p,
			       bool *notify)
{
	struct qpnic_send_wqe *wqe = qpnic_sq_wqe(qp, qp->req.next);
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	u32 psn = qp->req.psn, npkts = 1, rem;
	bool first, last;

	if (wqe->status != IB_WC_SUCCESS) {
		/* in order: it completes once all before it have */
		if (qp->req.next == qp->sq.queue.cons)
			qpnic_req_head_error(qp, notify);
		return false;
	}
	if (rc) {
		if (qp->req.paused ||
		    qpnic_req_window_full(qp, psn))
			return false;
		if (!wqe->started &&
		    ((qpnic_is_rd_atomic(wqe) &&
		      qp->req.rd_atomic >= max_t(u32, qp->attr.max_rd_atomic, 1)) ||
		     ((wqe->send_flags & IB_SEND_FENCE) && qp->req.rd_atomic)))
			return false;
	}
	if (!wqe->started) {
		wqe->first_psn = psn;
		wqe->last_psn = (psn + qpnic_packets(wqe->length, qp->mtu) - 1) & QPNIC_PSN_MASK;
		wqe->started = true;
		if (qpnic_is_rd_atomic(wqe))
			qp->req.rd_atomic++;
	}

	memset(p, 0, sizeof(*p));
	p->wqe = wqe;
	p->index = qp->req.next;
	p->offset = qp->req.offset;
	p->av = qp->av;
	/* RC reacts to congestion (CNPs): the network may mark, not drop */
	if (rc && INET_ECN_is_not_ect(p->av.tclass))
		p->av.tclass |= INET_ECN_ECT_0;
	p->f.pkey = IB_DEFAULT_PKEY_FULL;
	p->f.dqpn = qp->attr.dest_qp_num;
	p->f.psn = psn;
	rem = wqe->length - p->offset;
	first = p->offset == 0;

	if (wqe->opcode == IB_WR_RDMA_READ) {
		p->f.opcode = QPNIC_READ_REQUEST;
		p->f.reth.va = wqe->remote_addr + p->offset;
		p->f.reth.rkey = wqe->rkey;
		p->f.reth.len = rem;
		npkts = qpnic_packets(rem, qp->mtu);
		last = true;
	} else if (wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
		   wqe->opcode == IB_WR_ATOMIC_FETCH_AND_ADD) {
		bool cmp_swap = wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP;

		p->f.opcode = cmp_swap ? QPNIC_COMPARE_SWAP : QPNIC_FETCH_ADD;
		p->f.atmeth.va = wqe->remote_addr;
		p->f.atmeth.rkey = wqe->rkey;
		p->f.atmeth.swap_add = cmp_swap ? wqe->atomic.swap :
						  wqe->atomic.compare_add;
		p->f.atmeth.compare = cmp_swap ? wqe->atomic.compare_add : 0;
		p->f.ackreq = true;
		last = true;
	} else if (wqe->opcode == QPNIC_WR_FLUSH) {
		p->f.opcode = QPNIC_FLUSH;
		p->f.feth = (wqe->flush.level << QPNIC_FETH_SEL_SHIFT) |
			    wqe->flush.type;
		p->f.reth.va = wqe->remote_addr;
		p->f.reth.rkey = wqe->rkey;
		p->f.reth.len = wqe->flush.length;
		p->f.ackreq = true;
		last = true;
	} else if (wqe->opcode == QPNIC_WR_ATOMIC_WRITE) {
		p->f.opcode = QPNIC_ATOMIC_WRITE;
		p->f.reth.va = wqe->remote_addr;
		p->f.reth.rkey = wqe->rkey;
		p->f.reth.len = sizeof(u64);
		p->paylen = sizeof(u64);
		p->f.ackreq = true;
		last = true;
	} else {
		npkts = qpnic_req_npkts(qp, wqe, psn, rem);
		p->npkts = npkts;
		p->paylen = min(rem, npkts * qp->mtu);
		last = rem <= npkts * qp->mtu;
		p->f.opcode = qpnic_send_opcode(wqe, first, last);
		if (first && (wqe->opcode == IB_WR_RDMA_WRITE ||
			      wqe->opcode == IB_WR_RDMA_WRITE_WITH_IMM)) {
			p->f.reth.va = wqe->remote_addr;
			p->f.reth.rkey = wqe->rkey;
			p->f.reth.len = wqe->length;
		}
		p->f.immdt = wqe->ex.imm_data;
		p->f.ieth_rkey = wqe->ex.invalidate_rkey;
		p->f.se = last && (wqe->send_flags & IB_SEND_SOLICITED);
		p->f.ackreq = rc && qpnic_req_ackreq(qp, wqe, psn, npkts, last);
	}
	/* (a READ's or an atomic's answer acknowledges what came before) */
	if (rc && (p->f.ackreq || p->f.opcode == QPNIC_READ_REQUEST) &&
	    qpnic_psn_diff(psn + npkts - 1, qp->req.asked_psn) > 0)
		qp->req.asked_psn = (psn + npkts - 1) & QPNIC_PSN_MASK;
	if (!rc)
		p->f.opcode |= QPNIC_OPC_UC;
	p->complete = !rc && last;

	if (qpnic_psn_diff(psn, qp->req.max_psn) < 0)
		qpnic_count(to_qdev(qp->ibqp.device), QPNIC_CNT_TX_RETRANSMITS);
	else
		qp->req.max_psn = (psn + npkts) & QPNIC_PSN_MASK;
	qp->req.psn = (psn + npkts) & QPNIC_PSN_MASK;
	if (last) {
		qp->req.next = (qp->req.next + 1) & qp->sq.queue.wrap;
		qp->req.offset = 0;
	} else {
		qp->req.offset += p->paylen;
	}
	if (rc)
		qpnic_comp_arm(qp);
	return true;
}

/* Claim the one packet of a UD message; caller holds the SQ lock. */
static bool qpnic_req_claim_ud(struct qpnic_qp *qp, struct qpnic_req_pkt *p,
			       bool *notify)
{
	struct qpnic_send_wqe *wqe = qpnic_sq_wqe(qp, qp->req.next);

	if (wqe->status != IB_WC_SUCCESS) {
		if (qp->req.next == qp->sq.queue.cons)
			qpnic_req_head_error(qp, notify);
		return false;
	}
	memset(p, 0, sizeof(*p));
	p->wqe = wqe;
	p->index = qp->req.next;
	p->paylen = wqe->length;
	p->complete = true;
	p->f.opcode = wqe->opcode == IB_WR_SEND_WITH_IMM ?
		      QPNIC_UD_SEND_ONLY_IMM : QPNIC_UD_SEND_ONLY;
	p->f.se = wqe->send_flags & IB_SEND_SOLICITED;
	p->f.pkey = IB_DEFAULT_PKEY_FULL;
	p->f.dqpn = wqe->ud.remote_qpn;
	p->f.psn = qp->req.psn;
	p->f.immdt = wqe->ex.imm_data;
	/* IBTA 10.2.5: a Q_Key with the high bit set means "use the QP's" */
	p->f.deth.qkey = (wqe->ud.remote_qkey & 0x80000000) ? qpnic_qp_qkey(qp) :
							       wqe->ud.remote_qkey;
	p->f.deth.sqpn = qp->ibqp.qp_num;
	qp->req.next = (qp->req.next + 1) & qp->sq.queue.wrap;
	qp->req.psn = (qp->req.psn + 1) & QPNIC_PSN_MASK;
	return true;
}

/*
 * The payload bytes of @p into @buf, or into @skb after the headers when
 * @buf is NULL (a segment's page fragments); the status if that fails.
 */
static enum ib_wc_status qpnic_req_payload(struct qpnic_qp *qp,
					   const struct qpnic_req_pkt *p,
					   struct sk_buff *skb, u8 *buf)
{
	const struct qpnic_send_wqe *wqe = p->wqe;
	struct qpnic_copy c = { .buf = buf };

	if (!buf) {
		c.skb = skb;
		c.skb_offset = qpnic_opcode_hdr_len(p->f.opcode);
	}

	if (!p->paylen)
		return IB_WC_SUCCESS;
	if (wqe->opcode == QPNIC_WR_ATOMIC_WRITE) {
		memcpy(buf, &wqe->atomic.swap, sizeof(u64));
		return IB_WC_SUCCESS;
	}
	if (!wqe->num_sge) {
		memcpy(buf, wqe->inline_data + p->offset, p->paylen);
		return IB_WC_SUCCESS;
	}
	if (qpnic_sgl_copy(to_qdev(qp->ibqp.device), qp->ibqp.pd, wqe->sge,
			   wqe->num_sge, p->offset, p->paylen, &c))
		return IB_WC_LOC_PROT_ERR;
	return IB_WC_SUCCESS;
}

/* A UD packet's destination, from its WQE's AH; the status if none. */
static enum ib_wc_status qpnic_req_ud_av(struct qpnic_qp *qp,
					 struct qpnic_req_pkt *p)
{
	struct qpnic_dev *qdev = to_qdev(qp->ibqp.device);
	u32 mtu = READ_ONCE(qdev->mtu);

	if (p->paylen > mtu) {
		ibdev_dbg(&qdev->ibdev, "QP %u: UD send of %u bytes exceeds the MTU %u\n",
			  qp->ibqp.qp_num, p->paylen, mtu);
		return IB_WC_LOC_LEN_ERR;
	}
	if (qpnic_ah_av(qdev, p->wqe->ud.ah_num, qp->ibqp.pd, &p->av)) {
		ibdev_dbg(&qdev->ibdev, "QP %u: UD send through AH %u, not one of its PD\n",
			  qp->ibqp.qp_num, p->wqe->ud.ah_num);
		return IB_WC_LOC_QP_OP_ERR;
	}
	return IB_WC_SUCCESS;
}

/*
 * Build the packet @p claimed, under the SQ lock: headers and payload go
 * into the skb now, so nothing of the WQE's slot is read once the lock is
 * dropped. A failure marks the WQE (nothing after it starts; it completes
 * in its turn); a UD or UC message whose last packet this is completes.
 * Returns the skb to send, or NULL (a lost packet, which RC retries, or a
 * failure).
 */
static struct sk_buff *qpnic_req_build(struct qpnic_qp *qp,
				       struct qpnic_req_pkt *p, bool *notify)
{
	bool ud = qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
	enum ib_wc_status status = IB_WC_SUCCESS;
	struct sk_buff *skb = NULL;
	u8 *payload = NULL;

	lockdep_assert_held(&qp->sq.lock);
	if (ud)
		status = qpnic_req_ud_av(qp, p);
	if (status == IB_WC_SUCCESS)
		skb = p->npkts > 1 ?
		      qpnic_seg_alloc(qp, &p->av, &p->f, p->paylen, p->npkts) :
		      qpnic_pkt_alloc(qp, &p->av, &p->f, p->paylen, &payload);
	if (skb)
		status = qpnic_req_payload(qp, p, skb, payload);
	if (status != IB_WC_SUCCESS) {
		kfree_skb(skb);
		skb = NULL;
		p->wqe->status = status;
		qp->req.next = p->index;
		qp->req.offset = 0;
	}
	if ((p->complete || status != IB_WC_SUCCESS) &&
	    qp->sq.queue.cons == p->index)
		qpnic_req_complete_locked(qp, p->wqe, p->wqe->status, notify);
	return skb;
}

/*
 * Whether the requester sends: in RTS. SQD lets what was started finish,
 * resends included (a rewind goes back to a started WQE's first byte).
 * Caller holds the SQ lock.
 */
static bool qpnic_req_sends(struct qpnic_qp *qp)
{
	if (qp->dying)
		return false;
	if (qp->state == IB_QPS_RTS)
		return true;
	return qp->state == IB_QPS_SQD &&
	       (qp->req.offset || (qp->req.next != qpnic_sq_end(qp) &&
				   qpnic_sq_wqe(qp, qp->req.next)->started));
}

/*
 * This host dropped RC packet @psn (its transmit queue full, most often):
 * go back to it and wait a tick, so the queue drains and the packet goes
 * again before anything after it. Sending on would only have the peer
 * drop everything after the gap and NAK it, and a whole window go again.
 * Not if the completer moved the requester while the packet was out of
 * the lock: its rewind or ACK stands.
 */
static void qpnic_req_refused(struct qpnic_qp *qp, u32 psn)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	if (!qp->dying &&
	    (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD) &&
	    qpnic_psn_diff(qp->req.psn, psn) > 0 &&
	    qpnic_psn_diff(psn, qp->comp.psn) >= 0) {
		qpnic_req_rewind(qp, psn);
		if (qp->req.psn == psn) {
			qp->req.paused = true;
			mod_timer(&qp->comp.resume_timer, jiffies + 1);
		}
	}
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}

/* One run: returns true when the budget ran out with work left. */
static bool qpnic_req_run(struct qpnic_qp *qp)
{
	bool ud = qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
	struct qpnic_cq *cq = to_qcq(qp->ibqp.send_cq);
	int budget = QPNIC_REQ_BUDGET;
	struct qpnic_req_pkt p;

	for (;;) {
		bool notify = false, claimed = false;
		struct sk_buff *skb = NULL;
		unsigned long flags;

		/* the flow's destructor runs the work item once there is room */
		if (qpnic_tx_flow_full(qp))
			return false;
		spin_lock_irqsave(&qp->sq.lock, flags);
		if (qpnic_req_sends(qp) && qp->req.next != qpnic_sq_end(qp)) {
			if (!budget--) {
				spin_unlock_irqrestore(&qp->sq.lock, flags);
				return true;
			}
			int local = ud ? 0 : qpnic_req_local(qp, &notify);

			if (local > 0)
				claimed = true;	/* nothing to send: go on */
			else if (!local)
				claimed = ud ? qpnic_req_claim_ud(qp, &p, &notify) :
					       qpnic_req_claim_rc(qp, &p, &notify);
			if (claimed && !local)
				skb = qpnic_req_build(qp, &p, &notify);
		}
		spin_unlock_irqrestore(&qp->sq.lock, flags);
		if (notify)
			qpnic_cq_notify(cq);
		if (!claimed)
			return false;
		/* @p's WQE may be gone now: only the skb and the route go on */
		if (skb && !qpnic_pkt_send(qp, &p.av, skb, p.f.dqpn) &&
		    qp->ibqp.qp_type == IB_QPT_RC)
			qpnic_req_refused(qp, p.f.psn);
	}
}

/*
 * Run the requester here, or have the running one go round again. Any
 * context; with interrupts off (a poster holding an irqsave lock, as the
 * MAD layer does) it runs from the work item instead.
 */
void qpnic_req_kick(struct qpnic_qp *qp)
{
	struct qpnic_dev *qdev = to_qdev(qp->ibqp.device);
	bool more, inline_lo;

	if (irqs_disabled() || in_hardirq()) {
		queue_work(qpnic_wq, &qp->req.work);
		return;
	}
	if (atomic_inc_return(&qp->req.runs) != 1)
		return;
	local_bh_disable();
	/*
	 * Packets to this device are delivered here too, sparing each a
	 * work item's wake-up. The delivery calls completion and event
	 * handlers, which a ULP must allow in any context with interrupts
	 * on (hardware calls them from its interrupt): a poster holding a
	 * lock its handlers take holds it with interrupts off, and then
	 * the work item runs all this (above).
	 */
	inline_lo = qpnic_loopback_inline_begin(qdev);
	do {
		atomic_set(&qp->req.runs, 1);
		more = qpnic_req_run(qp);
		if (inline_lo)
			qpnic_loopback_inline_deliver(qdev);
	} while (!more && atomic_cmpxchg(&qp->req.runs, 1, 0) != 1);
	if (more) {
		atomic_set(&qp->req.runs, 0);
		queue_work(qpnic_wq, &qp->req.work);
	}
	if (inline_lo)
		qpnic_loopback_inline_end(qdev);
	local_bh_enable();
}

void qpnic_req_work(struct work_struct *work)
{
	qpnic_req_kick(container_of(work, struct qpnic_qp, req.work));
}

/*
 * A kernel ULP posted from a task (a block submitter, a kworker, nfsd):
 * the requester runs from a work item of normal priority, as rdma_rxe's
 * runs from a tasklet, and the poster goes on. Run inline, it would
 * deliver to the peer QP at once, and the peer's completion handler
 * (often a high-priority kworker) would preempt the poster for each
 * message: NVMe-oF over loopback switched context ten times as often as
 * rdma_rxe and lost a quarter of its IOPS. Posts that come in while the
 * work waits go out in its one run, and their completions reach the next
 * stage together. A post with BH off (softirq, a completion handler
 * running there, an inline section) stays inline: it is past any wake-up
 * already.
 */
void qpnic_req_kick_posted(struct qpnic_qp *qp)
{
	if (!in_interrupt() && !irqs_disabled())
		queue_work(qpnic_post_wq, &qp->post_work);
	else
		qpnic_req_kick(qp);
}

void qpnic_req_post_work(struct work_struct *work)
{
	qpnic_req_kick(container_of(work, struct qpnic_qp, post_work));
}
