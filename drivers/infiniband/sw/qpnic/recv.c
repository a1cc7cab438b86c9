// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The receive path, in the UDP socket's softirq context. Every RoCEv2
 * packet is parsed (the opcode first, every length bounded), its ICRC
 * checked, and its destination QP found (with a reference destroy_qp
 * waits for) and checked against the packet (IBTA 9.6: P_Key, QP type,
 * QP state) before anything acts on it. A packet that fails is counted by
 * reason and dropped, never logged. Requests go to the responder
 * (resp.c), responses and CNPs to the completer (comp.c).
 */
#include <linux/if_vlan.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>
#include <rdma/ib_mad.h>

#include "qpnic.h"
#include "trace.h"

/*
 * The qpnic device on @ndev, with a reference; NULL for anybody else's.
 * A packet that came in on a VLAN device belongs to the device of the
 * real netdev under it (the core gives the VLAN's addresses to that
 * device's GID table, and transmit reaches the VLAN through the route).
 */
static struct qpnic_dev *qpnic_dev_get_by_netdev(struct net_device *ndev)
{
	struct ib_device *ibdev = ib_device_get_by_netdev(ndev, RDMA_DRIVER_RXE);

	if (!ibdev && is_vlan_dev(ndev))
		ibdev = ib_device_get_by_netdev(vlan_dev_real_dev(ndev),
						RDMA_DRIVER_RXE);
	if (ibdev && !qpnic_owns(ibdev)) {
		ib_device_put(ibdev);
		return NULL;
	}
	return ibdev ? to_qdev(ibdev) : NULL;
}

static bool qpnic_opcode_fits_qp(u8 opcode, enum ib_qp_type type)
{
	switch (QPNIC_OPC_CLASS(opcode)) {
	case QPNIC_OPC_RC:
		return type == IB_QPT_RC;
	case QPNIC_OPC_UC:
		return type == IB_QPT_UC;
	case QPNIC_OPC_UD:
		return type == IB_QPT_UD || type == IB_QPT_GSI;
	case QPNIC_OPC_CNP:	/* only RC marks its packets ECN-capable */
		return type == IB_QPT_RC;
	default:
		return false;
	}
}

/*
 * A responder takes requests from RTR on; a requester takes responses
 * while it can have requests outstanding. The state is read without the
 * queue locks: the transport checks it again under them.
 */
static bool qpnic_state_takes(enum ib_qp_state state, u32 flags)
{
	switch (state) {
	case IB_QPS_RTR:
		return flags & QPNIC_OP_REQ;
	case IB_QPS_RTS:
	case IB_QPS_SQD:
	case IB_QPS_SQE:
		return true;
	default:
		return false;
	}
}

/* Whether the IP header before @skb's UDP header says CE. */
static bool qpnic_skb_ce(const struct sk_buff *skb)
{
	const struct iphdr *iph = ip_hdr(skb);

	if (iph->version == 4)
		return INET_ECN_is_ce(iph->tos);
	return INET_ECN_is_ce(ipv6_get_dsfield(ipv6_hdr(skb)));
}

/*
 * The QP a parsed packet goes to, with a reference, checked against the
 * packet; returns the drop reason, or QPNIC_NUM_COUNTERS.
 */
static enum qpnic_counter qpnic_rcv_find_qp(struct qpnic_dev *qdev,
					    const struct qpnic_pkt *pkt,
					    struct qpnic_qp **qpp)
{
	struct qpnic_qp *qp;

	/* one partition: the low 15 bits match the default P_Key's */
	if ((pkt->pkey & 0x7fff) != (IB_DEFAULT_PKEY_FULL & 0x7fff))
		return QPNIC_CNT_RX_DROP_PKEY;
	/* to a group: the attached QPs decide, one by one */
	if (pkt->dqpn == QPNIC_MCAST_QPN)
		return QPNIC_OPC_CLASS(pkt->opcode) == QPNIC_OPC_UD ?
		       QPNIC_CNT_RX_MCAST : QPNIC_CNT_RX_DROP_QP_TYPE;
	qp = qpnic_qp_get(qdev, pkt->dqpn);
	if (!qp)
		return QPNIC_CNT_RX_DROP_UNKNOWN_QP;
	*qpp = qp;
	if (!qpnic_opcode_fits_qp(pkt->opcode, qp->ibqp.qp_type))
		return QPNIC_CNT_RX_DROP_QP_TYPE;
	if (!qpnic_state_takes(READ_ONCE(qp->state), pkt->flags))
		return QPNIC_CNT_RX_DROP_QP_STATE;
	return QPNIC_NUM_COUNTERS;
}

/* Validate one packet; returns its drop reason, or QPNIC_NUM_COUNTERS. */
static enum qpnic_counter qpnic_rcv_check(struct qpnic_dev *qdev,
					  struct sk_buff *skb, bool loopback,
					  struct qpnic_pkt *pkt,
					  struct qpnic_qp **qpp)
{
	__le32 icrc;
	int err;

	if (!pskb_may_pull(skb, sizeof(struct udphdr)))
		return QPNIC_CNT_RX_DROP_MALFORMED;
	__skb_pull(skb, sizeof(struct udphdr));
	err = qpnic_pkt_parse(skb, pkt);
	if (err)
		return err == -EBADMSG ? QPNIC_CNT_RX_DROP_MALFORMED :
					 QPNIC_CNT_RX_DROP_OPCODE;
	pkt->ce = qpnic_skb_ce(skb);
	if (loopback) {
		/* only this device builds segments: SEND, WRITE, READ data */
		pkt->npkts = qpnic_lo_npkts(skb);
		if (pkt->npkts > 1 &&
		    ((!(pkt->flags & (QPNIC_OP_SEND | QPNIC_OP_WRITE)) &&
		      !((pkt->flags & QPNIC_OP_READ) && (pkt->flags & QPNIC_OP_ACK))) ||
		     pkt->paylen > QPNIC_LO_SEG_BYTES))
			return QPNIC_CNT_RX_DROP_MALFORMED;
	}
	/* (a loopback packet carries none: it never crossed a wire) */
	if (!loopback &&
	    (skb_copy_bits(skb, skb->len - QPNIC_ICRC_LEN, &icrc, sizeof(icrc)) ||
	     le32_to_cpu(icrc) != qpnic_icrc(skb, 0)))
		return QPNIC_CNT_RX_ICRC_ERRORS;
	return qpnic_rcv_find_qp(qdev, pkt, qpp);
}

/*
 * One RoCEv2 packet for @qdev: skb->data at the UDP header, network and
 * transport headers set; @loopback when @qdev built it for itself (its
 * loopback queue), which has no ICRC to check. BH context. Consumes the
 * skb.
 */
void qpnic_rcv_dev(struct qpnic_dev *qdev, struct sk_buff *skb, bool loopback)
{
	struct qpnic_qp *qp = NULL;
	enum qpnic_counter drop;
	struct qpnic_pkt pkt;
	bool parsed;

	drop = qpnic_rcv_check(qdev, skb, loopback, &pkt, &qp);
	if (drop == QPNIC_CNT_RX_MCAST) {
		qpnic_count(qdev, QPNIC_CNT_RX_MCAST);
		qpnic_mcast_rcv(qdev, skb, &pkt);
		consume_skb(skb);
		return;
	}
	if (drop == QPNIC_NUM_COUNTERS) {
		qpnic_count_n(qdev, QPNIC_CNT_RX_PACKETS, pkt.npkts);
		trace_qpnic_pkt_recv(&qdev->ibdev, &pkt);
		if (pkt.flags & QPNIC_OP_REQ) {
			qpnic_resp_rcv(qp, skb, &pkt);
		} else if (pkt.flags & QPNIC_OP_CNP) {
			qpnic_comp_cnp(qp);
			consume_skb(skb);
		} else {
			qpnic_comp_rcv(qp, skb, &pkt);
			consume_skb(skb);
		}
		qpnic_qp_put(qp);
		return;
	}
	/* (the header fields are there once it parsed) */
	parsed = drop != QPNIC_CNT_RX_DROP_MALFORMED && drop != QPNIC_CNT_RX_DROP_OPCODE;
	qpnic_drop(qdev, drop, parsed ? &pkt : NULL);
	if (qp)
		qpnic_qp_put(qp);
	kfree_skb(skb);
}

/*
 * An ACK from a responder of @qdev to one of its own QPs, without a
 * packet (qpnic_loopback_ack()): a packet's checks and counting from the
 * QP on. BH off.
 */
void qpnic_rcv_ack(struct qpnic_dev *qdev, const struct qpnic_pkt *pkt,
		   u8 syndrome, u64 orig)
{
	struct qpnic_qp *qp = NULL;
	enum qpnic_counter drop = qpnic_rcv_find_qp(qdev, pkt, &qp);

	if (drop == QPNIC_NUM_COUNTERS) {
		qpnic_count(qdev, QPNIC_CNT_RX_PACKETS);
		trace_qpnic_pkt_recv(&qdev->ibdev, pkt);
		qpnic_comp_answer(qp, NULL, pkt, syndrome, orig);
	} else {
		qpnic_drop(qdev, drop, pkt);
	}
	if (qp)
		qpnic_qp_put(qp);
}

/*
 * One RoCEv2 packet from the UDP socket: skb->data at the UDP header,
 * network and transport headers set, skb->dev the netdev it came in on.
 * Consumes the skb.
 */
void qpnic_rcv(struct sk_buff *skb)
{
	struct qpnic_dev *qdev = qpnic_dev_get_by_netdev(skb->dev);

	if (!qdev) {
		kfree_skb(skb);
		return;
	}
	qpnic_rcv_dev(qdev, skb, false);
	ib_device_put(&qdev->ibdev);
}
EXPORT_SYMBOL_NS_GPL(qpnic_rcv, QPNIC_KUNIT);
