// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RoCEv2 UDP port. One tunnel socket per address family in init_net
 * owns port 4791 and hands every packet to the receive path (recv.c).
 *
 * Transmit: an address vector is resolved once (source GID's netdev,
 * network type, whether the destination is this device) when an AH or a
 * connected QP's path is set; each packet is built with room for any link
 * header and routed when it is sent, through the kernel's IPv4/IPv6
 * tables (neighbour resolution and VLANs come with the route),
 * gets its UDP and IP headers and the ICRC, and leaves through
 * ip_local_out()/ip6_local_out(). A packet to a GID of the sending device
 * skips the IP stack (it would deliver it through lo, where no qpnic
 * device is) and the ICRC, and reaches the receive path from the
 * device's loopback queue, so no transport code ever runs nested inside
 * another's locks.
 */
#include <linux/ip.h>
#include <linux/jhash.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_cache.h>

#include "hdr.h"
#include "qpnic.h"
#include "trace.h"

static struct socket *qpnic_sock4;
static struct socket *qpnic_sock6;

static int qpnic_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	qpnic_rcv(skb);
	return 0;
}

/*
 * Resolve @attr (checked by qpnic_check_ah_attr) into @av. Process or
 * atomic context (create_ah may be atomic).
 */
int qpnic_av_init(struct qpnic_dev *qdev, struct qpnic_av *av,
		  const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(attr);
	const struct ib_gid_attr *sgid_attr = grh->sgid_attr;
	const struct ib_gid_attr *local;
	struct net_device *ndev;

	memset(av, 0, sizeof(*av));
	av->sgid = sgid_attr->gid;
	av->dgid = grh->dgid;
	av->flow_label = grh->flow_label;
	av->tclass = grh->traffic_class;
	av->hop_limit = grh->hop_limit ?: 64;
	av->network_type = rdma_gid_attr_network_type(sgid_attr);
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(sgid_attr);
	if (!IS_ERR(ndev))
		av->ifindex = ndev->ifindex;
	rcu_read_unlock();
	if (IS_ERR(ndev)) {
		ibdev_dbg(&qdev->ibdev, "av: sgid_index %u has no netdev (%ld)\n",
			  grh->sgid_index, PTR_ERR(ndev));
		return PTR_ERR(ndev);
	}
	if (av->network_type == RDMA_NETWORK_IPV4 &&
	    !ipv6_addr_v4mapped((struct in6_addr *)av->dgid.raw)) {
		ibdev_dbg(&qdev->ibdev, "av: IPv4 source GID, destination %pI6 is not IPv4\n",
			  av->dgid.raw);
		return -EINVAL;
	}
	local = rdma_find_gid_by_port(&qdev->ibdev, &av->dgid,
				      IB_GID_TYPE_ROCE_UDP_ENCAP, 1, NULL);
	if (!IS_ERR(local)) {
		av->loopback = true;
		rdma_put_gid_attr(local);
	}
	return 0;
}

static struct dst_entry *qpnic_route4(const struct qpnic_av *av)
{
	struct flowi4 fl = {
		.flowi4_oif = av->ifindex,
		.flowi4_proto = IPPROTO_UDP,
		.flowi4_tos = RT_TOS(av->tclass),
	};
	struct rtable *rt;

	memcpy(&fl.saddr, &av->sgid.raw[12], 4);
	memcpy(&fl.daddr, &av->dgid.raw[12], 4);
	rt = ip_route_output_key(&init_net, &fl);
	return IS_ERR(rt) ? ERR_CAST(rt) : &rt->dst;
}

static struct dst_entry *qpnic_route6(const struct qpnic_av *av)
{
	struct flowi6 fl6 = {
		.flowi6_oif = av->ifindex,
		.flowi6_proto = IPPROTO_UDP,
	};

	if (!IS_ENABLED(CONFIG_IPV6) || !qpnic_sock6)
		return ERR_PTR(-EAFNOSUPPORT);
	memcpy(&fl6.saddr, av->sgid.raw, sizeof(fl6.saddr));
	memcpy(&fl6.daddr, av->dgid.raw, sizeof(fl6.daddr));
	return ipv6_stub->ipv6_dst_lookup_flow(&init_net, qpnic_sock6->sk,
					       &fl6, NULL);
}

static unsigned int qpnic_ip_hdr_len(const struct qpnic_av *av)
{
	return av->network_type == RDMA_NETWORK_IPV4 ? sizeof(struct iphdr) :
						       sizeof(struct ipv6hdr);
}

/*
 * An skb for a packet of @len bytes (BTH to ICRC) to @av, with room for
 * the link, IP and UDP headers; skb->data is where the BTH goes and
 * nothing is put yet. NULL when there is no memory (counted): the caller
 * treats the packet as lost on the wire. Any context, interrupts off
 * included (the requester builds packets under the SQ lock): the route is
 * looked up at send time.
 */
struct sk_buff *qpnic_skb_alloc(struct qpnic_dev *qdev,
				const struct qpnic_av *av, unsigned int len)
{
	unsigned int headroom = MAX_HEADER + qpnic_ip_hdr_len(av) +
				sizeof(struct udphdr);
	unsigned int size = SKB_DATA_ALIGN(headroom + len) +
			    SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb = NULL;
	void *data;

	/*
	 * A head that fits a page is a fragment of this CPU's page cache
	 * rather than a kmalloc: cheaper to take and to free, and not zeroed
	 * first by a kernel with init_on_alloc (Debian's). Every byte a
	 * packet sends is written (qpnic_pkt_alloc()).
	 */
	if (size <= PAGE_SIZE) {
		data = netdev_alloc_frag(size);
		if (data) {
			skb = build_skb(data, size);
			if (!skb)
				skb_free_frag(data);
		}
	} else {
		skb = alloc_skb(headroom + len, GFP_ATOMIC | __GFP_NOWARN);
	}
	if (!skb) {
		qpnic_drop(qdev, QPNIC_CNT_TX_DROP_NO_MEM, NULL);
		return NULL;
	}
	skb_reserve(skb, headroom);
	return skb;
}

/*
 * As qpnic_skb_alloc(), for a packet whose first @linear bytes (its
 * headers) are put in the skb's head and whose @paged bytes after them
 * are in order-0 page fragments: a big loopback segment needs no
 * high-order atomic allocation. skb->data is at the headers.
 */
struct sk_buff *qpnic_skb_alloc_paged(struct qpnic_dev *qdev,
				      const struct qpnic_av *av,
				      unsigned int linear, unsigned int paged)
{
	unsigned int headroom = MAX_HEADER + qpnic_ip_hdr_len(av) +
				sizeof(struct udphdr);
	struct sk_buff *skb;
	int err;

	skb = alloc_skb_with_frags(headroom + linear, paged, 0, &err,
				   GFP_ATOMIC | __GFP_NOWARN);
	if (!skb) {
		qpnic_drop(qdev, QPNIC_CNT_TX_DROP_NO_MEM, NULL);
		return NULL;
	}
	skb_reserve(skb, headroom);
	skb_put(skb, linear);
	skb->data_len = paged;
	skb->len += paged;
	return skb;
}

/*
 * Route @skb to @av through the kernel's tables; false (the skb freed,
 * counted) when there is no route or no room for the link header.
 */
static bool qpnic_skb_route(struct qpnic_dev *qdev, const struct qpnic_av *av,
			    struct sk_buff *skb)
{
	unsigned int hdrs = qpnic_ip_hdr_len(av) + sizeof(struct udphdr);
	struct dst_entry *dst;

	dst = av->network_type == RDMA_NETWORK_IPV4 ? qpnic_route4(av) :
						      qpnic_route6(av);
	if (IS_ERR(dst)) {
		qpnic_drop(qdev, QPNIC_CNT_TX_DROP_NO_ROUTE, NULL);
		kfree_skb(skb);
		return false;
	}
	skb_dst_set(skb, dst);
	if (skb_cow_head(skb, hdrs + LL_RESERVED_SPACE(dst->dev))) {
		qpnic_drop(qdev, QPNIC_CNT_TX_DROP_NO_MEM, NULL);
		kfree_skb(skb);
		return false;
	}
	return true;
}

static void qpnic_push_udp_ip(const struct qpnic_av *av, struct sk_buff *skb,
			      u16 sport)
{
	struct udphdr *uh;

	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = htons(sport);
	uh->dest = htons(QPNIC_UDP_PORT);
	uh->len = htons(skb->len);
	uh->check = 0;		/* RoCEv2 relies on the ICRC */

	if (av->network_type == RDMA_NETWORK_IPV4) {
		struct iphdr *iph = skb_push(skb, sizeof(*iph));

		skb_reset_network_header(skb);
		iph->version = 4;
		iph->ihl = sizeof(*iph) >> 2;
		iph->tos = av->tclass;
		iph->tot_len = htons(skb->len);
		iph->frag_off = htons(IP_DF);
		iph->ttl = av->hop_limit;
		iph->protocol = IPPROTO_UDP;
		memcpy(&iph->saddr, &av->sgid.raw[12], 4);
		memcpy(&iph->daddr, &av->dgid.raw[12], 4);
		iph->id = 0;
		if (skb_dst(skb))
			__ip_select_ident(&init_net, iph, 1);
		ip_send_check(iph);
		skb->protocol = htons(ETH_P_IP);
	} else {
		struct ipv6hdr *ip6h = skb_push(skb, sizeof(*ip6h));

		skb_reset_network_header(skb);
		ip6_flow_hdr(ip6h, av->tclass, htonl(av->flow_label));
		ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
		ip6h->nexthdr = IPPROTO_UDP;
		ip6h->hop_limit = av->hop_limit;
		memcpy(&ip6h->saddr, av->sgid.raw, sizeof(ip6h->saddr));
		memcpy(&ip6h->daddr, av->dgid.raw, sizeof(ip6h->daddr));
		skb->protocol = htons(ETH_P_IPV6);
	}
}

/*
 * The device whose inline section this CPU is in (BH off, so the CPU
 * stays the same and nothing else sends on it): its loopback packets need
 * no work item, the section delivers them before it ends. The answers a
 * delivery sends (ACKs, READ responses) queue behind it instead of
 * recursing; packets to another device go to that device's work item.
 */
static DEFINE_PER_CPU(struct qpnic_dev *, qpnic_loopback_inline);

/*
 * The lane of a loopback packet (@skb at its UDP header, built here):
 * by destination QP, requests apart from answers. Packets of one stream
 * (a requester's to its responder, a responder's back) share a lane and
 * stay in order; packets to different QPs, or the two directions of one
 * QP, may be delivered on two CPUs at once, as the wire path does.
 * Consecutive QPNs (a ping-pong's two QPs) get four different lanes.
 */
static struct qpnic_lo_lane *qpnic_loopback_lane_of(struct qpnic_dev *qdev,
						    u32 dqpn, bool answer)
{
	return &qdev->lo_lanes[(dqpn << 1 | answer) &
			       (QPNIC_LOOPBACK_LANES - 1)];
}

static struct qpnic_lo_lane *qpnic_loopback_lane(struct qpnic_dev *qdev,
						 const struct sk_buff *skb)
{
	const u8 *bth = skb->data + sizeof(struct udphdr);

	return qpnic_loopback_lane_of(qdev, qpnic_bth_dqpn(bth),
				      qpnic_opcode_flags(bth[0]) & QPNIC_OP_ACK);
}

/* Queue @skb for delivery, or drop it (false) when the device is full. */
static bool qpnic_loopback_queue(struct qpnic_dev *qdev, struct sk_buff *skb)
{
	u32 npkts = qpnic_lo_npkts(skb);

	/* racing senders may each pass the limit by one segment */
	if (atomic_read(&qdev->lo_queued) + npkts > QPNIC_LOOPBACK_MAX) {
		qpnic_drop(qdev, QPNIC_CNT_LOOPBACK_DROPS, NULL);
		kfree_skb(skb);
		return false;
	}
	atomic_add(npkts, &qdev->lo_queued);
	skb_queue_tail(&qpnic_loopback_lane(qdev, skb)->q, skb);
	return true;
}

/*
 * Per QP, the packets in this host's stack: 128 at most, so that seven
 * QPs on one transmit queue stay within its qdisc's 1000 packets. Half
 * of that (rdma_rxe's 64) paced 16 QPs writing across the two guests too
 * finely: 11.7 MB/s, against 13.0 at 128. The senders go on once a
 * quarter is left, so they send in bursts, not a packet a wake-up.
 */
#define QPNIC_TX_IN_STACK_MAX	128
#define QPNIC_TX_IN_STACK_LOW	32

/* Flows alive: the destructor's code must stay until the last is freed. */
static atomic_t qpnic_tx_flows = ATOMIC_INIT(0);

struct qpnic_tx_flow *qpnic_tx_flow_alloc(struct qpnic_qp *qp, gfp_t gfp)
{
	struct qpnic_tx_flow *flow = kzalloc(sizeof(*flow), gfp);

	if (!flow)
		return NULL;
	refcount_set(&flow->ref, 1);
	spin_lock_init(&flow->lock);
	flow->qp = qp;
	atomic_inc(&qpnic_tx_flows);
	return flow;
}

void qpnic_tx_flow_put(struct qpnic_tx_flow *flow)
{
	if (!refcount_dec_and_test(&flow->ref))
		return;
	kfree(flow);
	if (atomic_dec_and_test(&qpnic_tx_flows))
		wake_up_var(&qpnic_tx_flows);
}

/* destroy_qp: packets still in the stack wake no work of the QP's. */
void qpnic_tx_flow_detach(struct qpnic_tx_flow *flow)
{
	spin_lock_irq(&flow->lock);
	flow->qp = NULL;
	spin_unlock_irq(&flow->lock);
}

/*
 * Whether @qp's senders (requester, READ responder) must stop: its
 * packets fill its share of the stack. The last of them to drain past
 * the low mark runs the senders' work items again.
 */
bool qpnic_tx_flow_full(struct qpnic_qp *qp)
{
	struct qpnic_tx_flow *flow = qp->tx_flow;

	if (atomic_read(&flow->in_stack) < QPNIC_TX_IN_STACK_MAX)
		return false;
	WRITE_ONCE(flow->waiting, true);
	/* the flag before the count, the destructor the other way round */
	smp_mb();
	if (atomic_read(&flow->in_stack) < QPNIC_TX_IN_STACK_MAX)
		return false;
	qpnic_count(to_qdev(qp->ibqp.device), QPNIC_CNT_TX_STACK_FULL);
	return true;
}

static void qpnic_tx_flow_wake(struct qpnic_tx_flow *flow)
{
	unsigned long flags;

	spin_lock_irqsave(&flow->lock, flags);
	if (flow->waiting && flow->qp) {
		flow->waiting = false;
		/* never inline: this may run inside a NIC's transmit */
		queue_work(qpnic_wq, &flow->qp->req.work);
		queue_work(qpnic_wq, &flow->qp->resp.read_work);
	}
	spin_unlock_irqrestore(&flow->lock, flags);
}

/* The skb destructor: wherever the stack frees or orphans the packet. */
static void qpnic_tx_flow_skb_freed(struct sk_buff *skb)
{
	struct qpnic_tx_flow *flow = skb_shinfo(skb)->destructor_arg;

	rcu_read_lock();	/* module unload waits for it */
	if (atomic_dec_return(&flow->in_stack) <= QPNIC_TX_IN_STACK_LOW &&
	    READ_ONCE(flow->waiting))
		qpnic_tx_flow_wake(flow);
	qpnic_tx_flow_put(flow);
	rcu_read_unlock();
}

static void qpnic_tx_flow_charge(struct qpnic_tx_flow *flow,
				 struct sk_buff *skb)
{
	atomic_inc(&flow->in_stack);
	refcount_inc(&flow->ref);
	skb_shinfo(skb)->destructor_arg = flow;
	skb->destructor = qpnic_tx_flow_skb_freed;
}

/*
 * Send the packet qpnic_skb_alloc() gave: skb->data at the BTH, the
 * packet put up to and including the ICRC's place. Consumes the skb.
 * False when this host dropped it (no route, a full queue, a device
 * down): the sender may wait before sending again, where a packet lost
 * on the wire shows only as the peer's NAK or silence. A packet that
 * leaves through a NIC counts in @flow until the stack frees it. BH
 * context or process context, interrupts on.
 */
bool qpnic_skb_send(struct qpnic_dev *qdev, const struct qpnic_av *av,
		    struct sk_buff *skb, u16 sport, struct qpnic_tx_flow *flow)
{
	unsigned int iplen = qpnic_ip_hdr_len(av);
	bool queued = true;
	__le32 icrc;
	int err;

	if (!av->loopback && !qpnic_skb_route(qdev, av, skb))
		return false;
	trace_qpnic_pkt_send(&qdev->ibdev, skb->data, skb->len);
	qpnic_push_udp_ip(av, skb, sport);
	/*
	 * The transmit queue follows the flow: the hash carries the entropy
	 * of the UDP source port (per QP, or per flow label), as a peer's
	 * RSS sees it, and spares the stack dissecting the packet.
	 */
	skb_set_hash(skb, jhash_1word(sport, 0), PKT_HASH_TYPE_L4);
	qpnic_count_n(qdev, QPNIC_CNT_TX_PACKETS, qpnic_lo_npkts(skb));

	/*
	 * The ICRC guards the wire. A packet to this device never leaves
	 * the host's memory, so it goes without one (its place stays zero)
	 * and the receive path does not check it: two CRC passes over every
	 * byte saved, as an RNIC's internal loopback saves them.
	 */
	if (av->loopback) {
		qpnic_lo_hook_t hook = READ_ONCE(qpnic_kunit_lo_hook);
		unsigned int copies = hook ? hook(skb) : 1;

		if (copies == QPNIC_LO_REFUSED) {
			qpnic_drop(qdev, QPNIC_CNT_TX_DROP_STACK, NULL);
			kfree_skb(skb);
			return false;
		}
		/* the receive path takes the packet at its UDP header */
		__skb_pull(skb, iplen);
		while (copies-- > 1) {
			struct sk_buff *dup = skb_copy(skb, GFP_ATOMIC);

			if (dup)
				qpnic_loopback_queue(qdev, dup);
		}
		if (copies)	/* the hook lost it, as a wire would */
			kfree_skb(skb);
		else
			queued = qpnic_loopback_queue(qdev, skb);
		/* (an inline section on this CPU delivers it before it ends) */
		if (this_cpu_read(qpnic_loopback_inline) != qdev)
			queue_work(qpnic_wq, &qdev->loopback_work);
		return queued;
	}
	icrc = cpu_to_le32(qpnic_icrc(skb, iplen + sizeof(struct udphdr)));
	memcpy(skb_tail_pointer(skb) - QPNIC_ICRC_LEN, &icrc, sizeof(icrc));
	skb->ip_summed = CHECKSUM_NONE;
	qpnic_tx_flow_charge(flow, skb);
	if (av->network_type == RDMA_NETWORK_IPV4) {
		memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
		err = ip_local_out(&init_net, NULL, skb);
	} else {
		memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
		err = ip6_local_out(&init_net, NULL, skb);
	}
	/* NET_XMIT_CN: queued, though the queue is congested */
	if (err && err != NET_XMIT_CN) {
		qpnic_drop(qdev, QPNIC_CNT_TX_DROP_STACK, NULL);
		return false;
	}
	return true;
}

/*
 * Whether packets to @av may go as loopback segments (qpnic_lo_cb): to
 * this device, unless KUnit's faulty wire wants every packet alone.
 */
bool qpnic_lo_segments(const struct qpnic_av *av)
{
	return av->loopback && (!READ_ONCE(qpnic_kunit_lo_hook) ||
				READ_ONCE(qpnic_kunit_lo_segments));
}

/*
 * KUnit's faulty wire: how many copies of a loopback packet to deliver
 * (0 drops it). Only the KUnit suite sets it.
 */
qpnic_lo_hook_t qpnic_kunit_lo_hook;
EXPORT_SYMBOL_NS_GPL(qpnic_kunit_lo_hook, QPNIC_KUNIT);
bool qpnic_kunit_lo_segments;
EXPORT_SYMBOL_NS_GPL(qpnic_kunit_lo_segments, QPNIC_KUNIT);

/* Take @lane to deliver to its QPs: false when another deliverer has it. */
static bool qpnic_lo_lane_take(struct qpnic_lo_lane *lane)
{
	return !test_and_set_bit_lock(0, &lane->busy);
}

/* Let @lane go; this CPU looks at it again (its loop, the section's end). */
static void qpnic_lo_lane_release(struct qpnic_lo_lane *lane)
{
	clear_bit_unlock(0, &lane->busy);
	/*
	 * Pairs with the smp_mb() a sender passes between queueing and its
	 * look at the bit (qpnic_loopback_deliver): either it finds the bit
	 * clear or this CPU's next look at the lane finds its packet.
	 */
	smp_mb__after_atomic();
}

/*
 * Deliver up to *@budget of @lane's packets, BH off as on the wire path,
 * unless another deliverer holds the lane: that one takes what is queued
 * before it lets go (it looks again after). Returns whether it delivered
 * any.
 */
static bool qpnic_loopback_deliver_lane(struct qpnic_dev *qdev,
					struct qpnic_lo_lane *lane, int *budget)
{
	bool delivered = false;
	struct sk_buff *skb;
	u32 npkts;

	while (*budget && !skb_queue_empty_lockless(&lane->q) &&
	       qpnic_lo_lane_take(lane)) {
		qpnic_resp_ack_batch_begin();
		while (*budget && (skb = skb_dequeue(&lane->q))) {
			--*budget;
			delivered = true;
			npkts = qpnic_lo_npkts(skb);
			atomic_sub(npkts, &qdev->lo_queued);
			qpnic_count_n(qdev, QPNIC_CNT_LOOPBACK_PACKETS, npkts);
			qpnic_rcv_dev(qdev, skb, true);
		}
		/* (the ACKs it sends queue in other lanes, or this one) */
		qpnic_resp_ack_batch_end();
		qpnic_lo_lane_release(lane);
	}
	return delivered;
}

/*
 * Deliver the device's loopback packets, up to QPNIC_LOOPBACK_BUDGET in
 * all, going over the lanes until a round finds nothing it may take (the
 * answers of one lane's packets queue in another). Packets left over go
 * to the work item.
 */
static void qpnic_loopback_deliver(struct qpnic_dev *qdev)
{
	int budget = QPNIC_LOOPBACK_BUDGET;
	bool delivered;
	unsigned int i;

	/*
	 * The packets this CPU queued before the look at a lane's bit, as
	 * the holder's letting go comes before its look at the lane: one of
	 * the two sees the other (a failed test_and_set_bit_lock() need not
	 * order anything).
	 */
	smp_mb();
	do {
		delivered = false;
		for (i = 0; i < QPNIC_LOOPBACK_LANES; i++)
			delivered |= qpnic_loopback_deliver_lane(qdev,
								 &qdev->lo_lanes[i],
								 &budget);
	} while (delivered && budget);
	if (budget)
		return;
	for (i = 0; i < QPNIC_LOOPBACK_LANES; i++) {
		if (!skb_queue_empty_lockless(&qdev->lo_lanes[i].q)) {
			queue_work(qpnic_wq, &qdev->loopback_work);
			return;
		}
	}
}

/*
 * An ACK, a NAK or an ATOMIC ACKNOWLEDGE (@f) from a responder of @qdev
 * to one of its own QPs, handed to that QP's completer at once instead
 * of going through the lane as a packet: no skb to allocate, build,
 * queue, parse and free; the counters, the checks and the trace as for
 * the packet. Only inside this CPU's inline section of @qdev, whose end
 * goes over the lanes again (a sender that finds the lane's bit held
 * meanwhile is not stranded), and only when this CPU takes the bit of
 * an empty lane: then nothing the responder sent that QP before is
 * still on its way, and its answers stay in PSN order. False when it
 * must go as a packet. BH off.
 */
bool qpnic_loopback_ack(struct qpnic_dev *qdev, const struct qpnic_hdr_fields *f)
{
	struct qpnic_lo_lane *lane = qpnic_loopback_lane_of(qdev, f->dqpn, true);
	struct qpnic_pkt pkt = {
		.flags = qpnic_opcode_flags(f->opcode),
		.psn = f->psn,
		.dqpn = f->dqpn,
		.npkts = 1,
		.pkey = f->pkey,
		.opcode = f->opcode,
		.hdr_len = qpnic_opcode_hdr_len(f->opcode),
	};
	u8 hdr[QPNIC_BTH_LEN + QPNIC_AETH_LEN + QPNIC_ATMACK_LEN];
	bool direct;

	if (this_cpu_read(qpnic_loopback_inline) != qdev ||
	    READ_ONCE(qpnic_kunit_lo_hook) || !skb_queue_empty_lockless(&lane->q) ||
	    !qpnic_lo_lane_take(lane))
		return false;
	/* (a sender may have queued between the look and the bit) */
	direct = skb_queue_empty_lockless(&lane->q);
	if (direct) {
		if (trace_qpnic_pkt_send_enabled()) {
			qpnic_hdr_build(hdr, f);
			trace_qpnic_pkt_send(&qdev->ibdev, hdr,
					     pkt.hdr_len + QPNIC_ICRC_LEN);
		}
		qpnic_count(qdev, QPNIC_CNT_TX_PACKETS);
		qpnic_count(qdev, QPNIC_CNT_LOOPBACK_PACKETS);
		qpnic_count(qdev, QPNIC_CNT_LOOPBACK_DIRECT_ACKS);
		qpnic_rcv_ack(qdev, &pkt, f->aeth.syndrome, f->atmack_orig);
	}
	qpnic_lo_lane_release(lane);
	return direct;
}

/* Inside an inline section: deliver what is queued now. */
void qpnic_loopback_inline_deliver(struct qpnic_dev *qdev)
{
	qpnic_loopback_deliver(qdev);
}

/*
 * Begin an inline section for @qdev, BH off: returns false when this CPU
 * is in one already (whose end delivers, if it is @qdev's).
 */
bool qpnic_loopback_inline_begin(struct qpnic_dev *qdev)
{
	if (this_cpu_read(qpnic_loopback_inline))
		return false;
	this_cpu_write(qpnic_loopback_inline, qdev);
	return true;
}

/* End a section qpnic_loopback_inline_begin() began, delivering first. */
void qpnic_loopback_inline_end(struct qpnic_dev *qdev)
{
	qpnic_loopback_deliver(qdev);
	this_cpu_write(qpnic_loopback_inline, NULL);
}

bool qpnic_kunit_inline_begin(struct ib_device *ibdev)
{
	return qpnic_loopback_inline_begin(to_qdev(ibdev));
}
EXPORT_SYMBOL_NS_GPL(qpnic_kunit_inline_begin, QPNIC_KUNIT);

void qpnic_kunit_inline_end(struct ib_device *ibdev)
{
	qpnic_loopback_inline_end(to_qdev(ibdev));
}
EXPORT_SYMBOL_NS_GPL(qpnic_kunit_inline_end, QPNIC_KUNIT);

static void qpnic_loopback_work(struct work_struct *work)
{
	struct qpnic_dev *qdev = container_of(work, struct qpnic_dev,
					      loopback_work);

	local_bh_disable();
	if (qpnic_loopback_inline_begin(qdev))
		qpnic_loopback_inline_end(qdev);
	else	/* (not reached: a work item starts outside any section) */
		qpnic_loopback_deliver(qdev);
	local_bh_enable();
}

void qpnic_loopback_init(struct qpnic_dev *qdev)
{
	unsigned int i;

	for (i = 0; i < QPNIC_LOOPBACK_LANES; i++)
		skb_queue_head_init(&qdev->lo_lanes[i].q);
	atomic_set(&qdev->lo_queued, 0);
	INIT_WORK(&qdev->loopback_work, qpnic_loopback_work);
}

/* Device teardown: no loopback packet is delivered after this. */
void qpnic_loopback_stop(struct qpnic_dev *qdev)
{
	unsigned int i;

	cancel_work_sync(&qdev->loopback_work);
	for (i = 0; i < QPNIC_LOOPBACK_LANES; i++)
		skb_queue_purge(&qdev->lo_lanes[i].q);
	atomic_set(&qdev->lo_queued, 0);
}

static struct socket *qpnic_udp_open(bool ipv6)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.encap_type = 1,
		.encap_rcv = qpnic_udp_encap_recv,
	};
	struct udp_port_cfg cfg = {
		.local_udp_port = htons(QPNIC_UDP_PORT),
	};
	struct socket *sock;
	int err;

	if (ipv6) {
		cfg.family = AF_INET6;
		cfg.ipv6_v6only = 1;
	} else {
		cfg.family = AF_INET;
	}
	err = udp_sock_create(&init_net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(&init_net, sock, &tcfg);
	return sock;
}

int qpnic_net_init(void)
{
	qpnic_sock4 = qpnic_udp_open(false);
	if (IS_ERR(qpnic_sock4)) {
		int err = PTR_ERR(qpnic_sock4);

		qpnic_sock4 = NULL;
		if (err == -EADDRINUSE)
			pr_err("qpnic: UDP port %u is taken (is rdma_rxe loaded?); unload its owner first\n",
			       QPNIC_UDP_PORT);
		else
			pr_err("qpnic: cannot open UDP port %u: %d\n",
			       QPNIC_UDP_PORT, err);
		return err;
	}
	if (IS_ENABLED(CONFIG_IPV6)) {
		qpnic_sock6 = qpnic_udp_open(true);
		if (IS_ERR(qpnic_sock6)) {
			int err = PTR_ERR(qpnic_sock6);

			/* An IPv6-less system (ipv6.disable=1) still gets RoCE over IPv4. */
			qpnic_sock6 = NULL;
			if (err != -EAFNOSUPPORT) {
				pr_err("qpnic: cannot open UDP/IPv6 port %u: %d\n",
				       QPNIC_UDP_PORT, err);
				qpnic_net_exit();
				return err;
			}
		}
	}
	return 0;
}

void qpnic_net_exit(void)
{
	/*
	 * The last packets in a NIC's queue, then their destructor's code.
	 * A qdisc frees them when its link goes down, so this ends; say so
	 * while it lasts.
	 */
	while (!wait_var_event_timeout(&qpnic_tx_flows,
				       !atomic_read(&qpnic_tx_flows), 10 * HZ))
		pr_warn("qpnic: unload waits for %d QPs' packets a NIC still holds\n",
			atomic_read(&qpnic_tx_flows));
	if (qpnic_sock6)
		udp_tunnel_sock_release(qpnic_sock6);
	if (qpnic_sock4)
		udp_tunnel_sock_release(qpnic_sock4);
	qpnic_sock4 = NULL;
	qpnic_sock6 = NULL;
}
