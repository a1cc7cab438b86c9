/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * qpnic's tracepoints (system "qpnic", /sys/kernel/tracing/events/qpnic):
 * how a QP moves, what is posted and completed, what goes on the wire and
 * what is dropped and why, and why the requester sends again. Each event
 * names its device and QP; Documentation/tracing.md shows how to read them.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM qpnic

#if !defined(QPNIC_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define QPNIC_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>
#include <qpnic/compat.h>
#include <qpnic/wire.h>

#define qpnic_show_qp_state(s)						\
	__print_symbolic(s, { IB_QPS_RESET, "RESET" }, { IB_QPS_INIT, "INIT" },	\
			 { IB_QPS_RTR, "RTR" }, { IB_QPS_RTS, "RTS" },		\
			 { IB_QPS_SQD, "SQD" }, { IB_QPS_SQE, "SQE" },		\
			 { IB_QPS_ERR, "ERR" })

TRACE_EVENT(qpnic_qp_state,
	    TP_PROTO(const struct ib_qp *qp, enum ib_qp_state from, enum ib_qp_state to),
	    TP_ARGS(qp, from, to),
	    TP_STRUCT__entry(__string(dev, dev_name(&qp->device->dev))
			     __field(u32, qpn)
			     __field(int, from)
			     __field(int, to)),
	    TP_fast_assign(qpnic_assign_str(dev, dev_name(&qp->device->dev));
			   __entry->qpn = qp->qp_num;
			   __entry->from = from;
			   __entry->to = to;),
	    TP_printk("%s qpn %u %s -> %s", __get_str(dev), __entry->qpn,
		      qpnic_show_qp_state(__entry->from), qpnic_show_qp_state(__entry->to)));

/* A send WQE taken in: posted by a kernel ULP, or read from a user ring. */
TRACE_EVENT(qpnic_post_send,
	    TP_PROTO(const struct ib_qp *qp, u64 wr_id, u32 opcode, u32 length, bool user),
	    TP_ARGS(qp, wr_id, opcode, length, user),
	    TP_STRUCT__entry(__string(dev, dev_name(&qp->device->dev))
			     __field(u32, qpn)
			     __field(u64, wr_id)
			     __field(u32, opcode)
			     __field(u32, length)
			     __field(bool, user)),
	    TP_fast_assign(qpnic_assign_str(dev, dev_name(&qp->device->dev));
			   __entry->qpn = qp->qp_num;
			   __entry->wr_id = wr_id;
			   __entry->opcode = opcode;
			   __entry->length = length;
			   __entry->user = user;),
	    TP_printk("%s qpn %u wr_id %#llx opcode %u length %u%s", __get_str(dev),
		      __entry->qpn, __entry->wr_id, __entry->opcode, __entry->length,
		      __entry->user ? " (user ring)" : ""));

/* A receive WR a kernel QP posted (a user QP's RQ is its ring's). */
TRACE_EVENT(qpnic_post_recv,
	    TP_PROTO(const struct ib_qp *qp, u64 wr_id, int num_sge),
	    TP_ARGS(qp, wr_id, num_sge),
	    TP_STRUCT__entry(__string(dev, dev_name(&qp->device->dev))
			     __field(u32, qpn)
			     __field(u64, wr_id)
			     __field(int, num_sge)),
	    TP_fast_assign(qpnic_assign_str(dev, dev_name(&qp->device->dev));
			   __entry->qpn = qp->qp_num;
			   __entry->wr_id = wr_id;
			   __entry->num_sge = num_sge;),
	    TP_printk("%s qpn %u wr_id %#llx num_sge %d", __get_str(dev), __entry->qpn,
		      __entry->wr_id, __entry->num_sge));

/* Every work completion, as it is written to its CQ (or lost to an overrun). */
TRACE_EVENT(qpnic_complete,
	    TP_PROTO(const struct ib_cq *cq, const struct ib_wc *wc, bool lost),
	    TP_ARGS(cq, wc, lost),
	    TP_STRUCT__entry(__string(dev, dev_name(&cq->device->dev))
			     __field(u32, qpn)
			     __field(u64, wr_id)
			     __field(int, opcode)
			     __field(int, status)
			     __field(u32, byte_len)
			     __field(bool, lost)),
	    TP_fast_assign(qpnic_assign_str(dev, dev_name(&cq->device->dev));
			   __entry->qpn = wc->qp ? wc->qp->qp_num : 0;
			   __entry->wr_id = wc->wr_id;
			   __entry->opcode = wc->opcode;
			   __entry->status = wc->status;
			   __entry->byte_len = wc->byte_len;
			   __entry->lost = lost;),
	    TP_printk("%s qpn %u wr_id %#llx opcode %d status %d byte_len %u%s",
		      __get_str(dev), __entry->qpn, __entry->wr_id, __entry->opcode,
		      __entry->status, __entry->byte_len,
		      __entry->lost ? " LOST (CQ overrun)" : ""));

/* A packet handed to the IP stack or the loopback queue (at its BTH). */
TRACE_EVENT(qpnic_pkt_send,
	    TP_PROTO(const struct ib_device *dev, const u8 *bth, u32 len),
	    TP_ARGS(dev, bth, len),
	    TP_STRUCT__entry(__string(dev, dev_name(&dev->dev))
			     __field(u8, opcode)
			     __field(u32, dqpn)
			     __field(u32, psn)
			     __field(u32, len)),
	    TP_fast_assign(qpnic_assign_str(dev, dev_name(&dev->dev));
			   __entry->opcode = bth[0];
			   __entry->dqpn = get_unaligned_be32(bth + 4) & 0xffffff;
			   __entry->psn = get_unaligned_be32(bth + 8) & 0xffffff;
			   __entry->len = len;),
	    TP_printk("%s opcode 0x%02x dqpn %u psn %#x len %u", __get_str(dev),
		      __entry->opcode, __entry->dqpn, __entry->psn, __entry->len));

/* A packet that passed the receive checks, on its way to its QP. */
TRACE_EVENT(qpnic_pkt_recv,
	    TP_PROTO(const struct ib_device *dev, const struct qpnic_pkt *pkt),
	    TP_ARGS(dev, pkt),
	    TP_STRUCT__entry(__string(dev, dev_name(&dev->dev))
			     __field(u8, opcode)
			     __field(u32, dqpn)
			     __field(u32, psn)
			     __field(u32, paylen)),
	    TP_fast_assign(qpnic_assign_str(dev, dev_name(&dev->dev));
			   __entry->opcode = pkt->opcode;
			   __entry->dqpn = pkt->dqpn;
			   __entry->psn = pkt->psn;
			   __entry->paylen = pkt->paylen;),
	    TP_printk("%s opcode 0x%02x dqpn %u psn %#x paylen %u", __get_str(dev),
		      __entry->opcode, __entry->dqpn, __entry->psn, __entry->paylen));

/*
 * A packet dropped, with the counter it is counted in (its reason); the
 * header fields when it was parsed that far (pkt is NULL otherwise).
 */
TRACE_EVENT(qpnic_pkt_drop,
	    TP_PROTO(const struct ib_device *dev, const char *reason,
		     const struct qpnic_pkt *pkt),
	    TP_ARGS(dev, reason, pkt),
	    TP_STRUCT__entry(__string(dev, dev_name(&dev->dev))
			     __string(reason, reason)
			     __field(int, opcode)
			     __field(u32, dqpn)
			     __field(u32, psn)),
	    TP_fast_assign(qpnic_assign_str(dev, dev_name(&dev->dev));
			   qpnic_assign_str(reason, reason);
			   __entry->opcode = pkt ? pkt->opcode : -1;
			   __entry->dqpn = pkt ? pkt->dqpn : 0;
			   __entry->psn = pkt ? pkt->psn : 0;),
	    TP_printk("%s %s opcode %d dqpn %u psn %#x", __get_str(dev), __get_str(reason),
		      __entry->opcode, __entry->dqpn, __entry->psn));

/* The requester goes back to @psn and sends from there again, and why. */
TRACE_EVENT(qpnic_retransmit,
	    TP_PROTO(const struct ib_qp *qp, const char *cause, u32 psn),
	    TP_ARGS(qp, cause, psn),
	    TP_STRUCT__entry(__string(dev, dev_name(&qp->device->dev))
			     __field(u32, qpn)
			     __string(cause, cause)
			     __field(u32, psn)),
	    TP_fast_assign(qpnic_assign_str(dev, dev_name(&qp->device->dev));
			   __entry->qpn = qp->qp_num;
			   qpnic_assign_str(cause, cause);
			   __entry->psn = psn;),
	    TP_printk("%s qpn %u from psn %#x: %s", __get_str(dev), __entry->qpn,
		      __entry->psn, __get_str(cause)));

/* An RNR NAK: the requester waits @usecs before sending @psn again. */
TRACE_EVENT(qpnic_rnr_wait,
	    TP_PROTO(const struct ib_qp *qp, u32 psn, unsigned int usecs, int retries_left),
	    TP_ARGS(qp, psn, usecs, retries_left),
	    TP_STRUCT__entry(__string(dev, dev_name(&qp->device->dev))
			     __field(u32, qpn)
			     __field(u32, psn)
			     __field(unsigned int, usecs)
			     __field(int, retries_left)),
	    TP_fast_assign(qpnic_assign_str(dev, dev_name(&qp->device->dev));
			   __entry->qpn = qp->qp_num;
			   __entry->psn = psn;
			   __entry->usecs = usecs;
			   __entry->retries_left = retries_left;),
	    TP_printk("%s qpn %u psn %#x waits %u us (retries left %d, 7: for ever)",
		      __get_str(dev), __entry->qpn, __entry->psn, __entry->usecs,
		      __entry->retries_left));

#endif /* QPNIC_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
