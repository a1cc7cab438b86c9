/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RoCEv2 wire format (IBTA vol. 1 ch. 9, Annex A17): header sizes,
 * opcodes and the parsed view of a packet. Shared by the driver and its
 * KUnit suites; the suites write their expectations themselves.
 */
#ifndef QPNIC_WIRE_H
#define QPNIC_WIRE_H

#include <linux/types.h>

struct sk_buff;

/* Header lengths, in packet order after the BTH. */
#define QPNIC_BTH_LEN		12
#define QPNIC_DETH_LEN		8
#define QPNIC_FETH_LEN		4
#define QPNIC_RETH_LEN		16
#define QPNIC_ATMETH_LEN	28
#define QPNIC_AETH_LEN		4
#define QPNIC_ATMACK_LEN	8
#define QPNIC_IMMDT_LEN		4
#define QPNIC_IETH_LEN		4
#define QPNIC_ICRC_LEN		4
#define QPNIC_CNP_LEN		16	/* a CNP's reserved bytes after the BTH */
/* the longest header set: BTH + AtomicETH (no opcode carries more) */
#define QPNIC_MAX_HDR_LEN	(QPNIC_BTH_LEN + QPNIC_ATMETH_LEN)

/* What an opcode carries and does: one table builds and parses packets. */
enum qpnic_op_flags {
	QPNIC_OP_DETH		= BIT(0),
	QPNIC_OP_FETH		= BIT(1),	/* FLUSH: before its RETH */
	QPNIC_OP_RETH		= BIT(2),
	QPNIC_OP_ATMETH		= BIT(3),
	QPNIC_OP_AETH		= BIT(4),
	QPNIC_OP_ATMACK		= BIT(5),
	QPNIC_OP_IMMDT		= BIT(6),
	QPNIC_OP_IETH		= BIT(7),
	QPNIC_OP_PAYLOAD	= BIT(8),
	QPNIC_OP_REQ		= BIT(9),	/* requester to responder */
	QPNIC_OP_ACK		= BIT(10),	/* responder to requester */
	QPNIC_OP_SEND		= BIT(11),
	QPNIC_OP_WRITE		= BIT(12),
	QPNIC_OP_READ		= BIT(13),
	QPNIC_OP_ATOMIC		= BIT(14),	/* and what is answered like one */
	QPNIC_OP_FIRST		= BIT(15),
	QPNIC_OP_MIDDLE		= BIT(16),
	QPNIC_OP_LAST		= BIT(17),
	QPNIC_OP_CNP		= BIT(18),	/* congestion notification */
	QPNIC_OP_ONLY		= QPNIC_OP_FIRST | QPNIC_OP_LAST,
};

/* Header flags in the order they follow the BTH. */
#define QPNIC_OP_HDRS	(QPNIC_OP_DETH | QPNIC_OP_FETH | QPNIC_OP_RETH | \
			 QPNIC_OP_ATMETH | QPNIC_OP_AETH | QPNIC_OP_ATMACK | \
			 QPNIC_OP_IMMDT | QPNIC_OP_IETH | QPNIC_OP_CNP)

/* Transport class: the top three bits of an opcode. */
#define QPNIC_OPC_RC		0x00
#define QPNIC_OPC_UC		0x20
#define QPNIC_OPC_UD		0x60
#define QPNIC_OPC_CNP		0x80	/* RoCEv2 (Annex A17.9.3) */
#define QPNIC_OPC_CLASS(op)	((op) & 0xe0)

/* RC opcodes; UC uses the same low bits for SEND and WRITE. */
enum qpnic_opcode {
	QPNIC_SEND_FIRST		= 0x00,
	QPNIC_SEND_MIDDLE		= 0x01,
	QPNIC_SEND_LAST			= 0x02,
	QPNIC_SEND_LAST_IMM		= 0x03,
	QPNIC_SEND_ONLY			= 0x04,
	QPNIC_SEND_ONLY_IMM		= 0x05,
	QPNIC_WRITE_FIRST		= 0x06,
	QPNIC_WRITE_MIDDLE		= 0x07,
	QPNIC_WRITE_LAST		= 0x08,
	QPNIC_WRITE_LAST_IMM		= 0x09,
	QPNIC_WRITE_ONLY		= 0x0a,
	QPNIC_WRITE_ONLY_IMM		= 0x0b,
	QPNIC_READ_REQUEST		= 0x0c,
	QPNIC_READ_RESPONSE_FIRST	= 0x0d,
	QPNIC_READ_RESPONSE_MIDDLE	= 0x0e,
	QPNIC_READ_RESPONSE_LAST	= 0x0f,
	QPNIC_READ_RESPONSE_ONLY	= 0x10,
	QPNIC_ACKNOWLEDGE		= 0x11,
	QPNIC_ATOMIC_ACKNOWLEDGE	= 0x12,
	QPNIC_COMPARE_SWAP		= 0x13,
	QPNIC_FETCH_ADD			= 0x14,
	QPNIC_SEND_LAST_INV		= 0x16,
	QPNIC_SEND_ONLY_INV		= 0x17,
	QPNIC_FLUSH			= 0x1c,	/* IBTA 1.5: FETH, RETH */
	QPNIC_ATOMIC_WRITE		= 0x1d,	/* IBTA 1.5: 8 bytes, RETH */
	QPNIC_UD_SEND_ONLY		= 0x64,
	QPNIC_UD_SEND_ONLY_IMM		= 0x65,
	QPNIC_CNP			= 0x81,
};

/* BTH byte 1 and byte 8 flags */
#define QPNIC_BTH_SE		0x80
#define QPNIC_BTH_MIG		0x40
#define QPNIC_BTH_PAD_SHIFT	4
#define QPNIC_BTH_PAD_MASK	0x30
#define QPNIC_BTH_TVER_MASK	0x0f
#define QPNIC_BTH_ACKREQ	0x80
#define QPNIC_BTH_BECN		0x40	/* byte 4; set in a CNP */

#define QPNIC_PSN_MASK		0xffffff
#define QPNIC_QPN_MASK		0xffffff

/* FETH (IBTA 1.5 oA19): placement type in bits 3-0, selectivity in 5-4 */
#define QPNIC_FETH_PLT_MASK	0x0f
#define QPNIC_FETH_SEL_MASK	0x30
#define QPNIC_FETH_SEL_SHIFT	4
#define QPNIC_FLUSH_GLOBAL	0x1	/* placement: global visibility */
#define QPNIC_FLUSH_PERSISTENT	0x2	/* placement: persistence */
#define QPNIC_FLUSH_RANGE	0	/* selectivity: the RETH's range */
#define QPNIC_FLUSH_MR		1	/* selectivity: the whole region */

/* A placement type IBTA defines (one or both) and a selectivity level. */
static inline bool qpnic_feth_valid(u8 type, u8 level)
{
	return type && !(type & ~(QPNIC_FLUSH_GLOBAL | QPNIC_FLUSH_PERSISTENT)) &&
	       level <= QPNIC_FLUSH_MR;
}

/* AETH syndrome: the top three bits say ACK, RNR NAK or NAK. */
#define QPNIC_AETH_TYPE_MASK	0xe0
#define QPNIC_AETH_ACK		0x00
#define QPNIC_AETH_RNR_NAK	0x20
#define QPNIC_AETH_NAK		0x60

/*
 * A packet as parsed from the BTH on: what the receive path needs, read
 * once from the headers, each length bounded by the packet's.
 */
struct qpnic_pkt {
	u32 flags;		/* enum qpnic_op_flags of the opcode */
	u32 psn;
	u32 dqpn;
	u32 paylen;		/* payload bytes, pad and ICRC excluded */
	u32 npkts;		/* packets it stands for: 1 but in a loopback segment */
	u16 pkey;
	u8 opcode;
	u8 hdr_len;		/* BTH and extension headers */
	u8 pad;
	bool se;
	bool ackreq;
	bool ce;		/* the IP header says congestion experienced */
};

/*
 * The header fields of one packet, for building it: the BTH and every
 * extension header its opcode carries (the others are ignored).
 */
struct qpnic_hdr_fields {
	u8 opcode;
	bool se, mig, ackreq;
	u8 pad;
	u16 pkey;
	u32 dqpn, psn;
	u32 feth;
	struct { u64 va; u32 rkey, len; } reth;
	struct { u64 va, swap_add, compare; u32 rkey; } atmeth;
	struct { u8 syndrome; u32 msn; } aeth;
	u64 atmack_orig;
	struct { u32 qkey, sqpn; } deth;
	__be32 immdt;
	u32 ieth_rkey;
};

/* 24-bit PSN difference a - b, as a signed distance (IBTA 9.7.1). */
static inline s32 qpnic_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

u32 qpnic_opcode_flags(u8 opcode);
u8 qpnic_opcode_hdr_len(u8 opcode);
int qpnic_hdr_offset(u8 opcode, u32 hdr);
int qpnic_pkt_parse(struct sk_buff *skb, struct qpnic_pkt *pkt);
int qpnic_hdr_build(u8 *buf, const struct qpnic_hdr_fields *f);
u32 qpnic_icrc(struct sk_buff *skb, unsigned int bth_offset);

#endif /* QPNIC_WIRE_H */
