"""Independent Python models of FIFO drop-tail and EFD (docs/reference/algorithms.md §1,
§2.1) over a single exact link, written from the spec and not from the C++
cores, as an oracle for the engine's golden departures.

Same conventions as the engine: times in picoseconds; the packet in service
is not in the buffer; at one instant the free link takes its next packet
before an arrival is offered; a packet arriving at an idle, empty queue is
sent at once.
"""

from __future__ import annotations

from collections import deque

DELIVERED, BUFFER_FULL, PUSHED_OUT = "delivered", "buffer_full", "pushed_out"


def ser(length: int, rate_bps: int) -> int:
    return -(-length * 8 * 10**12 // rate_bps)  # ceil, exact in integers


def fifo(created, length, capacity, rate_bps):
    """Returns {uid: (fate, end_ps, queue_delay_ps)}."""
    out, q, free = {}, deque(), 0

    def start(u, t):
        nonlocal free
        free = t + ser(length[u], rate_bps)
        out[u] = (DELIVERED, free, t - created[u])

    def drain(t):  # every transmission that starts at or before t
        while q and free <= t:
            start(q.popleft(), free)

    for u, t in enumerate(created):
        drain(t)
        if free <= t and not q:
            start(u, t)
        elif len(q) >= capacity:
            out[u] = (BUFFER_FULL, t, 0)
        else:
            q.append(u)
    drain(float("inf"))
    return out


def efd(created, length, flow, capacity, th, rate_bps):
    """EFD (Algorithm 3 as docs/reference/algorithms.md §2.1 resolves it): byte counter of the
    flow admitted during its table entry's life, HIGH iff no entry or
    counter < th; full buffer: LOW arrival dropped, HIGH arrival pushes out
    the tail of L (dropped itself if L is empty)."""
    out, high, low, table, free = {}, deque(), deque(), {}, 0

    def admit(u):
        e = table.setdefault(flow[u], [0, 0])  # [counter, nq]
        e[0] += length[u]
        e[1] += 1

    def leave(u):
        e = table[flow[u]]
        e[1] -= 1
        if e[1] == 0:
            del table[flow[u]]

    def start(u, t):
        nonlocal free
        leave(u)
        free = t + ser(length[u], rate_bps)
        out[u] = (DELIVERED, free, t - created[u])

    def drain(t):
        while (high or low) and free <= t:
            start((high or low).popleft(), free)

    for u, t in enumerate(created):
        drain(t)
        e = table.get(flow[u])
        is_high = e is None or e[0] < th
        if free <= t and not high and not low:
            admit(u)
            start(u, t)
        elif len(high) + len(low) >= capacity:
            if not is_high or not low:
                out[u] = (BUFFER_FULL, t, 0)
            else:
                high.append(u)
                admit(u)
                victim = low.pop()
                leave(victim)
                out[victim] = (PUSHED_OUT, t, 0)
        else:
            (high if is_high else low).append(u)
            admit(u)
    drain(float("inf"))
    return out
