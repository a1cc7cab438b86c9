// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the guest tests share: the "@@RESULT PASS|FAIL name [why]" lines
 * the host counts, opening the device named on the command line, finding
 * the RoCEv2 GID of an IPv4 address, and the modify_qp steps that take a
 * QP to RTS looped back to that GID, or an RC QP connected to another one
 * through it.
 *
 * scripts/build-guest-tests.sh compiles each test on its own, so this is
 * included by one translation unit at a time: the state and the helpers
 * are static. The helpers are static inline so that a test that does not
 * call one of them gets no -Wunused-function error under -Werror.
 *
 * Include it before <rdma/rdma_user_rxe.h>: that pulls in <linux/in.h>,
 * which clashes with the <arpa/inet.h> here unless glibc's comes first.
 */
#ifndef QPNIC_GUEST_TEST_H
#define QPNIC_GUEST_TEST_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

/* The Q_Key to_init() gives a UD QP. */
#define QKEY		0x11111111u

static struct ibv_context *ctx;
static int failures;		/* FAIL lines printed; main() exits 1 if any */

/*
 * The GID find_gid() found; to_rtr() points RC and UC QPs at it. Unused
 * where no QP goes to RTR (test_ring_hostile).
 */
static int gid_index __attribute__((unused)) = -1;
static union ibv_gid local_gid __attribute__((unused));

/* One "@@RESULT VERDICT name [detail]" line, flushed so a crash or _exit() loses none. */
static inline void vreport(const char *verdict, const char *name, const char *fmt,
			   va_list ap)
{
	printf("@@RESULT %s %s", verdict, name);
	if (fmt) {
		printf(" ");
		vprintf(fmt, ap);
	}
	printf("\n");
	fflush(stdout);
}

/* The reason is printed on failure only. */
static inline void result(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(ok ? "PASS" : "FAIL", name, ok ? NULL : fmt, ap);
	va_end(ap);
	failures += !ok;
}

/* The detail is printed either way. */
static inline void result_note(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(ok ? "PASS" : "FAIL", name, fmt, ap);
	va_end(ap);
	failures += !ok;
}

/* The device called @name in @list (of @n), the first one if @name is NULL. */
static inline struct ibv_device *find_device(struct ibv_device **list, int n,
					     const char *name)
{
	int i;

	for (i = 0; list && i < n; i++)
		if (!name || !strcmp(ibv_get_device_name(list[i]), name))
			return list[i];
	return NULL;
}

/*
 * The command line "-d DEVICE [-a IPV4]": open DEVICE (without -d the
 * first device) into ctx and report it; *@ipv4 is the address for
 * find_gid(), 10.0.0.1 by default. False if the test cannot go on; the
 * caller frees *@list.
 */
static inline bool open_test_device(int argc, char **argv,
				    struct ibv_device ***list, const char **ipv4)
{
	const char *devname = NULL;
	struct ibv_device *dev;
	int n = 0, opt;

	*ipv4 = "10.0.0.1";
	while ((opt = getopt(argc, argv, "d:a:")) != -1) {
		if (opt == 'd')
			devname = optarg;
		else if (opt == 'a')
			*ipv4 = optarg;
	}
	*list = ibv_get_device_list(&n);
	dev = find_device(*list, n, devname);
	if (!dev) {
		result(false, "open device", "%s not found", devname ? devname : "any");
		return false;
	}
	ctx = ibv_open_device(dev);
	result(ctx, "open device through librxe", "errno %d", errno);
	return ctx;
}

/*
 * The index of the RoCEv2 GID on port 1 that maps @ipv4 (::ffff:a.b.c.d),
 * stored in local_gid, or -1.
 */
static inline int find_gid(const char *ipv4)
{
	struct in_addr want;
	int i;

	if (inet_pton(AF_INET, ipv4, &want) != 1)
		return -1;
	for (i = 0; i < 256; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(ctx, 1, i, &e, 0))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    !memcmp(&e.gid.raw[12], &want, 4) && e.gid.raw[10] == 0xff) {
			local_gid = e.gid;
			return i;
		}
	}
	return -1;
}

/* The QP the loopback tests start from: 16 WRs and one SGE each way on @cq. */
static inline struct ibv_qp_init_attr_ex qp_init_attr(struct ibv_pd *pd,
						      struct ibv_cq *cq,
						      enum ibv_qp_type type)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = type,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	return a;
}

/*
 * RESET -> INIT on port 1: UD with the Q_Key QKEY, RC and UC with remote
 * access. Only the attributes in the mask reach the kernel.
 */
static inline int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qkey = QKEY,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(qp, &a, mask);
}

/*
 * INIT -> RTR. RC/UC loop back to themselves through the local GID
 * (find_gid() first); rq_psn 0x123, checked by test_qp_contract.
 */
static inline int to_rtr(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int mask = IBV_QP_STATE;

	if (qp->qp_type != IBV_QPT_UD) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = qp->qp_num;
		a.rq_psn = 0x123;
		a.max_dest_rd_atomic = 1;
		a.min_rnr_timer = 12;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.dgid = local_gid;
		a.ah_attr.grh.sgid_index = gid_index;
		a.ah_attr.grh.hop_limit = 64;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (qp->qp_type == IBV_QPT_RC)
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	return ibv_modify_qp(qp, &a, mask);
}

/* RTR -> RTS; sq_psn 0x456, checked by test_qp_contract. */
static inline int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .sq_psn = 0x456, .timeout = 14,
		.retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 1,
	};
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (qp->qp_type == IBV_QPT_RC)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, mask);
}

/*
 * @qp, an RC QP, to RTS connected to @dqpn through the device's own GID,
 * with @access for remote requests and 4 READs or atomics in flight each
 * way; both directions start at PSN 0x123.
 */
static inline int connect_rc(struct ibv_qp *qp, uint32_t dqpn, int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = access,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn, .rq_psn = 0x123, .max_dest_rd_atomic = 4,
		.min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = local_gid, .sgid_index = gid_index,
				      .hop_limit = 64 } },
	};
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS, .sq_psn = 0x123, .timeout = 14,
		.retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 4,
	};
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_MAX_QP_RD_ATOMIC);
}

/* A transition that needs no attribute but the state (SQD, ERR, RESET, ...). */
static inline int to_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

#endif /* QPNIC_GUEST_TEST_H */
