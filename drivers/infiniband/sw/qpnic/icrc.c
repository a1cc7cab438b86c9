// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RoCEv2 invariant CRC (IBTA Annex A17.3.3): CRC-32 over a masked
 * pseudo-header (8 bytes of ones for the LRH, the IP and UDP headers with
 * their variant fields set to ones, the BTH with its reserved byte set to
 * ones) followed by everything after the BTH up to the ICRC. The payload
 * is read where it lies in the skb (linear part and fragments), never
 * copied.
 */
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <qpnic/wire.h>

static __wsum qpnic_crc32_update(const void *buf, int len, __wsum crc)
{
	return (__force __wsum)crc32_le((__force u32)crc, buf, len);
}

static __wsum qpnic_crc32_combine(__wsum crc1, __wsum crc2, int offset, int len)
{
	return (__force __wsum)crc32_le_combine((__force u32)crc1,
						(__force u32)crc2, len);
}

static const struct skb_checksum_ops qpnic_crc32_ops = {
	.update = qpnic_crc32_update,
	.combine = qpnic_crc32_combine,
};

/*
 * The ICRC of the RoCEv2 packet in @skb, whose network and transport
 * headers are set and whose BTH starts @bth_offset bytes after skb->data
 * (linear up to the BTH's end); the last QPNIC_ICRC_LEN bytes of the skb
 * are the ICRC's place and are not covered. The result goes on the wire
 * least significant byte first.
 */
u32 qpnic_icrc(struct sk_buff *skb, unsigned int bth_offset)
{
	u8 pseudo[8 + sizeof(struct ipv6hdr) + sizeof(struct udphdr) +
		  QPNIC_BTH_LEN];
	const u8 *nh = skb_network_header(skb);
	unsigned int n = 8, iplen, start, end;
	struct udphdr *uh;
	u32 crc;

	memset(pseudo, 0xff, 8);
	if ((nh[0] >> 4) == 4) {
		struct iphdr *iph = (struct iphdr *)(pseudo + n);

		iplen = sizeof(*iph);
		memcpy(iph, nh, iplen);
		iph->tos = 0xff;
		iph->ttl = 0xff;
		iph->check = (__force __sum16)0xffff;
	} else {
		struct ipv6hdr *ip6h = (struct ipv6hdr *)(pseudo + n);

		iplen = sizeof(*ip6h);
		memcpy(ip6h, nh, iplen);
		ip6h->priority = 0xf;
		memset(ip6h->flow_lbl, 0xff, sizeof(ip6h->flow_lbl));
		ip6h->hop_limit = 0xff;
	}
	n += iplen;
	uh = (struct udphdr *)(pseudo + n);
	memcpy(uh, skb_transport_header(skb), sizeof(*uh));
	uh->check = (__force __sum16)0xffff;
	n += sizeof(*uh);
	memcpy(pseudo + n, skb->data + bth_offset, QPNIC_BTH_LEN);
	pseudo[n + 4] = 0xff;		/* BTH reserved byte (FECN/BECN) */
	n += QPNIC_BTH_LEN;

	crc = crc32_le(~0U, pseudo, n);
	start = bth_offset + QPNIC_BTH_LEN;
	end = skb->len - QPNIC_ICRC_LEN;
	crc = (__force u32)__skb_checksum(skb, start, end - start,
					  (__force __wsum)crc, &qpnic_crc32_ops);
	return ~crc;
}
EXPORT_SYMBOL_NS_GPL(qpnic_icrc, QPNIC_KUNIT);
