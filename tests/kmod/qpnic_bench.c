// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * QP lifecycle benchmark through the kernel verbs API, for any RDMA
 * device (qpnic or rdma_rxe), on a PD and CQ made beforehand.
 *
 *   modprobe qpnic_bench dev=qpnic0 type=rc wr=16 sge=1 iters=20000
 *     measures create+destroy pairs, then creates iters QPs and destroys
 *     them all, and prints one "qpnic_bench:" result line; loading fails
 *     with -EAGAIN afterwards so nothing stays behind.
 *   modprobe qpnic_bench dev=qpnic0 live=1000000 wr=1
 *     creates up to `live` QPs and keeps them until rmmod, printing the
 *     create time per QP for each decade of live QPs (1k, 10k, ...).
 */
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>

static char *dev = "qpnic0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device");
static char *type = "rc";
module_param(type, charp, 0444);
MODULE_PARM_DESC(type, "QP type: rc, uc or ud");
static uint wr = 16;
module_param(wr, uint, 0444);
MODULE_PARM_DESC(wr, "max_send_wr and max_recv_wr");
static uint sge = 1;
module_param(sge, uint, 0444);
MODULE_PARM_DESC(sge, "max_send_sge and max_recv_sge");
static uint iters = 20000;
module_param(iters, uint, 0444);
MODULE_PARM_DESC(iters, "QPs per rate measurement");
static uint live;
module_param(live, uint, 0444);
MODULE_PARM_DESC(live, "create this many QPs and keep them until rmmod");

static struct ib_device *bench_dev;
static struct ib_pd *bench_pd;
static struct ib_cq *bench_cq;
static struct ib_qp **bench_qps;
static uint bench_nlive;

static struct ib_qp *bench_create(void)
{
	struct ib_qp_init_attr attr = {
		.send_cq = bench_cq,
		.recv_cq = bench_cq,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr,
			 .max_send_sge = sge, .max_recv_sge = sge },
	};

	if (!strcmp(type, "ud"))
		attr.qp_type = IB_QPT_UD;
	else if (!strcmp(type, "uc"))
		attr.qp_type = IB_QPT_UC;
	else
		attr.qp_type = IB_QPT_RC;
	return ib_create_qp(bench_pd, &attr);
}

static u64 per_sec(u64 n, u64 ns)
{
	return ns ? div64_u64(n * NSEC_PER_SEC, ns) : 0;
}

static int bench_rates(void)
{
	u64 t0, pair_ns, create_ns, destroy_ns;
	uint i, made = 0;
	int err = 0;

	t0 = ktime_get_ns();
	for (i = 0; i < iters; i++) {
		struct ib_qp *qp = bench_create();

		if (IS_ERR(qp)) {
			err = PTR_ERR(qp);
			goto out;
		}
		ib_destroy_qp(qp);
		cond_resched();
	}
	pair_ns = ktime_get_ns() - t0;

	t0 = ktime_get_ns();
	for (made = 0; made < iters; made++) {
		bench_qps[made] = bench_create();
		if (IS_ERR(bench_qps[made])) {
			err = PTR_ERR(bench_qps[made]);
			break;
		}
		cond_resched();
	}
	create_ns = ktime_get_ns() - t0;
	t0 = ktime_get_ns();
	for (i = 0; i < made; i++) {
		ib_destroy_qp(bench_qps[i]);
		cond_resched();
	}
	destroy_ns = ktime_get_ns() - t0;
	if (!err)
		pr_info("qpnic_bench: dev=%s type=%s wr=%u sge=%u iters=%u pairs_per_s=%llu creates_per_s=%llu destroys_per_s=%llu\n",
			dev, type, wr, sge, iters, per_sec(iters, pair_ns),
			per_sec(made, create_ns), per_sec(made, destroy_ns));
out:
	if (err)
		pr_info("qpnic_bench: dev=%s type=%s wr=%u sge=%u error=%d after %u QPs\n",
			dev, type, wr, sge, err, made);
	return err;
}

/* Create up to `live` QPs, timing each decade (1k, 10k, 100k, 1M). */
static void bench_live(void)
{
	uint decade = 1000, start = 0;
	u64 t0 = ktime_get_ns();

	for (bench_nlive = 0; bench_nlive < live; bench_nlive++) {
		struct ib_qp *qp = bench_create();

		if (IS_ERR(qp)) {
			pr_info("qpnic_bench: dev=%s live_max=%u error=%ld\n",
				dev, bench_nlive, PTR_ERR(qp));
			break;
		}
		bench_qps[bench_nlive] = qp;
		if (bench_nlive + 1 == decade || bench_nlive + 1 == live) {
			u64 now = ktime_get_ns();

			pr_info("qpnic_bench: dev=%s live=%u ns_per_create=%llu\n", dev,
				bench_nlive + 1,
				div64_u64(now - t0, bench_nlive + 1 - start));
			start = bench_nlive + 1;
			t0 = now;
			decade *= 10;
		}
		cond_resched();
	}
	pr_info("qpnic_bench: dev=%s live_done=%u\n", dev, bench_nlive);
}

static void bench_free(void)
{
	uint i;

	for (i = 0; i < bench_nlive; i++) {
		ib_destroy_qp(bench_qps[i]);
		cond_resched();
	}
	bench_nlive = 0;
	kvfree(bench_qps);
	ib_destroy_cq(bench_cq);
	ib_dealloc_pd(bench_pd);
	ib_device_put(bench_dev);
}

static int __init bench_init(void)
{
	int err;

	bench_dev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	if (!bench_dev) {
		pr_err("qpnic_bench: no RDMA device %s\n", dev);
		return -ENODEV;
	}
	bench_qps = kvcalloc(max(live, iters), sizeof(*bench_qps), GFP_KERNEL);
	bench_pd = ib_alloc_pd(bench_dev, 0);
	bench_cq = ib_create_cq(bench_dev, NULL, NULL, NULL,
				&(struct ib_cq_init_attr){ .cqe = 64 });
	if (!bench_qps || IS_ERR(bench_pd) || IS_ERR(bench_cq)) {
		pr_err("qpnic_bench: setup failed\n");
		if (!IS_ERR(bench_cq))
			ib_destroy_cq(bench_cq);
		if (!IS_ERR(bench_pd))
			ib_dealloc_pd(bench_pd);
		kvfree(bench_qps);
		ib_device_put(bench_dev);
		return -ENOMEM;
	}
	if (live) {
		bench_live();
		return 0;
	}
	err = bench_rates();
	bench_free();
	/* A rate run leaves nothing loaded. */
	return err ?: -EAGAIN;
}

static void __exit bench_exit(void)
{
	u64 t0 = ktime_get_ns();
	uint n = bench_nlive;

	bench_free();
	pr_info("qpnic_bench: dev=%s destroyed=%u ns_per_destroy=%llu\n", dev, n,
		n ? div64_u64(ktime_get_ns() - t0, n) : 0);
}

module_init(bench_init);
module_exit(bench_exit);
MODULE_DESCRIPTION("QP create/destroy benchmark through the kernel verbs API");
MODULE_LICENSE("Dual BSD/GPL");
