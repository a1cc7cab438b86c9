// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rings of 2^n slots, kernel-only or shared with librxe.
 *
 * A ring shared with librxe has the rdma_rxe uapi layout: masked indices,
 * so 2^n slots hold 2^n - 1 elements (one stays empty to tell full from
 * empty). Each side owns one index; the kernel keeps its own copy of both
 * and only ever masks what userspace wrote.
 *
 * A kernel ring's indices are private and run freely (count = prod - cons),
 * so all 2^n slots hold elements: a QP asking for 1024 WRs gets 1024 slots,
 * not 2048.
 */
#include <linux/log2.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "qpnic.h"

/*
 * Size @q for at least @capacity elements of @elem_size bytes and return
 * the bytes of its element array. Fails with -EINVAL on overflow, before
 * anything is allocated.
 */
static int qpnic_queue_size(struct qpnic_queue *q, u32 capacity, u32 elem_size,
			    size_t *bytes)
{
	u32 slots;

	if (capacity >= (1U << 30) || !elem_size || elem_size > (1U << 20))
		return -EINVAL;
	slots = roundup_pow_of_two(q->user ? capacity + 1 : max(capacity, 1U));
	q->log2_elem = order_base_2(elem_size);
	q->mask = slots - 1;
	q->wrap = q->user ? q->mask : U32_MAX;
	q->capacity = q->user ? slots - 1 : slots;
	if (check_shl_overflow((size_t)slots, q->log2_elem, bytes))
		return -EINVAL;
	return 0;
}

/*
 * Memory for a shared ring: small rings (most QPs) are plain pages, which
 * are cheaper to get, map and free than vmalloc space; large rings, or a
 * fragmented machine, fall back to vmalloc.
 */
#define QPNIC_CONTIG_RING_MAX	(16 * PAGE_SIZE)

static void *qpnic_ring_alloc(size_t bytes)
{
	void *buf = NULL;

	if (bytes <= QPNIC_CONTIG_RING_MAX)
		buf = alloc_pages_exact(bytes, GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN);
	return buf ?: vmalloc_user(bytes);
}

static void qpnic_ring_free(void *buf, size_t bytes)
{
	if (is_vmalloc_addr(buf))
		vfree(buf);
	else
		free_pages_exact(buf, bytes);
}

int qpnic_queue_init(struct qpnic_dev *qdev, struct qpnic_queue *q,
		     u32 capacity, u32 elem_size, enum qpnic_queue_dir dir,
		     struct ib_udata *udata, struct mminfo *mi)
{
	struct qpnic_ucontext *uctx;
	struct qpnic_mmap_entry *entry;
	size_t bytes;
	int err;

	memset(q, 0, sizeof(*q));
	q->dir = dir;
	q->user = !!udata;
	err = qpnic_queue_size(q, capacity, elem_size, &bytes);
	if (err) {
		ibdev_dbg(&qdev->ibdev, "ring of %u x %u bytes overflows\n",
			  capacity, elem_size);
		return err;
	}
	if (!udata) {
		/*
		 * Kernel rings are the bare element array, never zeroed: a slot
		 * is read only between cons and prod, after it was written.
		 */
		q->data = kvmalloc(bytes, GFP_KERNEL);
		return q->data ? 0 : -ENOMEM;
	}

	/* Shared rings carry the rxe header and are mmap()ed whole pages. */
	bytes = PAGE_ALIGN(bytes + sizeof(struct rxe_queue_buf));
	q->buf = qpnic_ring_alloc(bytes);
	if (!q->buf)
		return -ENOMEM;
	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry) {
		qpnic_ring_free(q->buf, bytes);
		return -ENOMEM;
	}
	entry->buf = q->buf;
	uctx = rdma_udata_to_drv_context(udata, struct qpnic_ucontext, ibuc);
	err = rdma_user_mmap_entry_insert(&uctx->ibuc, &entry->rdma_entry, bytes);
	if (err) {
		kfree(entry);
		qpnic_ring_free(q->buf, bytes);
		return err;
	}
	q->mmap_entry = &entry->rdma_entry;
	mi->offset = rdma_user_mmap_get_offset(q->mmap_entry);
	mi->size = bytes;
	q->buf->log2_elem_size = q->log2_elem;
	q->buf->index_mask = q->mask;
	q->data = q->buf->data;
	return 0;
}

/*
 * For a user ring the memory lives until the last mapping is gone: the
 * entry's mmap_free releases it.
 */
void qpnic_queue_free(struct qpnic_queue *q)
{
	if (q->mmap_entry)
		rdma_user_mmap_entry_remove(q->mmap_entry);
	else
		kvfree(q->data);
	q->buf = NULL;
	q->data = NULL;
	q->mmap_entry = NULL;
}

/* Refresh the index owned by the other side (userspace) and mask it. */
static void qpnic_queue_load_peer(struct qpnic_queue *q)
{
	if (!q->user)
		return;
	if (q->dir == QPNIC_Q_TO_KERNEL) {
		/* acquire: the elements are visible before their index */
		q->prod = smp_load_acquire(&q->buf->producer_index) & q->mask;
	} else {
		/* acquire: the consumer is done with the slots it hands back */
		q->cons = smp_load_acquire(&q->buf->consumer_index) & q->mask;
	}
}

u32 qpnic_queue_count(struct qpnic_queue *q)
{
	qpnic_queue_load_peer(q);
	return (q->prod - q->cons) & q->wrap;
}

bool qpnic_queue_full(struct qpnic_queue *q)
{
	return qpnic_queue_count(q) >= q->capacity;
}

void *qpnic_queue_slot(const struct qpnic_queue *q, u32 index)
{
	return q->data + ((size_t)(index & q->mask) << q->log2_elem);
}

/* The element at prod is written: publish it. */
void qpnic_queue_produced(struct qpnic_queue *q)
{
	q->prod = (q->prod + 1) & q->wrap;
	if (!q->user)
		return;
	/* release: the element is written before the index shows it */
	smp_store_release(&q->buf->producer_index, q->prod);
}

/* The element at cons is done with: give the slot back. */
void qpnic_queue_consumed(struct qpnic_queue *q)
{
	q->cons = (q->cons + 1) & q->wrap;
	if (!q->user)
		return;
	/* release: the element is read before its slot is handed back */
	smp_store_release(&q->buf->consumer_index, q->cons);
}

/*
 * Move every queued element of @src into the empty ring @dst (a resize).
 * Fails with -EINVAL, copying nothing, when they do not fit.
 */
int qpnic_queue_move(struct qpnic_queue *dst, struct qpnic_queue *src)
{
	u32 count = qpnic_queue_count(src);
	u32 i;

	if (count > dst->capacity)
		return -EINVAL;
	for (i = 0; i < count; i++) {
		memcpy(qpnic_queue_slot(dst, dst->prod + i),
		       qpnic_queue_slot(src, src->cons + i),
		       min(1U << dst->log2_elem, 1U << src->log2_elem));
	}
	dst->prod = count;
	if (dst->user)
		dst->buf->producer_index = count;
	return 0;
}

/* Drop every queued element (QP moved to RESET). */
void qpnic_queue_discard(struct qpnic_queue *q)
{
	qpnic_queue_load_peer(q);
	q->cons = q->prod;
	if (!q->user)
		return;
	/* release: pairs with the producer's acquire of consumer_index */
	smp_store_release(&q->buf->consumer_index, q->cons);
}

int qpnic_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct qpnic_mmap_entry *entry;
	int err;

	rdma_entry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rdma_entry) {
		ibdev_dbg(ibuc->device, "mmap: no ring at offset %#lx\n",
			  vma->vm_pgoff << PAGE_SHIFT);
		return -EINVAL;
	}
	entry = container_of(rdma_entry, struct qpnic_mmap_entry, rdma_entry);
	if (vma->vm_end - vma->vm_start > rdma_entry->npages << PAGE_SHIFT) {
		ibdev_dbg(ibuc->device, "mmap: %lu bytes asked, ring has %zu\n",
			  vma->vm_end - vma->vm_start,
			  rdma_entry->npages << PAGE_SHIFT);
		err = -EINVAL;
		goto out;
	}
	if (is_vmalloc_addr(entry->buf))
		err = remap_vmalloc_range(vma, entry->buf, 0);
	else
		err = remap_pfn_range(vma, vma->vm_start,
				      virt_to_phys(entry->buf) >> PAGE_SHIFT,
				      vma->vm_end - vma->vm_start,
				      vma->vm_page_prot);
	if (err)
		ibdev_dbg(ibuc->device, "mmap: mapping the ring failed %d\n", err);
out:
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

void qpnic_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct qpnic_mmap_entry *entry =
		container_of(rdma_entry, struct qpnic_mmap_entry, rdma_entry);

	qpnic_ring_free(entry->buf, rdma_entry->npages << PAGE_SHIFT);
	kfree(entry);
}
