"""The first payload bytes of a synthetic connection: for each service the analyzer
detects (analyzer/crates/tracelab-flow/src/service.rs, Zeek's names), minimal valid
first bytes of the originator's and the responder's first message, so the synthetic
trace's `service` column names the services the model holds. Every other payload
byte stays zero.

A signature is written at the start of the first data packet of its direction,
only when that packet is at least `min_len` bytes long (what the analyzer's parser
needs: e.g. an NTP message is 48 bytes, a DHCP message 240); otherwise the packet
stays zeros and the connection is not detected, as a real one would not be.
"""

from __future__ import annotations


def _dns(response: bool) -> bytes:
    # Header: id, flags (a query, or a response with recursion), one question, no
    # records; question: "a." type A, class IN.
    flags = b"\x81\x80" if response else b"\x01\x00"
    return b"\x12\x34" + flags + b"\x00\x01\x00\x00\x00\x00\x00\x00" + b"\x01a\x00\x00\x01\x00\x01"


# service -> ((originator bytes, min_len), (responder bytes, min_len))
SIGNATURES: dict[str, tuple[tuple[bytes, int], tuple[bytes, int]]] = {
    "http": ((b"GET / HTTP/1.1\r\n", 16), (b"HTTP/1.1 200 OK\r\n", 17)),
    # TLS handshake records (content type 22, version 3.1/3.3) whose first message is
    # a ClientHello / ServerHello (version 3.3); the lengths are those of a typical hello.
    "ssl": (
        (b"\x16\x03\x01\x00\xc4\x01\x00\x00\xc0\x03\x03", 11),
        (b"\x16\x03\x03\x00\x5a\x02\x00\x00\x56\x03\x03", 11),
    ),
    "ssh": ((b"SSH-2.0-tracelab\r\n", 18), (b"SSH-2.0-tracelab\r\n", 18)),
    "smtp": ((b"EHLO tracelab\r\n", 15), (b"220 tracelab\r\n", 14)),
    "ftp": ((b"USER tracelab\r\n", 15), (b"220 tracelab\r\n", 14)),
    "pop3": ((b"USER tracelab\r\n", 15), (b"+OK\r\n", 5)),
    "imap": ((b"a1 LOGIN t l\r\n", 14), (b"* OK\r\n", 6)),
    "irc": ((b"NICK tracelab\r\n", 15), (b":tracelab 001 t\r\n", 17)),
    "dns": ((_dns(False), 19), (_dns(True), 19)),
    "ntp": ((b"\x23", 48), (b"\x24", 48)),  # version 4, mode 3 (client) / 4 (server)
    "dhcp": ((b"\x01\x01\x06", 240), (b"\x02\x01\x06", 240)),  # BOOTREQUEST / BOOTREPLY, Ethernet
    "sip": ((b"OPTIONS sip:t SIP/2.0\r\n", 23), (b"SIP/2.0 200 OK\r\n", 16)),
}

# Index 0 is "no signature"; then (service, direction) in a fixed order.
TABLE: list[bytes] = [b""]
MIN_LEN: list[int] = [0]
_INDEX: dict[tuple[str, int], int] = {}
for _name, _sides in SIGNATURES.items():
    for _d, (_bytes, _min) in enumerate(_sides):
        _INDEX[(_name, _d)] = len(TABLE)
        TABLE.append(_bytes)
        MIN_LEN.append(max(_min, len(_bytes)))


def index(service: str, direction: int) -> int:
    """The signature of `service`'s originator (0) or responder (1) message; 0 when the
    service has none (a port stand-in such as "tcp/8080")."""
    return _INDEX.get((service, direction), 0)
