// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The completer: retires RC send WQEs on what comes back from the
 * responder (ACKs, NAKs, READ responses), in posting order, and drives
 * retransmission: go-back-N from a sequence NAK, an RNR NAK (after the
 * responder's RNR timer) or the local ACK timeout, each bounded by the
 * QP's retry_cnt and rnr_retry.
 *
 * It runs in the receive path (BH) and in the two timers' callbacks
 * (softirq), always under the SQ lock; completion handlers run after it
 * is dropped. The timers are armed only while the QP is not dying, so
 * destroy_qp stops them for good with del_timer_sync().
 */
#include <linux/skbuff.h>
#include <qpnic/compat.h>

#include "qpnic.h"
#include "trace.h"

/* IBTA 9.7.5.2.8: RNR NAK timer field to microseconds. */
static const u32 qpnic_rnr_usecs[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/*
 * The local ACK timeout, 4.096 us * 2^timeout; 0 means none (IBTA
 * 11.2.4.2). A timer tick may come right after arming, so the shortest
 * wait is two ticks. Each expiry in a row doubles the wait (up to 64
 * times), so a peer that is slow, not gone, is not flooded with resends
 * that only make it slower; any progress brings it back.
 */
static unsigned long qpnic_ack_timeout(const struct qpnic_qp *qp)
{
	u8 t = min_t(u8, qp->attr.timeout, 31);

	if (!t)
		return 0;
	return max(2UL, nsecs_to_jiffies(4096ULL << t)) << qp->comp.backoff;
}

/* Packets were sent and not all are acknowledged. */
static bool qpnic_comp_outstanding(const struct qpnic_qp *qp)
{
	return qpnic_psn_diff(qp->req.max_psn, qp->comp.psn) > 0;
}

/*
 * The ACK timeout is due at @deadline (jiffies) while @timing. The timer
 * itself is lazy: an ACK only moves the deadline, and a timer left set
 * for an earlier one finds the later deadline (or none) when it runs and
 * sets itself again (or not), so a stream of ACKs, or a ping-pong that
 * leaves nothing outstanding, costs no timer operation per message.
 * Only a deadline earlier than the timer's sets it at once. Caller holds
 * the SQ lock.
 */
static void qpnic_comp_time(struct qpnic_qp *qp, unsigned long deadline)
{
	if (qp->dying)
		return;
	qp->comp.timing = true;
	qp->comp.deadline = deadline;
	timer_reduce(&qp->comp.retrans_timer, deadline);
}

/* The requester sent a packet: time it, unless a clock runs already. */
void qpnic_comp_arm(struct qpnic_qp *qp)
{
	unsigned long t;

	if (qp->comp.timing)
		return;
	t = qpnic_ack_timeout(qp);
	if (t)
		qpnic_comp_time(qp, jiffies + t);
}

/* Something was acknowledged: retries start over, the clock too. */
static void qpnic_comp_progress(struct qpnic_qp *qp)
{
	unsigned long t;

	qp->comp.retries = qp->attr.retry_cnt;
	qp->comp.rnr_retries = qp->attr.rnr_retry;
	qp->comp.probed = false;
	qp->comp.rewound = false;
	qp->comp.backoff = 0;
	t = qpnic_ack_timeout(qp);
	if (!qpnic_comp_outstanding(qp))
		qp->comp.timing = false;
	else if (t)
		qpnic_comp_time(qp, jiffies + t);
	qpnic_comp_sqd_ask(qp);
}

/*
 * What is outstanding never asked for an ACK (see qpnic_req_ackreq()),
 * and no probe went since the last progress. Caller holds the SQ lock.
 */
static bool qpnic_comp_probe_due(const struct qpnic_qp *qp)
{
	return !qp->comp.probed && qpnic_comp_outstanding(qp) &&
	       qpnic_psn_diff(qp->req.asked_psn, qp->comp.psn) < 0;
}

/*
 * SQD waits for what was sent to be acknowledged: a tail that asked for
 * no ACK is asked for at once, not after the ACK timeout. Caller holds
 * the SQ lock.
 */
void qpnic_comp_sqd_ask(struct qpnic_qp *qp)
{
	if (qp->state == IB_QPS_SQD && qpnic_ack_timeout(qp) &&
	    qpnic_comp_probe_due(qp))
		qpnic_comp_time(qp, jiffies);
}

/*
 * The SQ's head if it started (sent, and for RC not yet acknowledged);
 * NULL when nothing started is left to complete. Caller holds the SQ lock.
 */
struct qpnic_send_wqe *qpnic_comp_head(struct qpnic_qp *qp)
{
	struct qpnic_send_wqe *wqe;

	if (qp->sq.queue.cons == qpnic_sq_end(qp))
		return NULL;
	wqe = qpnic_sq_wqe(qp, qp->sq.queue.cons);
	return wqe->started ? wqe : NULL;
}

/*
 * Go back to @psn, once per point until something is acknowledged or the
 * timer fires: a burst of signs of one loss (every response after a lost
 * one) rewinds once. While a go-back-N is still resending, no other point
 * starts one: at most one per round of resends, however many NAKs (true
 * or forged) come in.
 */
static void qpnic_comp_rewind(struct qpnic_qp *qp, u32 psn, const char *cause)
{
	if (qp->comp.rewound &&
	    (qp->comp.rewound_psn == psn ||
	     qpnic_psn_diff(qp->req.psn, qp->req.max_psn) < 0))
		return;
	trace_qpnic_retransmit(&qp->ibqp, cause, psn);
	qp->comp.rewound = true;
	qp->comp.rewound_psn = psn;
	qpnic_req_rewind(qp, psn);
}

/*
 * Send the last packet sent again, asking for the ACK: no retry is spent.
 * An ACK is cumulative, so its answer acknowledges the whole tail, and a
 * responder that missed some of the tail NAKs the first it missed
 * (go-back-N from there): the rest need not go again.
 */
static void qpnic_comp_probe(struct qpnic_qp *qp)
{
	qpnic_count(to_qdev(qp->ibqp.device), QPNIC_CNT_ACK_PROBES);
	qp->comp.probed = true;
	qp->comp.rewound = false;
	qpnic_comp_rewind(qp, (qp->req.max_psn - 1) & QPNIC_PSN_MASK,
			  "ACK probe");
}

/*
 * A LOCAL_INV waits for what was sent to complete, and none of that
 * asked for an ACK (the LOCAL_INV was posted after it went): probe now,
 * not at the ACK timeout. True when the requester went back to resend.
 * Caller holds the SQ lock.
 */
bool qpnic_comp_probe_now(struct qpnic_qp *qp)
{
	if (!qpnic_ack_timeout(qp) || !qpnic_comp_probe_due(qp))
		return false;
	qpnic_comp_probe(qp);
	return true;
}

/*
 * Everything up to and including @psn is acknowledged: complete the SENDs
 * and WRITEs it covers. A READ or an atomic at the head is answered by
 * its own responses, not by an ACK: an ACK past it means they were lost
 * (an implied NAK), and it is asked again from what is missing.
 */
static bool qpnic_comp_ack(struct qpnic_qp *qp, u32 psn, bool *notify)
{
	struct qpnic_send_wqe *wqe;
	bool progress = false;

	if (qpnic_psn_diff(psn, qp->comp.psn) < 0)
		return false;
	while ((wqe = qpnic_comp_head(qp))) {
		if (qpnic_is_rd_atomic(wqe)) {
			if (qpnic_psn_diff(qp->comp.psn, wqe->first_psn) < 0)
				qp->comp.psn = wqe->first_psn;
			if (qpnic_psn_diff(psn, wqe->first_psn) >= 0)
				qpnic_comp_rewind(qp, qp->comp.psn,
						  "implied NAK: ACK past a READ or atomic");
			return progress;
		}
		if (qpnic_psn_diff(wqe->last_psn, psn) > 0)
			break;
		qpnic_req_complete_locked(qp, wqe, IB_WC_SUCCESS, notify);
		progress = true;
	}
	qp->comp.psn = (psn + 1) & QPNIC_PSN_MASK;
	return true;
}

/* The head WQE fails with @status (a NAK's or a retry limit's). */
static void qpnic_comp_fail(struct qpnic_qp *qp, enum ib_wc_status status,
			    bool *notify)
{
	struct qpnic_send_wqe *wqe = qpnic_comp_head(qp);

	if (wqe)
		qpnic_req_complete_locked(qp, wqe, status, notify);
	else
		qpnic_qp_error_locked(qp);
}

static enum ib_wc_status qpnic_nak_status(u8 code)
{
	switch (code) {
	case 1:
		return IB_WC_REM_INV_REQ_ERR;
	case 2:
		return IB_WC_REM_ACCESS_ERR;
	case 4:
		return IB_WC_REM_INV_RD_REQ_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

/*
 * A response to the request at @psn also acknowledges every SEND and
 * WRITE before it (they were coalesced into it).
 */
static bool qpnic_comp_ack_before(struct qpnic_qp *qp, u32 psn, bool *notify)
{
	struct qpnic_send_wqe *wqe = qpnic_comp_head(qp);

	if (!wqe || qpnic_is_rd_atomic(wqe) ||
	    qpnic_psn_diff(psn, wqe->last_psn) <= 0)
		return false;
	return qpnic_comp_ack(qp, (psn - 1) & QPNIC_PSN_MASK, notify);
}

/*
 * The answer to an atomic at the head: CMP_SWAP and FETCH_ADD get the
 * original value (an ATOMIC ACKNOWLEDGE) into their one 8-byte SGE; an
 * ATOMIC WRITE or a FLUSH gets a READ RESPONSE ONLY with no payload.
 */
static bool qpnic_comp_atomic(struct qpnic_qp *qp, const struct qpnic_pkt *pkt,
			      u64 orig, bool *notify)
{
	struct qpnic_dev *qdev = to_qdev(qp->ibqp.device);
	struct qpnic_send_wqe *wqe = qpnic_comp_head(qp);
	bool empty = wqe && qpnic_wr_empty_answer(wqe->opcode);
	bool answer = empty ? pkt->opcode == QPNIC_READ_RESPONSE_ONLY && !pkt->paylen :
			      pkt->opcode == QPNIC_ATOMIC_ACKNOWLEDGE;
	int err;

	if (!wqe || !qpnic_is_rd_atomic(wqe) || wqe->opcode == IB_WR_RDMA_READ ||
	    pkt->psn != wqe->first_psn || !answer) {
		qpnic_drop(qdev, QPNIC_CNT_RX_DROP_STALE, pkt);
		return false;
	}
	if (!empty) {
		struct qpnic_copy c = { .buf = &orig, .to_mr = true };

		err = qpnic_sgl_copy(qdev, qp->ibqp.pd, wqe->sge, wqe->num_sge,
				     0, sizeof(orig), &c);
		if (err) {
			qpnic_req_complete_locked(qp, wqe, IB_WC_LOC_PROT_ERR,
						  notify);
			return true;
		}
	}
	qp->comp.psn = (pkt->psn + 1) & QPNIC_PSN_MASK;
	qpnic_req_complete_locked(qp, wqe, IB_WC_SUCCESS, notify);
	return true;
}

/* A READ response: the next expected one lands in the head READ's SGEs. */
static bool qpnic_comp_read(struct qpnic_qp *qp, struct sk_buff *skb,
			    const struct qpnic_pkt *pkt, bool *notify)
{
	struct qpnic_dev *qdev = to_qdev(qp->ibqp.device);
	struct qpnic_send_wqe *wqe = qpnic_comp_head(qp);
	struct qpnic_copy c = { .skb = skb, .skb_offset = pkt->hdr_len,
				.to_mr = true };
	u32 end_psn = (pkt->psn + pkt->npkts - 1) & QPNIC_PSN_MASK;
	bool at_end, last = pkt->opcode == QPNIC_READ_RESPONSE_LAST ||
		    pkt->opcode == QPNIC_READ_RESPONSE_ONLY;
	u64 offset;
	int err;

	if (!wqe || wqe->opcode != IB_WR_RDMA_READ ||
	    qpnic_psn_diff(pkt->psn, wqe->first_psn) < 0) {
		qpnic_drop(qdev, QPNIC_CNT_RX_DROP_STALE, pkt);
		return false;
	}
	if (qpnic_psn_diff(qp->comp.psn, wqe->first_psn) < 0)
		qp->comp.psn = wqe->first_psn;
	if (qpnic_psn_diff(pkt->psn, wqe->last_psn) > 0) {
		/* a later request's: the rest of this READ was lost (implied NAK) */
		qpnic_comp_rewind(qp, qp->comp.psn,
				  "implied NAK: a later response than the READ's");
		qpnic_drop(qdev, QPNIC_CNT_RX_DROP_STALE, pkt);
		return false;
	}
	if (pkt->psn != qp->comp.psn) {
		/* ahead: one went missing, ask again from it; behind: a duplicate */
		if (qpnic_psn_diff(pkt->psn, qp->comp.psn) > 0)
			qpnic_comp_rewind(qp, qp->comp.psn,
					  "READ response missing");
		qpnic_drop(qdev, QPNIC_CNT_RX_DROP_STALE, pkt);
		return false;
	}
	offset = (u64)qpnic_psn_diff(pkt->psn, wqe->first_psn) * qp->mtu;
	/*
	 * The response must be the part of the READ its PSN stands for (a
	 * READ asked again from the middle is answered FIRST from there on);
	 * a loopback segment, the packets from its PSN on.
	 */
	at_end = end_psn == wqe->last_psn;
	if (last != at_end || (!last && pkt->paylen != pkt->npkts * qp->mtu) ||
	    offset + pkt->paylen > wqe->length ||
	    (last && offset + pkt->paylen != wqe->length)) {
		qpnic_drop(qdev, QPNIC_CNT_RX_DROP_STALE, pkt);
		return false;
	}
	err = qpnic_sgl_copy(qdev, qp->ibqp.pd, wqe->sge, wqe->num_sge, offset,
			     pkt->paylen, &c);
	if (err) {
		qpnic_req_complete_locked(qp, wqe, err == -EACCES ?
					  IB_WC_LOC_PROT_ERR : IB_WC_LOC_LEN_ERR,
					  notify);
		return true;
	}
	qp->comp.psn = (end_psn + 1) & QPNIC_PSN_MASK;
	if (last)
		qpnic_req_complete_locked(qp, wqe, IB_WC_SUCCESS, notify);
	return true;
}

/*
 * Congestion on the path (a CNP) or a loss (a sequence NAK, an ACK
 * timeout): the window halves, and what follows cuts it no further until
 * a PSN sent after the cut is acknowledged: once per round trip, as TCP
 * reacts, and not again while the QP is idle. The go-back-N of a loss
 * then resends into a smaller window, and the next burst overflows less.
 * Caller holds the SQ lock.
 */
static void qpnic_comp_window_cut(struct qpnic_qp *qp)
{
	if (qpnic_psn_diff(qp->comp.psn, qp->req.cut_psn) <= 0)
		return;
	qp->req.window = max_t(u32, qp->req.window / 2, QPNIC_WINDOW_MIN);
	qp->req.window_acked = 0;
	qp->req.cut_psn = qp->req.max_psn;
	qpnic_count(to_qdev(qp->ibqp.device), QPNIC_CNT_WINDOW_CUTS);
}

/*
 * A CNP: packets of this QP met congestion on their way (the responder
 * saw them marked CE). A forged one can only slow the QP down to
 * QPNIC_WINDOW_MIN. Caller holds a reference; BH context.
 */
void qpnic_comp_cnp(struct qpnic_qp *qp)
{
	unsigned long flags;

	qpnic_count(to_qdev(qp->ibqp.device), QPNIC_CNT_RX_CNPS);
	spin_lock_irqsave(&qp->sq.lock, flags);
	if (!qp->dying && (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD))
		qpnic_comp_window_cut(qp);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}

/* @acked more PSNs are acknowledged: a cut window grows back. */
static void qpnic_comp_window_grow(struct qpnic_qp *qp, u32 acked)
{
	if (qp->req.window >= QPNIC_WINDOW_MAX)
		return;
	qp->req.window_acked += acked;
	if (qp->req.window_acked >= qp->req.window) {
		qp->req.window = min_t(u32, qp->req.window + QPNIC_WINDOW_STEP,
				       QPNIC_WINDOW_MAX);
		qp->req.window_acked = 0;
	}
}

/*
 * An ACK, NAK or READ response for @qp (RC, in RTS, SQD or SQE), from the
 * receive path with a reference on the QP.
 */
void qpnic_comp_rcv(struct qpnic_qp *qp, struct sk_buff *skb,
		    const struct qpnic_pkt *pkt)
{
	u8 syndrome = 0;
	u64 orig = 0;

	if (pkt->flags & QPNIC_OP_AETH)
		syndrome = skb->data[qpnic_hdr_offset(pkt->opcode, QPNIC_OP_AETH)];
	if (pkt->flags & QPNIC_OP_ATMACK)
		orig = get_unaligned_be64(skb->data +
			qpnic_hdr_offset(pkt->opcode, QPNIC_OP_ATMACK));
	qpnic_comp_answer(qp, skb, pkt, syndrome, orig);
}

/*
 * A response whose AETH says @syndrome, and for an ATOMIC ACKNOWLEDGE
 * whose original value is @orig. @skb is read only for a READ
 * response's payload: an ACK may come without one (qpnic_loopback_ack()).
 */
void qpnic_comp_answer(struct qpnic_qp *qp, struct sk_buff *skb,
		       const struct qpnic_pkt *pkt, u8 syndrome, u64 orig)
{
	struct qpnic_dev *qdev = to_qdev(qp->ibqp.device);
	struct qpnic_cq *cq = to_qcq(qp->ibqp.send_cq);
	bool notify = false, progress = false;
	unsigned long flags;
	u32 acked_from;
	s32 acked;

	spin_lock_irqsave(&qp->sq.lock, flags);
	acked_from = qp->comp.psn;
	if (qp->dying || qp->state == IB_QPS_ERR || qp->state == IB_QPS_RESET ||
	    qpnic_psn_diff(pkt->psn, qp->req.max_psn) >= 0) {
		/* nothing was sent with that PSN */
		qpnic_drop(qdev, QPNIC_CNT_RX_DROP_STALE, pkt);
		goto out;
	}
	if (pkt->flags & (QPNIC_OP_READ | QPNIC_OP_ATMACK)) {
		struct qpnic_send_wqe *wqe;

		if ((syndrome & QPNIC_AETH_TYPE_MASK) != QPNIC_AETH_ACK) {
			qpnic_drop(qdev, QPNIC_CNT_RX_DROP_STALE, pkt);
			goto out;
		}
		progress = qpnic_comp_ack_before(qp, pkt->psn, &notify);
		wqe = qpnic_comp_head(qp);
		if (wqe && wqe->opcode != IB_WR_RDMA_READ)
			progress |= qpnic_comp_atomic(qp, pkt, orig, &notify);
		else
			progress |= qpnic_comp_read(qp, skb, pkt, &notify);
		goto done;
	}
	switch (syndrome & QPNIC_AETH_TYPE_MASK) {
	case QPNIC_AETH_ACK:
		progress = qpnic_comp_ack(qp, pkt->psn, &notify);
		if (!progress)	/* acknowledges nothing new */
			qpnic_drop(qdev, QPNIC_CNT_RX_DROP_STALE, pkt);
		break;
	case QPNIC_AETH_RNR_NAK:
		qpnic_count(qdev, QPNIC_CNT_RX_RNR_NAKS);
		progress = qpnic_comp_ack(qp, (pkt->psn - 1) & QPNIC_PSN_MASK, &notify);
		if (!qp->comp.rnr_retries) {
			qpnic_comp_fail(qp, IB_WC_RNR_RETRY_EXC_ERR, &notify);
			goto out;
		}
		if (qp->comp.rnr_retries != 7)	/* 7: retry for ever */
			qp->comp.rnr_retries--;
		trace_qpnic_rnr_wait(&qp->ibqp, pkt->psn, qpnic_rnr_usecs[syndrome & 0x1f],
				     qp->comp.rnr_retries);
		qpnic_req_rewind(qp, pkt->psn);
		qp->req.paused = true;
		qp->comp.timing = false;	/* a timer still set ends at once */
		mod_timer(&qp->comp.resume_timer, jiffies +
			  max(1UL, usecs_to_jiffies(qpnic_rnr_usecs[syndrome & 0x1f])));
		goto out;
	case QPNIC_AETH_NAK:
		progress = qpnic_comp_ack(qp, (pkt->psn - 1) & QPNIC_PSN_MASK, &notify);
		if (!(syndrome & 0x1f)) {
			qpnic_count(qdev, QPNIC_CNT_RX_SEQ_NAKS);
			/* behind what is acknowledged: stale, or forged */
			if (qpnic_psn_diff(pkt->psn, qp->comp.psn) < 0)
				break;
			/* the progress first, so the rewind's mark stays */
			if (progress)
				qpnic_comp_progress(qp);
			progress = false;
			qpnic_comp_window_cut(qp);
			qpnic_comp_rewind(qp, pkt->psn, "sequence NAK");
			break;
		}
		qpnic_count(qdev, QPNIC_CNT_RX_ERROR_NAKS);
		qpnic_comp_fail(qp, qpnic_nak_status(syndrome & 0x1f), &notify);
		goto out;
	default:
		qpnic_drop(qdev, QPNIC_CNT_RX_DROP_STALE, pkt);
		goto out;
	}
done:
	qpnic_req_head_error(qp, &notify);
	/* what was acknowledged is not sent again */
	if (qpnic_psn_diff(qp->req.psn, qp->comp.psn) < 0)
		qpnic_req_rewind(qp, qp->comp.psn);
	if (progress)
		qpnic_comp_progress(qp);
out:
	acked = qpnic_psn_diff(qp->comp.psn, acked_from);
	if (acked > 0)
		qpnic_comp_window_grow(qp, acked);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	if (notify)
		qpnic_cq_notify(cq);
	qpnic_req_kick(qp);
}

static void qpnic_retrans_timeout(struct timer_list *t)
{
	struct qpnic_qp *qp = from_timer(qp, t, comp.retrans_timer);
	struct qpnic_cq *cq = to_qcq(qp->ibqp.send_cq);
	bool notify = false, kick = false;
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	if (qp->dying || !qp->comp.timing)
		goto out;
	if (time_before(jiffies, qp->comp.deadline)) {
		/* set for an earlier deadline an ACK has moved since */
		mod_timer(&qp->comp.retrans_timer, qp->comp.deadline);
		goto out;
	}
	/* the resend that follows starts the clock again */
	qp->comp.timing = false;
	if ((qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD) &&
	    qpnic_comp_outstanding(qp)) {
		if (qpnic_comp_probe_due(qp)) {
			qpnic_comp_probe(qp);
			kick = true;
			goto out;
		}
		qpnic_count(to_qdev(qp->ibqp.device), QPNIC_CNT_ACK_TIMEOUTS);
		if (!qp->comp.retries) {
			qpnic_comp_fail(qp, IB_WC_RETRY_EXC_ERR, &notify);
		} else {
			qp->comp.retries--;
			if (qp->comp.backoff < 6)
				qp->comp.backoff++;
			qp->comp.rewound = false;
			qpnic_comp_window_cut(qp);
			qpnic_comp_rewind(qp, qp->comp.psn, "ACK timeout");
			kick = true;
		}
	}
out:
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	if (notify)
		qpnic_cq_notify(cq);
	if (kick)
		qpnic_req_kick(qp);
}

static void qpnic_resume_timeout(struct timer_list *t)
{
	struct qpnic_qp *qp = from_timer(qp, t, comp.resume_timer);
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	qp->req.paused = false;
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	if (!qp->dying)
		qpnic_req_kick(qp);
}

void qpnic_comp_init(struct qpnic_qp *qp)
{
	timer_setup(&qp->comp.retrans_timer, qpnic_retrans_timeout, 0);
	timer_setup(&qp->comp.resume_timer, qpnic_resume_timeout, 0);
}

/*
 * destroy_qp: no timer runs or is armed after this. The caller set
 * qp->dying under the SQ lock, so nothing arms one again.
 */
void qpnic_comp_stop(struct qpnic_qp *qp)
{
	del_timer_sync(&qp->comp.retrans_timer);
	del_timer_sync(&qp->comp.resume_timer);
}
