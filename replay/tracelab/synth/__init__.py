"""Synthetic pcaps from a workload model (`tracelab synth`).

The one writer of synthetic traces (docs/reference/architecture.md, "Synthetic traces"): TCP
connections with handshakes, trains per side, warm-ups, pacing, RTTs per scope,
packet sizes and FIN teardowns, and UDP flows where the model calls for them, as
a standard libpcap file (Ethernet, microsecond timestamps) that tcpreplay,
tshark and `tracelab profile` read. `trace.py` says how each part of the model is
used; `sampling.py` how its distributions are drawn; `pcap.py` how packets are
rendered.

    from tracelab.synth import Options, synthesize, write_pcap
    trace = synthesize(model_dict, Options(connections=2000, seed=1))
    write_pcap(trace, "out.pcap")

Not implemented: losses and retransmissions, reordering, TCP options (MSS,
window scaling, SACK, timestamps), IPv6, VLANs, ICMP, RSTs and half-open
connections, connections open at the trace's ends, application payloads (zeros),
and per-scope connection counts or a TCP/UDP split (the workload model has
neither: UDP is used for a scope without a TCP apps model, plus `udp_share`).
"""

from .sampling import SynthError
from .trace import Options, Trace, synthesize, write_pcap

__all__ = ["Options", "SynthError", "Trace", "synthesize", "write_pcap"]
