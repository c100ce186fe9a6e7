"""Synthetic pcaps from a workload model (`tracelab synth`).

The one writer of synthetic traces (docs/reference/architecture.md, "Synthetic traces").
`chain.py` writes from the model's `traffic` section a trace that profiles like
the original (docs/fidelity.md): its duration, connections per scope, protocol
and state, services, sizes, durations, trains, handshake RTT split, hosts and
their fan-in and fan-out, TCP with handshakes, ACKs and FIN/RST closes and UDP
request/response, streamed to disk. `trace.py` is the older writer (`--legacy`)
from the flows/topological/apps sections. `sampling.py` draws the older
sections' distributions; `pcap.py` streams the packets to the project's one pcap
writer, the Rust analyzer's `write-pcap` (libpcap, Ethernet, microsecond
timestamps), whose files tcpreplay, tshark and `tracelab profile` read.

    from tracelab.synth import chain
    summary = chain.write(model_dict, chain.ChainOptions(seed=1), "out.pcap")

Not implemented: losses and retransmissions, reordering, TCP options (MSS,
window scaling, SACK, timestamps), IPv6, VLANs, ICMP and other protocols,
external-scope connections, application payloads (zeros).
"""

from . import chain
from .sampling import SynthError
from .trace import Options, Trace, synthesize, write_pcap

__all__ = ["Options", "SynthError", "Trace", "chain", "synthesize", "write_pcap"]
