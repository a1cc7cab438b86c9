// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RoCEv2 UDP port. One tunnel socket per address family in init_net
 * owns port 4791 and hands every packet to the receive path (recv.c).
 */
#include <net/udp_tunnel.h>

#include "qpnic.h"

static struct socket *qpnic_sock4;
static struct socket *qpnic_sock6;

static int qpnic_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	qpnic_rcv(skb);
	return 0;
}

static struct socket *qpnic_udp_open(bool ipv6)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.encap_type = 1,
		.encap_rcv = qpnic_udp_encap_recv,
	};
	struct udp_port_cfg cfg = {
		.local_udp_port = htons(QPNIC_UDP_PORT),
	};
	struct socket *sock;
	int err;

	if (ipv6) {
		cfg.family = AF_INET6;
		cfg.ipv6_v6only = 1;
	} else {
		cfg.family = AF_INET;
	}
	err = udp_sock_create(&init_net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(&init_net, sock, &tcfg);
	return sock;
}

int qpnic_net_init(void)
{
	qpnic_sock4 = qpnic_udp_open(false);
	if (IS_ERR(qpnic_sock4)) {
		int err = PTR_ERR(qpnic_sock4);

		qpnic_sock4 = NULL;
		if (err == -EADDRINUSE)
			pr_err("qpnic: UDP port %u is taken (is rdma_rxe loaded?); unload its owner first\n",
			       QPNIC_UDP_PORT);
		else
			pr_err("qpnic: cannot open UDP port %u: %d\n",
			       QPNIC_UDP_PORT, err);
		return err;
	}
	if (IS_ENABLED(CONFIG_IPV6)) {
		qpnic_sock6 = qpnic_udp_open(true);
		if (IS_ERR(qpnic_sock6)) {
			int err = PTR_ERR(qpnic_sock6);

			/* An IPv6-less system (ipv6.disable=1) still gets RoCE over IPv4. */
			qpnic_sock6 = NULL;
			if (err != -EAFNOSUPPORT) {
				pr_err("qpnic: cannot open UDP/IPv6 port %u: %d\n",
				       QPNIC_UDP_PORT, err);
				qpnic_net_exit();
				return err;
			}
		}
	}
	return 0;
}

void qpnic_net_exit(void)
{
	if (qpnic_sock6)
		udp_tunnel_sock_release(qpnic_sock6);
	if (qpnic_sock4)
		udp_tunnel_sock_release(qpnic_sock4);
	qpnic_sock4 = NULL;
	qpnic_sock6 = NULL;
}
