"""A slow network where the node's kernel has no netem: run by the fault helper inside a victim
pod's network namespace, it takes every packet an iptables NFQUEUE rule there hands it (the
pod's outgoing ones) and gives each back to the kernel delay_ms later (give or take jitter_ms,
uniformly), or drops it (loss_percent of them). Standard library only, over nfnetlink_queue
(linux/netfilter/nfnetlink_queue.h); the rule carries --queue-bypass, so when this process ends
the packets pass untouched.

    python3 -m tpcc_operator.nfqueue_delayer QUEUE DELAY_MS JITTER_MS LOSS_PERCENT
"""

from __future__ import annotations

import heapq
import random
import select
import socket
import struct
import sys
import time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
MSG_PACKET, MSG_VERDICT, MSG_CONFIG = 0, 1, 2
CFG_CMD, CFG_PARAMS, CFG_QUEUE_MAXLEN = 1, 2, 3
CMD_BIND = 1
COPY_META = 1  # the packet's metadata only: its id is all this needs
PACKET_HDR, VERDICT_HDR = 1, 2
NF_DROP, NF_ACCEPT = 0, 1
NLA_TYPE_MASK = 0x3FFF  # without the nested and byte-order flags


def message(queue: int, kind: int, attr_type: int, value: bytes) -> bytes:
    """One nfnetlink_queue request (nlmsghdr, nfgenmsg for the queue, one attribute)."""
    attr = struct.pack("=HH", 4 + len(value), attr_type) + value
    body = struct.pack("BB", socket.AF_UNSPEC, 0) + struct.pack(">H", queue) + attr + b"\0" * (-len(attr) % 4)
    return struct.pack("=IHHII", 16 + len(body), NFNL_SUBSYS_QUEUE << 8 | kind, 1, 0, 0) + body


def config(queue: int) -> list[bytes]:
    """Bind the queue, metadata only, room for 65536 packets held at once."""
    return [
        message(queue, MSG_CONFIG, CFG_CMD, struct.pack("BB", CMD_BIND, 0) + struct.pack(">H", 0)),
        message(queue, MSG_CONFIG, CFG_PARAMS, struct.pack(">IB", 0xFFFF, COPY_META)),
        message(queue, MSG_CONFIG, CFG_QUEUE_MAXLEN, struct.pack(">I", 1 << 16)),
    ]


def verdict(queue: int, packet_id: int, accept: bool) -> bytes:
    return message(queue, MSG_VERDICT, VERDICT_HDR, struct.pack(">II", NF_ACCEPT if accept else NF_DROP, packet_id))


def packet_ids(data: bytes) -> list[int]:
    """The ids of the packets in what one recv returned (other messages, e.g. acks, skipped)."""
    ids, at = [], 0
    while at + 16 <= len(data):
        length, kind = struct.unpack_from("=IH", data, at)
        if length < 16:
            break
        if kind == NFNL_SUBSYS_QUEUE << 8 | MSG_PACKET:
            a = at + 20  # past nlmsghdr and nfgenmsg
            while a + 4 <= at + length:
                alen, atype = struct.unpack_from("=HH", data, a)
                if atype & NLA_TYPE_MASK == PACKET_HDR:
                    ids.append(struct.unpack_from(">I", data, a + 4)[0])
                a += max(alen + 3 & ~3, 4)
        at += length + 3 & ~3
    return ids


def hold_for(delay_ms: int, jitter_ms: int, rng: random.Random) -> float:
    """Seconds one packet is held."""
    return max(0.0, rng.uniform(delay_ms - jitter_ms, delay_ms + jitter_ms)) / 1000


def main(argv: list[str]) -> None:
    queue, delay_ms, jitter_ms, loss_percent = int(argv[0]), int(argv[1]), int(argv[2]), float(argv[3])
    rng = random.Random()
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    s.bind((0, 0))
    for m in config(queue):
        s.send(m)
    held: list[tuple[float, int]] = []  # (when to give it back, packet id)
    while True:
        wait = max(0.0, held[0][0] - time.monotonic()) if held else None
        if select.select([s], [], [], wait)[0]:
            try:
                data = s.recv(1 << 20)
            except OSError:  # ENOBUFS: the kernel dropped what this process was too slow for
                continue
            now = time.monotonic()
            for packet_id in packet_ids(data):
                if rng.random() * 100 < loss_percent:
                    s.send(verdict(queue, packet_id, accept=False))
                else:
                    heapq.heappush(held, (now + hold_for(delay_ms, jitter_ms, rng), packet_id))
        now = time.monotonic()
        while held and held[0][0] <= now:
            s.send(verdict(queue, heapq.heappop(held)[1], accept=True))


if __name__ == "__main__":
    main(sys.argv[1:])
