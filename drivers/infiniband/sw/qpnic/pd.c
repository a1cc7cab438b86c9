// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Protection domains. Memory regions are mr.c's. */
#include "qpnic.h"

int qpnic_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct qpnic_dev *qdev = to_qdev(ibpd->device);

	return qpnic_count_get(qdev, &qdev->num_pd, QPNIC_MAX_PD, "PDs");
}

int qpnic_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_qdev(ibpd->device)->num_pd);
	return 0;
}
