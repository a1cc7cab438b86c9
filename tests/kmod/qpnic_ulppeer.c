// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A kernel ULP across two hosts, for the two-guest checks: loaded with
 * role=server on one and role=client on the other, it connects one RC QP
 * through the kernel's rdma_cm (the server's buffer address and R_Key
 * travel in the accept's private data), then the client
 *
 *  - SENDs `count` messages of `size` bytes, each with its own pattern,
 *    into the server's receive WQEs;
 *  - RDMA WRITEs `size` bytes into the server's buffer and tells it with
 *    a zero-length SEND with immediate;
 *  - RDMA READs that buffer back.
 *
 * Both sides check every byte. Loading returns 0 only if everything
 * arrived whole, -EIO if not, -ETIMEDOUT if the peer never came. Whatever
 * RDMA device rdma_cm resolves the address to is used: qpnic or rdma_rxe.
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

static char *role = "server";
module_param(role, charp, 0444);
MODULE_PARM_DESC(role, "server or client");
static char *addr = "10.1.0.1";
module_param(addr, charp, 0444);
MODULE_PARM_DESC(addr, "the server's IPv4 address");
static ushort port = 18650;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "the server's rdma_cm port");
static unsigned int count = 32;
module_param(count, uint, 0444);
MODULE_PARM_DESC(count, "SENDs to make");
static unsigned int size = 4096;
module_param(size, uint, 0444);
MODULE_PARM_DESC(size, "bytes per SEND, and of the RDMA buffer");

#define PEER_WAIT_SECS	60
#define IMM_DONE	0x600dda7a

/* What the server tells the client in its accept. */
struct peer_window {
	__be64 addr;
	__be32 rkey;
	__be32 len;
};

struct peer {
	struct rdma_cm_id *listen_id, *id;
	struct completion cm_event;
	int cm_status;		/* 1 connected, < 0 failed, 0 waiting */
	struct ib_pd *pd;
	struct ib_cq *cq;
	u8 *buf;		/* count receive or send slots, then the window */
	u64 dma;
	size_t len;
	struct peer_window remote;
	bool server;
};

static u8 *peer_slot(struct peer *p, unsigned int i)
{
	return p->buf + (size_t)i * size;
}

static void peer_fill(u8 *b, unsigned int seed)
{
	unsigned int j;

	for (j = 0; j < size; j++)
		b[j] = seed * 31 + j * 7 + (j >> 9);
}

static bool peer_check(const u8 *b, unsigned int seed)
{
	unsigned int j;

	for (j = 0; j < size; j++)
		if (b[j] != (u8)(seed * 31 + j * 7 + (j >> 9)))
			return false;
	return true;
}

/* PD, CQ, QP on the device rdma_cm chose for @id, and the buffer mapped. */
static int peer_resources(struct peer *p, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = count + 4, .max_recv_wr = count + 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int err;

	p->pd = ib_alloc_pd(id->device, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(p->pd)) {
		err = PTR_ERR(p->pd);
		p->pd = NULL;
		return err;
	}
	p->cq = ib_alloc_cq(id->device, NULL, 2 * count + 8, 0, IB_POLL_DIRECT);
	if (IS_ERR(p->cq)) {
		err = PTR_ERR(p->cq);
		p->cq = NULL;
		return err;
	}
	p->dma = ib_dma_map_single(id->device, p->buf, p->len,
				   DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(id->device, p->dma)) {
		p->dma = 0;
		return -ENOMEM;
	}
	attr.send_cq = p->cq;
	attr.recv_cq = p->cq;
	return rdma_create_qp(id, p->pd, &attr);
}

static void peer_free(struct peer *p)
{
	struct rdma_cm_id *id = p->id;

	if (id && id->qp)
		rdma_destroy_qp(id);
	if (id && p->dma)
		ib_dma_unmap_single(id->device, p->dma, p->len, DMA_BIDIRECTIONAL);
	if (p->cq)
		ib_free_cq(p->cq);
	if (p->pd)
		ib_dealloc_pd(p->pd);
	p->cq = NULL;
	p->pd = NULL;
	p->dma = 0;
	if (id)
		rdma_destroy_id(id);
	p->id = NULL;
}

static int peer_post_recv(struct peer *p, unsigned int i)
{
	struct ib_sge sge = {
		.addr = p->dma + (u64)i * size, .length = size,
		.lkey = p->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };

	return ib_post_recv(p->id->qp, &wr, NULL);
}

/* The server side of a connect request: resources, receives, accept. */
static int peer_accept(struct peer *p, struct rdma_cm_id *id)
{
	struct peer_window w;
	struct rdma_conn_param param = {
		.responder_resources = 1, .initiator_depth = 1,
		.private_data = &w, .private_data_len = sizeof(w),
	};
	unsigned int i;
	int err;

	if (p->id)
		return -EBUSY;	/* one client */
	p->id = id;
	err = peer_resources(p, id);
	for (i = 0; !err && i <= count; i++)
		err = peer_post_recv(p, i);
	if (err)
		goto fail;
	w.addr = cpu_to_be64(p->dma + (u64)count * size);
	w.rkey = cpu_to_be32(p->pd->unsafe_global_rkey);
	w.len = cpu_to_be32(size);
	err = rdma_accept(id, &param);
	if (!err)
		return 0;
fail:
	/* rdma_cm destroys @id when the handler returns an error */
	if (id->qp)
		rdma_destroy_qp(id);
	p->id = NULL;
	return err;
}

static int peer_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct peer *p = id->context;
	int err = 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		err = rdma_resolve_route(id, 2000);
		if (!err)
			return 0;	/* on to ROUTE_RESOLVED */
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED: {
		struct rdma_conn_param param = {
			.responder_resources = 1, .initiator_depth = 1,
			.retry_count = 7, .rnr_retry_count = 7,
		};

		err = peer_resources(p, id) ?: rdma_connect_locked(id, &param);
		if (!err)
			return 0;	/* on to ESTABLISHED or REJECTED */
		break;
	}
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		err = peer_accept(p, id);
		if (!err)
			return 0;
		p->cm_status = err;
		complete(&p->cm_event);
		return err;	/* rdma_cm destroys the request's id */
	case RDMA_CM_EVENT_ESTABLISHED:
		if (!p->server) {
			if (ev->param.conn.private_data_len < sizeof(p->remote)) {
				p->cm_status = -EPROTO;
				break;
			}
			memcpy(&p->remote, ev->param.conn.private_data,
			       sizeof(p->remote));
		}
		p->cm_status = 1;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return 0;
	default:	/* rejected, unreachable, address or route errors */
		p->cm_status = -ECONNREFUSED;
		break;
	}
	if (err)
		p->cm_status = err;
	complete(&p->cm_event);
	return 0;
}

/* @n successful completions (the last in *@last); -EIO on an error or timeout. */
static int peer_wait(struct peer *p, unsigned int n, struct ib_wc *last)
{
	unsigned long end = jiffies + 10 * HZ;
	struct ib_wc wc;

	while (n) {
		if (ib_poll_cq(p->cq, 1, &wc) == 1) {
			if (wc.status != IB_WC_SUCCESS) {
				pr_err("qpnic_ulppeer: wr %llu: %s\n", wc.wr_id,
				       ib_wc_status_msg(wc.status));
				return -EIO;
			}
			if (last)
				*last = wc;
			n--;
			continue;
		}
		if (time_after(jiffies, end))
			return -EIO;
		usleep_range(200, 400);
	}
	return 0;
}

static int peer_post(struct peer *p, enum ib_wr_opcode op, unsigned int slot,
		     u32 len)
{
	struct ib_sge sge = {
		.addr = p->dma + (u64)slot * size, .length = len,
		.lkey = p->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = slot, .sg_list = &sge, .num_sge = len ? 1 : 0,
			.opcode = op, .send_flags = IB_SEND_SIGNALED,
			.ex.imm_data = cpu_to_be32(IMM_DONE) },
		.remote_addr = be64_to_cpu(p->remote.addr),
		.rkey = be32_to_cpu(p->remote.rkey),
	};

	return ib_post_send(p->id->qp, &wr.wr, NULL);
}

static int peer_client_traffic(struct peer *p)
{
	unsigned int i;
	int err = 0;

	if (be32_to_cpu(p->remote.len) < size)
		return -EPROTO;
	for (i = 0; i < count && !err; i++) {
		peer_fill(peer_slot(p, i), i);
		err = peer_post(p, IB_WR_SEND, i, size);
	}
	err = err ?: peer_wait(p, count, NULL);
	/* the window: written, announced, read back */
	peer_fill(peer_slot(p, count), 0xabc);
	err = err ?: peer_post(p, IB_WR_RDMA_WRITE, count, size) ?:
	      peer_post(p, IB_WR_SEND_WITH_IMM, count, 0) ?:
	      peer_wait(p, 2, NULL);
	if (err)
		return err;
	memset(peer_slot(p, count), 0, size);
	err = peer_post(p, IB_WR_RDMA_READ, count, size) ?: peer_wait(p, 1, NULL);
	if (!err && !peer_check(peer_slot(p, count), 0xabc)) {
		pr_err("qpnic_ulppeer: the RDMA READ brought back other bytes\n");
		return -EIO;
	}
	return err;
}

static int peer_server_traffic(struct peer *p)
{
	struct ib_wc wc;
	unsigned int i;
	int err;

	for (i = 0; i < count; i++) {
		err = peer_wait(p, 1, &wc);
		if (err)
			return err;
		if (wc.wr_id != i || wc.byte_len != size ||
		    !peer_check(peer_slot(p, i), i)) {
			pr_err("qpnic_ulppeer: SEND %u arrived wrong (wr %llu, %u bytes)\n",
			       i, wc.wr_id, wc.byte_len);
			return -EIO;
		}
	}
	/* the client's WRITE is in the window once its immediate arrives */
	err = peer_wait(p, 1, &wc);
	if (err)
		return err;
	if (!(wc.wc_flags & IB_WC_WITH_IMM) ||
	    be32_to_cpu(wc.ex.imm_data) != IMM_DONE ||
	    !peer_check(peer_slot(p, count), 0xabc)) {
		pr_err("qpnic_ulppeer: the RDMA WRITE did not land whole\n");
		return -EIO;
	}
	/* stay connected while the client reads the window back */
	msleep(2000);
	return 0;
}

static int peer_client_connect(struct peer *p)
{
	unsigned long end = jiffies + PEER_WAIT_SECS * HZ;
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(port) };

	if (!in4_pton(addr, -1, (u8 *)&dst.sin_addr.s_addr, -1, NULL))
		return -EINVAL;
	do {	/* until the server listens */
		int err;

		p->id = rdma_create_id(&init_net, peer_cm_handler, p,
				       RDMA_PS_TCP, IB_QPT_RC);
		if (IS_ERR(p->id)) {
			err = PTR_ERR(p->id);
			p->id = NULL;
			return err;
		}
		reinit_completion(&p->cm_event);
		p->cm_status = 0;
		err = rdma_resolve_addr(p->id, NULL, (struct sockaddr *)&dst, 2000);
		/* a REQ nobody answers yet is sent again by the CM: wait it out */
		if (!err && !wait_for_completion_timeout(&p->cm_event,
							 max_t(long, end - jiffies, 1)))
			err = -ETIMEDOUT;
		if (!err && p->cm_status != 1 && p->cm_status != -ECONNREFUSED)
			err = p->cm_status;
		if (err)
			return err;
		if (p->cm_status == 1)
			return 0;
		peer_free(p);
		msleep(500);
	} while (time_before(jiffies, end));
	return -ETIMEDOUT;
}

static int peer_server_listen(struct peer *p)
{
	struct sockaddr_in any = { .sin_family = AF_INET, .sin_port = htons(port) };
	int err;

	p->listen_id = rdma_create_id(&init_net, peer_cm_handler, p,
				      RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(p->listen_id)) {
		err = PTR_ERR(p->listen_id);
		p->listen_id = NULL;
		return err;
	}
	err = rdma_bind_addr(p->listen_id, (struct sockaddr *)&any) ?:
	      rdma_listen(p->listen_id, 1);
	if (err)
		return err;
	if (!wait_for_completion_timeout(&p->cm_event, PEER_WAIT_SECS * HZ))
		return -ETIMEDOUT;
	return p->cm_status == 1 ? 0 : p->cm_status ?: -EIO;
}

static int __init qpnic_ulppeer_init(void)
{
	struct peer *p;
	int err;

	if (!count || !size || count > 256 || (size_t)(count + 1) * size > SZ_4M)
		return -EINVAL;
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	init_completion(&p->cm_event);
	p->server = !strcmp(role, "server");
	p->len = (size_t)(count + 1) * size;
	p->buf = kzalloc(p->len, GFP_KERNEL);
	err = -ENOMEM;
	if (p->buf && p->server)
		err = peer_server_listen(p) ?: peer_server_traffic(p);
	else if (p->buf)
		err = peer_client_connect(p) ?: peer_client_traffic(p);
	if (p->id)
		rdma_disconnect(p->id);
	if (p->listen_id)
		rdma_destroy_id(p->listen_id);
	if (!err)
		pr_info("qpnic_ulppeer: %s on %s: %u SENDs of %u bytes, an RDMA WRITE and an RDMA READ: every byte checked\n",
			role, p->id ? dev_name(&p->id->device->dev) : "?", count,
			size);
	else
		pr_err("qpnic_ulppeer: %s failed: %d\n", role, err);
	peer_free(p);
	kfree(p->buf);
	kfree(p);
	return err;
}

static void __exit qpnic_ulppeer_exit(void)
{
}

module_init(qpnic_ulppeer_init);
module_exit(qpnic_ulppeer_exit);
MODULE_DESCRIPTION("qpnic test: a kernel ULP moving checked data to a peer over rdma_cm");
MODULE_LICENSE("Dual BSD/GPL");
