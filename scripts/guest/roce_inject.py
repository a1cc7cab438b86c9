#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Put hand-built RoCEv2 packets on the wire, for the receive path's tests.

usage: roce_inject.py IFACE DST_MAC SRC_IP DST_IP KIND COUNT

Sends COUNT Ethernet frames out of IFACE (an AF_PACKET socket, so they
really arrive on the peer's netdev) carrying IPv4/UDP to port 4791 and a
RoCEv2 packet of KIND: good (an ACK with a correct ICRC to QP 0xabcde),
bad_icrc, bad_opcode (0x15), truncated (a BTH and nothing else). The ICRC
is computed here (zlib's crc32 over the masked pseudo-header, IBTA A17),
apart from qpnic's.
"""
import socket
import struct
import sys
import zlib


def ip_checksum(hdr):
    s = sum(struct.unpack('!10H', hdr))
    s = (s & 0xffff) + (s >> 16)
    s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def icrc(ip, udp, roce):
    m_ip = bytearray(ip)
    m_ip[1] = 0xff
    m_ip[8] = 0xff
    m_ip[10:12] = b'\xff\xff'
    m_udp = bytearray(udp)
    m_udp[6:8] = b'\xff\xff'
    m_roce = bytearray(roce)
    m_roce[4] = 0xff
    return struct.pack('<I', zlib.crc32(b'\xff' * 8 + bytes(m_ip) + bytes(m_udp) + bytes(m_roce)))


def frame(kind, dst_mac, src_mac, src_ip, dst_ip):
    opcode = 0x15 if kind == 'bad_opcode' else 0x11
    bth = struct.pack('!BBHI I', opcode, 0, 0xffff, 0xabcde, 0x000100)
    roce = bth if kind == 'truncated' else bth + struct.pack('!I', 0x1f000001)
    udp_len = 8 + len(roce) + (0 if kind == 'truncated' else 4)
    ip = bytearray(struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + udp_len, 0, 0x4000, 64, 17, 0,
                               socket.inet_aton(src_ip), socket.inet_aton(dst_ip)))
    ip[10:12] = struct.pack('!H', ip_checksum(bytes(ip)))
    udp = struct.pack('!HHHH', 0xc001, 4791, udp_len, 0)
    tail = b''
    if kind != 'truncated':
        tail = icrc(bytes(ip), udp, roce)
        if kind == 'bad_icrc':
            tail = bytes([tail[0] ^ 1]) + tail[1:]
    return dst_mac + src_mac + b'\x08\x00' + bytes(ip) + udp + roce + tail


def main(argv):
    ifname, dst, src_ip, dst_ip, kind, count = argv[1:7]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((ifname, 0))
    src_mac = s.getsockname()[4]
    pkt = frame(kind, bytes.fromhex(dst.replace(':', '')), src_mac, src_ip, dst_ip)
    for _ in range(int(count)):
        s.send(pkt)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
