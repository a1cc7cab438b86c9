// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory windows, type 1 and type 2B, as librxe drives them: alloc and
 * dealloc through uverbs, BIND_MW WQEs from a user SQ (ibv_bind_mw()
 * posts one for a type 1 window too), LOCAL_INV and SEND with invalidate
 * of a type 2 window, and the responder's R_Key resolution, which takes a
 * window's key to its MR and keeps the access inside the window.
 */
#include "qpnic.h"

/* what a window grants; local write means nothing to it and is ignored */
#define QPNIC_MW_ACCESS (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_ATOMIC)

static bool qpnic_is_mw_key(u32 key)
{
	return key >> 8 > QPNIC_MW_INDEX_BASE;
}

int qpnic_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct qpnic_dev *qdev = to_qdev(ibmw->device);
	struct qpnic_mw *mw = to_qmw(ibmw);
	int err;

	if (udata && udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen)) {
		ibdev_dbg(&qdev->ibdev, "alloc_mw: %zu bytes of unknown driver input\n",
			  udata->inlen);
		return -EOPNOTSUPP;
	}
	err = qpnic_count_get(qdev, &qdev->num_mw, QPNIC_MAX_MW, "MWs");
	if (err)
		return err;
	atomic_set(&mw->inflight, 0);
	/* Reserve the index, then publish the window once it is built. */
	err = xa_alloc_cyclic_irq(&qdev->mws, &mw->index, NULL,
				  XA_LIMIT(QPNIC_MW_INDEX_BASE + 1,
					   QPNIC_MW_INDEX_BASE + QPNIC_MAX_MW),
				  &qdev->next_mw, GFP_KERNEL);
	if (err < 0) {
		ibdev_dbg(&qdev->ibdev, "alloc_mw: no MW index left (%d)\n", err);
		goto err_count;
	}
	mw->key = mw->index << 8 | (get_random_u32() & 0xff);
	ibmw->rkey = mw->key;
	err = xa_err(xa_store_irq(&qdev->mws, mw->index, mw, GFP_KERNEL));
	if (err) {
		ibdev_dbg(&qdev->ibdev, "alloc_mw: publishing MW %#x failed %d\n",
			  mw->key, err);
		xa_erase_irq(&qdev->mws, mw->index);
		goto err_count;
	}
	return 0;

err_count:
	atomic_dec(&qdev->num_mw);
	return err == -EBUSY ? -ENOMEM : err;
}

/*
 * Drop @mw's binding, if any, once no access that passed its check is
 * still under way: none moves a byte through it after this. Caller holds
 * the window xarray's lock, so no new one passes.
 */
static void qpnic_mw_unbind(struct qpnic_dev *qdev, struct qpnic_mw *mw)
{
	lockdep_assert_held(&qdev->mws.xa_lock);
	if (!mw->mr)
		return;
	/* they copy at most a packet with BH off, as for a fast-reg MR */
	while (atomic_read(&mw->inflight))
		cpu_relax();
	qpnic_mr_bind_put(mw->mr);
	mw->mr = NULL;
	mw->addr = 0;
	mw->length = 0;
	mw->access = 0;
	mw->qp_serial = 0;
}

int qpnic_dealloc_mw(struct ib_mw *ibmw)
{
	struct qpnic_dev *qdev = to_qdev(ibmw->device);
	struct qpnic_mw *mw = to_qmw(ibmw);
	unsigned long flags;

	xa_lock_irqsave(&qdev->mws, flags);
	__xa_erase(&qdev->mws, mw->index);
	qpnic_mw_unbind(qdev, mw);
	xa_unlock_irqrestore(&qdev->mws, flags);
	atomic_dec(&qdev->num_mw);
	return 0;
}

/*
 * Execute the BIND_MW @wqe of @qp (an RC or UC QP of a user context),
 * with the IBTA 10.6.7 checks: the window is of the QP's PD and named by
 * its index, the new key keeps that index, a type 2 window is unbound
 * and gets a length, and the MR qualifies (qpnic_mr_bind_get()). A type
 * 1 window is bound again in place, or unbound by a length of 0; a type 2
 * window is bound to this QP. Zero-based windows are not supported.
 * Caller holds the SQ lock; returns the WQE's status.
 */
enum ib_wc_status qpnic_mw_bind(struct qpnic_qp *qp,
				const struct qpnic_send_wqe *wqe)
{
	struct qpnic_dev *qdev = to_qdev(qp->ibqp.device);
	int access = wqe->bind.access & ~IB_ACCESS_LOCAL_WRITE;
	u32 mw_key = wqe->bind.mw_key, key = wqe->rkey;
	u32 len = wqe->bind.length;
	u64 addr = wqe->remote_addr;
	struct qpnic_mr *mr = NULL;
	const char *why = NULL;
	struct qpnic_mw *mw;
	unsigned long flags;

	if (access & ~QPNIC_MW_ACCESS) {
		ibdev_dbg(&qdev->ibdev, "QP %u: BIND_MW of %#x: access %#x (zero-based windows are not supported)\n",
			  qp->ibqp.qp_num, mw_key, wqe->bind.access);
		return IB_WC_MW_BIND_ERR;
	}
	if (len) {
		mr = qpnic_mr_bind_get(qdev, qp->ibqp.pd, wqe->bind.mr_lkey,
				       addr, len, access);
		if (!mr)
			return IB_WC_MW_BIND_ERR;
	}
	xa_lock_irqsave(&qdev->mws, flags);
	mw = qpnic_is_mw_key(mw_key) ? xa_load(&qdev->mws, mw_key >> 8) : NULL;
	if (!mw)
		why = "no such window";
	else if (mw->ibmw.pd != qp->ibqp.pd)
		why = "a window of another PD";
	else if (key >> 8 != mw->index)
		why = "a new key of another index";
	else if (mw->ibmw.type == IB_MW_TYPE_2 && mw->mr)
		why = "a type 2 window that is bound";
	else if (mw->ibmw.type == IB_MW_TYPE_2 && !len)
		why = "a type 2 window of length 0";
	if (why) {
		xa_unlock_irqrestore(&qdev->mws, flags);
		if (mr)
			qpnic_mr_bind_put(mr);
		ibdev_dbg(&qdev->ibdev, "QP %u: BIND_MW of %#x, key %#x, length %u: %s\n",
			  qp->ibqp.qp_num, mw_key, key, len, why);
		return IB_WC_MW_BIND_ERR;
	}
	qpnic_mw_unbind(qdev, mw);	/* a type 1 window's old binding */
	mw->key = key;
	if (mr) {
		mw->mr = mr;
		mw->addr = addr;
		mw->length = len;
		mw->access = access;
		if (mw->ibmw.type == IB_MW_TYPE_2)
			mw->qp_serial = qp->serial;
	}
	xa_unlock_irqrestore(&qdev->mws, flags);
	return IB_WC_SUCCESS;
}

/*
 * Invalidate the type 2 window @key names (IBTA 10.6.7.2.5): its current
 * key, of @qp's PD; a SEND with invalidate (@remote) only on the QP it is
 * bound to. Invalidating an unbound window succeeds. Returns -EINVAL for
 * a key that may not be invalidated, -EACCES for another PD's.
 */
static int qpnic_mw_invalidate(struct qpnic_qp *qp, u32 key, bool remote)
{
	struct qpnic_dev *qdev = to_qdev(qp->ibqp.device);
	const char *why = NULL;
	struct qpnic_mw *mw;
	unsigned long flags;
	int err = -EINVAL;

	xa_lock_irqsave(&qdev->mws, flags);
	mw = xa_load(&qdev->mws, key >> 8);
	if (!mw || mw->key != key) {
		why = "names no window";
	} else if (mw->ibmw.pd != qp->ibqp.pd) {
		why = "a window of another PD";
		err = -EACCES;
	} else if (mw->ibmw.type != IB_MW_TYPE_2) {
		why = "a type 1 window";
	} else if (remote && mw->mr && mw->qp_serial != qp->serial) {
		why = "a window bound to another QP";
	} else {
		qpnic_mw_unbind(qdev, mw);
		err = 0;
	}
	xa_unlock_irqrestore(&qdev->mws, flags);
	if (why)
		ibdev_dbg(&qdev->ibdev, "QP %u: invalidate %#x: %s\n",
			  qp->ibqp.qp_num, key, why);
	return err;
}

/*
 * LOCAL_INV (@remote false) or a received SEND with invalidate of @key on
 * @qp: a type 2 window, or a fast-reg MR, of the QP's PD. Once it returns
 * 0 no byte moves through @key. -EACCES for another PD's, else -EINVAL.
 */
int qpnic_key_invalidate(struct qpnic_qp *qp, u32 key, bool remote)
{
	if (qpnic_is_mw_key(key))
		return qpnic_mw_invalidate(qp, key, remote);
	return qpnic_mr_invalidate(to_qdev(qp->ibqp.device), qp->ibqp.pd, key);
}

/*
 * Resolve @rkey for a remote @access by @qp of [@iova, @iova + @len), or
 * of all it covers if @whole: an MR (qpnic_mr_find()), or a window bound
 * to an MR, which must be of the QP's PD, bound to this QP if type 2,
 * grant @access and cover the whole range.
 */
static bool qpnic_rkey_find(struct qpnic_qp *qp, u32 rkey, u64 iova, u32 len,
			    int access, bool whole, struct qpnic_rkey_ref *ref)
{
	struct qpnic_dev *qdev = to_qdev(qp->ibqp.device);
	struct qpnic_mw *mw;
	unsigned long flags;

	ref->mw = NULL;
	if (!qpnic_is_mw_key(rkey)) {
		ref->mr = qpnic_mr_find(qdev, qp->ibqp.pd, rkey, iova, len, access,
					whole);
		return ref->mr;
	}
	ref->mr = NULL;
	xa_lock_irqsave(&qdev->mws, flags);
	mw = xa_load(&qdev->mws, rkey >> 8);
	/* no sum that can wrap: iova and window may lie anywhere in 64 bits */
	if (mw && mw->mr && mw->key == rkey && mw->ibmw.pd == qp->ibqp.pd &&
	    (mw->ibmw.type == IB_MW_TYPE_1 || mw->qp_serial == qp->serial) &&
	    (mw->access & access) == access &&
	    (whole || (len <= mw->length && iova - mw->addr <= mw->length - len))) {
		atomic_inc(&mw->inflight);
		ref->mw = mw;
		ref->mr = mw->mr;
	}
	xa_unlock_irqrestore(&qdev->mws, flags);
	return ref->mr;
}

/* True with *@ref to pass to qpnic_rkey_put(); false if refused. */
bool qpnic_rkey_get(struct qpnic_qp *qp, u32 rkey, u64 iova, u32 len,
		    int access, struct qpnic_rkey_ref *ref)
{
	return qpnic_rkey_find(qp, rkey, iova, len, access, false, ref);
}

/* The same for all that @rkey covers (a FLUSH of a whole region). */
bool qpnic_rkey_get_whole(struct qpnic_qp *qp, u32 rkey, int access,
			  struct qpnic_rkey_ref *ref)
{
	return qpnic_rkey_find(qp, rkey, 0, 0, access, true, ref);
}

void qpnic_rkey_put(struct qpnic_rkey_ref *ref)
{
	if (ref->mw)
		atomic_dec(&ref->mw->inflight);	/* last touch: an unbind waits */
	else
		qpnic_mr_put(ref->mr);
}
