// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Data movement between memory regions and packets. An MR is found by key
 * with a reference (qpnic_mr_lookup) and checked for PD, access and bounds
 * before a byte moves. User MRs are reached through their pinned pages,
 * fast-reg MRs through the kernel addresses of their page list, the DMA
 * MR of kernel callers through kernel virtual addresses.
 */
#include <linux/highmem.h>
#include <linux/skbuff.h>

#include "qpnic.h"

static void qpnic_copy_chunk(struct qpnic_copy *c, void *addr, u32 n)
{
	if (c->skb) {
		/* the caller bounded the range by the packet's length */
		if (c->to_mr)
			skb_copy_bits(c->skb, c->skb_offset, addr, n);
		else
			skb_store_bits(c->skb, c->skb_offset, addr, n);
		c->skb_offset += n;
		return;
	}
	if (c->to_mr)
		memcpy(addr, c->buf, n);
	else
		memcpy(c->buf, addr, n);
	c->buf += n;
}

/* The byte offset of @iova from the start of @mr's first page. */
static u64 qpnic_mr_offset(const struct qpnic_mr *mr, u64 iova)
{
	if (mr->type == QPNIC_MR_USER)
		return iova - mr->iova + ib_umem_offset(mr->umem);
	return iova - mr->iova + mr->reg_offset;
}

/* Move @len bytes at @iova of @mr, a range qpnic_mr_lookup() checked. */
void qpnic_mr_copy(struct qpnic_mr *mr, u64 iova, u32 len, struct qpnic_copy *c)
{
	u64 off;

	if (mr->type == QPNIC_MR_DMA) {
		qpnic_copy_chunk(c, (void *)(uintptr_t)iova, len);
		return;
	}
	off = qpnic_mr_offset(mr, iova);
	while (len) {
		u32 in_page = off & ~PAGE_MASK;
		u32 n = min_t(u32, len, PAGE_SIZE - in_page);

		if (mr->type == QPNIC_MR_FAST) {
			qpnic_copy_chunk(c, (void *)(uintptr_t)
					 (mr->page_list[off >> PAGE_SHIFT] + in_page), n);
		} else {
			void *va = kmap_local_page(mr->pages[off >> PAGE_SHIFT]);

			qpnic_copy_chunk(c, va + in_page, n);
			kunmap_local(va);
		}
		off += n;
		len -= n;
	}
}

/*
 * Whether the u64 at @iova of @mr is naturally aligned where it lies in
 * memory: in the page (user and fast-reg MRs), or at its kernel address
 * (the DMA MR). uverbs makes a user MR's page offset its iova's, but an
 * atomic that crossed into the next page would corrupt memory: it is
 * checked here.
 */
bool qpnic_mr_aligned_u64(const struct qpnic_mr *mr, u64 iova)
{
	u64 off = mr->type == QPNIC_MR_DMA ? iova : qpnic_mr_offset(mr, iova);

	return !(off & (sizeof(u64) - 1));
}

/*
 * Execute @op on the naturally aligned u64 at @iova of @mr, a range
 * qpnic_mr_lookup() checked, with the CPU's atomics: it is atomic against
 * every other access to that memory, the host's included. @val is the
 * value to swap in, add or write; @compare is CMP_SWAP's. Returns the
 * value that was there before.
 */
u64 qpnic_mr_atomic(struct qpnic_mr *mr, u64 iova, enum qpnic_atomic_op op,
		    u64 val, u64 compare)
{
	void *page = NULL;
	u64 *p, orig;

	u64 off = qpnic_mr_offset(mr, iova);

	/* aligned: the 8 bytes never cross a page */
	if (mr->type == QPNIC_MR_DMA) {
		p = (u64 *)(uintptr_t)iova;
	} else if (mr->type == QPNIC_MR_FAST) {
		p = (u64 *)(uintptr_t)(mr->page_list[off >> PAGE_SHIFT] +
				       (off & ~PAGE_MASK));
	} else {
		page = kmap_local_page(mr->pages[off >> PAGE_SHIFT]);
		p = page + (off & ~PAGE_MASK);
	}
	switch (op) {
	case QPNIC_ATOMIC_CMP_SWAP:
		orig = cmpxchg64(p, compare, val);
		break;
	case QPNIC_ATOMIC_FETCH_ADD:
		orig = atomic64_fetch_add(val, (atomic64_t *)p);
		break;
	default:
		orig = xchg(p, val);
		break;
	}
	if (page)
		kunmap_local(page);
	return orig;
}

/*
 * Copy @len bytes, starting @offset bytes into the SGE list @sge, to or
 * from @c. Returns -EINVAL when the list holds fewer bytes, -EACCES when an
 * SGE's key, PD, access or bounds do not allow the access (nothing of
 * that SGE moves).
 */
int qpnic_sgl_copy(struct qpnic_dev *qdev, struct ib_pd *pd,
		   const struct ib_sge *sge, u32 num_sge, u32 offset, u32 len,
		   struct qpnic_copy *c)
{
	int access = c->to_mr ? IB_ACCESS_LOCAL_WRITE : 0;
	u32 i;

	for (i = 0; i < num_sge && len; i++) {
		/* each SGE is read once, whoever else can see the list */
		const struct ib_sge s = sge[i];
		struct qpnic_mr *mr;
		u32 n;

		if (offset >= s.length) {
			offset -= s.length;
			continue;
		}
		n = min(len, s.length - offset);
		mr = qpnic_mr_lookup(qdev, pd, s.lkey, s.addr + offset, n, access);
		if (!mr)
			return -EACCES;
		qpnic_mr_copy(mr, s.addr + offset, n, c);
		qpnic_mr_put(mr);
		offset = 0;
		len -= n;
	}
	return len ? -EINVAL : 0;
}
