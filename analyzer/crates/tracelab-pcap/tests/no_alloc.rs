//! The readers allocate nothing per frame once their buffer has grown to
//! the largest frame: counted with an allocator that tallies this thread's
//! allocations.

use tracelab_pcap::{from_reader, FrameSource};

#[path = "../../../test-support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations;

/// 2000 frames, the first the largest.
fn pcap() -> Vec<u8> {
    let mut b = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0];
    for i in 0..2000u32 {
        let len = if i == 0 { 1514 } else { 60 + i % 1400 };
        for v in [i, 0, len, len] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend(std::iter::repeat_n(i as u8, len as usize));
    }
    b
}

fn pcapng() -> Vec<u8> {
    let block = |t: u32, body: &[u8]| {
        let total = (body.len() + 12) as u32;
        [&t.to_le_bytes()[..], &total.to_le_bytes(), body, &total.to_le_bytes()].concat()
    };
    let mut b =
        block(0x0a0d_0d0a, &[0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    b.extend(block(1, &[1, 0, 0, 0, 0, 0, 0, 0]));
    for i in 0..2000u32 {
        let len = if i == 0 { 1516 } else { 60 + 4 * (i % 350) };
        let mut body = Vec::new();
        for v in [0, 0, i, len, len] {
            body.extend_from_slice(&v.to_le_bytes());
        }
        body.extend(std::iter::repeat_n(i as u8, len as usize));
        b.extend(block(6, &body));
    }
    b
}

fn frames_after_the_first_allocate_nothing(bytes: &[u8]) {
    let mut src = from_reader(bytes, "mem").unwrap();
    assert!(src.next_frame().unwrap().is_some());
    let before = allocations();
    let mut n = 1;
    while let Some(f) = src.next_frame().unwrap() {
        assert_eq!(f.data[0], n as u8);
        n += 1;
    }
    assert_eq!(n, 2000);
    assert_eq!(allocations(), before, "allocations while reading 1999 frames");
}

#[test]
fn pcap_reader_allocates_nothing_per_frame() {
    frames_after_the_first_allocate_nothing(&pcap());
}

#[test]
fn pcapng_reader_allocates_nothing_per_frame() {
    frames_after_the_first_allocate_nothing(&pcapng());
}
