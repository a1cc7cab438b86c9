/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 header access for the transport: header lengths and the BTH
 * fields the receive path reads (big-endian on the wire). Extension
 * headers are located through the opcode table (opcode.c).
 */
#ifndef QPNIC_HDR_H
#define QPNIC_HDR_H

#include <qpnic/compat.h>
#include <qpnic/wire.h>

/* Bytes of the extension headers flagged in @hdrs (a QPNIC_OP_HDRS subset). */
static inline unsigned int qpnic_ext_len(u32 hdrs)
{
	return ((hdrs & QPNIC_OP_DETH) ? QPNIC_DETH_LEN : 0) +
	       ((hdrs & QPNIC_OP_FETH) ? QPNIC_FETH_LEN : 0) +
	       ((hdrs & QPNIC_OP_RETH) ? QPNIC_RETH_LEN : 0) +
	       ((hdrs & QPNIC_OP_ATMETH) ? QPNIC_ATMETH_LEN : 0) +
	       ((hdrs & QPNIC_OP_AETH) ? QPNIC_AETH_LEN : 0) +
	       ((hdrs & QPNIC_OP_ATMACK) ? QPNIC_ATMACK_LEN : 0) +
	       ((hdrs & QPNIC_OP_IMMDT) ? QPNIC_IMMDT_LEN : 0) +
	       ((hdrs & QPNIC_OP_IETH) ? QPNIC_IETH_LEN : 0) +
	       ((hdrs & QPNIC_OP_CNP) ? QPNIC_CNP_LEN : 0);
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

#endif /* QPNIC_HDR_H */
