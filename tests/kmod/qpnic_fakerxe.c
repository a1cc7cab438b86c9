// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A stand-in for rdma_rxe in guest tests: one RDMA device, fakerxe%d, with
 * driver_id RDMA_DRIVER_RXE on an existing netdev, owned by this module and
 * not by qpnic. rdma_rxe itself cannot be loaded next to qpnic (both bind
 * UDP port 4791 in init_net), so this is how a test puts a device that
 * qpnic must leave alone next to qpnic's own.
 *
 *   modprobe qpnic_fakerxe netdev=fk1
 *
 * The device has no verbs. It has only the ops that ib_register_device()
 * calls itself: query_device, query_port, query_pkey (the P_Key cache is
 * filled at registration), get_port_immutable and get_link_layer. It lacks
 * the ops ib_device_check_mandatory() looks for, so the core registers it
 * as no kernel-verbs provider and no kernel ULP (ib_mad, ib_cm, rdma_cm,
 * IPoIB) attaches to it; without alloc_ucontext ib_uverbs skips it too. It
 * shows in /sys/class/infiniband and in `rdma link`, nowhere else.
 *
 * Read-only parameters, in /sys/module/qpnic_fakerxe/parameters:
 *   events      port events (PORT_ACTIVE, PORT_ERR) the device received.
 *               Only a device's own driver dispatches those, and this
 *               module never does: any non-zero value means another driver
 *               took the device for one of its own.
 *   registered  1 while the device is registered, 0 once somebody else
 *               unregistered it.
 *
 * When the netdev goes away the device stays registered: the module only
 * lets go of the netdev, as ib_device_set_netdev() requires. A device that
 * is gone after its netdev's NETDEV_UNREGISTER was taken by another driver.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#define FAKERXE_GID_TBL_LEN 16

struct fakerxe_dev {
	struct ib_device ibdev;
	/*
	 * Port 1's netdev until it unregisters. Written under RTNL; query_port
	 * reads it under RCU. The reference is the core's, taken by
	 * ib_device_set_netdev().
	 */
	struct net_device __rcu *ndev;
	struct ib_event_handler event_handler;
};

static char *netdev;
module_param(netdev, charp, 0444);
MODULE_PARM_DESC(netdev, "existing netdev in init_net for the device (required)");

/*
 * The device, from load to unload. Changed under kernel_param_lock() for
 * the "registered" parameter; stable while the netdev notifier can run.
 */
static struct fakerxe_dev *fakerxe;
static atomic_t fakerxe_port_events = ATOMIC_INIT(0);

/* Module parameter set op: loading with events= or registered= fails. */
static int fakerxe_param_set_read_only(const char *val,
				       const struct kernel_param *kp)
{
	return -EPERM;
}

static int fakerxe_param_get_events(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%d\n",
			 atomic_read(&fakerxe_port_events));
}

static const struct kernel_param_ops fakerxe_events_ops = {
	.set = fakerxe_param_set_read_only,
	.get = fakerxe_param_get_events,
};
module_param_cb(events, &fakerxe_events_ops, NULL, 0444);
MODULE_PARM_DESC(events, "port events received (0 unless another driver dispatched them)");

/* Called under kernel_param_lock(THIS_MODULE), like every get op. */
static int fakerxe_param_get_registered(char *buf,
					const struct kernel_param *kp)
{
	bool registered = false;

	if (fakerxe && ib_device_try_get(&fakerxe->ibdev)) {
		ib_device_put(&fakerxe->ibdev);
		registered = true;
	}
	return scnprintf(buf, PAGE_SIZE, "%d\n", registered);
}

static const struct kernel_param_ops fakerxe_registered_ops = {
	.set = fakerxe_param_set_read_only,
	.get = fakerxe_param_get_registered,
};
module_param_cb(registered, &fakerxe_registered_ops, NULL, 0444);
MODULE_PARM_DESC(registered, "1 while the RDMA device is registered");

static void fakerxe_set_published(struct fakerxe_dev *fdev)
{
	kernel_param_lock(THIS_MODULE);
	fakerxe = fdev;
	kernel_param_unlock(THIS_MODULE);
}

/*
 * The core dispatches IB_EVENT_GID_CHANGE by itself whenever RoCE GIDs
 * come and go with the netdev's addresses (cache.c), so those are not
 * counted. Port state events come only from a device's driver: they are
 * what a driver's netdev notifier sends on NETDEV_UP/DOWN/CHANGE.
 */
static void fakerxe_event(struct ib_event_handler *handler,
			  struct ib_event *event)
{
	if (event->event != IB_EVENT_PORT_ACTIVE &&
	    event->event != IB_EVENT_PORT_ERR)
		return;
	atomic_inc(&fakerxe_port_events);
	pr_warn("%s: %s on port %u, dispatched by another driver\n",
		dev_name(&event->device->dev), ib_event_msg(event->event),
		event->element.port_num);
}

/* Called by ib_register_device(); the device has no limits to report. */
static int fakerxe_query_device(struct ib_device *ibdev,
				struct ib_device_attr *attr,
				struct ib_udata *udata)
{
	attr->max_pkeys = 1;
	return 0;
}

/* The core zeroed *attr (__ib_query_port()). */
static int fakerxe_query_port(struct ib_device *ibdev, u32 port,
			      struct ib_port_attr *attr)
{
	struct fakerxe_dev *fdev = container_of(ibdev, struct fakerxe_dev, ibdev);
	struct net_device *ndev;
	bool up;

	attr->gid_tbl_len = FAKERXE_GID_TBL_LEN;
	attr->pkey_tbl_len = 1;
	attr->max_mtu = IB_MTU_1024;
	attr->active_mtu = IB_MTU_1024;
	attr->active_width = IB_WIDTH_1X;
	attr->active_speed = IB_SPEED_SDR;

	rcu_read_lock();
	ndev = rcu_dereference(fdev->ndev);
	up = ndev && netif_running(ndev) && netif_carrier_ok(ndev);
	rcu_read_unlock();
	if (up) {
		attr->state = IB_PORT_ACTIVE;
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	} else {
		attr->state = IB_PORT_DOWN;
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	}
	return 0;
}

/*
 * ib_cache_update() reads every P_Key the port reports, at registration
 * and before it passes a port event on to the event handlers: it must
 * succeed, or the events this module counts would never reach it.
 */
static int fakerxe_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			      u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int fakerxe_get_port_immutable(struct ib_device *ibdev, u32 port,
				      struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr;
	int err;

	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer fakerxe_get_link_layer(struct ib_device *ibdev,
						   u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

/*
 * No .dealloc_driver: the core then never frees the device by itself, and
 * another driver unregistering it (ib_unregister_driver(RDMA_DRIVER_RXE),
 * ib_unregister_device_queued()) WARNs and leaves it to this module's exit.
 */
static const struct ib_device_ops fakerxe_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_RXE,

	.get_link_layer = fakerxe_get_link_layer,
	.get_port_immutable = fakerxe_get_port_immutable,
	.query_device = fakerxe_query_device,
	.query_pkey = fakerxe_query_pkey,
	.query_port = fakerxe_query_port,
};

/*
 * Under RTNL. The core holds the netdev until the device is unregistered
 * or until it is told to let go: it does not drop it on NETDEV_UNREGISTER
 * by itself (ib_device_set_netdev()).
 */
static void fakerxe_detach_netdev(struct fakerxe_dev *fdev)
{
	RCU_INIT_POINTER(fdev->ndev, NULL);
	/* No query_port may still look at the netdev once it can be freed. */
	synchronize_net();
	ib_device_set_netdev(&fdev->ibdev, NULL, 1);
}

static int fakerxe_netdev_event(struct notifier_block *nb,
				unsigned long event, void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);

	if (event != NETDEV_UNREGISTER || ndev != rtnl_dereference(fakerxe->ndev))
		return NOTIFY_DONE;
	fakerxe_detach_netdev(fakerxe);
	pr_info("netdev %s unregistered; the RDMA device stays\n", ndev->name);
	return NOTIFY_OK;
}

static struct notifier_block fakerxe_netdev_notifier = {
	.notifier_call = fakerxe_netdev_event,
	/*
	 * After every other netdev notifier, qpnic's included, whichever was
	 * loaded first: a driver that takes this device for its own on
	 * NETDEV_UNREGISTER still finds it on the netdev.
	 */
	.priority = INT_MIN,
};

/*
 * Find the netdev and give it to the device under RTNL, so that it cannot
 * unregister before the notifier knows it. No reference of the module's
 * own: the core's keeps the netdev until the notifier lets it go.
 */
static int fakerxe_attach_netdev(struct fakerxe_dev *fdev)
{
	struct net_device *ndev;
	int err;

	rtnl_lock();
	ndev = __dev_get_by_name(&init_net, netdev);
	if (!ndev) {
		err = -ENODEV;
		goto out;
	}
	err = ib_device_set_netdev(&fdev->ibdev, ndev, 1);
	if (err)
		goto out;
	rcu_assign_pointer(fdev->ndev, ndev);
	addrconf_addr_eui48((u8 *)&fdev->ibdev.node_guid, ndev->dev_addr);
out:
	rtnl_unlock();
	return err;
}

static int __init fakerxe_init(void)
{
	struct fakerxe_dev *fdev;
	struct ib_device *ibdev;
	int err;

	if (!netdev || !*netdev) {
		pr_err("netdev= is required\n");
		return -EINVAL;
	}
	fdev = ib_alloc_device(fakerxe_dev, ibdev);
	if (!fdev)
		return -ENOMEM;
	ibdev = &fdev->ibdev;
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	strscpy(ibdev->node_desc, "qpnic_fakerxe", sizeof(ibdev->node_desc));
	ib_set_device_ops(ibdev, &fakerxe_dev_ops);
	INIT_IB_EVENT_HANDLER(&fdev->event_handler, ibdev, fakerxe_event);
	ib_register_event_handler(&fdev->event_handler);
	fakerxe_set_published(fdev);

	err = register_netdevice_notifier(&fakerxe_netdev_notifier);
	if (err) {
		pr_err("netdev notifier registration failed: %d\n", err);
		goto err_dealloc;
	}
	err = fakerxe_attach_netdev(fdev);
	if (err) {
		pr_err("cannot use netdev %s: %d\n", netdev, err);
		goto err_notifier;
	}
	err = ib_register_device(ibdev, "fakerxe%d", NULL);
	if (err) {
		pr_err("RDMA device registration failed: %d\n", err);
		goto err_detach;
	}
	pr_info("%s on %s, driver_id RDMA_DRIVER_RXE\n", dev_name(&ibdev->dev),
		netdev);
	return 0;

err_detach:
	rtnl_lock();
	fakerxe_detach_netdev(fdev);
	rtnl_unlock();
err_notifier:
	unregister_netdevice_notifier(&fakerxe_netdev_notifier);
err_dealloc:
	fakerxe_set_published(NULL);
	ib_unregister_event_handler(&fdev->event_handler);
	ib_dealloc_device(ibdev);
	return err;
}

static void __exit fakerxe_exit(void)
{
	struct fakerxe_dev *fdev = fakerxe;

	ib_unregister_event_handler(&fdev->event_handler);
	/*
	 * A no-op when another driver already unregistered the device:
	 * __ib_unregister_device() returns early once the registration
	 * refcount is zero, under the same lock as any unregistration still
	 * running. Without .dealloc_driver nobody else freed it.
	 */
	ib_unregister_device(&fdev->ibdev);
	/* (unregistering the notifier replays NETDEV_UNREGISTER to it) */
	rtnl_lock();
	if (rtnl_dereference(fdev->ndev))
		fakerxe_detach_netdev(fdev);
	rtnl_unlock();
	unregister_netdevice_notifier(&fakerxe_netdev_notifier);
	fakerxe_set_published(NULL);
	ib_dealloc_device(&fdev->ibdev);
}

module_init(fakerxe_init);
module_exit(fakerxe_exit);
MODULE_DESCRIPTION("qpnic tests: an RDMA_DRIVER_RXE device that is not qpnic's");
MODULE_LICENSE("Dual BSD/GPL");
