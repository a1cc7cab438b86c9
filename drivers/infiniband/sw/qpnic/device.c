// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The RDMA device: one RoCEv2 port on top of an Ethernet netdev. */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>
#include <rdma/uverbs_ioctl.h>
#include <uapi/rdma/rdma_user_ioctl_cmds.h>

#include "qpnic.h"

/* Every registered qpnic device, for module unload. */
static LIST_HEAD(qpnic_devices);
static DEFINE_MUTEX(qpnic_devices_lock);

/* A smaller QP limit than the driver's, for hosts that want one (and tests). */
unsigned int qpnic_max_qp = QPNIC_MAX_QP;
module_param_named(max_qp, qpnic_max_qp, uint, 0444);
MODULE_PARM_DESC(max_qp, "QPs per device, GSI included (2 to 1048576, the default)");

static int qpnic_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
			      struct ib_udata *udata)
{
	if (udata && (udata->inlen || udata->outlen)) {
		ibdev_dbg(ibdev, "query_device: %zu/%zu bytes of driver data, none defined\n",
			  udata->inlen, udata->outlen);
		return -EINVAL;
	}
	memset(attr, 0, sizeof(*attr));
	/* `rdma link delete` is how users remove a qpnic device */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	attr->fw_ver = 0;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = U32_MAX;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_id = QPNIC_VENDOR_ID;
	attr->vendor_part_id = 0;
	attr->hw_ver = 0;
	attr->max_qp = qpnic_max_qp;
	attr->max_qp_wr = QPNIC_MAX_QP_WR;
	/*
	 * Only what works is claimed: fast registration, local and remote
	 * invalidation (MEM_MGT_EXTENSIONS), memory windows of type 1 and
	 * 2B, ATOMIC WRITE, FLUSH for global visibility (not persistence)
	 * where the kernel has names for them; no P_Key/Q_Key violation
	 * counters until packets are checked.
	 */
	attr->device_cap_flags = IB_DEVICE_SYS_IMAGE_GUID | IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_SRQ_RESIZE | IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW | IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 QPNIC_DEVICE_ATOMIC_WRITE | QPNIC_DEVICE_FLUSH;
	attr->max_send_sge = QPNIC_MAX_SGE;
	attr->max_recv_sge = QPNIC_MAX_SGE;
	attr->max_sge_rd = QPNIC_MAX_SGE;
	attr->max_cq = QPNIC_MAX_CQ;
	attr->max_cqe = QPNIC_MAX_CQE;
	attr->max_mr = QPNIC_MAX_MR;
	attr->max_mw = QPNIC_MAX_MW;
	attr->max_pd = QPNIC_MAX_PD;
	attr->max_qp_rd_atom = QPNIC_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = QPNIC_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = QPNIC_MAX_RD_ATOMIC * 1024;
	/* the responder runs them with CPU atomics; claimed as rdma_rxe does */
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_mcast_grp = QPNIC_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = QPNIC_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = QPNIC_MAX_MCAST_GRP *
					  QPNIC_MAX_MCAST_QP_ATTACH;
	attr->max_ah = QPNIC_MAX_AH;
	attr->max_srq = QPNIC_MAX_SRQ;
	attr->max_srq_wr = QPNIC_MAX_SRQ_WR;
	attr->max_srq_sge = QPNIC_MAX_SGE;
	attr->max_fast_reg_page_list_len = QPNIC_MAX_FAST_REG_PAGES;
	attr->max_pkeys = 1;
	attr->local_ca_ack_delay = 15;
	return 0;
}

/*
 * The IB MTU a netdev carries: the largest whose packets (headers
 * included) fit its MTU, and 256, the smallest IB MTU, for a netdev
 * under 352 bytes (as rdma_rxe does; iboe_get_mtu() says 0, no enum).
 */
enum ib_mtu qpnic_netdev_ib_mtu(const struct net_device *ndev)
{
	return iboe_get_mtu(READ_ONCE(ndev->mtu)) ?: IB_MTU_256;
}

/*
 * NETDEV_CHANGEMTU: UD sends are checked against the new MTU from now
 * on; a connected QP whose path MTU the netdev no longer carries goes to
 * ERR (its packets would be dropped until its retries ran out), so its
 * consumer learns it now and can reconnect at the port's new active_mtu.
 */
void qpnic_mtu_changed(struct qpnic_dev *qdev, const struct net_device *ndev)
{
	u32 mtu = ib_mtu_enum_to_int(qpnic_netdev_ib_mtu(ndev));

	ibdev_dbg(&qdev->ibdev, "netdev MTU %u: IB MTU %u\n", ndev->mtu, mtu);
	WRITE_ONCE(qdev->mtu, mtu);
	qpnic_qps_check_mtu(qdev, mtu);
}

static int qpnic_query_port(struct ib_device *ibdev, u32 port,
			    struct ib_port_attr *attr)
{
	/* During removal the core may already have let go of the netdev. */
	struct net_device *ndev = qpnic_netdev_get(to_qdev(ibdev));
	bool up = ndev && netif_running(ndev) && netif_carrier_ok(ndev);
	int err;

	/* The core zeroed attr; it fills the GID table length itself. */
	attr->state = up ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	attr->phys_state = up ? IB_PORT_PHYS_STATE_LINK_UP :
				IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = ndev ? qpnic_netdev_ib_mtu(ndev) : IB_MTU_256;
	dev_put(ndev);
	attr->gid_tbl_len = QPNIC_GID_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = QPNIC_MAX_MSG_SIZE;
	attr->bad_pkey_cntr = 0;
	attr->qkey_viol_cntr = 0;
	attr->pkey_tbl_len = 1;
	attr->lid = 0;
	attr->sm_lid = 0;
	attr->lmc = 0;
	attr->max_vl_num = 1;
	attr->sm_sl = 0;
	attr->subnet_timeout = 0;
	attr->init_type_reply = 0;
	/* The netdev's ethtool speed, as IB width and speed. */
	err = ib_get_eth_speed(ibdev, port, &attr->active_speed,
			       &attr->active_width);
	if (err)
		ibdev_dbg(ibdev, "query_port: no link speed from the netdev (%d)\n", err);
	return err;
}

static int qpnic_get_port_immutable(struct ib_device *ibdev, u32 port,
				    struct ib_port_immutable *immutable)
{
	immutable->pkey_tbl_len = 1;
	immutable->gid_tbl_len = QPNIC_GID_TBL_LEN;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static int qpnic_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			    u16 *pkey)
{
	if (index) {
		ibdev_dbg(ibdev, "query_pkey: index %u, table has 1 entry\n", index);
		return -EINVAL;
	}
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static enum rdma_link_layer qpnic_get_link_layer(struct ib_device *ibdev,
						 u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int qpnic_modify_device(struct ib_device *ibdev, int mask,
			       struct ib_device_modify *attr)
{
	if (mask & ~(IB_DEVICE_MODIFY_SYS_IMAGE_GUID | IB_DEVICE_MODIFY_NODE_DESC)) {
		ibdev_dbg(ibdev, "modify_device: mask %#x not supported\n", mask);
		return -EOPNOTSUPP;
	}
	if (mask & IB_DEVICE_MODIFY_NODE_DESC)
		memcpy(ibdev->node_desc, attr->node_desc, sizeof(ibdev->node_desc));
	return 0;
}

static int qpnic_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	return 0;
}

static void qpnic_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * The device is going away under a live process. The core destroys its
 * objects through the ordinary destroy verbs; its ring mappings stay, and
 * keep their pages (vm_insert_pages references, see queue.c) until the
 * process unmaps them. Nothing else of qpnic's is tied to the process.
 * Having this op lets `rdma link delete` and netdev removal proceed
 * instead of waiting for every user of the device to exit.
 */
static void qpnic_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * The core's last call for a device, under its unregistration lock. The
 * device leaves qpnic's list last: until then qpnic_remove_all() (module
 * exit) finds it and waits in ib_unregister_device() for an unregistration
 * queued by NETDEV_UNREGISTER to finish, so the module cannot go while
 * this runs.
 */
static void qpnic_dealloc_driver(struct ib_device *ibdev)
{
	struct qpnic_dev *qdev = to_qdev(ibdev);
	struct qpnic_qp *qp;
	unsigned long qpn;

	qpnic_loopback_stop(qdev);
	qpnic_counters_free(qdev);
	qpnic_mcast_cleanup(qdev);
	xa_for_each(&qdev->qps, qpn, qp)
		qpnic_qp_abandon(qdev, qp);
	WARN_ON(!xa_empty(&qdev->qps) || !xa_empty(&qdev->mrs) ||
		!xa_empty(&qdev->mws) || !xa_empty(&qdev->ahs) ||
		!xa_empty(&qdev->srqs));
	xa_destroy(&qdev->qps);
	xa_destroy(&qdev->mrs);
	xa_destroy(&qdev->mws);
	xa_destroy(&qdev->ahs);
	xa_destroy(&qdev->srqs);
	mutex_destroy(&qdev->mcast_lock);
	mutex_lock(&qpnic_devices_lock);
	list_del_init(&qdev->list);
	mutex_unlock(&qpnic_devices_lock);
}

const struct ib_device_ops qpnic_dev_ops = {
	.owner = THIS_MODULE,
	/* librxe binds to RDMA_DRIVER_RXE devices whatever their name. */
	.driver_id = RDMA_DRIVER_RXE,
	.uverbs_abi_ver = QPNIC_UVERBS_ABI_VERSION,

	.alloc_mr = qpnic_alloc_mr,
	.alloc_mw = qpnic_alloc_mw,
	.alloc_pd = qpnic_alloc_pd,
	.alloc_ucontext = qpnic_alloc_ucontext,
	.attach_mcast = qpnic_attach_mcast,
	.create_ah = qpnic_create_ah,
	.create_cq = qpnic_create_cq,
	.create_qp = qpnic_create_qp,
	.create_srq = qpnic_create_srq,
	.create_user_ah = qpnic_create_ah,
	.dealloc_driver = qpnic_dealloc_driver,
	.dealloc_mw = qpnic_dealloc_mw,
	.dealloc_pd = qpnic_dealloc_pd,
	.dealloc_ucontext = qpnic_dealloc_ucontext,
	.disassociate_ucontext = qpnic_disassociate_ucontext,
	.dereg_mr = qpnic_dereg_mr,
	.fill_res_qp_entry = qpnic_fill_res_qp_entry,
	.destroy_ah = qpnic_destroy_ah,
	.destroy_cq = qpnic_destroy_cq,
	.destroy_qp = qpnic_destroy_qp,
	.destroy_srq = qpnic_destroy_srq,
	.detach_mcast = qpnic_detach_mcast,
	.get_dma_mr = qpnic_get_dma_mr,
	.get_link_layer = qpnic_get_link_layer,
	.get_port_immutable = qpnic_get_port_immutable,
	.map_mr_sg = qpnic_map_mr_sg,
	.mmap = qpnic_mmap,
	.mmap_free = qpnic_mmap_free,
	.modify_device = qpnic_modify_device,
	.modify_qp = qpnic_modify_qp,
	.modify_srq = qpnic_modify_srq,
	.poll_cq = qpnic_poll_cq,
	.post_recv = qpnic_post_recv,
	.post_send = qpnic_post_send,
	.post_srq_recv = qpnic_post_srq_recv,
	.query_ah = qpnic_query_ah,
	.query_device = qpnic_query_device,
	.query_pkey = qpnic_query_pkey,
	.query_port = qpnic_query_port,
	.query_qp = qpnic_query_qp,
	.query_srq = qpnic_query_srq,
	.reg_user_mr = qpnic_reg_user_mr,
	.req_notify_cq = qpnic_req_notify_cq,
	.resize_cq = qpnic_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, qpnic_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, qpnic_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, qpnic_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, qpnic_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, qpnic_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, qpnic_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, qpnic_ucontext, ibuc),
};

/*
 * The port's netdev with a reference, or NULL once the core has let go of
 * it (removal). Linux 6.1 does not export ib_device_get_netdev(); this
 * follows its locking: the core clears the pointer under netdev_lock
 * before dropping its own reference.
 */
struct net_device *qpnic_netdev_get(struct qpnic_dev *qdev)
{
	struct ib_port_data *pdata = &qdev->ibdev.port_data[1];
	struct net_device *ndev;

	spin_lock(&pdata->netdev_lock);
	ndev = rcu_dereference_protected(pdata->netdev,
					 lockdep_is_held(&pdata->netdev_lock));
	dev_hold(ndev);
	spin_unlock(&pdata->netdev_lock);
	if (ndev && ndev->reg_state != NETREG_REGISTERED) {
		dev_put(ndev);
		return NULL;
	}
	return ndev;
}

/* Take one of @limit objects counted in @count, or fail with -ENOMEM. */
int qpnic_count_get(struct qpnic_dev *qdev, atomic_t *count, u32 limit,
		    const char *what)
{
	if (atomic_add_unless(count, 1, limit))
		return 0;
	ibdev_dbg(&qdev->ibdev, "limit of %u %s reached\n", limit, what);
	return -ENOMEM;
}

/* A user verb's response buffer must hold the rxe ABI response. */
int qpnic_check_resp_len(struct qpnic_dev *qdev, struct ib_udata *udata,
			 size_t len, const char *verb)
{
	if (!udata || udata->outlen >= len)
		return 0;
	ibdev_dbg(&qdev->ibdev, "%s: response of %zu bytes, need %zu\n", verb,
		  udata->outlen, len);
	return -EINVAL;
}

/* Copy a verb's rxe ABI response out to userspace. */
int qpnic_copy_resp(struct qpnic_dev *qdev, struct ib_udata *udata,
		    void *resp, size_t len, const char *verb)
{
	int err = ib_copy_to_udata(udata, resp, len);

	if (err)
		ibdev_dbg(&qdev->ibdev, "%s: %zu-byte response not writable\n",
			  verb, len);
	return err;
}

void qpnic_port_event(struct qpnic_dev *qdev, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &qdev->ibdev,
		.element.port_num = 1,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

/*
 * Create and register a device on @ndev. The ib_device's parent is the
 * NIC's own device (a PCI function) when there is one, as for an RNIC.
 */
int qpnic_device_add(const char *name, struct net_device *ndev,
		     struct ib_device **out)
{
	struct qpnic_dev *qdev;
	struct ib_device *ibdev;
	int err;

	if (ndev->type != ARPHRD_ETHER) {
		pr_debug("qpnic: %s is not an Ethernet device (type %u)\n",
			 ndev->name, ndev->type);
		return -EINVAL;
	}
	/* qpnic's RoCE UDP sockets live in the initial network namespace. */
	if (!net_eq(dev_net(ndev), &init_net)) {
		pr_debug("qpnic: %s is in another network namespace, not supported\n",
			 ndev->name);
		return -EOPNOTSUPP;
	}
	ibdev = ib_device_get_by_netdev(ndev, RDMA_DRIVER_RXE);
	if (ibdev) {
		pr_debug("qpnic: %s already has RDMA device %s\n", ndev->name,
			 dev_name(&ibdev->dev));
		ib_device_put(ibdev);
		return -EEXIST;
	}

	qdev = ib_alloc_device(qpnic_dev, ibdev);
	if (!qdev)
		return -ENOMEM;
	ibdev = &qdev->ibdev;
	/* ib_dealloc_device() runs dealloc_driver, which unlists the device. */
	INIT_LIST_HEAD(&qdev->list);
	/* QP and MR lookups come from the receive path too. */
	xa_init_flags(&qdev->qps, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&qdev->mrs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&qdev->mws, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&qdev->ahs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	/* (xarrays initialised here share a lockdep class: all IRQ-safe) */
	xa_init_flags(&qdev->srqs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	mutex_init(&qdev->mcast_lock);
	spin_lock_init(&qdev->mcast_rx_lock);
	INIT_LIST_HEAD(&qdev->mcast_groups);
	qpnic_loopback_init(qdev);
	qdev->mtu = ib_mtu_enum_to_int(qpnic_netdev_ib_mtu(ndev));

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid, ndev->dev_addr);
	strscpy(ibdev->node_desc, "qpnic", sizeof(ibdev->node_desc));
	ibdev->dev.parent = ndev->dev.parent;
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ib_set_device_ops(ibdev, &qpnic_dev_ops);
	ib_set_device_ops(ibdev, &qpnic_stats_ops);

	err = qpnic_counters_init(qdev);
	if (err)
		goto err_dealloc;
	err = ib_device_set_netdev(ibdev, ndev, 1);
	if (err)
		goto err_dealloc;
	/*
	 * Listed before registering: once registered, the netdev notifier may
	 * unregister the device at any time, and dealloc_driver unlists it.
	 */
	mutex_lock(&qpnic_devices_lock);
	list_add_tail(&qdev->list, &qpnic_devices);
	mutex_unlock(&qpnic_devices_lock);
	err = ib_register_device(ibdev, name, NULL);
	if (err) {
		pr_debug("qpnic: registering %s on %s failed %d\n", name,
			 ndev->name, err);
		goto err_unlist;
	}
	if (out)
		*out = ibdev;
	return 0;

err_unlist:
	mutex_lock(&qpnic_devices_lock);
	list_del_init(&qdev->list);
	mutex_unlock(&qpnic_devices_lock);
err_dealloc:
	ib_dealloc_device(ibdev);
	return err;
}

/*
 * Whether @ibdev is one of qpnic's devices. librxe needs qpnic's devices to
 * carry rdma_rxe's driver id, so the id cannot tell the two drivers apart;
 * the ops can.
 */
bool qpnic_owns(const struct ib_device *ibdev)
{
	return ibdev->ops.dealloc_driver == qpnic_dealloc_driver;
}

/* Module unload: unregister every device of qpnic's, and only those. */
void qpnic_remove_all(void)
{
	struct qpnic_dev *qdev;

	mutex_lock(&qpnic_devices_lock);
	while ((qdev = list_first_entry_or_null(&qpnic_devices,
						struct qpnic_dev, list))) {
		/* dealloc_driver unlists it; the reference keeps it in memory. */
		get_device(&qdev->ibdev.dev);
		mutex_unlock(&qpnic_devices_lock);
		ib_unregister_device(&qdev->ibdev);
		mutex_lock(&qpnic_devices_lock);
		/* A device whose registration is unwinding may still be listed. */
		list_del_init(&qdev->list);
		put_device(&qdev->ibdev.dev);
	}
	mutex_unlock(&qpnic_devices_lock);
}
EXPORT_SYMBOL_NS_GPL(qpnic_device_add, QPNIC_KUNIT);
