// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Multicast groups: attach/detach bookkeeping and the fan-out of a UD
 * packet sent to a group to every QP attached to it. The core counts
 * attachments in qp->usecnt (which keeps an attached QP from being
 * destroyed), so every successful attach here is one count and every
 * detach takes one back.
 *
 * Changes are made under mcast_lock (a mutex) and, for the lists the
 * receive path walks, mcast_rx_lock (IRQ-safe). The receive path copies
 * a group's QP numbers under mcast_rx_lock and delivers to each QP through
 * qpnic_qp_get(), like any other packet: no QP pointer outlives the lock.
 *
 * The IP group itself is joined by whoever wants its traffic to reach the
 * host (rdma_cm does on a multicast join, as for rdma_rxe).
 */
#include <linux/etherdevice.h>
#include <linux/ipv6.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <rdma/ib_addr.h>

#include "qpnic.h"

struct qpnic_mcast_group {
	struct list_head list;		/* qdev->mcast_groups */
	union ib_gid mgid;
	u8 mac[ETH_ALEN];
	u32 num_qps;
	struct list_head attachments;
};

struct qpnic_mcast_attach {
	struct list_head list;
	struct qpnic_qp *qp;
	u32 qpn;
	u32 count;
};

static void qpnic_mgid_to_mac(const union ib_gid *mgid, u8 *mac)
{
	if (ipv6_addr_v4mapped((const struct in6_addr *)mgid->raw))
		ip_eth_mc_map(*(const __be32 *)&mgid->raw[12], mac);
	else
		ipv6_eth_mc_map((const struct in6_addr *)mgid->raw, mac);
}

static struct qpnic_mcast_group *qpnic_mcast_find(struct qpnic_dev *qdev,
						  const union ib_gid *mgid)
{
	struct qpnic_mcast_group *grp;

	list_for_each_entry(grp, &qdev->mcast_groups, list)
		if (!memcmp(grp->mgid.raw, mgid->raw, sizeof(mgid->raw)))
			return grp;
	return NULL;
}

static struct qpnic_mcast_attach *qpnic_mcast_find_qp(struct qpnic_mcast_group *grp,
						      struct qpnic_qp *qp)
{
	struct qpnic_mcast_attach *at;

	list_for_each_entry(at, &grp->attachments, list)
		if (at->qp == qp)
			return at;
	return NULL;
}

static void qpnic_mcast_free_group(struct qpnic_dev *qdev,
				   struct qpnic_mcast_group *grp)
{
	struct net_device *ndev = qpnic_netdev_get(qdev);

	/* A netdev that is gone took its multicast list with it. */
	if (ndev) {
		dev_mc_del(ndev, grp->mac);
		dev_put(ndev);
	}
	spin_lock_irq(&qdev->mcast_rx_lock);
	list_del(&grp->list);
	spin_unlock_irq(&qdev->mcast_rx_lock);
	kfree(grp);
}

int qpnic_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct qpnic_dev *qdev = to_qdev(ibqp->device);
	struct qpnic_qp *qp = to_qqp(ibqp);
	struct qpnic_mcast_group *grp;
	struct qpnic_mcast_attach *at;
	struct net_device *ndev;
	size_t ngroups = 0;
	int err = 0;

	if (ibqp->qp_type != IB_QPT_UD) {
		ibdev_dbg(&qdev->ibdev, "attach_mcast: QP %u is type %d, needs UD\n",
			  ibqp->qp_num, ibqp->qp_type);
		return -EINVAL;
	}
	if (!rdma_is_multicast_addr((struct in6_addr *)gid->raw)) {
		ibdev_dbg(&qdev->ibdev, "attach_mcast: %pI6 is not a multicast GID\n",
			  gid->raw);
		return -EINVAL;
	}

	mutex_lock(&qdev->mcast_lock);
	grp = qpnic_mcast_find(qdev, gid);
	if (!grp) {
		list_for_each_entry(grp, &qdev->mcast_groups, list)
			ngroups++;
		if (ngroups >= QPNIC_MAX_MCAST_GRP) {
			ibdev_dbg(&qdev->ibdev, "attach_mcast: limit of %u groups reached\n",
				  QPNIC_MAX_MCAST_GRP);
			err = -ENOMEM;
			goto out;
		}
		grp = kzalloc(sizeof(*grp), GFP_KERNEL);
		if (!grp) {
			err = -ENOMEM;
			goto out;
		}
		grp->mgid = *gid;
		INIT_LIST_HEAD(&grp->attachments);
		qpnic_mgid_to_mac(gid, grp->mac);
		ndev = qpnic_netdev_get(qdev);
		err = ndev ? dev_mc_add(ndev, grp->mac) : -ENODEV;
		dev_put(ndev);
		if (err) {
			ibdev_dbg(&qdev->ibdev, "attach_mcast: dev_mc_add %pM failed %d\n",
				  grp->mac, err);
			kfree(grp);
			goto out;
		}
		spin_lock_irq(&qdev->mcast_rx_lock);
		list_add(&grp->list, &qdev->mcast_groups);
		spin_unlock_irq(&qdev->mcast_rx_lock);
	}
	at = qpnic_mcast_find_qp(grp, qp);
	if (at) {
		at->count++;
		goto out;
	}
	if (grp->num_qps >= QPNIC_MAX_MCAST_QP_ATTACH) {
		ibdev_dbg(&qdev->ibdev, "attach_mcast: group %pI6 has %u QPs, the limit\n",
			  gid->raw, grp->num_qps);
		err = -ENOMEM;
		goto out;
	}
	/* A process's attachment is charged to its memory cgroup. */
	at = kzalloc(sizeof(*at), qp->user ? GFP_KERNEL_ACCOUNT : GFP_KERNEL);
	if (!at) {
		err = -ENOMEM;
		if (!grp->num_qps)
			qpnic_mcast_free_group(qdev, grp);
		goto out;
	}
	at->qp = qp;
	at->qpn = ibqp->qp_num;
	at->count = 1;
	spin_lock_irq(&qdev->mcast_rx_lock);
	list_add(&at->list, &grp->attachments);
	grp->num_qps++;
	spin_unlock_irq(&qdev->mcast_rx_lock);
out:
	mutex_unlock(&qdev->mcast_lock);
	return err;
}

int qpnic_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct qpnic_dev *qdev = to_qdev(ibqp->device);
	struct qpnic_mcast_group *grp;
	struct qpnic_mcast_attach *at = NULL;
	int err = 0;

	mutex_lock(&qdev->mcast_lock);
	grp = qpnic_mcast_find(qdev, gid);
	if (grp)
		at = qpnic_mcast_find_qp(grp, to_qqp(ibqp));
	if (!at) {
		ibdev_dbg(&qdev->ibdev, "detach_mcast: QP %u is not attached to %pI6\n",
			  ibqp->qp_num, gid->raw);
		err = -EINVAL;
		goto out;
	}
	if (--at->count)
		goto out;
	spin_lock_irq(&qdev->mcast_rx_lock);
	list_del(&at->list);
	grp->num_qps--;
	spin_unlock_irq(&qdev->mcast_rx_lock);
	kfree(at);
	if (!grp->num_qps)
		qpnic_mcast_free_group(qdev, grp);
out:
	mutex_unlock(&qdev->mcast_lock);
	return err;
}

/* Device teardown: the core has detached every QP; free what is left. */
void qpnic_mcast_cleanup(struct qpnic_dev *qdev)
{
	struct qpnic_mcast_group *grp, *tmp;
	struct qpnic_mcast_attach *at, *atmp;

	mutex_lock(&qdev->mcast_lock);
	list_for_each_entry_safe(grp, tmp, &qdev->mcast_groups, list) {
		list_for_each_entry_safe(at, atmp, &grp->attachments, list)
			kfree(at);
		list_del(&grp->list);
		kfree(grp);
	}
	mutex_unlock(&qdev->mcast_lock);
}

/*
 * A UD packet to the multicast QPN: every QP attached to the group its
 * destination IP address names gets it, each through the UD responder.
 * BH context; the caller frees the skb.
 */
void qpnic_mcast_rcv(struct qpnic_dev *qdev, struct sk_buff *skb,
		     const struct qpnic_pkt *pkt)
{
	u32 qpns[QPNIC_MAX_MCAST_QP_ATTACH];
	struct qpnic_mcast_attach *at;
	struct qpnic_mcast_group *grp;
	unsigned int n = 0, i;
	union ib_gid mgid;

	if (skb->protocol == htons(ETH_P_IP))
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)mgid.raw);
	else
		memcpy(mgid.raw, &ipv6_hdr(skb)->daddr, sizeof(mgid.raw));
	spin_lock(&qdev->mcast_rx_lock);
	grp = qpnic_mcast_find(qdev, &mgid);
	if (grp)
		list_for_each_entry(at, &grp->attachments, list)
			if (n < ARRAY_SIZE(qpns))
				qpns[n++] = at->qpn;
	spin_unlock(&qdev->mcast_rx_lock);
	if (!n)
		qpnic_drop(qdev, QPNIC_CNT_RX_DROP_UNKNOWN_QP, pkt);
	for (i = 0; i < n; i++) {
		struct qpnic_qp *qp = qpnic_qp_get(qdev, qpns[i]);

		if (!qp)
			continue;
		if (qp->ibqp.qp_type == IB_QPT_UD)
			qpnic_resp_ud(qp, skb, pkt);
		qpnic_qp_put(qp);
	}
}
