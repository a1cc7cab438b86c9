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
 * the bytes of its element array. @max is the device limit for @capacity,
 * 2^n - 1, so that what a ring really holds (and is reported back) never
 * exceeds it and a second create with the reported value is accepted.
 * Fails with -EINVAL on overflow, before anything is allocated.
 */
static int qpnic_queue_size(struct qpnic_queue *q, u32 capacity, u32 max,
			    u32 elem_size, size_t *bytes)
{
	u32 slots;

	if (capacity > max || max >= (1U << 30) || !is_power_of_2(max + 1) ||
	    !elem_size || elem_size > (1U << 20))
		return -EINVAL;
	slots = roundup_pow_of_two(q->user ? capacity + 1 : max(capacity, 1U));
	q->log2_elem = order_base_2(elem_size);
	q->mask = slots - 1;
	q->wrap = q->user ? q->mask : U32_MAX;
	q->capacity = q->user ? slots - 1 : min(slots, max);
	if (check_shl_overflow((size_t)slots, q->log2_elem, bytes))
		return -EINVAL;
	return 0;
}

/*
 * Memory of a shared ring: order-0 pages, each one held by every user
 * mapping of it (vm_insert_pages takes a page reference), so a process
 * that still maps a ring after its object is destroyed keeps those pages
 * and never sees memory the kernel reuses. The kernel reaches the ring
 * through page_address() (one page) or vmap(). The pages are charged to
 * the creating process's memory cgroup; a charge over memory.max fails
 * the create with -ENOMEM instead of calling the OOM killer.
 */
#define QPNIC_USER_RING_GFP (GFP_KERNEL_ACCOUNT | __GFP_ZERO | \
			     __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

static void qpnic_ring_free(struct qpnic_mmap_entry *ring)
{
	unsigned int i;

	if (ring->npages > 1 && ring->vaddr)
		vunmap(ring->vaddr);
	for (i = 0; i < ring->npages && ring->pages[i]; i++)
		put_page(ring->pages[i]);
	kvfree(ring);
}

/*
 * Pages of margin a user ring's create must leave in the creator's memory
 * cgroup. After the create, the process still maps the ring (a VMA, maybe
 * a page table page) and librxe allocates its own state: ordinary charges
 * that call the cgroup's OOM killer at memory.max. Probing for the margin
 * here (and giving it back at once) makes the create, not those, hit the
 * limit, so a flood ends with ENOMEM rather than an OOM kill.
 */
#define QPNIC_USER_RING_MARGIN	8

static bool qpnic_ring_margin_ok(void)
{
	struct page *pages[QPNIC_USER_RING_MARGIN];
	int i, n;

	for (n = 0; n < QPNIC_USER_RING_MARGIN; n++) {
		pages[n] = alloc_page(QPNIC_USER_RING_GFP & ~__GFP_ZERO);
		if (!pages[n])
			break;
	}
	for (i = 0; i < n; i++)
		__free_page(pages[i]);
	return n == QPNIC_USER_RING_MARGIN;
}

static struct qpnic_mmap_entry *qpnic_ring_alloc(size_t bytes)
{
	unsigned int i, npages = bytes >> PAGE_SHIFT;
	struct qpnic_mmap_entry *ring;

	ring = kvzalloc(struct_size(ring, pages, npages), GFP_KERNEL_ACCOUNT |
			__GFP_RETRY_MAYFAIL | __GFP_NOWARN);
	if (!ring)
		return NULL;
	ring->npages = npages;
	for (i = 0; i < npages; i++) {
		ring->pages[i] = alloc_page(QPNIC_USER_RING_GFP);
		if (!ring->pages[i])
			goto err;
	}
	if (!qpnic_ring_margin_ok())
		goto err;
	if (npages == 1)
		ring->vaddr = page_address(ring->pages[0]);
	else
		ring->vaddr = vmap(ring->pages, npages, VM_MAP, PAGE_KERNEL);
	if (!ring->vaddr)
		goto err;
	return ring;

err:
	qpnic_ring_free(ring);
	return NULL;
}

int qpnic_queue_init(struct qpnic_dev *qdev, struct qpnic_queue *q,
		     u32 capacity, u32 max, u32 elem_size, enum qpnic_queue_dir dir,
		     struct ib_udata *udata, struct mminfo *mi)
{
	struct qpnic_ucontext *uctx;
	struct qpnic_mmap_entry *entry;
	size_t bytes;
	int err;

	memset(q, 0, sizeof(*q));
	q->dir = dir;
	q->user = !!udata;
	err = qpnic_queue_size(q, capacity, max, elem_size, &bytes);
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
	if (bytes >> PAGE_SHIFT > QPNIC_RING_MAX_PAGES) {
		ibdev_dbg(&qdev->ibdev, "ring of %zu bytes exceeds %lu\n", bytes,
			  QPNIC_RING_MAX_PAGES << PAGE_SHIFT);
		return -EINVAL;
	}
	entry = qpnic_ring_alloc(bytes);
	if (!entry) {
		ibdev_dbg(&qdev->ibdev, "no memory for a %zu-byte ring (memory cgroup limit?)\n",
			  bytes);
		return -ENOMEM;
	}
	uctx = rdma_udata_to_drv_context(udata, struct qpnic_ucontext, ibuc);
	err = rdma_user_mmap_entry_insert(&uctx->ibuc, &entry->rdma_entry, bytes);
	if (err) {
		ibdev_dbg(&qdev->ibdev, "no mmap offset for a %zu-byte ring: %d\n",
			  bytes, err);
		qpnic_ring_free(entry);
		return err;
	}
	q->buf = entry->vaddr;
	q->mmap_entry = &entry->rdma_entry;
	mi->offset = rdma_user_mmap_get_offset(q->mmap_entry);
	mi->size = bytes;
	q->buf->log2_elem_size = q->log2_elem;
	q->buf->index_mask = q->mask;
	q->data = q->buf->data;
	return 0;
}

/*
 * A user ring's pages live until the last mapping of them is gone: the
 * entry's mmap_free drops the ring's own page references, and every
 * mapping holds its own.
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
	unsigned long npages;
	int err;

	rdma_entry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rdma_entry) {
		ibdev_dbg(ibuc->device, "mmap: no ring of %lu bytes at offset %#lx (shared mapping)\n",
			  vma->vm_end - vma->vm_start, vma->vm_pgoff << PAGE_SHIFT);
		return -EINVAL;
	}
	entry = container_of(rdma_entry, struct qpnic_mmap_entry, rdma_entry);
	npages = rdma_entry->npages;
	/* The ring is exactly this big: no growing it with mremap. */
	qpnic_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	err = vm_insert_pages(vma, vma->vm_start, entry->pages, &npages);
	if (err)
		ibdev_dbg(ibuc->device, "mmap: mapping the ring failed %d (%lu pages left)\n",
			  err, npages);
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

void qpnic_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct qpnic_mmap_entry *entry =
		container_of(rdma_entry, struct qpnic_mmap_entry, rdma_entry);

	qpnic_ring_free(entry);
}
