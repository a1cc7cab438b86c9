// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * make demo: create and destroy a QP of each supported type through
 * ibv_create_qp_ex (libibverbs + unmodified librxe), printing the caps
 * asked for next to the caps the device returned.
 *
 * usage: qp_demo DEVICE
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>

int main(int argc, char **argv)
{
	static const struct { enum ibv_qp_type type; const char *name; } types[] = {
		{ IBV_QPT_RC, "RC" }, { IBV_QPT_UC, "UC" }, { IBV_QPT_UD, "UD" },
	};
	const struct ibv_qp_cap req = {
		.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
		.max_recv_sge = 1, .max_inline_data = 0,
	};
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	unsigned int i;
	int n;

	list = ibv_get_device_list(&n);
	for (i = 0; list && argc > 1 && i < (unsigned int)n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "usage: qp_demo DEVICE (device not found or not opened)\n");
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!pd || !cq) {
		fprintf(stderr, "qp_demo: PD/CQ: %s\n", strerror(errno));
		return 1;
	}
	printf("%-4s %-6s | %-28s | %-28s\n", "type", "qp_num",
	       "asked: swr rwr ssge rsge inl", "got:   swr rwr ssge rsge inl");
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct ibv_qp_init_attr_ex a = {
			.qp_type = types[i].type, .send_cq = cq, .recv_cq = cq,
			.cap = req, .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
		};
		struct ibv_qp *qp = ibv_create_qp_ex(ctx, &a);

		if (!qp) {
			printf("%-4s create failed: %s\n", types[i].name, strerror(errno));
			continue;
		}
		printf("%-4s %-6u |        %3u %3u %4u %4u %3u |        %3u %3u %4u %4u %3u\n",
		       types[i].name, qp->qp_num, req.max_send_wr, req.max_recv_wr,
		       req.max_send_sge, req.max_recv_sge, req.max_inline_data,
		       a.cap.max_send_wr, a.cap.max_recv_wr, a.cap.max_send_sge,
		       a.cap.max_recv_sge, a.cap.max_inline_data);
		if (ibv_destroy_qp(qp))
			printf("%-4s destroy failed\n", types[i].name);
	}
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
