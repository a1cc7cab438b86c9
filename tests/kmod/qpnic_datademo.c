// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A kernel ULP in miniature, for make demo and the guest checks: on load,
 * two RC QPs on RDMA device `dev` are connected through its GID `gid`,
 * then `count` SENDs of `size` bytes, an RDMA WRITE and an RDMA READ move
 * data through ib_post_send()/ib_post_recv(), and every byte is checked.
 * Loading fails (-EIO) if anything does not arrive whole.
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *dev = "qpnic0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device");
static int gid;
module_param(gid, int, 0444);
MODULE_PARM_DESC(gid, "GID index both QPs use");
static unsigned int count = 64;
module_param(count, uint, 0444);
MODULE_PARM_DESC(count, "SENDs to make");
static unsigned int size = 65536;
module_param(size, uint, 0444);
MODULE_PARM_DESC(size, "bytes per SEND");

struct demo {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *a, *b;
	u8 *src, *dst;
	union ib_gid gid;
};

static int demo_connect(struct demo *d, struct ib_qp *qp, u32 dqpn)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT, .port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ,
	};
	int err;

	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			   IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, &d->gid, 0, gid, 64, 0);
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

/* Wait for @n successful completions; -EIO on an error or after 10 s. */
static int demo_wait(struct demo *d, int n)
{
	unsigned long end = jiffies + 10 * HZ;
	struct ib_wc wc;

	while (n) {
		if (ib_poll_cq(d->cq, 1, &wc) == 1) {
			if (wc.status != IB_WC_SUCCESS) {
				pr_err("qpnic_datademo: wr %llu: %s\n", wc.wr_id,
				       ib_wc_status_msg(wc.status));
				return -EIO;
			}
			n--;
			continue;
		}
		if (time_after(jiffies, end))
			return -EIO;
		usleep_range(200, 400);
	}
	return 0;
}

static int demo_post(struct demo *d, enum ib_wr_opcode op, void *local,
		     void *remote)
{
	struct ib_sge sge = { .addr = (uintptr_t)local, .length = size,
			      .lkey = d->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = { .sg_list = &sge, .num_sge = 1, .opcode = op,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = (uintptr_t)remote,
		.rkey = d->pd->unsafe_global_rkey,
	};

	return ib_post_send(d->a, &wr.wr, NULL);
}

static int demo_traffic(struct demo *d)
{
	struct ib_sge sge = { .addr = (uintptr_t)d->dst, .length = size,
			      .lkey = d->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 };
	unsigned int i, j;
	int err;

	for (i = 0; i < count; i++) {
		for (j = 0; j < size; j++)
			d->src[j] = i + j * 13;
		err = ib_post_recv(d->b, &rwr, NULL) ?:
		      demo_post(d, IB_WR_SEND, d->src, NULL) ?: demo_wait(d, 2);
		if (err || memcmp(d->src, d->dst, size))
			return -EIO;
	}
	memset(d->dst, 0, size);
	err = demo_post(d, IB_WR_RDMA_WRITE, d->src, d->dst) ?: demo_wait(d, 1);
	if (err || memcmp(d->src, d->dst, size))
		return -EIO;
	memset(d->src, 0, size);
	err = demo_post(d, IB_WR_RDMA_READ, d->src, d->dst) ?: demo_wait(d, 1);
	if (err || memcmp(d->src, d->dst, size))
		return -EIO;
	return 0;
}

static int demo_run(struct demo *d)
{
	struct ib_qp_init_attr attr = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	int err;

	err = rdma_query_gid(d->ibdev, 1, gid, &d->gid);
	if (err)
		return err;
	d->pd = ib_alloc_pd(d->ibdev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(d->pd))
		return PTR_ERR(d->pd);
	d->cq = ib_create_cq(d->ibdev, NULL, NULL, NULL,
			     &(struct ib_cq_init_attr){ .cqe = 16 });
	err = PTR_ERR_OR_ZERO(d->cq);
	if (err)
		goto out_pd;
	attr.send_cq = d->cq;
	attr.recv_cq = d->cq;
	d->a = ib_create_qp(d->pd, &attr);
	err = PTR_ERR_OR_ZERO(d->a);
	if (err)
		goto out_cq;
	d->b = ib_create_qp(d->pd, &attr);
	err = PTR_ERR_OR_ZERO(d->b);
	if (err)
		goto out_a;
	err = demo_connect(d, d->a, d->b->qp_num) ?:
	      demo_connect(d, d->b, d->a->qp_num) ?: demo_traffic(d);
	ib_destroy_qp(d->b);
out_a:
	ib_destroy_qp(d->a);
out_cq:
	ib_destroy_cq(d->cq);
out_pd:
	ib_dealloc_pd(d->pd);
	return err;
}

static int __init qpnic_datademo_init(void)
{
	struct demo d = {};
	int err = -ENOMEM;

	d.ibdev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	if (!d.ibdev) {
		pr_err("qpnic_datademo: no RDMA device %s\n", dev);
		return -ENODEV;
	}
	d.src = kvmalloc(size, GFP_KERNEL);
	d.dst = kvzalloc(size, GFP_KERNEL);
	if (d.src && d.dst)
		err = demo_run(&d);
	if (!err)
		pr_info("qpnic_datademo: %s: %u SENDs of %u bytes, an RDMA WRITE and an RDMA READ: every byte checked\n",
			dev, count, size);
	else
		pr_err("qpnic_datademo: %s: failed %d\n", dev, err);
	kvfree(d.src);
	kvfree(d.dst);
	ib_device_put(d.ibdev);
	return err;
}

static void __exit qpnic_datademo_exit(void)
{
}

module_init(qpnic_datademo_init);
module_exit(qpnic_datademo_exit);
MODULE_DESCRIPTION("qpnic demo: a kernel ULP moving checked data");
MODULE_LICENSE("Dual BSD/GPL");
