/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Helpers the qpnic KUnit suites share: a test netdev that drops what it
 * transmits (or does what a suite's ops say), QP moves through INIT, RTR
 * and RTS looping back to a link-local GID, the port counters by name, a
 * CQ poll with a deadline and the device's default GID.
 */
#ifndef QPNIC_TEST_UTIL_H
#define QPNIC_TEST_UTIL_H

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

/*
 * The IPv4 and UDP headers of a RoCEv2 packet of @len bytes at @buf, as a
 * sender puts them on the wire: DF, TTL 64, TOS 0, ID 0, to port 4791,
 * checksums 0 (the ICRC masks them).
 */
static inline void qpnic_test_ipv4_udp(void *buf, size_t len, u32 saddr,
				       u32 daddr, u16 sport)
{
	struct iphdr *iph = buf;
	struct udphdr *uh = (struct udphdr *)(iph + 1);

	iph->version = 4;
	iph->ihl = 5;
	iph->tos = 0;
	iph->id = 0;
	iph->tot_len = htons(len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = 64;
	iph->protocol = IPPROTO_UDP;
	iph->check = 0;
	iph->saddr = htonl(saddr);
	iph->daddr = htonl(daddr);
	uh->source = htons(sport);
	uh->dest = htons(4791);
	uh->len = htons(len - sizeof(*iph));
	uh->check = 0;
}

/*
 * The UDP header of a packet a loopback hook (qpnic_kunit_lo_hook) sees:
 * behind its IPv4 or IPv6 header. The BTH follows it.
 */
static inline u8 *qpnic_test_lo_udp(struct sk_buff *skb)
{
	u8 *ip = skb_network_header(skb);

	return ip + ((ip[0] >> 4) == 4 ? sizeof(struct iphdr) :
					  sizeof(struct ipv6hdr));
}

static inline netdev_tx_t qpnic_test_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

static const struct net_device_ops __maybe_unused qpnic_test_netdev_ops = {
	.ndo_start_xmit = qpnic_test_xmit,
};

/* An Ethernet test netdev, up, with @ops and the extra @flags. */
static inline struct net_device *
qpnic_test_netdev_create_ops(const char *name, const struct net_device_ops *ops,
			     unsigned int flags)
{
	struct net_device *ndev;
	int err;

	ndev = alloc_netdev(0, name, NET_NAME_USER, ether_setup);
	if (!ndev)
		return ERR_PTR(-ENOMEM);
	ndev->netdev_ops = ops;
	ndev->flags |= flags;
	eth_hw_addr_random(ndev);
	err = register_netdev(ndev);
	if (err) {
		free_netdev(ndev);
		return ERR_PTR(err);
	}
	rtnl_lock();
	err = dev_open(ndev, NULL);
	rtnl_unlock();
	if (err) {
		unregister_netdev(ndev);
		free_netdev(ndev);
		return ERR_PTR(err);
	}
	return ndev;
}

static inline struct net_device *qpnic_test_netdev_create(const char *name)
{
	return qpnic_test_netdev_create_ops(name, &qpnic_test_netdev_ops, 0);
}

static inline void qpnic_test_netdev_destroy(struct net_device *ndev)
{
	unregister_netdev(ndev);
	free_netdev(ndev);
}

static inline int qpnic_to_init(struct ib_qp *qp)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qkey = 0x11111111,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ,
	};
	int mask = IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT;

	mask |= qp->qp_type == IB_QPT_UD ? IB_QP_QKEY : IB_QP_ACCESS_FLAGS;
	return ib_modify_qp(qp, &a, mask);
}

/* A link-local destination: the core derives its MAC without ARP/ND. */
static inline int qpnic_to_rtr(struct ib_qp *qp)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RTR };
	int mask = IB_QP_STATE;

	if (qp->qp_type != IB_QPT_UD) {
		a.path_mtu = IB_MTU_1024;
		a.dest_qp_num = qp->qp_num;
		a.rq_psn = 0x123;
		a.max_dest_rd_atomic = 1;
		a.min_rnr_timer = 12;
		a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
		rdma_ah_set_port_num(&a.ah_attr, 1);
		rdma_ah_set_grh(&a.ah_attr, NULL, 0, 0, 64, 0);
		a.ah_attr.grh.dgid.global.subnet_prefix = cpu_to_be64(0xfe80000000000000ULL);
		a.ah_attr.grh.dgid.global.interface_id = cpu_to_be64(0x0200000000000001ULL);
		mask |= IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN;
		if (qp->qp_type == IB_QPT_RC)
			mask |= IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
	}
	return ib_modify_qp(qp, &a, mask);
}

static inline int qpnic_to_rts(struct ib_qp *qp)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_RTS, .sq_psn = 0x456, .timeout = 14,
		.retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 1,
	};
	int mask = IB_QP_STATE | IB_QP_SQ_PSN;

	if (qp->qp_type == IB_QPT_RC)
		mask |= IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			IB_QP_MAX_QP_RD_ATOMIC;
	return ib_modify_qp(qp, &a, mask);
}

/* What qpnic_test_rc_connect() sets that differs between suites. */
struct qpnic_test_rc_path {
	union ib_gid *dgid;
	u32 psn;		/* both directions start here */
	int access;		/* qp_access_flags */
	u8 rd_atomic;		/* max_rd_atomic and max_dest_rd_atomic */
	u8 timeout;		/* local ACK timeout */
	u8 retry_cnt;
	u8 rnr_retry;
};

/*
 * @qp, RC or UC, through INIT and RTR to RTS towards QP @dqpn at
 * @path->dgid: MTU 1024, an RNR timer of 10 us.
 */
static inline int qpnic_test_rc_connect(struct ib_qp *qp, u32 dqpn,
					const struct qpnic_test_rc_path *path)
{
	bool rc = qp->qp_type == IB_QPT_RC;
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT, .port_num = 1,
		.qp_access_flags = path->access,
	};
	int mask;
	int err;

	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			   IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = path->psn;
	a.max_dest_rd_atomic = path->rd_atomic;
	a.min_rnr_timer = 1;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, path->dgid, 0, 0, 64, 0);
	mask = IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
	       IB_QP_RQ_PSN;
	if (rc)
		mask |= IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
	err = ib_modify_qp(qp, &a, mask);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = path->psn;
	a.timeout = path->timeout;
	a.retry_cnt = path->retry_cnt;
	a.rnr_retry = path->rnr_retry;
	a.max_rd_atomic = path->rd_atomic;
	mask = IB_QP_STATE | IB_QP_SQ_PSN;
	if (rc)
		mask |= IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			IB_QP_MAX_QP_RD_ATOMIC;
	return ib_modify_qp(qp, &a, mask);
}

/* The port counter @name of @ibdev: the suites name what they expect. */
static inline u64 qpnic_test_counter(struct kunit *test, struct ib_device *ibdev,
				     const char *name)
{
	const struct ib_device_ops *ops = &ibdev->ops;
	struct rdma_hw_stats *stats;
	u64 val = U64_MAX;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, ops->alloc_hw_port_stats);
	stats = ops->alloc_hw_port_stats(ibdev, 1);
	KUNIT_ASSERT_NOT_NULL(test, stats);
	ops->get_hw_stats(ibdev, stats, 1, stats->num_counters);
	for (i = 0; i < stats->num_counters; i++)
		if (!strcmp(stats->descs[i].name, name))
			val = stats->value[i];
	rdma_free_hw_stats_struct(stats);
	KUNIT_ASSERT_NE_MSG(test, val, U64_MAX, "no counter %s", name);
	return val;
}

/* Poll @cq for one completion for up to @ms milliseconds; 0 if none came. */
static inline int qpnic_test_poll(struct ib_cq *cq, struct ib_wc *wc,
				  unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	do {
		int n = ib_poll_cq(cq, 1, wc);

		if (n)
			return n;
		usleep_range(500, 1000);
	} while (time_before(jiffies, end));
	return ib_poll_cq(cq, 1, wc);
}

/*
 * One completion on @cq within 3 s, with @status, @wr_id and (when the
 * status defines it) @opcode.
 */
static inline void qpnic_test_expect(struct kunit *test, struct ib_cq *cq,
				     enum ib_wc_status status,
				     enum ib_wc_opcode opcode, u64 wr_id,
				     struct ib_wc *wc)
{
	KUNIT_ASSERT_EQ_MSG(test, qpnic_test_poll(cq, wc, 3000), 1,
			    "no completion for %llu", wr_id);
	KUNIT_EXPECT_EQ_MSG(test, wc->status, status, "wr_id %llu", wr_id);
	if (status == IB_WC_SUCCESS || status == IB_WC_WR_FLUSH_ERR)
		KUNIT_EXPECT_EQ_MSG(test, wc->opcode, opcode, "wr_id %llu", wr_id);
	KUNIT_EXPECT_EQ(test, wc->wr_id, wr_id);
}

/* GID 0 of @ibdev, which the core adds from a work item after registering. */
static inline int qpnic_test_gid0(struct ib_device *ibdev, union ib_gid *gid)
{
	unsigned long end = jiffies + 5 * HZ;
	int err;

	while ((err = rdma_query_gid(ibdev, 1, 0, gid)) && time_before(jiffies, end))
		usleep_range(1000, 2000);
	return err;
}

/*
 * A DMA MR of @pd with @access, through the driver's own op (the global
 * rkey ib_alloc_pd can give allows no atomics), set up as the core would
 * set it up; an ERR_PTR if the driver refuses. Freed by ops.dereg_mr.
 */
static inline struct ib_mr *qpnic_test_dma_mr(struct ib_pd *pd, int access)
{
	struct ib_mr *mr = pd->device->ops.get_dma_mr(pd, access);

	if (!IS_ERR(mr)) {
		mr->device = pd->device;
		mr->pd = pd;
		mr->type = IB_MR_TYPE_DMA;
	}
	return mr;
}

#endif /* QPNIC_TEST_UTIL_H */
