/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What qpnic exports to its KUnit suites: creating and removing a device
 * on a netdev without going through rdma netlink, and the receive path's
 * entry point. Everything else the suites do goes through the ordinary
 * ib_* API (and wire.h for the packet format).
 */
#ifndef QPNIC_EXPORT_H
#define QPNIC_EXPORT_H

#include <linux/skbuff.h>

struct ib_device;
struct ib_pd;
struct net_device;

int qpnic_device_add(const char *name, struct net_device *ndev,
		     struct ib_device **ibdev);
void qpnic_device_remove(struct ib_device *ibdev);
/* One RoCEv2 packet as the UDP socket hands it over (data at the UDP header). */
void qpnic_rcv(struct sk_buff *skb);
/*
 * A faulty wire for the data-path suite: called for every packet sent to
 * a GID of the sending device (skb->data at the IP header), it returns how
 * many copies to deliver: 0 loses the packet, 2 duplicates it, and
 * QPNIC_LO_REFUSED has the sending host refuse it, as a full transmit
 * queue does (the sender learns of it). It may change the IP header's
 * ECN field, as a congested router does.
 */
#define QPNIC_LO_REFUSED	(~0U)
typedef unsigned int (*qpnic_lo_hook_t)(struct sk_buff *skb);
extern qpnic_lo_hook_t qpnic_kunit_lo_hook;
/*
 * A loopback packet may be a segment: consecutive packets of one SEND or
 * WRITE of a connected QP under one header, the first packet's PSN and
 * an opcode that says where the segment starts and ends in its message,
 * their payloads back to back (in page fragments). It never goes through
 * a NIC. A hook sees segments only while qpnic_kunit_lo_segments is set;
 * otherwise every packet goes alone.
 */
struct qpnic_lo_cb {
	u16 npkts;		/* 0 for a plain packet */
};

static inline u32 qpnic_lo_npkts(const struct sk_buff *skb)
{
	return ((const struct qpnic_lo_cb *)skb->cb)->npkts ?: 1;
}

extern bool qpnic_kunit_lo_segments;
/*
 * An inline loopback section of @ibdev's on this CPU, BH off (as a user
 * QP's requester opens one): packets to the device's own GIDs sent inside
 * it are delivered when the outermost section ends, not by the work item.
 * begin returns false when a section is open already (end only the one
 * that returned true).
 */
bool qpnic_kunit_inline_begin(struct ib_device *ibdev);
void qpnic_kunit_inline_end(struct ib_device *ibdev);
/* Whether @key names an MR of @pd now (looked up as a packet's SGE is). */
bool qpnic_kunit_mr_lookup(struct ib_pd *pd, u32 key);

#endif /* QPNIC_EXPORT_H */
