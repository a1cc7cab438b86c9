// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * make demo, kernel side: on load, create and destroy a QP of each
 * supported type on RDMA device `dev` through ib_create_qp(), logging the
 * caps asked for and returned. The module stays loaded doing nothing.
 */
#include <linux/module.h>
#include <rdma/ib_verbs.h>

static char *dev = "qpnic0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to create the QPs on");

static void qpnic_qpdemo_run(struct ib_device *ibdev)
{
	static const struct { enum ib_qp_type type; const char *name; } types[] = {
		{ IB_QPT_RC, "RC" }, { IB_QPT_UC, "UC" }, { IB_QPT_UD, "UD" },
	};
	struct ib_pd *pd;
	struct ib_cq *cq;
	int i;

	pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(pd))
		return;
	cq = ib_alloc_cq(ibdev, NULL, 64, 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(cq))
		goto out_pd;
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		struct ib_qp_init_attr attr = {
			.qp_type = types[i].type, .send_cq = cq, .recv_cq = cq,
			.sq_sig_type = IB_SIGNAL_REQ_WR,
			.cap = { .max_send_wr = 16, .max_recv_wr = 16,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct ib_qp *qp = ib_create_qp(pd, &attr);

		if (IS_ERR(qp)) {
			pr_info("qpnic_qpdemo: %s: ib_create_qp failed %ld\n",
				types[i].name, PTR_ERR(qp));
			continue;
		}
		pr_info("qpnic_qpdemo: %s qp_num %u asked 16/16/1/1/0 got send_wr %u recv_wr %u send_sge %u recv_sge %u inline %u\n",
			types[i].name, qp->qp_num, attr.cap.max_send_wr,
			attr.cap.max_recv_wr, attr.cap.max_send_sge,
			attr.cap.max_recv_sge, attr.cap.max_inline_data);
		pr_info("qpnic_qpdemo: %s ib_destroy_qp -> %d\n", types[i].name,
			ib_destroy_qp(qp));
	}
	ib_free_cq(cq);
out_pd:
	ib_dealloc_pd(pd);
}

static int __init qpnic_qpdemo_init(void)
{
	struct ib_device *ibdev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);

	if (!ibdev) {
		pr_err("qpnic_qpdemo: no RDMA device %s\n", dev);
		return -ENODEV;
	}
	qpnic_qpdemo_run(ibdev);
	ib_device_put(ibdev);
	return 0;
}

static void __exit qpnic_qpdemo_exit(void)
{
}

module_init(qpnic_qpdemo_init);
module_exit(qpnic_qpdemo_exit);
MODULE_DESCRIPTION("qpnic demo: kernel QPs through ib_create_qp");
MODULE_LICENSE("Dual BSD/GPL");
