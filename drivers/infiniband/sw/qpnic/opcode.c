// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The opcode table (IBTA vol. 1 table 39 / 9.2): what each opcode carries.
 * Header lengths and offsets are derived from it, so the requester builds
 * and the receive path parses from one description.
 */
#include <linux/bitops.h>
#include <linux/export.h>
#include <linux/skbuff.h>
#include <qpnic/wire.h>

#include "hdr.h"

#define REQ_SEND	(QPNIC_OP_REQ | QPNIC_OP_SEND | QPNIC_OP_PAYLOAD)
#define REQ_WRITE	(QPNIC_OP_REQ | QPNIC_OP_WRITE | QPNIC_OP_PAYLOAD)
#define READ_RESP	(QPNIC_OP_ACK | QPNIC_OP_READ | QPNIC_OP_PAYLOAD)

/* RC, UD and CNP opcodes; UC takes the RC rows 0x00-0x0b at 0x20 + the same code. */
static const u32 qpnic_opcode_table[256] = {
	[QPNIC_SEND_FIRST] = REQ_SEND | QPNIC_OP_FIRST,
	[QPNIC_SEND_MIDDLE] = REQ_SEND | QPNIC_OP_MIDDLE,
	[QPNIC_SEND_LAST] = REQ_SEND | QPNIC_OP_LAST,
	[QPNIC_SEND_LAST_IMM] = REQ_SEND | QPNIC_OP_LAST | QPNIC_OP_IMMDT,
	[QPNIC_SEND_ONLY] = REQ_SEND | QPNIC_OP_ONLY,
	[QPNIC_SEND_ONLY_IMM] = REQ_SEND | QPNIC_OP_ONLY | QPNIC_OP_IMMDT,
	[QPNIC_WRITE_FIRST] = REQ_WRITE | QPNIC_OP_FIRST | QPNIC_OP_RETH,
	[QPNIC_WRITE_MIDDLE] = REQ_WRITE | QPNIC_OP_MIDDLE,
	[QPNIC_WRITE_LAST] = REQ_WRITE | QPNIC_OP_LAST,
	[QPNIC_WRITE_LAST_IMM] = REQ_WRITE | QPNIC_OP_LAST | QPNIC_OP_IMMDT,
	[QPNIC_WRITE_ONLY] = REQ_WRITE | QPNIC_OP_ONLY | QPNIC_OP_RETH,
	[QPNIC_WRITE_ONLY_IMM] = REQ_WRITE | QPNIC_OP_ONLY | QPNIC_OP_RETH |
				 QPNIC_OP_IMMDT,
	[QPNIC_READ_REQUEST] = QPNIC_OP_REQ | QPNIC_OP_READ | QPNIC_OP_ONLY |
			       QPNIC_OP_RETH,
	[QPNIC_READ_RESPONSE_FIRST] = READ_RESP | QPNIC_OP_FIRST | QPNIC_OP_AETH,
	[QPNIC_READ_RESPONSE_MIDDLE] = READ_RESP | QPNIC_OP_MIDDLE,
	[QPNIC_READ_RESPONSE_LAST] = READ_RESP | QPNIC_OP_LAST | QPNIC_OP_AETH,
	[QPNIC_READ_RESPONSE_ONLY] = READ_RESP | QPNIC_OP_ONLY | QPNIC_OP_AETH,
	[QPNIC_ACKNOWLEDGE] = QPNIC_OP_ACK | QPNIC_OP_ONLY | QPNIC_OP_AETH,
	[QPNIC_ATOMIC_ACKNOWLEDGE] = QPNIC_OP_ACK | QPNIC_OP_ATOMIC |
				     QPNIC_OP_ONLY | QPNIC_OP_AETH |
				     QPNIC_OP_ATMACK,
	[QPNIC_COMPARE_SWAP] = QPNIC_OP_REQ | QPNIC_OP_ATOMIC | QPNIC_OP_ONLY |
			       QPNIC_OP_ATMETH,
	[QPNIC_FETCH_ADD] = QPNIC_OP_REQ | QPNIC_OP_ATOMIC | QPNIC_OP_ONLY |
			    QPNIC_OP_ATMETH,
	[QPNIC_SEND_LAST_INV] = REQ_SEND | QPNIC_OP_LAST | QPNIC_OP_IETH,
	[QPNIC_SEND_ONLY_INV] = REQ_SEND | QPNIC_OP_ONLY | QPNIC_OP_IETH,
	/* these two are answered by a READ RESPONSE ONLY with no payload */
	[QPNIC_FLUSH] = QPNIC_OP_REQ | QPNIC_OP_ATOMIC | QPNIC_OP_ONLY |
			QPNIC_OP_FETH | QPNIC_OP_RETH,
	[QPNIC_ATOMIC_WRITE] = QPNIC_OP_REQ | QPNIC_OP_ATOMIC | QPNIC_OP_ONLY |
			       QPNIC_OP_RETH | QPNIC_OP_PAYLOAD,
	[QPNIC_UD_SEND_ONLY] = REQ_SEND | QPNIC_OP_ONLY | QPNIC_OP_DETH,
	[QPNIC_UD_SEND_ONLY_IMM] = REQ_SEND | QPNIC_OP_ONLY | QPNIC_OP_DETH |
				   QPNIC_OP_IMMDT,
	/* its 16 reserved bytes parse as a header: no payload, exact length */
	[QPNIC_CNP] = QPNIC_OP_CNP,
};

/* The flags of @opcode; 0 for an opcode RoCEv2 does not define. */
u32 qpnic_opcode_flags(u8 opcode)
{
	if (QPNIC_OPC_CLASS(opcode) == QPNIC_OPC_UC)
		return (opcode & 0x1f) <= QPNIC_WRITE_ONLY_IMM ?
		       qpnic_opcode_table[opcode & 0x1f] : 0;
	return qpnic_opcode_table[opcode];
}
EXPORT_SYMBOL_NS_GPL(qpnic_opcode_flags, QPNIC_KUNIT);

/* Offset of header @hdr (one QPNIC_OP_* header flag) from the BTH, or -1. */
int qpnic_hdr_offset(u8 opcode, u32 hdr)
{
	u32 flags = qpnic_opcode_flags(opcode);

	if (!(flags & hdr) || hweight32(hdr) != 1 || !(hdr & QPNIC_OP_HDRS))
		return -1;
	return QPNIC_BTH_LEN + qpnic_ext_len(flags & QPNIC_OP_HDRS & (hdr - 1));
}
EXPORT_SYMBOL_NS_GPL(qpnic_hdr_offset, QPNIC_KUNIT);

/* BTH plus the extension headers an opcode with @flags carries. */
static u8 qpnic_flags_hdr_len(u32 flags)
{
	return QPNIC_BTH_LEN + qpnic_ext_len(flags & QPNIC_OP_HDRS);
}

/* BTH plus extension headers of @opcode; 0 for an undefined opcode. */
u8 qpnic_opcode_hdr_len(u8 opcode)
{
	u32 flags = qpnic_opcode_flags(opcode);

	return flags ? qpnic_flags_hdr_len(flags) : 0;
}
EXPORT_SYMBOL_NS_GPL(qpnic_opcode_hdr_len, QPNIC_KUNIT);

/*
 * Parse the RoCEv2 packet whose BTH is at skb->data (its UDP payload).
 * The opcode is checked before any length is computed from it; every
 * length is bounded by the packet's; the headers end up linear. Returns
 * -EOPNOTSUPP for an opcode RoCEv2 does not define, -EPROTONOSUPPORT for a
 * transport version other than 0, -EBADMSG for a packet too short for its
 * headers, pad and ICRC (or a header-only opcode with trailing bytes).
 */
int qpnic_pkt_parse(struct sk_buff *skb, struct qpnic_pkt *pkt)
{
	const u8 *bth;
	u32 flags, tail;
	u8 hdr_len, pad;

	if (skb->len < QPNIC_BTH_LEN + QPNIC_ICRC_LEN ||
	    !pskb_may_pull(skb, QPNIC_BTH_LEN))
		return -EBADMSG;
	bth = skb->data;
	flags = qpnic_opcode_flags(qpnic_bth_opcode(bth));
	if (!flags)
		return -EOPNOTSUPP;
	if (bth[1] & QPNIC_BTH_TVER_MASK)
		return -EPROTONOSUPPORT;
	hdr_len = qpnic_flags_hdr_len(flags);
	pad = (bth[1] & QPNIC_BTH_PAD_MASK) >> QPNIC_BTH_PAD_SHIFT;
	tail = (u32)hdr_len + pad + QPNIC_ICRC_LEN;
	if (skb->len < tail || (!(flags & QPNIC_OP_PAYLOAD) && skb->len != tail))
		return -EBADMSG;
	if (!pskb_may_pull(skb, hdr_len))
		return -EBADMSG;
	bth = skb->data;

	pkt->flags = flags;
	pkt->opcode = qpnic_bth_opcode(bth);
	pkt->se = bth[1] & QPNIC_BTH_SE;
	pkt->pad = pad;
	pkt->pkey = get_unaligned_be16(bth + 2);
	pkt->dqpn = qpnic_bth_dqpn(bth);
	pkt->ackreq = bth[8] & QPNIC_BTH_ACKREQ;
	pkt->psn = qpnic_bth_psn(bth);
	pkt->hdr_len = hdr_len;
	pkt->paylen = skb->len - tail;
	pkt->npkts = 1;
	return 0;
}
EXPORT_SYMBOL_NS_GPL(qpnic_pkt_parse, QPNIC_KUNIT);

/*
 * Write the BTH and the extension headers of @f->opcode, in wire order,
 * at @buf (which has room for QPNIC_MAX_HDR_LEN bytes). Returns the bytes
 * written, or -EINVAL for an opcode RoCEv2 does not define.
 */
int qpnic_hdr_build(u8 *buf, const struct qpnic_hdr_fields *f)
{
	u32 flags = qpnic_opcode_flags(f->opcode);
	u8 *h = buf + QPNIC_BTH_LEN;

	if (!flags)
		return -EINVAL;
	buf[0] = f->opcode;
	buf[1] = (f->se ? QPNIC_BTH_SE : 0) | (f->mig ? QPNIC_BTH_MIG : 0) |
		 ((f->pad << QPNIC_BTH_PAD_SHIFT) & QPNIC_BTH_PAD_MASK);
	put_unaligned_be16(f->pkey, buf + 2);
	put_unaligned_be32(f->dqpn & QPNIC_QPN_MASK, buf + 4);
	put_unaligned_be32((f->ackreq ? QPNIC_BTH_ACKREQ << 24 : 0) |
			   (f->psn & QPNIC_PSN_MASK), buf + 8);
	if (flags & QPNIC_OP_DETH) {
		put_unaligned_be32(f->deth.qkey, h);
		put_unaligned_be32(f->deth.sqpn & QPNIC_QPN_MASK, h + 4);
		h += QPNIC_DETH_LEN;
	}
	if (flags & QPNIC_OP_FETH) {
		put_unaligned_be32(f->feth, h);
		h += QPNIC_FETH_LEN;
	}
	if (flags & QPNIC_OP_RETH) {
		put_unaligned_be64(f->reth.va, h);
		put_unaligned_be32(f->reth.rkey, h + 8);
		put_unaligned_be32(f->reth.len, h + 12);
		h += QPNIC_RETH_LEN;
	}
	if (flags & QPNIC_OP_ATMETH) {
		put_unaligned_be64(f->atmeth.va, h);
		put_unaligned_be32(f->atmeth.rkey, h + 8);
		put_unaligned_be64(f->atmeth.swap_add, h + 12);
		put_unaligned_be64(f->atmeth.compare, h + 20);
		h += QPNIC_ATMETH_LEN;
	}
	if (flags & QPNIC_OP_AETH) {
		put_unaligned_be32((u32)f->aeth.syndrome << 24 |
				   (f->aeth.msn & 0xffffff), h);
		h += QPNIC_AETH_LEN;
	}
	if (flags & QPNIC_OP_ATMACK) {
		put_unaligned_be64(f->atmack_orig, h);
		h += QPNIC_ATMACK_LEN;
	}
	if (flags & QPNIC_OP_IMMDT) {
		memcpy(h, &f->immdt, QPNIC_IMMDT_LEN);
		h += QPNIC_IMMDT_LEN;
	}
	if (flags & QPNIC_OP_IETH) {
		put_unaligned_be32(f->ieth_rkey, h);
		h += QPNIC_IETH_LEN;
	}
	if (flags & QPNIC_OP_CNP) {
		buf[4] |= QPNIC_BTH_BECN;
		memset(h, 0, QPNIC_CNP_LEN);
		h += QPNIC_CNP_LEN;
	}
	return h - buf;
}
EXPORT_SYMBOL_NS_GPL(qpnic_hdr_build, QPNIC_KUNIT);
