/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 header access for the transport: field accessors on a packet's
 * BTH and extension headers (big-endian on the wire), located through the
 * opcode table (opcode.c).
 */
#ifndef QPNIC_HDR_H
#define QPNIC_HDR_H

#include <asm/unaligned.h>
#include <qpnic/wire.h>

/* Bytes of the extension headers flagged in @hdrs (a QPNIC_OP_HDRS subset). */
static inline unsigned int qpnic_ext_len(u32 hdrs)
{
	return ((hdrs & QPNIC_OP_DETH) ? QPNIC_DETH_LEN : 0) +
	       ((hdrs & QPNIC_OP_RETH) ? QPNIC_RETH_LEN : 0) +
	       ((hdrs & QPNIC_OP_ATMETH) ? QPNIC_ATMETH_LEN : 0) +
	       ((hdrs & QPNIC_OP_AETH) ? QPNIC_AETH_LEN : 0) +
	       ((hdrs & QPNIC_OP_ATMACK) ? QPNIC_ATMACK_LEN : 0) +
	       ((hdrs & QPNIC_OP_IMMDT) ? QPNIC_IMMDT_LEN : 0) +
	       ((hdrs & QPNIC_OP_IETH) ? QPNIC_IETH_LEN : 0);
}

/* BTH fields; @bth points at the BTH. */
static inline u8 qpnic_bth_opcode(const u8 *bth)
{
	return bth[0];
}

static inline u32 qpnic_bth_dqpn(const u8 *bth)
{
	return get_unaligned_be32(bth + 4) & QPNIC_QPN_MASK;
}

static inline u32 qpnic_bth_psn(const u8 *bth)
{
	return get_unaligned_be32(bth + 8) & QPNIC_PSN_MASK;
}

/* Extension header fields; @h points at that header. */
static inline u64 qpnic_reth_va(const u8 *h)
{
	return get_unaligned_be64(h);
}

static inline u32 qpnic_reth_rkey(const u8 *h)
{
	return get_unaligned_be32(h + 8);
}

static inline u32 qpnic_reth_len(const u8 *h)
{
	return get_unaligned_be32(h + 12);
}

static inline u8 qpnic_aeth_syndrome(const u8 *h)
{
	return h[0];
}

static inline u32 qpnic_aeth_msn(const u8 *h)
{
	return get_unaligned_be32(h) & 0xffffff;
}

static inline u64 qpnic_atmeth_va(const u8 *h)
{
	return get_unaligned_be64(h);
}

static inline u32 qpnic_atmeth_rkey(const u8 *h)
{
	return get_unaligned_be32(h + 8);
}

static inline u64 qpnic_atmeth_swap_add(const u8 *h)
{
	return get_unaligned_be64(h + 12);
}

static inline u64 qpnic_atmeth_compare(const u8 *h)
{
	return get_unaligned_be64(h + 20);
}

static inline u64 qpnic_atmack_orig(const u8 *h)
{
	return get_unaligned_be64(h);
}

static inline u32 qpnic_deth_qkey(const u8 *h)
{
	return get_unaligned_be32(h);
}

static inline u32 qpnic_deth_sqpn(const u8 *h)
{
	return get_unaligned_be32(h + 4) & QPNIC_QPN_MASK;
}

#endif /* QPNIC_HDR_H */
