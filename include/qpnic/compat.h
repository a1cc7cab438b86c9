/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What differs between the kernel series qpnic builds on (6.1 and 6.12,
 * Debian 12 and 13), in one place: the driver and its tests use only the
 * names below, never LINUX_VERSION_CODE. A new series adds its cases here.
 */
#ifndef QPNIC_COMPAT_H
#define QPNIC_COMPAT_H

#include <linux/version.h>
#include <linux/mm.h>
#include <rdma/rdma_user_rxe.h>

/* 6.12 moved the unaligned accessors out of asm/. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

struct ib_udata;
struct uverbs_attr_bundle;

/*
 * create_cq's third argument: the udata until 6.11, then the whole
 * attribute bundle (NULL for a kernel CQ), whose driver_udata it was.
 * The driver takes a struct qpnic_create_cq_arg * and asks for its udata.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#include <rdma/uverbs_ioctl.h>
#define qpnic_create_cq_arg uverbs_attr_bundle

static inline struct ib_udata *qpnic_create_cq_udata(struct qpnic_create_cq_arg *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define qpnic_create_cq_arg ib_udata

static inline struct ib_udata *qpnic_create_cq_udata(struct qpnic_create_cq_arg *udata)
{
	return udata;
}
#endif

/* vm_flags became read-only in 6.3, set through vm_flags_set(). */
static inline void qpnic_vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/* 6.10's __assign_str() takes the source from the event's __string(). */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define qpnic_assign_str(field, src)	__assign_str(field)
#else
#define qpnic_assign_str(field, src)	__assign_str(field, src)
#endif

/*
 * 6.2 gave the uAPI names to IBTA 1.5's FLUSH and ATOMIC WRITE: the device
 * flags that claim them, the access bits a FLUSH needs, and librxe's FLUSH
 * WQE. 6.1 has none of them: its core refuses FLUSH access at MR
 * registration, so FLUSH is offered from 6.2 on (global visibility only:
 * qpnic has no persistent memory to flush to) and refused on 6.1.
 * ATOMIC WRITE works on every series; 6.1 has no name to claim it by.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define QPNIC_ACCESS_FLUSH	(IB_ACCESS_FLUSH_GLOBAL | IB_ACCESS_FLUSH_PERSISTENT)
#define QPNIC_ACCESS_FLUSH_GLOBAL IB_ACCESS_FLUSH_GLOBAL
#define QPNIC_ACCESS_FLUSH_PERSISTENT IB_ACCESS_FLUSH_PERSISTENT
#define QPNIC_DEVICE_FLUSH	IB_DEVICE_FLUSH_GLOBAL
#define QPNIC_DEVICE_ATOMIC_WRITE IB_DEVICE_ATOMIC_WRITE

/*
 * librxe's FLUSH WQE fields (shared memory: each read once); its length
 * is the WQE's dma.length, which every series has.
 */
static inline void qpnic_user_flush_wr(const struct rxe_send_wr *wr, u64 *va,
				       u32 *rkey, u8 *type, u8 *level)
{
	*va = READ_ONCE(wr->wr.flush.remote_addr);
	*rkey = READ_ONCE(wr->wr.flush.rkey);
	*type = READ_ONCE(wr->wr.flush.type);
	*level = READ_ONCE(wr->wr.flush.level);
}
#else
#define QPNIC_ACCESS_FLUSH	0
#define QPNIC_ACCESS_FLUSH_GLOBAL 0
#define QPNIC_ACCESS_FLUSH_PERSISTENT 0
#define QPNIC_DEVICE_FLUSH	0
#define QPNIC_DEVICE_ATOMIC_WRITE 0

static inline void qpnic_user_flush_wr(const struct rxe_send_wr *wr, u64 *va,
				       u32 *rkey, u8 *type, u8 *level)
{
	*va = 0;
	*rkey = 0;
	*type = 0;
	*level = 0;
}
#endif

#endif /* QPNIC_COMPAT_H */
