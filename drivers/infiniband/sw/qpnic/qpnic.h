/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * qpnic: RoCEv2 queue pairs on any Ethernet netdev.
 *
 * Internal interfaces shared by the files of the module.
 */
#ifndef QPNIC_H
#define QPNIC_H

#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>
#include <qpnic/compat.h>
#include <qpnic/qpnic.h>
#include <qpnic/wire.h>

#define QPNIC_UDP_PORT		4791
/* librxe (rdma-core) checks this against the kernel's uverbs ABI version */
#define QPNIC_UVERBS_ABI_VERSION 2
#define QPNIC_VENDOR_ID		0xffffff	/* no IEEE OUI: a software device */
#define QPNIC_GSI_QPN		1
#define QPNIC_MCAST_QPN		0xffffff	/* BTH DestQP of a multicast packet */
#define QPNIC_FIRST_QPN		16
/*
 * Packets to a GID of the device itself wait at most this many to a
 * device (a few MB): past it they are dropped as a full NIC queue drops
 * them (RC sends them again), so no sender can queue memory without bound.
 */
#define QPNIC_LOOPBACK_MAX	1024
#define QPNIC_LOOPBACK_BUDGET	256	/* packets a deliverer takes in a go */
#define QPNIC_LOOPBACK_LANES	8	/* a power of 2 */
/*
 * The most payload one loopback segment carries (see qpnic_lo_cb): 16
 * packets at a 1024-byte MTU, in page fragments (no high-order atomic
 * allocation).
 */
#define QPNIC_LO_SEG_BYTES	16384

/* Device limits, reported by query_device and enforced by every verb. */
#define QPNIC_MAX_QP		0x100000U
#define QPNIC_MAX_QP_WR		16383	/* ring limits are 2^n - 1 (queue.c) */
#define QPNIC_MAX_SGE		32
#define QPNIC_MAX_INLINE	512
#define QPNIC_MAX_CQ		0x100000U
#define QPNIC_MAX_CQE		0xfffffU
#define QPNIC_MAX_PD		0x100000U
#define QPNIC_MAX_MR		0x100000U
#define QPNIC_MAX_MW		0x100000U
/* a window's key index lies above every MR's: a key names one kind only */
#define QPNIC_MW_INDEX_BASE	0x200000U
#define QPNIC_MAX_SRQ		0x40000U
#define QPNIC_MAX_SRQ_WR	16383
/* how long destroy_qp lets a consumer poll what it was told of (cq.c) */
#define QPNIC_DESTROY_POLL_WAIT	HZ
#define QPNIC_MAX_AH		0x100000U
#define QPNIC_MAX_MCAST_GRP	8192
#define QPNIC_MAX_MCAST_QP_ATTACH 56
#define QPNIC_MAX_RD_ATOMIC	128
#define QPNIC_MAX_FAST_REG_PAGES 512	/* RDS asks 257, ib_srp up to 512 */
#define QPNIC_GID_TBL_LEN	128
/*
 * 1 GiB: at the 256-byte path MTU a message spans 2^22 PSNs, so with the
 * requester's window it stays inside the 2^23 half of PSN space that
 * signed PSN distances need.
 */
#define QPNIC_MAX_MSG_SIZE	0x40000000U

/*
 * FLUSH and ATOMIC WRITE: librxe posts them (IBV_WR_FLUSH,
 * IBV_WR_ATOMIC_WRITE) and polls their completions by these numbers;
 * 6.1's uapi has no names for them.
 */
#define QPNIC_WR_FLUSH		14
#define QPNIC_WR_ATOMIC_WRITE	15
#define QPNIC_WC_FLUSH		8
#define QPNIC_WC_ATOMIC_WRITE	9
/* A user ring's pages: the largest ring (a CQ of 2^20 64-byte CQEs) + header */
#define QPNIC_RING_MAX_PAGES	(16384UL + 1)

/* Port counters (stats.c names them); each drop counter names its reason. */
enum qpnic_counter {
	QPNIC_CNT_RX_PACKETS,
	QPNIC_CNT_RX_ICRC_ERRORS,
	QPNIC_CNT_RX_DROP_MALFORMED,
	QPNIC_CNT_RX_DROP_OPCODE,
	QPNIC_CNT_RX_DROP_PKEY,
	QPNIC_CNT_RX_DROP_UNKNOWN_QP,
	QPNIC_CNT_RX_DROP_QP_TYPE,
	QPNIC_CNT_RX_DROP_QP_STATE,
	QPNIC_CNT_RX_DROP_QKEY,
	QPNIC_CNT_RX_DROP_NO_RECV_WQE,
	QPNIC_CNT_TX_PACKETS,
	QPNIC_CNT_TX_DROP_NO_ROUTE,
	QPNIC_CNT_TX_DROP_NO_MEM,
	QPNIC_CNT_TX_DROP_STACK,
	QPNIC_CNT_TX_STACK_FULL,
	QPNIC_CNT_LOOPBACK_PACKETS,
	QPNIC_CNT_LOOPBACK_DIRECT_ACKS,
	QPNIC_CNT_TX_RETRANSMITS,
	QPNIC_CNT_ACK_TIMEOUTS,
	QPNIC_CNT_ACK_PROBES,
	QPNIC_CNT_TX_RNR_NAKS,
	QPNIC_CNT_RX_RNR_NAKS,
	QPNIC_CNT_TX_ERROR_NAKS,
	QPNIC_CNT_RX_ERROR_NAKS,
	QPNIC_CNT_RX_SEQ_NAKS,
	QPNIC_CNT_RX_OUT_OF_SEQUENCE,
	QPNIC_CNT_RX_DUP_REQUESTS,
	QPNIC_CNT_RX_DROP_STALE,
	QPNIC_CNT_RX_MCAST,
	QPNIC_CNT_LOOPBACK_DROPS,
	QPNIC_CNT_RX_UC_DROPS,
	QPNIC_CNT_RX_ECN_MARKED,
	QPNIC_CNT_TX_CNPS,
	QPNIC_CNT_RX_CNPS,
	QPNIC_CNT_WINDOW_CUTS,
	QPNIC_NUM_COUNTERS
};

struct qpnic_counters {
	u64 val[QPNIC_NUM_COUNTERS];
};

/*
 * One lane of a device's loopback packets: what goes to one set of
 * destination QPs in one direction (requests, or the answers to them).
 * Bit 0 of @busy: a deliverer holds the lane.
 */
struct qpnic_lo_lane {
	struct sk_buff_head q;
	unsigned long busy;
} ____cacheline_aligned_in_smp;

struct qpnic_dev {
	struct ib_device ibdev;
	struct list_head list;		/* qpnic_devices (device.c) */
	struct qpnic_counters __percpu *counters;
	struct xarray qps;		/* qpn -> struct qpnic_qp, QP1 included */
	u32 next_qpn;			/* cyclic allocation cursor */
	struct xarray mrs;		/* key index -> struct qpnic_mr */
	u32 next_mr;
	struct xarray mws;		/* key index -> struct qpnic_mw */
	u32 next_mw;
	atomic64_t qp_serial;		/* names a QP a type 2 window is bound to */
	struct xarray ahs;		/* user AH numbers -> struct qpnic_ah */
	u32 next_ah;
	struct xarray srqs;
	u32 next_srq;
	struct mutex mcast_lock;	/* attach/detach against each other */
	spinlock_t mcast_rx_lock;	/* mcast_groups against the receive path */
	struct list_head mcast_groups;
	u32 mtu;			/* the netdev's, as an IB MTU in bytes */
	/*
	 * Packets to a GID of this device, in lanes by destination QP and
	 * direction: each lane delivered in order by one deliverer at a
	 * time, from the work item or inline where a sender may (net.c)
	 */
	struct qpnic_lo_lane lo_lanes[QPNIC_LOOPBACK_LANES];
	atomic_t lo_queued;		/* packets in the lanes, segments' all */
	struct work_struct loopback_work;
	atomic_t num_pd, num_cq, num_qp, num_srq, num_mr, num_mw, num_ah;
};

/*
 * A ring in rdma_rxe's uapi layout (struct rxe_queue_buf), so librxe can
 * share it. The kernel keeps its own indices here and never trusts the
 * ring's copy of the index that the other side owns beyond masking it.
 */
enum qpnic_queue_dir {
	QPNIC_Q_TO_KERNEL,	/* SQ, RQ, SRQ: the poster produces */
	QPNIC_Q_FROM_KERNEL,	/* CQ: the kernel produces */
};

struct qpnic_queue {
	u8 *data;			/* the elements */
	struct rxe_queue_buf *buf;	/* user rings: shared header + data */
	struct rdma_user_mmap_entry *mmap_entry;	/* user rings only */
	u32 mask;		/* slots - 1, for addressing a slot */
	u32 wrap;		/* index mask: @mask (user), U32_MAX (kernel) */
	u32 capacity;		/* elements the ring holds */
	u32 log2_elem;
	u32 prod;
	u32 cons;
	enum qpnic_queue_dir dir;
	bool user;
};

/* The pages of a user ring, owned by its mmap entry (see queue.c). */
struct qpnic_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	void *vaddr;			/* the kernel's mapping of @pages */
	unsigned int npages;
	struct page *pages[];
};

struct qpnic_ucontext {
	struct ib_ucontext ibuc;
};

struct qpnic_pd {
	struct ib_pd ibpd;
};

struct qpnic_cq {
	struct ib_cq ibcq;
	spinlock_t lock;		/* queue, notify and overflow state */
	struct qpnic_queue queue;
	u8 notify;			/* armed ib_cq_notify_flags, 0 if not */
	bool handed;			/* the handler was called; not polled empty since */
	bool overflowed;		/* latched: a CQE was lost, the CQ is in error */
	bool user;
	struct work_struct overflow_work;	/* raises IB_EVENT_CQ_ERR */
};

struct qpnic_srq {
	struct ib_srq ibsrq;
	spinlock_t lock;		/* the ring and its kernel indices */
	struct qpnic_queue queue;
	u32 srq_num;
	u32 max_sge;
	u32 limit;
	bool user;
};

/*
 * A send WQE in a kernel QP's SQ. User SQs hold librxe's struct
 * rxe_send_wqe; a kernel QP needs far less per slot, and the slot size is
 * most of a QP's memory.
 */
struct qpnic_send_wqe {
	u64 wr_id;
	u32 opcode;			/* enum ib_wr_opcode */
	u32 send_flags;
	union {
		__be32 imm_data;
		u32 invalidate_rkey;
	} ex;
	u32 num_sge;			/* 0 when the payload is inline */
	u32 length;			/* total payload bytes */
	u32 rkey;
	u64 remote_addr;
	union {
		struct {
			u64 compare_add;
			u64 swap;
		} atomic;
		struct {
			u32 remote_qpn;
			u32 remote_qkey;
			u32 ah_num;
			u16 pkey_index;
		} ud;
		struct {		/* IB_WR_REG_MR: what it registers */
			struct qpnic_mr *mr;
			u32 key;
			int access;
		} reg;
		/* FLUSH: the range in @remote_addr and @rkey, and this */
		struct {
			u32 length;
			u8 type;	/* FETH placement type */
			u8 level;	/* FETH selectivity level */
		} flush;
		/* IB_WR_BIND_MW: the window's address in @remote_addr, new key in @rkey */
		struct {
			u32 mw_key;	/* names the window by its index */
			u32 mr_lkey;
			u32 length;
			int access;
		} bind;
	};
	/* transport state (RC): PSNs of the message, once it started */
	u32 first_psn;
	u32 last_psn;
	bool started;
	bool local_done;		/* REG_MR, LOCAL_INV, BIND_MW: executed */
	/* not IB_WC_SUCCESS: it completes so in its turn (bad user WQE, bad key) */
	u8 status;
	union {
		DECLARE_FLEX_ARRAY(struct ib_sge, sge);
		DECLARE_FLEX_ARRAY(u8, inline_data);
	};
};

/*
 * An RC requester's window: PSNs in flight before it waits for ACKs. A
 * CNP (its packets met congestion: the responder saw them marked CE) or a
 * loss halves it, once per round trip, down to QPNIC_WINDOW_MIN; each
 * window's worth of acknowledged PSNs grows it by QPNIC_WINDOW_STEP, back
 * up to QPNIC_WINDOW_MAX.
 */
#define QPNIC_WINDOW_MAX	256
#define QPNIC_WINDOW_MIN	16
#define QPNIC_WINDOW_STEP	16

/*
 * Where a packet goes: the resolved part of an address vector, with no
 * reference to anything, so it can be copied under a lock and used after.
 */
struct qpnic_av {
	union ib_gid sgid;
	union ib_gid dgid;
	u32 flow_label;
	int ifindex;			/* the source GID's netdev (VLANs included) */
	u8 network_type;		/* enum rdma_network_type */
	u8 tclass;
	u8 hop_limit;
	bool loopback;			/* dgid is a GID of this device */
};

/* ATOMIC WRITE and FLUSH: answered by a READ RESPONSE ONLY with no payload. */
static inline bool qpnic_wr_empty_answer(u32 opcode)
{
	return opcode == QPNIC_WR_ATOMIC_WRITE || opcode == QPNIC_WR_FLUSH;
}

/* The operations that take a responder resource: READs, atomics and those. */
static inline bool qpnic_is_rd_atomic(const struct qpnic_send_wqe *wqe)
{
	return wqe->opcode == IB_WR_RDMA_READ ||
	       wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       wqe->opcode == IB_WR_ATOMIC_FETCH_AND_ADD ||
	       qpnic_wr_empty_answer(wqe->opcode);
}

enum qpnic_res_type {
	QPNIC_RES_FREE,
	QPNIC_RES_READ,
	QPNIC_RES_ATOMIC,
	QPNIC_RES_EMPTY_ANSWER,		/* an ATOMIC WRITE or FLUSH done */
};

/*
 * A responder resource (IBTA 9.7.5.1.4): a READ accepted, answered from
 * the QP's read work a budget of packets at a time, or an atomic or
 * ATOMIC WRITE executed. A duplicate request is answered from here only:
 * a READ again inside the range it named, an atomic with the same
 * original value, not executed again.
 */
struct qpnic_resp_res {
	enum qpnic_res_type type;
	u32 first_psn;
	u32 last_psn;
	u64 orig;		/* atomic: the value it found */
	u64 va;			/* READ: what it asked for */
	u32 rkey;
	u32 len;
	u32 msn;		/* the MSN its responses carry */
	u32 mtu;		/* READ: the path MTU it was accepted at */
	u32 next;		/* READ: the response packet to send next */
	bool sending;		/* READ: responses from @next on are due; else its answer */
	bool restarted;		/* READ: a duplicate moved @next back this pass */
};

/* A receive WQE as the responder uses it: copied out of the ring once. */
struct qpnic_recv_wqe {
	u64 wr_id;
	u32 num_sge;
	u32 length;
	struct ib_sge sge[];
};

struct qpnic_wq {
	spinlock_t lock;		/* the ring and its kernel indices */
	struct qpnic_queue queue;
	u32 max_wr;
	u32 max_sge;
	/*
	 * User SQs: the kernel's copies of the ring's WQEs, one struct
	 * qpnic_send_wqe per ring slot, valid from queue.cons to @copied.
	 */
	u8 *shadow;
	u32 shadow_log2;
	u32 copied;
};

/*
 * A QP's packets in this host's stack (qdiscs, the NIC's ring): its
 * senders stop at QPNIC_TX_IN_STACK_MAX and the packets' destructor wakes
 * them as they drain, so a QP slows down to the NIC's pace before its
 * own qdisc drops. The flow outlives the QP while packets hold it: a NIC
 * that never frees them holds no destroy_qp up.
 */
struct qpnic_tx_flow {
	atomic_t in_stack;		/* packets sent and not yet freed */
	refcount_t ref;			/* the QP's, and one a packet */
	bool waiting;			/* a sender stopped for room */
	spinlock_t lock;		/* @qp against destroy_qp's detach */
	struct qpnic_qp *qp;
};

struct qpnic_qp {
	struct ib_qp ibqp;
	refcount_t ref;
	struct completion released;
	struct mutex state_lock;	/* modify/query/destroy against each other */
	enum ib_qp_state state;		/* written under both wq locks */
	struct qpnic_wq sq;
	struct qpnic_wq rq;		/* unused (no ring) with an SRQ */
	u32 max_inline;
	struct ib_qp_attr attr;		/* what modify_qp set, for query_qp */
	struct qpnic_av av;		/* connected QPs: the path (under sq.lock) */
	bool sig_all;
	bool user;
	u32 mtu;			/* path MTU in bytes (RC, UC) */
	bool dying;			/* destroy_qp: nothing may arm or send */
	u64 serial;			/* never reused, unlike qp_num */
	struct qpnic_tx_flow *tx_flow;
	/* requester (req.c); all of it under sq.lock */
	struct {
		atomic_t runs;		/* run requests; the runner loops while set */
		struct work_struct work;	/* runs it where posting cannot */
		u32 next;		/* the SQ index being sent */
		u32 offset;		/* bytes of WQE @next already sent */
		u32 psn;		/* the next PSN to send */
		u32 rd_atomic;		/* READs started and not completed */
		u32 max_psn;		/* one past the highest PSN sent */
		bool paused;		/* RNR NAK, refused packet: resume_timer */
		/* RC: PSNs in flight before waiting for ACKs; CNPs, losses cut it */
		u32 window;
		u32 window_acked;	/* PSNs acknowledged since it last grew */
		u32 cut_psn;		/* max_psn at the last cut: none until it is acked */
		u32 asked_psn;		/* the last PSN an answer was asked for */
	} req;
	/* completer (comp.c), under sq.lock */
	struct {
		u32 psn;		/* the oldest PSN not acknowledged */
		u32 retries;		/* retry_cnt left */
		u32 rnr_retries;	/* rnr_retry left (7: infinite) */
		u32 backoff;		/* timeouts in a row: the wait doubles */
		u32 rewound_psn;	/* the last go-back point ... */
		bool rewound;		/* ... taken since the last progress */
		bool probed;		/* a tail was resent to ask for its ACK */
		bool timing;		/* the ACK timeout is due at @deadline */
		unsigned long deadline;	/* (jiffies) */
		struct timer_list retrans_timer;	/* lazy: qpnic_comp_time() */
		struct timer_list resume_timer;
	} comp;
	/* flushes and raises events after the transport changed the state */
	struct work_struct async_work;
	bool fatal_pending;		/* a transport error: QP_FATAL is due */
	bool sqd_notify;		/* in SQD: SQ_DRAINED once the SQ is idle */
	bool sqd_pending;		/* ... and it is due */
	/* responder (resp.c): connected QPs under resp_lock */
	spinlock_t resp_lock;
	struct {
		struct qpnic_recv_wqe *wqe;	/* private copy of the WQE in use */
		bool wqe_valid;		/* a SEND is placing into @wqe */
		bool in_send;		/* inside a multi-packet SEND */
		bool in_write;		/* inside a multi-packet WRITE */
		bool nak_sent;		/* PSN sequence NAK sent for @psn */
		/*
		 * An ACK for requests behind a READ still being answered
		 * waits for the READ's last response (responses go out in
		 * PSN order): the READ work sends it then.
		 */
		bool ack_deferred;
		u32 deferred_psn;
		u32 deferred_msn;
		/*
		 * A plain ACK held back while a loopback delivery pass
		 * runs: the pass's end sends one ACK for the newest PSN
		 * instead of one per request (qpnic_resp_ack_batch_end).
		 */
		bool ack_held;
		u32 held_psn;
		u32 held_msn;
		u64 cnp_ns;		/* when the last CNP went (ktime_get_ns) */
		u32 psn;		/* expected PSN */
		u32 msn;		/* messages completed */
		u32 offset;		/* bytes of the message placed */
		u64 va;			/* WRITE: where the next byte goes */
		u32 rkey;
		u32 resid;		/* WRITE: bytes the RETH still allows */
		u32 write_len;		/* WRITE: the RETH's length */
		/* max_dest_rd_atomic resources (at least 1), reused oldest first */
		struct qpnic_resp_res *res;
		u32 num_res;
		u32 next_res;		/* the oldest: the one to reuse next */
		u32 num_sending;	/* resources with @sending set */
		struct work_struct read_work;	/* sends READ responses */
		unsigned long read_busy;	/* bit 0: a context sends them */
	} resp;
	/* runs the requester for a kernel poster's task (req.c); cold */
	struct work_struct post_work;
};

struct qpnic_ah {
	struct ib_ah ibah;
	struct rdma_ah_attr attr;
	struct qpnic_av av;
	u32 ah_num;			/* the number librxe's UD WQEs carry */
};

enum qpnic_mr_type {
	QPNIC_MR_DMA,			/* kernel virtual addresses, unbounded */
	QPNIC_MR_USER,			/* pinned user pages */
	QPNIC_MR_FAST,			/* fast registration: pages by REG_MR */
};

enum qpnic_mr_state {
	QPNIC_MR_FREE,			/* a fast-reg MR not registered: no access */
	QPNIC_MR_VALID,
};

/*
 * What a lookup checks (@key, @access, @iova, @length, @state) is set at
 * creation, and for a fast-reg MR by REG_MR and the invalidations under
 * @lock: a lookup that passed counts in @inflight until its put, and an
 * invalidation (or a registration) waits for those, so no access with an
 * old key moves a byte once it is done. dereg_mr sets @state FREE under
 * @lock when no window is bound, so none binds after.
 */
struct qpnic_mr {
	struct ib_mr ibmr;
	refcount_t ref;			/* lookups, and 1 */
	struct completion released;
	enum qpnic_mr_type type;
	u32 index;
	spinlock_t lock;		/* fast-reg: the checked fields; @num_mw */
	enum qpnic_mr_state state;
	u32 key;			/* lkey, and rkey if remote access */
	int access;
	u64 iova;
	u64 length;
	atomic_t inflight;		/* fast-reg: accesses past the check */
	u32 num_mw;			/* windows bound to it (under @lock) */
	struct ib_umem *umem;		/* user MRs */
	struct page **pages;		/* umem's pages, in order */
	/* fast-reg: the page list map_mr_sg built; REG_MR takes a snapshot */
	u64 *page_list;			/* kernel addresses of PAGE_SIZE pages */
	u32 max_pages;
	u32 num_pages;
	u32 map_offset;			/* the first byte's offset in its page */
	u32 reg_pages;			/* at REG_MR: pages of the registration */
	u32 reg_offset;
	struct rcu_head rcu;		/* frees it past lookups (qpnic_mr_ref) */
};

/*
 * A memory window (type 1 or 2B), bound or not. The device's window
 * xarray lock guards all of it (a bind or a check is a few compares); a
 * remote access through the window counts in @inflight from its check to
 * its put, and an unbind (invalidation, rebind, dealloc) waits for those,
 * as for a fast-reg MR.
 */
struct qpnic_mw {
	struct ib_mw ibmw;
	u32 index;
	u32 key;			/* the rkey; its low byte changes on a bind */
	struct qpnic_mr *mr;		/* bound to it, NULL when not bound */
	u64 addr;
	u64 length;
	int access;			/* remote access the bind granted */
	u64 qp_serial;			/* type 2: the QP it is bound to */
	atomic_t inflight;
};

/* What an R_Key resolved to for one access: the MR, maybe through a window. */
struct qpnic_rkey_ref {
	struct qpnic_mr *mr;
	struct qpnic_mw *mw;
};

static inline struct qpnic_dev *to_qdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct qpnic_dev, ibdev);
}

static inline struct qpnic_qp *to_qqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct qpnic_qp, ibqp);
}

static inline struct qpnic_cq *to_qcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct qpnic_cq, ibcq);
}

static inline struct qpnic_srq *to_qsrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct qpnic_srq, ibsrq);
}

static inline struct qpnic_mr *to_qmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct qpnic_mr, ibmr);
}

static inline struct qpnic_mw *to_qmw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct qpnic_mw, ibmw);
}

static inline struct qpnic_ah *to_qah(struct ib_ah *ibah)
{
	return container_of(ibah, struct qpnic_ah, ibah);
}

/* device.c */
extern unsigned int qpnic_max_qp;
extern const struct ib_device_ops qpnic_dev_ops;
bool qpnic_owns(const struct ib_device *ibdev);
enum ib_mtu qpnic_netdev_ib_mtu(const struct net_device *ndev);
void qpnic_mtu_changed(struct qpnic_dev *qdev, const struct net_device *ndev);
struct net_device *qpnic_netdev_get(struct qpnic_dev *qdev);
void qpnic_remove_all(void);
void qpnic_port_event(struct qpnic_dev *qdev, enum ib_event_type type);
int qpnic_count_get(struct qpnic_dev *qdev, atomic_t *count, u32 limit,
		    const char *what);
int qpnic_check_resp_len(struct qpnic_dev *qdev, struct ib_udata *udata,
			 size_t len, const char *verb);
int qpnic_copy_resp(struct qpnic_dev *qdev, struct ib_udata *udata,
		    void *resp, size_t len, const char *verb);

static inline void qpnic_count(struct qpnic_dev *qdev, enum qpnic_counter id)
{
	this_cpu_inc(qdev->counters->val[id]);
}

/* (a loopback segment counts as the packets it stands for) */
static inline void qpnic_count_n(struct qpnic_dev *qdev, enum qpnic_counter id,
				 u32 n)
{
	this_cpu_add(qdev->counters->val[id], n);
}

/* main.c */
extern struct workqueue_struct *qpnic_wq;
extern struct workqueue_struct *qpnic_post_wq;

/* stats.c */
extern const struct ib_device_ops qpnic_stats_ops;
int qpnic_counters_init(struct qpnic_dev *qdev);
void qpnic_drop(struct qpnic_dev *qdev, enum qpnic_counter reason,
		const struct qpnic_pkt *pkt);
void qpnic_counters_free(struct qpnic_dev *qdev);

/* icrc.c */
void qpnic_icrc_init(void);
void qpnic_icrc_exit(void);

/* net.c */
int qpnic_net_init(void);
void qpnic_net_exit(void);
int qpnic_av_init(struct qpnic_dev *qdev, struct qpnic_av *av,
		  const struct rdma_ah_attr *attr);
struct sk_buff *qpnic_skb_alloc(struct qpnic_dev *qdev,
				const struct qpnic_av *av, unsigned int len);
struct sk_buff *qpnic_skb_alloc_paged(struct qpnic_dev *qdev,
				      const struct qpnic_av *av,
				      unsigned int linear, unsigned int paged);
bool qpnic_skb_send(struct qpnic_dev *qdev, const struct qpnic_av *av,
		    struct sk_buff *skb, u16 sport, struct qpnic_tx_flow *flow);
struct qpnic_tx_flow *qpnic_tx_flow_alloc(struct qpnic_qp *qp, gfp_t gfp);
void qpnic_tx_flow_detach(struct qpnic_tx_flow *flow);
void qpnic_tx_flow_put(struct qpnic_tx_flow *flow);
bool qpnic_tx_flow_full(struct qpnic_qp *qp);
void qpnic_loopback_init(struct qpnic_dev *qdev);
bool qpnic_loopback_inline_begin(struct qpnic_dev *qdev);
void qpnic_loopback_inline_deliver(struct qpnic_dev *qdev);
void qpnic_loopback_inline_end(struct qpnic_dev *qdev);
void qpnic_loopback_stop(struct qpnic_dev *qdev);
bool qpnic_loopback_ack(struct qpnic_dev *qdev,
			const struct qpnic_hdr_fields *f);

/* recv.c */
void qpnic_rcv_dev(struct qpnic_dev *qdev, struct sk_buff *skb, bool loopback);
void qpnic_rcv_ack(struct qpnic_dev *qdev, const struct qpnic_pkt *pkt,
		   u8 syndrome, u64 orig);

/* mem.c: data between MRs and packets */
struct qpnic_copy {
	void *buf;			/* kernel buffer, or NULL for @skb */
	struct sk_buff *skb;		/* source of a copy into an MR, or target */
	int skb_offset;
	bool to_mr;
};

enum qpnic_atomic_op {
	QPNIC_ATOMIC_CMP_SWAP,
	QPNIC_ATOMIC_FETCH_ADD,
	QPNIC_ATOMIC_WRITE_8,		/* IBTA 1.5 ATOMIC WRITE */
};

bool qpnic_mr_aligned_u64(const struct qpnic_mr *mr, u64 iova);
u64 qpnic_mr_atomic(struct qpnic_mr *mr, u64 iova, enum qpnic_atomic_op op,
		    u64 val, u64 compare);
int qpnic_sgl_copy(struct qpnic_dev *qdev, struct ib_pd *pd,
		   const struct ib_sge *sge, u32 num_sge, u32 offset, u32 len,
		   struct qpnic_copy *c);

/* req.c, comp.c, resp.c */
void qpnic_req_kick(struct qpnic_qp *qp);
void qpnic_req_work(struct work_struct *work);
void qpnic_req_post_work(struct work_struct *work);
void qpnic_req_kick_posted(struct qpnic_qp *qp);
void qpnic_req_complete_locked(struct qpnic_qp *qp,
			       const struct qpnic_send_wqe *wqe,
			       enum ib_wc_status status, bool *notify);
void qpnic_req_rewind(struct qpnic_qp *qp, u32 psn);
void qpnic_comp_init(struct qpnic_qp *qp);
void qpnic_comp_stop(struct qpnic_qp *qp);
bool qpnic_comp_probe_now(struct qpnic_qp *qp);
void qpnic_comp_sqd_ask(struct qpnic_qp *qp);
void qpnic_comp_arm(struct qpnic_qp *qp);
struct qpnic_send_wqe *qpnic_comp_head(struct qpnic_qp *qp);
void qpnic_comp_cnp(struct qpnic_qp *qp);
void qpnic_comp_rcv(struct qpnic_qp *qp, struct sk_buff *skb,
		    const struct qpnic_pkt *pkt);
void qpnic_comp_answer(struct qpnic_qp *qp, struct sk_buff *skb,
		       const struct qpnic_pkt *pkt, u8 syndrome, u64 orig);
void qpnic_resp_rcv(struct qpnic_qp *qp, struct sk_buff *skb,
		    const struct qpnic_pkt *pkt);
void qpnic_resp_read_work(struct work_struct *work);
void qpnic_resp_ack_batch_begin(void);
void qpnic_resp_ack_batch_end(void);
void qpnic_resp_flush_locked(struct qpnic_qp *qp, bool *notify);
void qpnic_resp_ud(struct qpnic_qp *qp, struct sk_buff *skb,
		   const struct qpnic_pkt *pkt);
struct sk_buff *qpnic_pkt_alloc(struct qpnic_qp *qp, const struct qpnic_av *av,
				struct qpnic_hdr_fields *f, u32 paylen,
				u8 **payload);
struct sk_buff *qpnic_seg_alloc(struct qpnic_qp *qp, const struct qpnic_av *av,
				struct qpnic_hdr_fields *f, u32 paylen,
				u32 npkts);
bool qpnic_lo_segments(const struct qpnic_av *av);
bool qpnic_pkt_send(struct qpnic_qp *qp, const struct qpnic_av *av,
		    struct sk_buff *skb, u32 dqpn);
bool qpnic_req_head_error(struct qpnic_qp *qp, bool *notify);

/* queue.c */
int qpnic_queue_init(struct qpnic_dev *qdev, struct qpnic_queue *q,
		     u32 capacity, u32 max, u32 elem_size, enum qpnic_queue_dir dir,
		     struct ib_udata *udata, struct mminfo *mi);
void qpnic_queue_free(struct qpnic_queue *q);
u32 qpnic_queue_count(struct qpnic_queue *q);
bool qpnic_queue_full(struct qpnic_queue *q);
void *qpnic_queue_slot(const struct qpnic_queue *q, u32 index);
void qpnic_queue_produced(struct qpnic_queue *q);
void qpnic_queue_consumed(struct qpnic_queue *q);
void qpnic_queue_discard(struct qpnic_queue *q);
int qpnic_queue_move(struct qpnic_queue *dst, struct qpnic_queue *src);
int qpnic_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void qpnic_mmap_free(struct rdma_user_mmap_entry *entry);

/* cq.c */
int qpnic_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct qpnic_create_cq_arg *arg);
int qpnic_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int qpnic_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int qpnic_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int qpnic_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
bool qpnic_cq_push(struct qpnic_cq *cq, const struct ib_wc *wc, bool solicited);
void qpnic_cq_notify(struct qpnic_cq *cq);
u32 qpnic_cq_purge_qp(struct qpnic_cq *cq, struct ib_qp *ibqp);
void qpnic_cq_let_consumer_poll(struct ib_qp *ibqp);

/* Packets a message of @len bytes takes at @mtu (a READ: its responses). */
static inline u32 qpnic_packets(u32 len, u32 mtu)
{
	return max(1U, DIV_ROUND_UP(len, mtu));
}

/* States in which the send queue's WRs complete as flushed. */
static inline bool qpnic_sq_flushing(enum ib_qp_state state)
{
	return state == IB_QPS_ERR || state == IB_QPS_SQE;
}

/*
 * WQEs copied in or flushed in one hold of a queue lock: a user may queue
 * 16383 WQEs of 32 SGEs, which must not keep interrupts off for
 * milliseconds. A doorbell or a flush takes a ring's worth in such steps.
 */
#define QPNIC_WQE_BATCH		64

/* qp.c */
int qpnic_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int qpnic_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int qpnic_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int qpnic_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
void qpnic_qp_abandon(struct qpnic_dev *qdev, struct qpnic_qp *qp);
int qpnic_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
struct qpnic_qp *qpnic_qp_get(struct qpnic_dev *qdev, u32 qpn);
void qpnic_qp_put(struct qpnic_qp *qp);
u32 qpnic_recv_wqe_size(u32 max_sge);
struct qpnic_send_wqe *qpnic_sq_wqe(struct qpnic_qp *qp, u32 index);
u32 qpnic_sq_end(struct qpnic_qp *qp);
void qpnic_qp_flush(struct qpnic_qp *qp, bool send);
void qpnic_qp_error_locked(struct qpnic_qp *qp);
void qpnic_qp_sq_drained_check(struct qpnic_qp *qp);
void qpnic_cq_error_qps(struct qpnic_dev *qdev, struct ib_cq *ibcq);
void qpnic_qps_check_mtu(struct qpnic_dev *qdev, u32 mtu);

/* post.c */
u32 qpnic_sq_to_copy(struct qpnic_qp *qp);
u32 qpnic_sq_copy_in(struct qpnic_qp *qp, u32 max);
int qpnic_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int qpnic_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
int qpnic_recv_wqe_write(struct qpnic_queue *q, u32 max_sge,
			 const struct ib_recv_wr *wr);
enum ib_wc_opcode qpnic_wr_to_wc_opcode(u32 opcode);

/* resp.c */
u32 qpnic_qp_qkey(const struct qpnic_qp *qp);

/* srq.c */
int qpnic_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int qpnic_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int qpnic_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int qpnic_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int qpnic_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);

/* pd.c */
int qpnic_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int qpnic_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* mr.c */
struct ib_mr *qpnic_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *qpnic_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg);
int qpnic_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
enum ib_wc_status qpnic_mr_fast_reg(struct qpnic_qp *qp,
				    const struct qpnic_send_wqe *wqe);
int qpnic_mr_invalidate(struct qpnic_dev *qdev, struct ib_pd *pd, u32 key);
struct ib_mr *qpnic_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
int qpnic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
void qpnic_mr_copy(struct qpnic_mr *mr, u64 iova, u32 len, struct qpnic_copy *c);
struct qpnic_mr *qpnic_mr_lookup(struct qpnic_dev *qdev, struct ib_pd *pd,
				 u32 key, u64 iova, u32 len, int access);
struct qpnic_mr *qpnic_mr_find(struct qpnic_dev *qdev, struct ib_pd *pd,
			       u32 key, u64 iova, u32 len, int access, bool whole);
void qpnic_mr_put(struct qpnic_mr *mr);
struct qpnic_mr *qpnic_mr_bind_get(struct qpnic_dev *qdev, struct ib_pd *pd,
				   u32 lkey, u64 addr, u64 len, int access);
void qpnic_mr_bind_put(struct qpnic_mr *mr);

/* mw.c */
int qpnic_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int qpnic_dealloc_mw(struct ib_mw *ibmw);
enum ib_wc_status qpnic_mw_bind(struct qpnic_qp *qp,
				const struct qpnic_send_wqe *wqe);
int qpnic_key_invalidate(struct qpnic_qp *qp, u32 key, bool remote);
bool qpnic_rkey_get(struct qpnic_qp *qp, u32 rkey, u64 iova, u32 len,
		    int access, struct qpnic_rkey_ref *ref);
bool qpnic_rkey_get_whole(struct qpnic_qp *qp, u32 rkey, int access,
			  struct qpnic_rkey_ref *ref);
void qpnic_rkey_put(struct qpnic_rkey_ref *ref);

/* ah.c */
int qpnic_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int qpnic_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int qpnic_destroy_ah(struct ib_ah *ibah, u32 flags);
int qpnic_check_ah_attr(struct qpnic_dev *qdev, const struct rdma_ah_attr *attr);
int qpnic_ah_av(struct qpnic_dev *qdev, u32 ah_num, struct ib_pd *pd,
		struct qpnic_av *av);

/* mcast.c */
int qpnic_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int qpnic_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void qpnic_mcast_cleanup(struct qpnic_dev *qdev);
void qpnic_mcast_rcv(struct qpnic_dev *qdev, struct sk_buff *skb,
		     const struct qpnic_pkt *pkt);

#endif /* QPNIC_H */
