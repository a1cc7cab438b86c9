// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RoCEv2 invariant CRC (IBTA Annex A17.3.3): CRC-32 over a masked
 * pseudo-header (8 bytes of ones for the LRH, the IP and UDP headers with
 * their variant fields set to ones, the BTH with its reserved byte set to
 * ones) followed by everything after the BTH up to the ICRC. The payload
 * is read where it lies in the skb (linear part and fragments), never
 * copied.
 *
 * The CRC runs through the crypto API's "crc32", which picks the fastest
 * implementation the kernel has (crc32-pclmul on x86, a module Debian
 * builds); 6.1's crc32_le() is the generic table code, several times
 * slower per byte. Without the crypto "crc32" qpnic uses crc32_le().
 */
#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <qpnic/wire.h>

#include "qpnic.h"

static struct crypto_shash *qpnic_crc32_tfm;

/*
 * crc32_le(@crc, @buf, @len) by the crypto API's "crc32": its descriptor
 * context is the running CRC (as rdma_rxe seeds it), so a call carries on
 * from any value.
 */
static u32 qpnic_crc32(u32 crc, const void *buf, unsigned int len)
{
	SHASH_DESC_ON_STACK(desc, qpnic_crc32_tfm);

	if (!qpnic_crc32_tfm)
		return crc32_le(crc, buf, len);
	desc->tfm = qpnic_crc32_tfm;
	*(u32 *)shash_desc_ctx(desc) = crc;
	if (unlikely(crypto_shash_update(desc, buf, len)))
		return crc32_le(crc, buf, len);
	return *(u32 *)shash_desc_ctx(desc);
}

void qpnic_icrc_init(void)
{
	struct crypto_shash *tfm = crypto_alloc_shash("crc32", 0, 0);

	if (IS_ERR(tfm)) {
		pr_info("qpnic: no crypto crc32 (%ld): the ICRC uses crc32_le()\n",
			PTR_ERR(tfm));
		return;
	}
	/* (the crc32 drivers keep a 4-byte running CRC as their context) */
	if (crypto_shash_descsize(tfm) != sizeof(u32)) {
		pr_info("qpnic: %s keeps %u bytes of state: the ICRC uses crc32_le()\n",
			crypto_shash_driver_name(tfm), crypto_shash_descsize(tfm));
		crypto_free_shash(tfm);
		return;
	}
	qpnic_crc32_tfm = tfm;
	pr_info("qpnic: ICRC through %s\n", crypto_shash_driver_name(tfm));
}

void qpnic_icrc_exit(void)
{
	if (qpnic_crc32_tfm)
		crypto_free_shash(qpnic_crc32_tfm);
	qpnic_crc32_tfm = NULL;
}

static __wsum qpnic_crc32_update(const void *buf, int len, __wsum crc)
{
	return (__force __wsum)qpnic_crc32((__force u32)crc, buf, len);
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

	crc = qpnic_crc32(~0U, pseudo, n);
	start = bth_offset + QPNIC_BTH_LEN;
	end = skb->len - QPNIC_ICRC_LEN;
	crc = (__force u32)__skb_checksum(skb, start, end - start,
					  (__force __wsum)crc, &qpnic_crc32_ops);
	return ~crc;
}
EXPORT_SYMBOL_NS_GPL(qpnic_icrc, QPNIC_KUNIT);
