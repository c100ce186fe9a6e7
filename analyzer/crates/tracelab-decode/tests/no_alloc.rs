//! `decode` allocates nothing: counted with an allocator that tallies this
//! thread's allocations, over every frame of a real trace.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;

use tracelab_decode::decode;
use tracelab_pcap::FrameSource;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
    let before = ALLOCATIONS.with(Cell::get);
    let mut decoded = 0;
    for (link, data, wire) in &frames {
        decoded += usize::from(decode(*link, data, 0, *wire, 0).is_ok());
    }
    assert_eq!(ALLOCATIONS.with(Cell::get), before);
    assert!(decoded > 3800, "{decoded} of {} decoded", frames.len());
}
