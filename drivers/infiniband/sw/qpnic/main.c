// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qpnic module: `rdma link add NAME type qpnic netdev IFACE` and the
 * netdev events that follow a device through its life.
 */
#include <linux/module.h>
#include <rdma/ib_addr.h>
#include <rdma/rdma_netlink.h>

#include "qpnic.h"

/* The transport's deferred work: requester runs, loopback delivery, flushes. */
struct workqueue_struct *qpnic_wq;
struct workqueue_struct *qpnic_post_wq;

static int qpnic_newlink(const char *ibdev_name, struct net_device *ndev)
{
	return qpnic_device_add(ibdev_name, ndev, NULL);
}

static struct rdma_link_ops qpnic_link_ops = {
	.type = "qpnic",
	.newlink = qpnic_newlink,
};

void qpnic_device_remove(struct ib_device *ibdev)
{
	ib_unregister_device(ibdev);
}
EXPORT_SYMBOL_NS_GPL(qpnic_device_remove, QPNIC_KUNIT);

static int qpnic_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct ib_device *ibdev;

	ibdev = ib_device_get_by_netdev(ndev, RDMA_DRIVER_RXE);
	if (!ibdev)
		return NOTIFY_DONE;
	/* rdma_rxe's devices carry the same driver id: leave them alone. */
	if (!qpnic_owns(ibdev)) {
		ib_device_put(ibdev);
		return NOTIFY_DONE;
	}
	switch (event) {
	case NETDEV_UNREGISTER:
		ib_unregister_device_queued(ibdev);
		break;
	case NETDEV_CHANGEMTU:
		qpnic_mtu_changed(to_qdev(ibdev), ndev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		qpnic_port_event(to_qdev(ibdev),
				 netif_running(ndev) && netif_carrier_ok(ndev) ?
				 IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR);
		break;
	default:
		break;
	}
	ib_device_put(ibdev);
	return NOTIFY_OK;
}

static struct notifier_block qpnic_netdev_notifier = {
	.notifier_call = qpnic_netdev_event,
};

static int __init qpnic_init(void)
{
	int err;

	if (qpnic_max_qp < 2 || qpnic_max_qp > QPNIC_MAX_QP) {
		pr_err("qpnic: max_qp=%u, must be 2..%u\n", qpnic_max_qp, QPNIC_MAX_QP);
		return -EINVAL;
	}
	qpnic_wq = alloc_workqueue("qpnic", WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	if (!qpnic_wq)
		return -ENOMEM;
	/* (normal priority: see qpnic_req_kick_posted()) */
	qpnic_post_wq = alloc_workqueue("qpnic_post", WQ_MEM_RECLAIM, 0);
	if (!qpnic_post_wq) {
		destroy_workqueue(qpnic_wq);
		return -ENOMEM;
	}
	qpnic_icrc_init();
	err = qpnic_net_init();
	if (err)
		goto err_icrc;
	err = register_netdevice_notifier(&qpnic_netdev_notifier);
	if (err) {
		pr_err("qpnic: netdev notifier registration failed %d\n", err);
		qpnic_net_exit();
		goto err_icrc;
	}
	rdma_link_register(&qpnic_link_ops);
	pr_info("qpnic: loaded; add a device with `rdma link add NAME type qpnic netdev IFACE`\n");
	return 0;

err_icrc:
	qpnic_icrc_exit();
	destroy_workqueue(qpnic_post_wq);
	destroy_workqueue(qpnic_wq);
	return err;
}

static void __exit qpnic_exit(void)
{
	rdma_link_unregister(&qpnic_link_ops);
	unregister_netdevice_notifier(&qpnic_netdev_notifier);
	qpnic_remove_all();
	qpnic_net_exit();
	qpnic_icrc_exit();
	destroy_workqueue(qpnic_post_wq);
	destroy_workqueue(qpnic_wq);
}

module_init(qpnic_init);
module_exit(qpnic_exit);

MODULE_AUTHOR("qpnic developers");
MODULE_DESCRIPTION("RoCEv2 queue pairs on any Ethernet netdev");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("qpnic");
