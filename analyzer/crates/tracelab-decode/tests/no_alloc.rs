//! `decode` allocates nothing: counted with an allocator that tallies this
//! thread's allocations, over every frame of a real trace.

use std::path::Path;

use tracelab_decode::decode;
use tracelab_pcap::FrameSource;

#[path = "../../../test-support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations;

#[test]
fn decode_allocates_nothing() {
    // Mixed IPv4/IPv6, TCP/UDP, ARP, 613 UDP and 137 TCP conversations.
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../datasets/public/real/ndpi/gnutella.pcap");
    let frames: Vec<(u32, Vec<u8>, u32)> = {
        let mut src = tracelab_pcap::open(&trace).expect("datasets/public in the repository");
        let mut v = Vec::new();
        while let Some(f) = src.next_frame().unwrap() {
            v.push((f.link_type, f.data.to_vec(), f.wire_len));
        }
        v
    };
    let before = allocations();
    let mut decoded = 0;
    for (link, data, wire) in &frames {
        decoded += usize::from(decode(*link, data, 0, *wire, 0).is_ok());
    }
    assert_eq!(allocations(), before);
    assert!(decoded > 3800, "{decoded} of {} decoded", frames.len());
}
