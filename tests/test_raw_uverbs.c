// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kernel side of the QP contract, reached with raw uverbs commands.
 * librxe refuses some requests itself (create_flags, driver data, WR lists
 * on user QPs), so a check made through it passes whatever the kernel
 * does. Here the commands are written straight to ctx->cmd_fd with the
 * write() ABI of include/uapi/rdma/ib_user_verbs.h:
 *  - legacy: struct ib_uverbs_cmd_hdr, then the command; in_words counts
 *    4-byte words including the header, out_words 4-byte words of the
 *    response (the core's, then the driver's);
 *  - extended (IB_USER_VERBS_CMD_FLAG_EXTENDED): struct ib_uverbs_cmd_hdr
 *    and struct ib_uverbs_ex_cmd_hdr, then the command and the driver's
 *    input; in_words/out_words and provider_in_words/provider_out_words
 *    count 8-byte units, headers excluded
 * (drivers/infiniband/core/uverbs_main.c: ib_uverbs_write(), verify_hdr()).
 * Objects the commands name (PD, CQ, QP, AH) are made through librxe.
 * Each expectation says which layer refuses: "(core check)" where
 * drivers/infiniband/core refuses before qpnic is called.
 * Each check prints "@@RESULT PASS|FAIL name [why]" for the host to count.
 *
 * usage: test_raw_uverbs -d DEVICE [-a IPV4]   (IPV4 default 10.0.0.1)
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include "guest_test.h"	/* before <rdma/rdma_user_rxe.h>, see there */
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

/* include/rdma/ib_verbs.h enum ib_qp_create_flags (not in the uapi headers) */
#define QP_CREATE_BLOCK_MULTICAST_LOOPBACK	(1u << 1)
#define QP_CREATE_CROSS_CHANNEL			(1u << 2)
#define QP_CREATE_MANAGED_SEND			(1u << 3)
#define QP_CREATE_MANAGED_RECV			(1u << 4)
#define QP_CREATE_SCATTER_FCS			(1u << 8)
#define QP_CREATE_CVLAN_STRIPPING		(1u << 9)
#define QP_CREATE_SOURCE_QPN			(1u << 10)
#define QP_CREATE_PCI_WRITE_END_PADDING		(1u << 11)
#define CAP_NET_RAW_BIT				13
#define BAD_WR_UNSET				0xdeadbeefu

/* The extended commands count 8-byte units. */
_Static_assert(sizeof(struct ib_uverbs_ex_create_qp) % 8 == 0, "ex_create_qp size");
_Static_assert(sizeof(struct ib_uverbs_ex_create_qp_resp) % 8 == 0, "ex_create_qp_resp size");
_Static_assert(sizeof(struct ib_uverbs_ex_modify_qp) % 8 == 0, "ex_modify_qp size");
_Static_assert(sizeof(struct ib_uverbs_ex_modify_qp_resp) % 8 == 0, "ex_modify_qp_resp size");
_Static_assert(sizeof(struct rxe_create_qp_resp) % 8 == 0, "rxe_create_qp_resp size");

static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static char mr_buf[4096] __attribute__((aligned(4096)));

static const char *ename(int err)
{
	switch (err) {
	case 0:
		return "success";
	case EINVAL:
		return "EINVAL";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	case ENOSYS:
		return "ENOSYS";
	case EPERM:
		return "EPERM";
	case ENOSPC:
		return "ENOSPC";
	case EFAULT:
		return "EFAULT";
	case ENOENT:
		return "ENOENT";
	case ENOMEM:
		return "ENOMEM";
	default:
		return "other";
	}
}

/* write() one whole command; 0 or the kernel's errno. */
static int raw_write(const void *buf, size_t len)
{
	ssize_t ret;

	errno = 0;
	ret = write(ctx->cmd_fd, buf, len);
	if (ret == (ssize_t)len)
		return 0;
	return ret < 0 ? errno : EIO;
}

/*
 * A legacy command: @in (@inlen bytes, the core's struct and any driver
 * input after it) behind the header; @outlen bytes of response (the core's
 * and the driver's) at the address the command's "response" field holds.
 */
static int cmd_legacy(uint32_t command, const void *in, size_t inlen, size_t outlen)
{
	struct ib_uverbs_cmd_hdr hdr = {
		.command = command,
		.in_words = (sizeof(hdr) + inlen) / 4,
		.out_words = outlen / 4,
	};
	uint8_t *buf = malloc(sizeof(hdr) + inlen);
	int err;

	if (!buf)
		return ENOMEM;
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), in, inlen);
	err = raw_write(buf, sizeof(hdr) + inlen);
	free(buf);
	return err;
}

/*
 * An extended command: @in (@inlen bytes) then @drv_in (@drv_inlen bytes
 * of driver input) behind both headers; the response buffer @resp holds
 * @outlen bytes for the core, then @drv_outlen bytes for the driver.
 */
static int cmd_ex(uint32_t command, const void *in, size_t inlen,
		  const void *drv_in, size_t drv_inlen, void *resp,
		  size_t outlen, size_t drv_outlen)
{
	struct ib_uverbs_cmd_hdr hdr = {
		.command = IB_USER_VERBS_CMD_FLAG_EXTENDED | command,
		.in_words = inlen / 8,
		.out_words = outlen / 8,
	};
	struct ib_uverbs_ex_cmd_hdr ex = {
		.response = (uintptr_t)resp,
		.provider_in_words = drv_inlen / 8,
		.provider_out_words = drv_outlen / 8,
	};
	size_t len = sizeof(hdr) + sizeof(ex) + inlen + drv_inlen;
	uint8_t *buf = malloc(len);
	int err;

	if (!buf)
		return ENOMEM;
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), &ex, sizeof(ex));
	memcpy(buf + sizeof(hdr) + sizeof(ex), in, inlen);
	if (drv_inlen)
		memcpy(buf + sizeof(hdr) + sizeof(ex) + inlen, drv_in, drv_inlen);
	err = raw_write(buf, len);
	free(buf);
	return err;
}

/*
 * IB_USER_VERBS_EX_CMD_CREATE_QP (uverbs_cmd.c ib_uverbs_ex_create_qp()
 * -> create_qp() -> ib_create_qp_user() -> ops.create_qp), on the shared
 * PD and CQ. On success *handle is the new QP's uverbs handle.
 */
static int raw_create_qp(uint32_t create_flags, const void *drv_in, size_t drv_inlen,
			 size_t drv_outlen, uint32_t *handle)
{
	struct ib_uverbs_ex_create_qp cmd = {
		.pd_handle = pd->handle,
		.send_cq_handle = cq->handle,
		.recv_cq_handle = cq->handle,
		.max_send_wr = 4,
		.max_recv_wr = 4,
		.max_send_sge = 1,
		.max_recv_sge = 1,
		.qp_type = IBV_QPT_RC,
		.create_flags = create_flags,
	};
	struct {
		struct ib_uverbs_ex_create_qp_resp core;
		uint8_t drv[sizeof(struct rxe_create_qp_resp)];
	} resp;
	int err;

	memset(&resp, 0, sizeof(resp));
	err = cmd_ex(IB_USER_VERBS_EX_CMD_CREATE_QP, &cmd, sizeof(cmd), drv_in, drv_inlen,
		     &resp, sizeof(resp.core), drv_outlen);
	if (!err)
		*handle = resp.core.base.qp_handle;
	return err;
}

static int raw_destroy_qp(uint32_t handle)
{
	struct ib_uverbs_destroy_qp_resp resp;
	struct ib_uverbs_destroy_qp cmd = {
		.response = (uintptr_t)&resp,
		.qp_handle = handle,
	};

	return cmd_legacy(IB_USER_VERBS_CMD_DESTROY_QP, &cmd, sizeof(cmd), sizeof(resp));
}

/* A create that should have failed: undo it, report what it did. */
static void expect_create(const char *name, uint32_t flags, const void *drv_in,
			  size_t drv_inlen, size_t drv_outlen, int want)
{
	uint32_t handle = 0;
	int err = raw_create_qp(flags, drv_in, drv_inlen, drv_outlen, &handle);
	int derr = 0;

	if (!err)
		derr = raw_destroy_qp(handle);
	result(err == want && !derr, name, "errno %d (%s), want %d (%s); destroy %d",
	       err, ename(err), want, ename(want), derr);
}

/*
 * IB_USER_VERBS_EX_CMD_MODIFY_QP (ib_uverbs_ex_modify_qp() -> modify_qp()
 * -> ib_modify_qp_with_udata() -> ops.modify_qp): the legacy MODIFY_QP has
 * no driver data (UAPI_DEF_WRITE_I), the extended one does.
 */
static int raw_modify_qp(struct ib_uverbs_ex_modify_qp *cmd, const void *drv_in,
			 size_t drv_inlen)
{
	struct ib_uverbs_ex_modify_qp_resp resp = {};

	return cmd_ex(IB_USER_VERBS_EX_CMD_MODIFY_QP, cmd, sizeof(*cmd), drv_in, drv_inlen,
		      &resp, sizeof(resp), 0);
}

/* IB_USER_VERBS_CMD_POST_SEND with @n WRs of one SGE each (n == 0: the doorbell). */
static int raw_post_send(uint32_t qp_handle, const struct ib_uverbs_send_wr *wrs,
			 unsigned int n, uint32_t *bad_wr)
{
	struct ib_uverbs_post_send_resp resp = { .bad_wr = BAD_WR_UNSET };
	struct ib_uverbs_post_send cmd = {
		.response = (uintptr_t)&resp,
		.qp_handle = qp_handle,
		.wr_count = n,
		.sge_count = n,
		.wqe_size = sizeof(struct ib_uverbs_send_wr),
	};
	struct ib_uverbs_sge sge = {
		.addr = (uintptr_t)mr_buf, .length = 64, .lkey = mr->lkey,
	};
	size_t len = sizeof(cmd) + n * (sizeof(*wrs) + sizeof(sge));
	uint8_t *buf = malloc(len), *p;
	unsigned int i;
	int err;

	if (!buf)
		return ENOMEM;
	memcpy(buf, &cmd, sizeof(cmd));
	p = buf + sizeof(cmd);
	for (i = 0; i < n; i++, p += sizeof(*wrs))
		memcpy(p, &wrs[i], sizeof(*wrs));
	for (i = 0; i < n; i++, p += sizeof(sge))
		memcpy(p, &sge, sizeof(sge));
	err = cmd_legacy(IB_USER_VERBS_CMD_POST_SEND, buf, len, sizeof(resp));
	free(buf);
	*bad_wr = resp.bad_wr;
	return err;
}

/* IB_USER_VERBS_CMD_POST_RECV with one WR of one SGE. */
static int raw_post_recv(uint32_t qp_handle)
{
	struct ib_uverbs_post_recv_resp resp = { .bad_wr = BAD_WR_UNSET };
	struct {
		struct ib_uverbs_post_recv cmd;
		struct ib_uverbs_recv_wr wr;
		struct ib_uverbs_sge sge;
	} in = {
		.cmd = {
			.response = (uintptr_t)&resp,
			.qp_handle = qp_handle,
			.wr_count = 1,
			.sge_count = 1,
			.wqe_size = sizeof(struct ib_uverbs_recv_wr),
		},
		.wr = { .wr_id = 7, .num_sge = 1 },
		.sge = { .addr = (uintptr_t)mr_buf, .length = 64, .lkey = mr->lkey },
	};

	_Static_assert(sizeof(in) == sizeof(in.cmd) + sizeof(in.wr) + sizeof(in.sge),
		       "post_recv layout");
	return cmd_legacy(IB_USER_VERBS_CMD_POST_RECV, &in, sizeof(in), sizeof(resp));
}

/* IB_USER_VERBS_CMD_REG_MR (ib_uverbs_reg_mr()); *handle on success. */
static int raw_reg_mr(uint32_t access, uint32_t *handle)
{
	struct ib_uverbs_reg_mr_resp resp = {};
	struct ib_uverbs_reg_mr cmd = {
		.response = (uintptr_t)&resp,
		.start = (uintptr_t)mr_buf,
		.length = sizeof(mr_buf),
		.hca_va = (uintptr_t)mr_buf,
		.pd_handle = pd->handle,
		.access_flags = access,
	};
	int err = cmd_legacy(IB_USER_VERBS_CMD_REG_MR, &cmd, sizeof(cmd), sizeof(resp));

	if (!err)
		*handle = resp.mr_handle;
	return err;
}

static int raw_dereg_mr(uint32_t handle)
{
	struct ib_uverbs_dereg_mr cmd = { .mr_handle = handle };

	return cmd_legacy(IB_USER_VERBS_CMD_DEREG_MR, &cmd, sizeof(cmd), 0);
}

static bool have_cap_net_raw(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	unsigned long long eff = 0;
	char line[256];

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff & (1ULL << CAP_NET_RAW_BIT);
}

static struct ibv_qp *create(enum ibv_qp_type type)
{
	struct ibv_qp_init_attr_ex a = qp_init_attr(pd, cq, type);

	errno = 0;
	return ibv_create_qp_ex(ctx, &a);
}

static struct ibv_qp *create_rts(enum ibv_qp_type type, const char *what)
{
	struct ibv_qp *qp = create(type);
	int err;

	if (!qp) {
		result(false, what, "create_qp errno %d", errno);
		return NULL;
	}
	err = to_init(qp) ?: to_rtr(qp) ?: to_rts(qp);
	if (err) {
		result(false, what, "modify to RTS: %d", err);
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a = {};

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

/* 1. create_flags the core passes on (uverbs_cmd.c create_qp()) */
static void test_create_flags(void)
{
	static const struct { uint32_t flag; const char *name; } flags[] = {
		{ QP_CREATE_BLOCK_MULTICAST_LOOPBACK, "BLOCK_MULTICAST_LOOPBACK" },
		{ QP_CREATE_CROSS_CHANNEL, "CROSS_CHANNEL" },
		{ QP_CREATE_MANAGED_SEND, "MANAGED_SEND" },
		{ QP_CREATE_MANAGED_RECV, "MANAGED_RECV" },
		{ QP_CREATE_SCATTER_FCS, "SCATTER_FCS" },
		{ QP_CREATE_CVLAN_STRIPPING, "CVLAN_STRIPPING" },
		{ QP_CREATE_PCI_WRITE_END_PADDING, "PCI_WRITE_END_PADDING" },
	};
	const size_t resp_len = sizeof(struct rxe_create_qp_resp);
	uint32_t handle = 0;
	char name[160];
	unsigned int i;
	bool raw;
	int err;

	/* the command itself is right: without flags it creates a QP */
	err = raw_create_qp(0, NULL, 0, resp_len, &handle);
	result(!err, "raw create_qp RC without create_flags succeeds", "errno %d (%s)",
	       err, ename(err));
	if (!err) {
		err = raw_destroy_qp(handle);
		result(!err, "raw destroy_qp", "errno %d (%s)", err, ename(err));
	}
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		snprintf(name, sizeof(name), "raw create_qp with create_flags %s is EOPNOTSUPP",
			 flags[i].name);
		expect_create(name, flags[i].flag, NULL, 0, resp_len, EOPNOTSUPP);
	}
	/* SOURCE_QPN reaches the driver only with CAP_NET_RAW */
	raw = have_cap_net_raw();
	expect_create(raw ? "raw create_qp with create_flags SOURCE_QPN is EOPNOTSUPP" :
		      "raw create_qp with create_flags SOURCE_QPN without CAP_NET_RAW is EPERM (core check)",
		      QP_CREATE_SOURCE_QPN, NULL, 0, resp_len, raw ? EOPNOTSUPP : EPERM);
}

/* 2. and 3. driver input and driver response of create_qp */
static void test_create_udata(void)
{
	const size_t resp_len = sizeof(struct rxe_create_qp_resp);
	uint8_t ones[8], zeros[8] = {};
	uint32_t handle = 0;
	int err;

	memset(ones, 0xff, sizeof(ones));
	expect_create("raw create_qp with 8 bytes of non-zero driver input is EOPNOTSUPP",
		      0, ones, sizeof(ones), resp_len, EOPNOTSUPP);
	err = raw_create_qp(0, zeros, sizeof(zeros), resp_len, &handle);
	result(!err, "raw create_qp with 8 zeroed bytes of driver input succeeds",
	       "errno %d (%s)", err, ename(err));
	if (!err)
		raw_destroy_qp(handle);
	expect_create("raw create_qp with no driver response is EINVAL", 0, NULL, 0, 0,
		      EINVAL);
	expect_create("raw create_qp with a driver response 8 bytes short is EINVAL", 0,
		      NULL, 0, resp_len - 8, EINVAL);
}

/* 4. and 5. WR lists on a user RC QP in RTS */
static void test_rc_wr_lists(void)
{
	struct ib_uverbs_send_wr wrs[2] = {
		{ .wr_id = 1, .num_sge = 1, .opcode = IB_UVERBS_WR_SEND,
		  .send_flags = IBV_SEND_SIGNALED },
		{ .wr_id = 2, .num_sge = 1, .opcode = IB_UVERBS_WR_SEND,
		  .send_flags = IBV_SEND_SIGNALED },
	};
	struct ibv_qp *qp = create_rts(IBV_QPT_RC, "RC QP in RTS through librxe");
	const char *layer;
	uint32_t bad_wr;
	int err, probe;

	if (!qp)
		return;
	err = raw_post_send(qp->handle, wrs, 0, &bad_wr);
	result(!err, "raw post_send with no WR (the doorbell) on RTS succeeds",
	       "errno %d (%s)", err, ename(err));
	err = raw_post_send(qp->handle, wrs, 1, &bad_wr);
	result(err == EOPNOTSUPP && bad_wr == 1,
	       "raw post_send of a SEND WR on a user RC QP in RTS is EOPNOTSUPP",
	       "errno %d (%s), bad_wr %#x", err, ename(err), bad_wr);
	err = raw_post_send(qp->handle, wrs, 2, &bad_wr);
	result(err == EOPNOTSUPP && bad_wr == 1,
	       "raw post_send of two WRs is EOPNOTSUPP and names the first as bad_wr",
	       "errno %d (%s), bad_wr %#x (1-based)", err, ename(err), bad_wr);

	/*
	 * The core answers a command missing from uverbs_cmd_mask itself
	 * (uverbs_uapi.c: ib_uverbs_notsupp); an unknown QP handle tells
	 * which layer it was: the real handler fails the lookup instead.
	 */
	err = raw_post_recv(qp->handle);
	probe = raw_post_recv(0xffffffffu);
	layer = probe == EOPNOTSUPP || probe == ENOSYS ?
		"the core (POST_RECV not in uverbs_cmd_mask)" : "the driver";
	result_note(err != 0, "raw post_recv of a WR on a user RC QP in RTS fails",
		    "errno %d (%s) from %s; unknown-handle probe %d (%s)", err, ename(err),
		    layer, probe, ename(probe));
	ibv_destroy_qp(qp);
}

/* 6. modify_qp with driver data, and a transition the state machine forbids */
static void test_modify(void)
{
	struct ibv_qp *qp = create(IBV_QPT_RC);
	struct ib_uverbs_ex_modify_qp to_init_cmd = {}, to_rts_cmd = {};
	uint8_t ones[8], zeros[8] = {};
	enum ibv_qp_state st;
	int err;

	if (!qp) {
		result(false, "modify: RC QP through librxe", "errno %d", errno);
		return;
	}
	memset(ones, 0xff, sizeof(ones));
	/* a legal RESET -> INIT, so the driver data is the only fault */
	to_init_cmd.base.qp_handle = qp->handle;
	to_init_cmd.base.attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				     IBV_QP_ACCESS_FLAGS;
	to_init_cmd.base.qp_state = IBV_QPS_INIT;
	to_init_cmd.base.port_num = 1;
	to_init_cmd.base.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	err = raw_modify_qp(&to_init_cmd, ones, sizeof(ones));
	st = qp_state(qp);
	result(err == EOPNOTSUPP && st == IBV_QPS_RESET,
	       "raw modify_qp RESET -> INIT with non-zero driver data is EOPNOTSUPP",
	       "errno %d (%s), state after %d", err, ename(err), st);

	to_rts_cmd.base.qp_handle = qp->handle;
	to_rts_cmd.base.attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	to_rts_cmd.base.qp_state = IBV_QPS_RTS;
	to_rts_cmd.base.sq_psn = 0x456;
	err = raw_modify_qp(&to_rts_cmd, NULL, 0);
	st = qp_state(qp);
	result(err == EINVAL && st == IBV_QPS_RESET, "raw modify_qp RESET -> RTS is EINVAL",
	       "errno %d (%s), state after %d", err, ename(err), st);

	/* the same command with zeroed driver data is accepted */
	err = raw_modify_qp(&to_init_cmd, zeros, sizeof(zeros));
	st = qp_state(qp);
	result(!err && st == IBV_QPS_INIT,
	       "raw modify_qp RESET -> INIT with zeroed driver data succeeds",
	       "errno %d (%s), state after %d", err, ename(err), st);
	ibv_destroy_qp(qp);
}

/* 7. reg_mr access rules */
static void test_reg_mr(void)
{
	uint32_t handle = 0;
	int err;

	err = raw_reg_mr(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, &handle);
	result(!err, "raw reg_mr with local and remote write succeeds", "errno %d (%s)",
	       err, ename(err));
	if (!err) {
		err = raw_dereg_mr(handle);
		result(!err, "raw dereg_mr", "errno %d (%s)", err, ename(err));
	}
	err = raw_reg_mr(IBV_ACCESS_REMOTE_WRITE, &handle);
	result(err == EINVAL, "reg_mr remote write without local write is EINVAL (core check)",
	       "errno %d (%s)", err, ename(err));
	if (!err)
		raw_dereg_mr(handle);
}

/* 8. WR lists on a user UD QP in RTS */
static void test_ud_wr_lists(void)
{
	struct ibv_ah_attr ah_attr = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = local_gid, .sgid_index = gid_index, .hop_limit = 1 },
	};
	struct ib_uverbs_send_wr wr = {
		.wr_id = 3, .num_sge = 1, .opcode = IB_UVERBS_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)mr_buf, .rkey = 0 },
	};
	struct ibv_qp *qp = create_rts(IBV_QPT_UD, "UD QP in RTS through librxe");
	struct ibv_ah *ah;
	uint32_t bad_wr;
	int err;

	if (!qp)
		return;
	wr.wr.rdma.rkey = mr->rkey;
	/* uverbs_cmd.c ib_uverbs_post_send(): UD takes SEND/SEND_WITH_IMM only */
	err = raw_post_send(qp->handle, &wr, 1, &bad_wr);
	result(err == EINVAL, "raw post_send of an RDMA WRITE on a UD QP is EINVAL (core check)",
	       "errno %d (%s)", err, ename(err));

	ah = ibv_create_ah(pd, &ah_attr);
	if (!ah) {
		result(false, "UD: create_ah through librxe", "errno %d", errno);
		ibv_destroy_qp(qp);
		return;
	}
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 4;
	wr.num_sge = 1;
	wr.opcode = IB_UVERBS_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah->handle;
	wr.wr.ud.remote_qpn = qp->qp_num;
	wr.wr.ud.remote_qkey = QKEY;
	err = raw_post_send(qp->handle, &wr, 1, &bad_wr);
	result(err == EOPNOTSUPP && bad_wr == 1,
	       "raw post_send of a UD SEND with an AH on a user UD QP is EOPNOTSUPP",
	       "errno %d (%s), bad_wr %#x", err, ename(err), bad_wr);
	ibv_destroy_qp(qp);
	ibv_destroy_ah(ah);
}

/* Nothing a refused command did may show up as a completion. */
static void test_nothing_completed(void)
{
	struct ibv_wc wc[8];
	int n = ibv_poll_cq(cq, 8, wc);

	result(n == 0, "refused commands left no completion", "polled %d, first wr_id %llu",
	       n, n > 0 ? (unsigned long long)wc[0].wr_id : 0ULL);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	const char *ipv4;

	if (!open_test_device(argc, argv, &list, &ipv4))
		return 1;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	mr = pd ? ibv_reg_mr(pd, mr_buf, sizeof(mr_buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	gid_index = find_gid(ipv4);
	result(pd && cq && mr && gid_index >= 0, "PD, CQ, MR and RoCEv2 GID",
	       "pd %p cq %p mr %p gid %d", (void *)pd, (void *)cq, (void *)mr, gid_index);
	if (!pd || !cq || !mr || gid_index < 0)
		return 1;

	test_create_flags();
	test_create_udata();
	test_rc_wr_lists();
	test_modify();
	test_reg_mr();
	test_ud_wr_lists();
	test_nothing_completed();

	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failures ? 1 : 0;
}
