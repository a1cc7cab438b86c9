// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite for qpnic's RoCEv2 wire format: the opcode table, packet
 * parsing and the ICRC, checked against packets rdma_rxe put on the wire
 * (shared/reference/roce-wire.md) and one IPv6 packet whose ICRC was
 * computed apart from qpnic (zlib's crc32 over the masked pseudo-header).
 * Every expected value is written here, never read from the driver.
 */
#include <kunit/test.h>
#include <linux/ip.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <qpnic/compat.h>
#include <qpnic/wire.h>

#include "qpnic_test_util.h"

MODULE_IMPORT_NS(QPNIC_KUNIT);

/* A packet from its first header on, and where its headers start. */
struct qpnic_wire_pkt {
	const char *desc;
	const char *const *hex;	/* hex parts, NULL-terminated */
	bool udp_payload_only;	/* IP and UDP headers are to be added */
	bool ipv6;
};

static const struct qpnic_wire_pkt qpnic_known_pkts[] = {
	{ "ACK", (const char *const []){
		"45000030436340004011e3450a0900010a090002caaf12b7001c00001100ffff",
		"000abcde000001001f000001b61b667e",
		NULL } },
	{ "READ RESPONSE ONLY", (const char *const []){
		"45000130448e40004011e11a0a0900010a090002caaf12b7011c00001000ffff",
		"000abcde000001901f0000910101010101010101010101010101010101010101",
		"0101010101010101010101010101010101010101010101010101010101010101",
		"0101010101010101010101010808080808080808080808080808080808080808",
		"0808080808080808080808080808080808080808080808080808080808080808",
		"0808080808080808080808080f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f",
		"0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f",
		"0f0f0f0f0f0f0f0f0f0f0f0f1616161616161616161616161616161616161616",
		"1616161616161616161616161616161616161616161616161616161616161616",
		"16161616161616161616161641da0314",
		NULL } },
	{ "ATOMIC ACK", (const char *const []){
		"4500003844c940004011e1d70a0900010a090002caaf12b7002400001200ffff",
		"000abcde000001911f0000927a7a7a7a7a7a7a7a071a4530",
		NULL } },
	{ "RDMA WRITE ONLY", (const char *const []){
		"0a00ffff0000001180000100000055d7ca91b0000000029d0000004001010101",
		"0101010101010101010101010101010101010101010101010101010101010101",
		"01010101010101010101010101010101010101010101010101010101b923c5d6",
		NULL }, true },
	{ "RDMA READ request", (const char *const []){
		"0c00ffff0000001180000190000055d7ca91b0000000029d00000100e5249280",
		NULL }, true },
	{ "FETCH_ADD", (const char *const []){
		"1400ffff0000001180000191000055d7ca91cff80000029d0000000000000005",
		"000000000000000009b03eab",
		NULL }, true },
	{ "ACK over IPv6", (const char *const []){
		"61212345001c1140fe800000000000000000000000000001fe80000000000000",
		"0000000000000002c00012b7001c12341100ffff000abcde000001001f000001",
		"74cb6707",
		NULL }, false, true },
};

/* Decode @parts into @buf (NULL: just count); returns the bytes, or -1. */
static int qpnic_wire_unhex(const char *const *parts, u8 *buf)
{
	int len = 0;

	for (; *parts; parts++) {
		size_t n = strlen(*parts) / 2;

		if (buf && hex2bin(buf + len, *parts, n))
			return -1;
		len += n;
	}
	return len;
}

static void qpnic_wire_pkt_desc(const struct qpnic_wire_pkt *p, char *desc)
{
	strscpy(desc, p->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(qpnic_known, qpnic_known_pkts, qpnic_wire_pkt_desc);

/*
 * An skb holding @p as received: data at the IP header, network and
 * transport headers set. Requests captured as UDP payload get the headers
 * they were sent with: 10.9.0.2:4791 -> 10.9.0.1:4791, IPv4 ID 0, DF,
 * TTL 64, TOS 0. With @frag_payload, everything after the first 40 bytes
 * of UDP payload lives in a page fragment, as on a real receive path.
 */
static struct sk_buff *qpnic_wire_skb(struct kunit *test,
				      const struct qpnic_wire_pkt *p,
				      bool frag_payload, unsigned int *bth_off)
{
	size_t hexlen = qpnic_wire_unhex(p->hex, NULL), hdrs = 0, len, linear;
	struct sk_buff *skb;
	struct page *page;
	u8 *buf;

	if (p->udp_payload_only)
		hdrs = sizeof(struct iphdr) + sizeof(struct udphdr);
	len = hdrs + hexlen;
	buf = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, qpnic_wire_unhex(p->hex, buf + hdrs), (int)hexlen);
	if (p->udp_payload_only)
		qpnic_test_ipv4_udp(buf, len, 0x0a090002, 0x0a090001, 4791);
	*bth_off = (p->ipv6 ? 40 : 20) + sizeof(struct udphdr);

	linear = frag_payload ? min(len, (size_t)*bth_off + 40) : len;
	skb = alloc_skb(linear, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_data(skb, buf, linear);
	if (len > linear) {
		page = alloc_page(GFP_KERNEL);
		if (!page)
			kfree_skb(skb);
		KUNIT_ASSERT_NOT_NULL(test, page);
		memcpy(page_address(page) + 100, buf + linear, len - linear);
		skb_add_rx_frag(skb, 0, page, 100, len - linear, PAGE_SIZE);
	}
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, *bth_off - sizeof(struct udphdr));
	return skb;
}

/* The ICRC qpnic computes is the one on the wire: linear and fragmented. */
static void qpnic_wire_icrc_known(struct kunit *test)
{
	const struct qpnic_wire_pkt *p = test->param_value;
	int frag;

	for (frag = 0; frag < 2; frag++) {
		unsigned int bth_off;
		struct sk_buff *skb = qpnic_wire_skb(test, p, frag, &bth_off);
		u8 icrc[QPNIC_ICRC_LEN];

		KUNIT_ASSERT_EQ(test, skb_copy_bits(skb, skb->len - QPNIC_ICRC_LEN,
						    icrc, sizeof(icrc)), 0);
		KUNIT_EXPECT_EQ_MSG(test, qpnic_icrc(skb, bth_off),
				    get_unaligned_le32(icrc), "%s, %s", p->desc,
				    frag ? "payload in a fragment" : "linear");
		kfree_skb(skb);
	}
}

/* Variant fields do not change the ICRC; any invariant byte does. */
static void qpnic_wire_icrc_masking(struct kunit *test)
{
	const struct qpnic_wire_pkt *p = &qpnic_known_pkts[1];
	unsigned int bth_off;
	struct sk_buff *skb = qpnic_wire_skb(test, p, false, &bth_off);
	u8 *ip = skb->data;
	u32 want = get_unaligned_le32(skb->data + skb->len - QPNIC_ICRC_LEN);

	ip[1] ^= 0xfc;			/* TOS (DSCP/ECN) */
	ip[8] -= 3;			/* TTL */
	ip[10] ^= 0x55;			/* header checksum */
	ip[bth_off - 1] ^= 0x11;	/* UDP checksum */
	ip[bth_off + 4] = 0x40;		/* BTH reserved byte: FECN */
	KUNIT_EXPECT_EQ(test, qpnic_icrc(skb, bth_off), want);
	ip[4] ^= 1;			/* IP identification is covered */
	KUNIT_EXPECT_NE(test, qpnic_icrc(skb, bth_off), want);
	ip[4] ^= 1;
	ip[bth_off + 20] ^= 0x80;	/* a payload byte */
	KUNIT_EXPECT_NE(test, qpnic_icrc(skb, bth_off), want);
	kfree_skb(skb);
}

/* What a known packet parses to, written out field by field. */
struct qpnic_wire_expect {
	u8 opcode, hdr_len, pad;
	u32 dqpn, psn, paylen;
	bool ackreq;
};

static const struct qpnic_wire_expect qpnic_known_expect[] = {
	{ 0x11, 16, 0, 0x0abcde, 0x000100, 0, false },
	{ 0x10, 16, 0, 0x0abcde, 0x000190, 256, false },
	{ 0x12, 24, 0, 0x0abcde, 0x000191, 0, false },
	{ 0x0a, 28, 0, 0x000011, 0x000100, 64, true },
	{ 0x0c, 28, 0, 0x000011, 0x000190, 0, true },
	{ 0x14, 40, 0, 0x000011, 0x000191, 0, true },
	{ 0x11, 16, 0, 0x0abcde, 0x000100, 0, false },
};

static void qpnic_wire_parse_known(struct kunit *test)
{
	const struct qpnic_wire_pkt *p = test->param_value;
	const struct qpnic_wire_expect *e =
		&qpnic_known_expect[p - qpnic_known_pkts];
	struct qpnic_pkt pkt = {};
	unsigned int bth_off;
	struct sk_buff *skb = qpnic_wire_skb(test, p, true, &bth_off);
	const u8 *h;
	int off;

	__skb_pull(skb, bth_off);
	KUNIT_ASSERT_EQ(test, qpnic_pkt_parse(skb, &pkt), 0);
	KUNIT_EXPECT_EQ(test, pkt.opcode, e->opcode);
	KUNIT_EXPECT_EQ(test, pkt.hdr_len, e->hdr_len);
	KUNIT_EXPECT_EQ(test, pkt.pad, e->pad);
	KUNIT_EXPECT_EQ(test, pkt.dqpn, e->dqpn);
	KUNIT_EXPECT_EQ(test, pkt.psn, e->psn);
	KUNIT_EXPECT_EQ(test, pkt.paylen, e->paylen);
	KUNIT_EXPECT_EQ(test, pkt.ackreq, e->ackreq);
	KUNIT_EXPECT_EQ(test, pkt.pkey, 0xffff);
	KUNIT_EXPECT_FALSE(test, pkt.se);

	switch (e->opcode) {
	case 0x10:
	case 0x11:
	case 0x12:
		off = qpnic_hdr_offset(pkt.opcode, QPNIC_OP_AETH);
		KUNIT_ASSERT_EQ(test, off, 12);
		h = skb->data + off;
		KUNIT_EXPECT_EQ(test, h[0], 0x1f);	/* ACK, credits 31 */
		KUNIT_EXPECT_EQ(test, get_unaligned_be32(h) & 0xffffff,
				e->opcode == 0x11 ? 1U : e->opcode == 0x10 ? 0x91U : 0x92U);
		if (e->opcode == 0x12) {
			off = qpnic_hdr_offset(pkt.opcode, QPNIC_OP_ATMACK);
			KUNIT_ASSERT_EQ(test, off, 16);
			KUNIT_EXPECT_EQ(test, get_unaligned_be64(skb->data + off),
					0x7a7a7a7a7a7a7a7aULL);
		}
		break;
	case 0x0a:
	case 0x0c:
		off = qpnic_hdr_offset(pkt.opcode, QPNIC_OP_RETH);
		KUNIT_ASSERT_EQ(test, off, 12);
		h = skb->data + off;
		KUNIT_EXPECT_EQ(test, get_unaligned_be64(h), 0x55d7ca91b000ULL);
		KUNIT_EXPECT_EQ(test, get_unaligned_be32(h + 8), 0x29dU);
		KUNIT_EXPECT_EQ(test, get_unaligned_be32(h + 12),
				e->opcode == 0x0a ? 64U : 256U);
		break;
	case 0x14:
		off = qpnic_hdr_offset(pkt.opcode, QPNIC_OP_ATMETH);
		KUNIT_ASSERT_EQ(test, off, 12);
		h = skb->data + off;
		KUNIT_EXPECT_EQ(test, get_unaligned_be64(h), 0x55d7ca91cff8ULL);
		KUNIT_EXPECT_EQ(test, get_unaligned_be32(h + 8), 0x29dU);
		KUNIT_EXPECT_EQ(test, get_unaligned_be64(h + 12), 5ULL);
		KUNIT_EXPECT_EQ(test, get_unaligned_be64(h + 20), 0ULL);
		break;
	}
	kfree_skb(skb);
}

/* The header fields of each known packet, read off the capture by hand. */
static const struct qpnic_hdr_fields qpnic_known_fields[] = {
	{ .opcode = 0x11, .pkey = 0xffff, .dqpn = 0x0abcde, .psn = 0x100,
	  .aeth = { 0x1f, 0x000001 } },
	{ .opcode = 0x10, .pkey = 0xffff, .dqpn = 0x0abcde, .psn = 0x190,
	  .aeth = { 0x1f, 0x000091 } },
	{ .opcode = 0x12, .pkey = 0xffff, .dqpn = 0x0abcde, .psn = 0x191,
	  .aeth = { 0x1f, 0x000092 }, .atmack_orig = 0x7a7a7a7a7a7a7a7aULL },
	{ .opcode = 0x0a, .pkey = 0xffff, .dqpn = 0x11, .ackreq = true,
	  .psn = 0x100, .reth = { 0x55d7ca91b000ULL, 0x29d, 64 } },
	{ .opcode = 0x0c, .pkey = 0xffff, .dqpn = 0x11, .ackreq = true,
	  .psn = 0x190, .reth = { 0x55d7ca91b000ULL, 0x29d, 256 } },
	{ .opcode = 0x14, .pkey = 0xffff, .dqpn = 0x11, .ackreq = true,
	  .psn = 0x191, .atmeth = { 0x55d7ca91cff8ULL, 5, 0, 0x29d } },
	{ .opcode = 0x11, .pkey = 0xffff, .dqpn = 0x0abcde, .psn = 0x100,
	  .aeth = { 0x1f, 0x000001 } },
};

/* Headers built from those fields are the bytes rdma_rxe put on the wire. */
static void qpnic_wire_build_known(struct kunit *test)
{
	const struct qpnic_wire_pkt *p = test->param_value;
	const struct qpnic_hdr_fields *f =
		&qpnic_known_fields[p - qpnic_known_pkts];
	const struct qpnic_wire_expect *e =
		&qpnic_known_expect[p - qpnic_known_pkts];
	u8 hdr[QPNIC_MAX_HDR_LEN], wire[QPNIC_MAX_HDR_LEN];
	unsigned int bth_off;
	struct sk_buff *skb = qpnic_wire_skb(test, p, false, &bth_off);
	int len, i;

	len = qpnic_hdr_build(hdr, f);
	KUNIT_ASSERT_EQ(test, len, (int)e->hdr_len);
	KUNIT_ASSERT_EQ(test, skb_copy_bits(skb, bth_off, wire, len), 0);
	for (i = 0; i < len; i++)
		KUNIT_EXPECT_EQ_MSG(test, hdr[i], wire[i], "%s: header byte %d",
				    p->desc, i);
	kfree_skb(skb);
}

/*
 * Build then parse every defined opcode with random fields and payload
 * length: the parser reads back what the builder wrote.
 */
static void qpnic_wire_build_parse_roundtrip(struct kunit *test)
{
	static const u8 ops[] = {
		0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
		0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13,
		0x14, 0x16, 0x17, 0x1c, 0x1d, 0x20, 0x25, 0x2b, 0x64, 0x65,
		0x81,
	};
	struct qpnic_hdr_fields bad = { .opcode = 0x15 };
	u8 undefined[QPNIC_MAX_HDR_LEN];
	int i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		struct qpnic_hdr_fields f = {
			.opcode = ops[i], .se = get_random_u32() & 1,
			.ackreq = get_random_u32() & 1, .pkey = 0xffff,
			.dqpn = get_random_u32() & 0xffffff,
			.psn = get_random_u32() & 0xffffff,
		};
		bool payload = qpnic_opcode_flags(ops[i]) & QPNIC_OP_PAYLOAD;
		unsigned int paylen = payload ? get_random_u32() % 300 : 0;
		struct qpnic_pkt pkt = {};
		struct sk_buff *skb;
		int len;

		f.pad = (4 - (paylen & 3)) & 3;
		f.feth = get_random_u32();
		f.reth.va = get_random_u64();
		f.reth.rkey = get_random_u32();
		f.reth.len = get_random_u32();
		f.deth.qkey = get_random_u32();
		f.deth.sqpn = get_random_u32() & 0xffffff;
		skb = alloc_skb(QPNIC_MAX_HDR_LEN + paylen + 3 + QPNIC_ICRC_LEN,
				GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, skb);
		len = qpnic_hdr_build(skb->data, &f);
		KUNIT_ASSERT_GT(test, len, 0);
		skb_put(skb, len);
		skb_put_zero(skb, paylen + f.pad + QPNIC_ICRC_LEN);
		KUNIT_EXPECT_EQ_MSG(test, qpnic_pkt_parse(skb, &pkt), 0, "opcode %#x", ops[i]);
		KUNIT_EXPECT_EQ(test, pkt.opcode, ops[i]);
		KUNIT_EXPECT_EQ(test, pkt.dqpn, f.dqpn);
		KUNIT_EXPECT_EQ(test, pkt.psn, f.psn);
		KUNIT_EXPECT_EQ(test, pkt.se, f.se);
		KUNIT_EXPECT_EQ(test, pkt.ackreq, f.ackreq);
		KUNIT_EXPECT_EQ(test, pkt.pad, f.pad);
		KUNIT_EXPECT_EQ(test, pkt.paylen, paylen);
		KUNIT_EXPECT_EQ(test, pkt.hdr_len, len);
		if (qpnic_hdr_offset(ops[i], QPNIC_OP_RETH) > 0) {
			const u8 *h = skb->data + qpnic_hdr_offset(ops[i], QPNIC_OP_RETH);

			KUNIT_EXPECT_EQ(test, get_unaligned_be64(h), f.reth.va);
			KUNIT_EXPECT_EQ(test, get_unaligned_be32(h + 8), f.reth.rkey);
			KUNIT_EXPECT_EQ(test, get_unaligned_be32(h + 12), f.reth.len);
		}
		if (qpnic_hdr_offset(ops[i], QPNIC_OP_FETH) > 0) {
			const u8 *h = skb->data + qpnic_hdr_offset(ops[i], QPNIC_OP_FETH);

			KUNIT_EXPECT_EQ(test, get_unaligned_be32(h), f.feth);
		}
		if (qpnic_hdr_offset(ops[i], QPNIC_OP_DETH) > 0) {
			const u8 *h = skb->data + qpnic_hdr_offset(ops[i], QPNIC_OP_DETH);

			KUNIT_EXPECT_EQ(test, get_unaligned_be32(h), f.deth.qkey);
			KUNIT_EXPECT_EQ(test, get_unaligned_be32(h + 4), f.deth.sqpn);
		}
		if (ops[i] == QPNIC_CNP) {	/* BECN set, 16 reserved zeros */
			KUNIT_EXPECT_EQ(test, skb->data[4], QPNIC_BTH_BECN);
			KUNIT_EXPECT_NULL(test, memchr_inv(skb->data + QPNIC_BTH_LEN,
							   0, QPNIC_CNP_LEN));
		}
		kfree_skb(skb);
	}
	KUNIT_EXPECT_EQ(test, qpnic_hdr_build(undefined, &bad), -EINVAL);
}

/*
 * Every opcode RoCEv2 defines, with its header bytes (BTH 12, DETH 8,
 * FETH 4, RETH 16, AtomicETH 28, AETH 4, AtomicAckETH 8, ImmDt 4, IETH 4;
 * IBTA table 39, and 1.5's FLUSH and ATOMIC WRITE; RoCEv2's CNP, whose 16
 * reserved bytes parse as a header); every other opcode is undefined.
 */
static void qpnic_wire_opcode_table(struct kunit *test)
{
	static const struct { u8 op, len; } defined[] = {
		{ 0x00, 12 }, { 0x01, 12 }, { 0x02, 12 }, { 0x03, 16 },
		{ 0x04, 12 }, { 0x05, 16 }, { 0x06, 28 }, { 0x07, 12 },
		{ 0x08, 12 }, { 0x09, 16 }, { 0x0a, 28 }, { 0x0b, 32 },
		{ 0x0c, 28 }, { 0x0d, 16 }, { 0x0e, 12 }, { 0x0f, 16 },
		{ 0x10, 16 }, { 0x11, 16 }, { 0x12, 24 }, { 0x13, 40 },
		{ 0x14, 40 }, { 0x16, 16 }, { 0x17, 16 }, { 0x1c, 32 },
		{ 0x1d, 28 },
		{ 0x20, 12 }, { 0x21, 12 }, { 0x22, 12 }, { 0x23, 16 },
		{ 0x24, 12 }, { 0x25, 16 }, { 0x26, 28 }, { 0x27, 12 },
		{ 0x28, 12 }, { 0x29, 16 }, { 0x2a, 28 }, { 0x2b, 32 },
		{ 0x64, 20 }, { 0x65, 24 }, { 0x81, 28 },	/* CNP */
	};
	bool is_defined[256] = {};
	int i;

	for (i = 0; i < ARRAY_SIZE(defined); i++) {
		is_defined[defined[i].op] = true;
		KUNIT_EXPECT_NE_MSG(test, qpnic_opcode_flags(defined[i].op), 0U,
				    "opcode %#x", defined[i].op);
		KUNIT_EXPECT_EQ_MSG(test, qpnic_opcode_hdr_len(defined[i].op),
				    defined[i].len, "opcode %#x", defined[i].op);
	}
	for (i = 0; i < 256; i++) {
		if (is_defined[i])
			continue;
		KUNIT_EXPECT_EQ_MSG(test, qpnic_opcode_flags(i), 0U, "opcode %#x", i);
		KUNIT_EXPECT_EQ_MSG(test, qpnic_opcode_hdr_len(i), 0, "opcode %#x", i);
	}
	/* immediate data after RETH, after DETH; a header the opcode lacks */
	KUNIT_EXPECT_EQ(test, qpnic_hdr_offset(0x0b, QPNIC_OP_IMMDT), 28);
	KUNIT_EXPECT_EQ(test, qpnic_hdr_offset(0x65, QPNIC_OP_IMMDT), 20);
	KUNIT_EXPECT_EQ(test, qpnic_hdr_offset(0x65, QPNIC_OP_DETH), 12);
	KUNIT_EXPECT_EQ(test, qpnic_hdr_offset(0x17, QPNIC_OP_IETH), 12);
	KUNIT_EXPECT_EQ(test, qpnic_hdr_offset(0x04, QPNIC_OP_RETH), -1);
	/* FLUSH: FETH first, then RETH */
	KUNIT_EXPECT_EQ(test, qpnic_hdr_offset(0x1c, QPNIC_OP_FETH), 12);
	KUNIT_EXPECT_EQ(test, qpnic_hdr_offset(0x1c, QPNIC_OP_RETH), 16);
}

/* One bad packet per class: built by hand, refused with its reason. */
struct qpnic_wire_bad {
	const char *desc;
	const char *hex;	/* from the BTH on, ICRC bytes included */
	int err;
};

static const struct qpnic_wire_bad qpnic_bad_pkts[] = {
	{ "shorter than BTH + ICRC", "1100ffff000abcde00000100", -EBADMSG },
	{ "undefined opcode 0x15", "1500ffff000abcde0000000100000000", -EOPNOTSUPP },
	{ "undefined opcode 0x40", "4000ffff000abcde0000000100000000", -EOPNOTSUPP },
	{ "undefined UD opcode 0x66",
	  "6600ffff000abcde000000010000000000000000", -EOPNOTSUPP },
	{ "transport version 1",
	  "1101ffff000abcde000000011f00000100000000", -EPROTONOSUPPORT },
	{ "ACK without its AETH", "1100ffff000abcde0000000100000000", -EBADMSG },
	{ "WRITE ONLY cut inside its RETH",
	  "0a00ffff0000001180000100000055d7ca91b00000000000", -EBADMSG },
	{ "ACK with trailing bytes",
	  "1100ffff000abcde000000011f0000010000000000000000", -EBADMSG },
	{ "pad longer than the payload", "0430ffff00000011800001000000000000", -EBADMSG },
};

static void qpnic_wire_bad_desc(const struct qpnic_wire_bad *b, char *desc)
{
	strscpy(desc, b->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(qpnic_bad, qpnic_bad_pkts, qpnic_wire_bad_desc);

static void qpnic_wire_parse_bad(struct kunit *test)
{
	const struct qpnic_wire_bad *b = test->param_value;
	size_t len = strlen(b->hex) / 2;
	struct qpnic_pkt pkt = {};
	struct sk_buff *skb;

	skb = alloc_skb(len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	if (hex2bin(skb_put(skb, len), b->hex, len)) {
		kfree_skb(skb);
		KUNIT_FAIL(test, "bad hex in the test");
		return;
	}
	KUNIT_EXPECT_EQ(test, qpnic_pkt_parse(skb, &pkt), b->err);
	kfree_skb(skb);
}

/* 24-bit PSN distances across the wrap (IBTA 9.7.1). */
static void qpnic_wire_psn_diff(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, qpnic_psn_diff(5, 5), 0);
	KUNIT_EXPECT_EQ(test, qpnic_psn_diff(6, 5), 1);
	KUNIT_EXPECT_EQ(test, qpnic_psn_diff(5, 6), -1);
	KUNIT_EXPECT_EQ(test, qpnic_psn_diff(0, 0xffffff), 1);
	KUNIT_EXPECT_EQ(test, qpnic_psn_diff(0xffffff, 0), -1);
	KUNIT_EXPECT_EQ(test, qpnic_psn_diff(0x10, 0xfffff0), 0x20);
	KUNIT_EXPECT_EQ(test, qpnic_psn_diff(0x7fffff, 0), 0x7fffff);
	KUNIT_EXPECT_EQ(test, qpnic_psn_diff(0x800000, 0), -0x800000);
	/* bits above the 24 are not part of a PSN */
	KUNIT_EXPECT_EQ(test, qpnic_psn_diff(0x1000005, 5), 0);
}

static struct kunit_case qpnic_wire_cases[] = {
	KUNIT_CASE_PARAM(qpnic_wire_icrc_known, qpnic_known_gen_params),
	KUNIT_CASE(qpnic_wire_icrc_masking),
	KUNIT_CASE_PARAM(qpnic_wire_parse_known, qpnic_known_gen_params),
	KUNIT_CASE_PARAM(qpnic_wire_build_known, qpnic_known_gen_params),
	KUNIT_CASE(qpnic_wire_build_parse_roundtrip),
	KUNIT_CASE(qpnic_wire_opcode_table),
	KUNIT_CASE_PARAM(qpnic_wire_parse_bad, qpnic_bad_gen_params),
	KUNIT_CASE(qpnic_wire_psn_diff),
	{}
};

static struct kunit_suite qpnic_wire_suite = {
	.name = "qpnic_wire",
	.test_cases = qpnic_wire_cases,
};

kunit_test_suite(qpnic_wire_suite);
