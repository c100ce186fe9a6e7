//! The capture readers (pcap, pcapng, gzip, sniffed by magic) over
//! arbitrary bytes, and every frame they yield through `decode`: no panic,
//! no frame beyond the limit, and a finished source stays finished.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracelab_pcap::{from_reader, FrameSource, MAX_CAPLEN};

fuzz_target!(|input: &[u8]| {
    let Ok(mut src) = from_reader(input, "fuzz") else { return };
    loop {
        match src.next_frame() {
            Ok(Some(f)) => {
                assert_eq!(f.cap_len as usize, f.data.len());
                assert!(f.cap_len <= MAX_CAPLEN);
                let _ = tracelab_decode::decode(f.link_type, f.data, f.ts_ns, f.wire_len, f.interface);
            }
            Ok(None) | Err(_) => break,
        }
    }
    assert!(matches!(src.next_frame(), Ok(None)));
});
