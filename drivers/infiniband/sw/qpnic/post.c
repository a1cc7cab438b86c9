// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Posting: kernel WRs checked and written into the SQ or RQ, librxe's
 * doorbell (its SQ WQEs copied out of the shared ring once, each field
 * read once, and validated like a kernel WR), and the WC opcode of each WR
 * opcode. The QP object, its state machine and its flushes are qp.c's.
 */
#include "qpnic.h"
#include "trace.h"

enum ib_wc_opcode qpnic_wr_to_wc_opcode(u32 opcode)
{
	switch (opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case QPNIC_WR_ATOMIC_WRITE:
		return QPNIC_WC_ATOMIC_WRITE;
	case QPNIC_WR_FLUSH:
		return QPNIC_WC_FLUSH;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	default:
		return IB_WC_SEND;
	}
}

static bool qpnic_opcode_ok(enum ib_qp_type type, u32 op, bool user)
{
	switch (op) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		return true;
	case IB_WR_SEND_WITH_INV:	/* the peer invalidates: RC only */
		return type == IB_QPT_RC;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return type == IB_QPT_RC || type == IB_QPT_UC;
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return type == IB_QPT_RC;
	case QPNIC_WR_ATOMIC_WRITE:	/* 6.1 has no kernel opcode for it */
		return user && type == IB_QPT_RC;
	case QPNIC_WR_FLUSH:		/* no kernel WR carries its FETH */
		return user && type == IB_QPT_RC && QPNIC_DEVICE_FLUSH != 0;
	case IB_WR_REG_MR:		/* the WR names a kernel MR object */
		return !user && (type == IB_QPT_RC || type == IB_QPT_UC);
	case IB_WR_BIND_MW:		/* windows are user objects */
		return user && (type == IB_QPT_RC || type == IB_QPT_UC);
	case IB_WR_LOCAL_INV:
		return type == IB_QPT_RC || type == IB_QPT_UC;
	default:
		return false;
	}
}

#define QPNIC_SEND_FLAGS (IB_SEND_FENCE | IB_SEND_SIGNALED | IB_SEND_SOLICITED | \
			  IB_SEND_INLINE)

/*
 * Copy one WQE librxe wrote (@u, shared memory) into @k, reading each
 * field once and validating the copy as post_send validates a kernel WR.
 * A WQE that fails is kept with status IB_WC_LOC_QP_OP_ERR: it completes
 * so in its turn.
 */
static void qpnic_sq_copy_wqe(struct qpnic_qp *qp, const struct rxe_send_wqe *u,
			      struct qpnic_send_wqe *k)
{
	enum ib_qp_type type = qp->ibqp.qp_type;
	u32 opcode = READ_ONCE(u->wr.opcode);
	u32 flags = READ_ONCE(u->wr.send_flags);
	u64 len = 0;
	u32 i, n;

	memset(k, 0, sizeof(*k));
	k->wr_id = READ_ONCE(u->wr.wr_id);
	k->opcode = opcode;
	k->send_flags = flags & QPNIC_SEND_FLAGS;
	if (qp->sig_all)
		k->send_flags |= IB_SEND_SIGNALED;
	if (!qpnic_opcode_ok(type, opcode, true) || (flags & ~QPNIC_SEND_FLAGS))
		goto invalid;
	k->ex.imm_data = READ_ONCE(u->wr.ex.imm_data);
	switch (opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		k->remote_addr = READ_ONCE(u->wr.wr.rdma.remote_addr);
		k->rkey = READ_ONCE(u->wr.wr.rdma.rkey);
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		k->remote_addr = READ_ONCE(u->wr.wr.atomic.remote_addr);
		k->rkey = READ_ONCE(u->wr.wr.atomic.rkey);
		k->atomic.compare_add = READ_ONCE(u->wr.wr.atomic.compare_add);
		k->atomic.swap = READ_ONCE(u->wr.wr.atomic.swap);
		break;
	case IB_WR_LOCAL_INV:		/* the key is in ex, read above */
		return;
	case IB_WR_BIND_MW:
		k->remote_addr = READ_ONCE(u->wr.wr.mw.addr);
		len = READ_ONCE(u->wr.wr.mw.length);
		k->rkey = READ_ONCE(u->wr.wr.mw.rkey);
		k->bind.mw_key = READ_ONCE(u->wr.wr.mw.mw_rkey);
		k->bind.mr_lkey = READ_ONCE(u->wr.wr.mw.mr_lkey);
		k->bind.access = READ_ONCE(u->wr.wr.mw.access);
		k->bind.length = len;
		/* no MR is that long: a bind past its MR */
		if (len > U32_MAX)
			k->status = IB_WC_MW_BIND_ERR;
		return;
	case QPNIC_WR_FLUSH:
		qpnic_user_flush_wr(&u->wr, &k->remote_addr, &k->rkey,
				    &k->flush.type, &k->flush.level);
		k->flush.length = READ_ONCE(u->dma.length);
		if (!qpnic_feth_valid(k->flush.type, k->flush.level))
			goto invalid;
		k->send_flags &= ~IB_SEND_INLINE;
		return;
	case QPNIC_WR_ATOMIC_WRITE:
		/* librxe leaves the 8 bytes where inline data goes */
		if (qp->max_inline < sizeof(u64))
			goto invalid;
		k->remote_addr = READ_ONCE(u->wr.wr.rdma.remote_addr);
		k->rkey = READ_ONCE(u->wr.wr.rdma.rkey);
		memcpy(&k->atomic.swap, u->dma.inline_data, sizeof(u64));
		k->length = sizeof(u64);
		k->send_flags &= ~IB_SEND_INLINE;
		return;
	default:
		if (type == IB_QPT_UD) {
			k->ud.remote_qpn = READ_ONCE(u->wr.wr.ud.remote_qpn);
			k->ud.remote_qkey = READ_ONCE(u->wr.wr.ud.remote_qkey);
			k->ud.pkey_index = READ_ONCE(u->wr.wr.ud.pkey_index);
			k->ud.ah_num = READ_ONCE(u->wr.wr.ud.ah_num);
		}
		break;
	}
	if (flags & IB_SEND_INLINE) {
		n = READ_ONCE(u->dma.length);
		/* READs and atomics have no payload of their own to inline */
		if (n > qp->max_inline || opcode == IB_WR_RDMA_READ ||
		    opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
		    opcode == IB_WR_ATOMIC_FETCH_AND_ADD)
			goto invalid;
		memcpy(k->inline_data, u->dma.inline_data, n);
		k->length = n;
		return;
	}
	n = READ_ONCE(u->dma.num_sge);
	if (n > qp->sq.max_sge)
		goto invalid;
	for (i = 0; i < n; i++) {
		k->sge[i].addr = READ_ONCE(u->dma.sge[i].addr);
		k->sge[i].length = READ_ONCE(u->dma.sge[i].length);
		k->sge[i].lkey = READ_ONCE(u->dma.sge[i].lkey);
		len += k->sge[i].length;
	}
	k->num_sge = n;
	if (len > QPNIC_MAX_MSG_SIZE)
		goto invalid;
	k->length = len;
	if ((opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	     opcode == IB_WR_ATOMIC_FETCH_AND_ADD) && (n != 1 || len != 8))
		goto invalid;
	return;
invalid:
	ibdev_dbg(qp->ibqp.device, "QP %u: user WQE refused: opcode %u flags %#x%s\n",
		  qp->ibqp.qp_num, opcode, flags,
		  opcode == QPNIC_WR_FLUSH && QPNIC_DEVICE_FLUSH == 0 ?
		  " (FLUSH needs a 6.2 or later kernel)" : "");
	k->num_sge = 0;
	k->length = 0;
	k->status = IB_WC_LOC_QP_OP_ERR;
}

/*
 * The WQEs librxe queued that are not copied yet, reading the producer
 * index (once per doorbell or flush: the count bounds its work). Caller
 * holds the SQ lock.
 */
u32 qpnic_sq_to_copy(struct qpnic_qp *qp)
{
	struct qpnic_queue *q = &qp->sq.queue;
	u32 queued = qpnic_queue_count(q);
	u32 done = (qp->sq.copied - q->cons) & q->wrap;

	return queued > done ? queued - done : 0;
}

/*
 * Take in at most @max of the WQEs queued up to the producer index last
 * read; returns how many. Caller holds the SQ lock.
 */
u32 qpnic_sq_copy_in(struct qpnic_qp *qp, u32 max)
{
	struct qpnic_queue *q = &qp->sq.queue;
	u32 queued = (q->prod - q->cons) & q->wrap;
	u32 done = (qp->sq.copied - q->cons) & q->wrap;
	u32 n;

	/* a producer index moved back leaves what was copied in place */
	if (done >= queued)
		return 0;
	max = min(max, queued - done);
	for (n = 0; n < max; n++, done++) {
		u32 index = (q->cons + done) & q->wrap;
		struct qpnic_send_wqe *wqe = qpnic_sq_wqe(qp, index);

		qpnic_sq_copy_wqe(qp, qpnic_queue_slot(q, index), wqe);
		trace_qpnic_post_send(&qp->ibqp, wqe->wr_id, wqe->opcode,
				      wqe->length, true);
	}
	qp->sq.copied = (q->cons + done) & q->wrap;
	return n;
}

static int qpnic_check_send_wr(struct qpnic_dev *qdev, struct qpnic_qp *qp,
			       const struct ib_send_wr *wr)
{
	enum ib_qp_type type = qp->ibqp.qp_type;
	u64 len = 0;
	int i;

	if (!qpnic_opcode_ok(type, wr->opcode, false)) {
		ibdev_dbg(&qdev->ibdev, "post_send: opcode %d invalid or not supported on QP type %d\n",
			  wr->opcode, type);
		return -EINVAL;
	}
	if (wr->send_flags & ~QPNIC_SEND_FLAGS) {
		ibdev_dbg(&qdev->ibdev, "post_send: send_flags %#x not supported\n",
			  wr->send_flags);
		return -EINVAL;
	}
	/* local operations carry no payload: their SGE list is not read */
	if (wr->opcode == IB_WR_LOCAL_INV)
		return 0;
	if (wr->opcode == IB_WR_REG_MR) {
		if (!reg_wr(wr)->mr || reg_wr(wr)->mr->device != &qdev->ibdev) {
			ibdev_dbg(&qdev->ibdev, "post_send: REG_MR without an MR of this device\n");
			return -EINVAL;
		}
		return 0;
	}
	/* The SGE count is bounded before any SGE is read. */
	if (wr->num_sge < 0 ||
	    wr->num_sge > ((wr->send_flags & IB_SEND_INLINE) ? QPNIC_MAX_SGE :
			   qp->sq.max_sge)) {
		ibdev_dbg(&qdev->ibdev, "post_send: num_sge %d, max_send_sge %u (inline %u)\n",
			  wr->num_sge, qp->sq.max_sge, QPNIC_MAX_SGE);
		return -EINVAL;
	}
	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	/* READs and atomics have no payload of their own to inline */
	if ((wr->send_flags & IB_SEND_INLINE) &&
	    (wr->opcode == IB_WR_RDMA_READ || len > qp->max_inline ||
	     wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	     wr->opcode == IB_WR_ATOMIC_FETCH_AND_ADD)) {
		ibdev_dbg(&qdev->ibdev, "post_send: inline %llu bytes, opcode %d, max_inline %u\n",
			  len, wr->opcode, qp->max_inline);
		return -EINVAL;
	}
	if (len > QPNIC_MAX_MSG_SIZE) {
		ibdev_dbg(&qdev->ibdev, "post_send: %llu bytes exceed max_msg_sz %u\n",
			  len, QPNIC_MAX_MSG_SIZE);
		return -EINVAL;
	}
	if ((type == IB_QPT_UD || type == IB_QPT_GSI) && !ud_wr(wr)->ah) {
		ibdev_dbg(&qdev->ibdev, "post_send: UD WR without an AH\n");
		return -EINVAL;
	}
	if ((wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	     wr->opcode == IB_WR_ATOMIC_FETCH_AND_ADD) &&
	    (wr->num_sge != 1 || len != 8)) {
		ibdev_dbg(&qdev->ibdev, "post_send: atomic needs one 8-byte SGE (%d, %llu)\n",
			  wr->num_sge, len);
		return -EINVAL;
	}
	return 0;
}

/* Copy a kernel WR into the SQ slot @wqe. */
static void qpnic_build_send_wqe(struct qpnic_qp *qp, const struct ib_send_wr *wr,
				 struct qpnic_send_wqe *wqe)
{
	u32 len = 0;
	int i;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->send_flags = wr->send_flags;
	if (qp->sig_all)
		wqe->send_flags |= IB_SEND_SIGNALED;
	if (wr->opcode == IB_WR_SEND_WITH_IMM ||
	    wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		wqe->ex.imm_data = wr->ex.imm_data;
	else if (wr->opcode == IB_WR_SEND_WITH_INV)
		wqe->ex.invalidate_rkey = wr->ex.invalidate_rkey;

	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		wqe->remote_addr = rdma_wr(wr)->remote_addr;
		wqe->rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		wqe->remote_addr = atomic_wr(wr)->remote_addr;
		wqe->rkey = atomic_wr(wr)->rkey;
		wqe->atomic.compare_add = atomic_wr(wr)->compare_add;
		wqe->atomic.swap = atomic_wr(wr)->swap;
		break;
	case IB_WR_LOCAL_INV:
		wqe->ex.invalidate_rkey = wr->ex.invalidate_rkey;
		return;
	case IB_WR_REG_MR:
		/* key and access are taken when it executes, in SQ order */
		wqe->reg.mr = to_qmr(reg_wr(wr)->mr);
		wqe->reg.key = reg_wr(wr)->key;
		wqe->reg.access = reg_wr(wr)->access;
		return;
	default:
		if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI) {
			wqe->ud.remote_qpn = ud_wr(wr)->remote_qpn;
			wqe->ud.remote_qkey = ud_wr(wr)->remote_qkey;
			wqe->ud.pkey_index = ud_wr(wr)->pkey_index;
			wqe->ud.ah_num = to_qah(ud_wr(wr)->ah)->ah_num;
		}
		break;
	}

	if (wr->send_flags & IB_SEND_INLINE) {
		/* Virtual DMA: an SGE address is a kernel virtual address. */
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(wqe->inline_data + len,
			       (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
	} else {
		for (i = 0; i < wr->num_sge; i++) {
			wqe->sge[i] = wr->sg_list[i];
			len += wr->sg_list[i].length;
		}
		wqe->num_sge = wr->num_sge;
	}
	wqe->length = len;
}

/* States in which the send queue takes new work (IB spec 10.3.1). */
static bool qpnic_sq_open(enum ib_qp_state state)
{
	return state == IB_QPS_RTS || state == IB_QPS_SQD ||
	       state == IB_QPS_SQE || state == IB_QPS_ERR;
}

static int qpnic_user_doorbell(struct qpnic_dev *qdev, struct qpnic_qp *qp)
{
	enum ib_qp_state state;
	unsigned long flags;
	u32 budget = 0, n;

	spin_lock_irqsave(&qp->sq.lock, flags);
	state = qp->state;
	/*
	 * librxe has already queued the WRs it rings for; the error it
	 * returns says they were not posted, so take them back out.
	 */
	if (!qpnic_sq_open(state)) {
		qpnic_queue_discard(&qp->sq.queue);
		qp->sq.copied = qp->sq.queue.cons;
	} else if (!qpnic_sq_flushing(state)) {
		budget = qpnic_sq_to_copy(qp);
		budget -= qpnic_sq_copy_in(qp, min_t(u32, budget, QPNIC_WQE_BATCH));
	}
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	/* the rest in steps, the requester sending what is in meanwhile */
	while (budget) {
		qpnic_req_kick(qp);
		spin_lock_irqsave(&qp->sq.lock, flags);
		n = qpnic_sq_open(qp->state) && !qpnic_sq_flushing(qp->state) ?
		    qpnic_sq_copy_in(qp, min_t(u32, budget, QPNIC_WQE_BATCH)) : 0;
		spin_unlock_irqrestore(&qp->sq.lock, flags);
		if (!n)
			break;
		budget -= n;
	}
	if (!qpnic_sq_open(state)) {
		ibdev_dbg(&qdev->ibdev, "post_send: QP %u in state %d is not ready to send\n",
			  qp->ibqp.qp_num, state);
		return -EINVAL;
	}
	/*
	 * The requester takes the copies; in error they flush, and so do the
	 * receives librxe posted since the last flush.
	 */
	if (qpnic_sq_flushing(state)) {
		qpnic_qp_flush(qp, true);
		qpnic_qp_flush(qp, false);
	} else {
		qpnic_req_kick(qp);
	}
	return 0;
}

int qpnic_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct qpnic_dev *qdev = to_qdev(ibqp->device);
	struct qpnic_qp *qp = to_qqp(ibqp);
	struct qpnic_send_wqe *wqe;
	unsigned long flags;
	bool flush;
	int err = 0;

	if (qp->user) {
		if (wr) {
			ibdev_dbg(&qdev->ibdev, "post_send: user QP %u posts through its ring\n",
				  ibqp->qp_num);
			*bad_wr = wr;
			return -EOPNOTSUPP;
		}
		return qpnic_user_doorbell(qdev, qp);
	}

	spin_lock_irqsave(&qp->sq.lock, flags);
	if (qp->dying) {
		spin_unlock_irqrestore(&qp->sq.lock, flags);
		ibdev_dbg(&qdev->ibdev, "post_send: QP %u is being destroyed\n",
			  ibqp->qp_num);
		*bad_wr = wr;
		return -EINVAL;
	}
	if (!qpnic_sq_open(qp->state)) {
		ibdev_dbg(&qdev->ibdev, "post_send: QP %u in state %d is not ready to send\n",
			  ibqp->qp_num, qp->state);
		err = -EINVAL;
		*bad_wr = wr;
		goto out;
	}
	for (; wr; wr = wr->next) {
		err = qpnic_check_send_wr(qdev, qp, wr);
		if (!err && qpnic_queue_full(&qp->sq.queue)) {
			ibdev_dbg(&qdev->ibdev, "post_send: QP %u send queue full (%u WRs)\n",
				  ibqp->qp_num, qp->sq.max_wr);
			err = -ENOMEM;
		}
		if (err) {
			*bad_wr = wr;
			break;
		}
		wqe = qpnic_queue_slot(&qp->sq.queue, qp->sq.queue.prod);
		qpnic_build_send_wqe(qp, wr, wqe);
		trace_qpnic_post_send(ibqp, wqe->wr_id, wqe->opcode, wqe->length,
				      false);
		qpnic_queue_produced(&qp->sq.queue);
	}
out:
	flush = qpnic_sq_flushing(qp->state);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	if (flush)
		qpnic_qp_flush(qp, true);
	else
		qpnic_req_kick_posted(qp);
	return err;
}

/* Validate @wr against @max_sge and queue it; caller holds the ring's lock. */
int qpnic_recv_wqe_write(struct qpnic_queue *q, u32 max_sge,
			 const struct ib_recv_wr *wr)
{
	struct rxe_recv_wqe *wqe;
	u32 len = 0;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > max_sge)
		return -EINVAL;
	if (qpnic_queue_full(q))
		return -ENOMEM;
	wqe = qpnic_queue_slot(q, q->prod);
	wqe->wr_id = wr->wr_id;
	for (i = 0; i < wr->num_sge; i++) {
		wqe->dma.sge[i].addr = wr->sg_list[i].addr;
		wqe->dma.sge[i].length = wr->sg_list[i].length;
		wqe->dma.sge[i].lkey = wr->sg_list[i].lkey;
		len += wr->sg_list[i].length;
	}
	wqe->dma.num_sge = wr->num_sge;
	wqe->dma.length = len;
	wqe->dma.resid = len;
	wqe->dma.cur_sge = 0;
	wqe->dma.sge_offset = 0;
	qpnic_queue_produced(q);
	return 0;
}

int qpnic_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct qpnic_dev *qdev = to_qdev(ibqp->device);
	struct qpnic_qp *qp = to_qqp(ibqp);
	unsigned long flags;
	bool flush;
	int err = 0;

	if (ibqp->srq) {
		ibdev_dbg(&qdev->ibdev, "post_recv: QP %u receives through its SRQ\n",
			  ibqp->qp_num);
		*bad_wr = wr;
		return -EINVAL;
	}
	if (qp->user) {
		if (!wr)
			return 0;
		ibdev_dbg(&qdev->ibdev, "post_recv: user QP %u posts through its ring\n",
			  ibqp->qp_num);
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}

	spin_lock_irqsave(&qp->rq.lock, flags);
	if (READ_ONCE(qp->dying)) {
		spin_unlock_irqrestore(&qp->rq.lock, flags);
		ibdev_dbg(&qdev->ibdev, "post_recv: QP %u is being destroyed\n",
			  ibqp->qp_num);
		*bad_wr = wr;
		return -EINVAL;
	}
	if (qp->state == IB_QPS_RESET) {
		ibdev_dbg(&qdev->ibdev, "post_recv: QP %u is in RESET\n", ibqp->qp_num);
		err = -EINVAL;
		*bad_wr = wr;
		goto out;
	}
	for (; wr; wr = wr->next) {
		err = qpnic_recv_wqe_write(&qp->rq.queue, qp->rq.max_sge, wr);
		if (err) {
			ibdev_dbg(&qdev->ibdev, "post_recv: QP %u: %s (num_sge %d, max %u, %u WRs)\n",
				  ibqp->qp_num, err == -ENOMEM ? "queue full" : "bad num_sge",
				  wr->num_sge, qp->rq.max_sge, qp->rq.max_wr);
			*bad_wr = wr;
			break;
		}
		trace_qpnic_post_recv(ibqp, wr->wr_id, wr->num_sge);
	}
out:
	flush = qp->state == IB_QPS_ERR;
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	if (flush)
		qpnic_qp_flush(qp, false);
	return err;
}
