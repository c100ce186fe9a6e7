//! `decode` on arbitrary bytes under every link type it knows (and one it
//! does not), with wire lengths equal to or beyond the capture: it must
//! return, not panic, and its lengths must be consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracelab_decode::{decode, decode_into, linktype, PacketMeta, TcpMeta};

const LINK_TYPES: [u32; 14] = [
    linktype::ETHERNET,
    linktype::RAW,
    linktype::IPV4,
    linktype::IPV6,
    linktype::LINUX_SLL,
    linktype::LINUX_SLL2,
    linktype::NULL,
    linktype::LOOP,
    linktype::PPP,
    linktype::PPP_HDLC,
    linktype::NFLOG,
    linktype::RAW_12,
    linktype::RAW_14,
    105, // 802.11: unsupported
];

fuzz_target!(|input: &[u8]| {
    // Byte 0 picks the link type, byte 1 how much the wire carried beyond
    // the capture (0: nothing, as in an untruncated capture).
    let [selector, extra, frame @ ..] = input else { return };
    let link = LINK_TYPES[usize::from(*selector) % LINK_TYPES.len()];
    let wire_len = frame.len() as u32 + u32::from(*extra) * 9;
    let fresh = decode(link, frame, 0, wire_len, 0);
    if let Ok(m) = fresh {
        assert_eq!(m.cap_len as usize, frame.len());
        assert!(m.payload_captured <= m.payload_len, "{m:?}");
        assert!(m.payload_captured as usize <= frame.len(), "{m:?}");
    }
    // decode_into over a meta full of another packet's values: the same
    // outcome, nothing stale.
    let mut reused = PacketMeta {
        ts_ns: -1,
        sport: 0xdead,
        dport: 0xbeef,
        ip_len: u32::MAX,
        payload_len: 7,
        tcp: TcpMeta { flags: 0xff, mss: 9, wscale: Some(3), ..TcpMeta::default() },
        vlan: 5,
        ..PacketMeta::default()
    };
    let into = decode_into(link, frame, 0, wire_len, 0, &mut reused);
    assert_eq!(into.err(), fresh.err());
    if let Ok(m) = fresh {
        assert_eq!(reused, m);
    }
});
