//! Hand-built capture files: every format variant, limit and error path,
//! with timestamps worked out by hand.

use std::io::Write;

use tracelab_pcap::{from_reader, FrameSource, ReadError, ReadErrorKind, MAX_CAPLEN};

// ---- pcap builder ---------------------------------------------------------

struct Pcap {
    big_endian: bool,
    bytes: Vec<u8>,
}

impl Pcap {
    fn new(big_endian: bool, nanos: bool, snaplen: u32, link_type: u32) -> Pcap {
        let mut p = Pcap { big_endian, bytes: Vec::new() };
        p.u32(if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 });
        p.u16(2);
        p.u16(4);
        p.u32(0);
        p.u32(0);
        p.u32(snaplen);
        p.u32(link_type);
        p
    }
    fn u16(&mut self, v: u16) {
        let b = if self.big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
        self.bytes.extend_from_slice(&b);
    }
    fn u32(&mut self, v: u32) {
        let b = if self.big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
        self.bytes.extend_from_slice(&b);
    }
    fn record(mut self, sec: u32, frac: u32, data: &[u8], wire_len: u32) -> Pcap {
        self.u32(sec);
        self.u32(frac);
        self.u32(data.len() as u32);
        self.u32(wire_len);
        self.bytes.extend_from_slice(data);
        self
    }
}

// ---- pcapng builder -------------------------------------------------------

struct Ng {
    big_endian: bool,
    bytes: Vec<u8>,
}

impl Ng {
    fn new() -> Ng {
        Ng { big_endian: false, bytes: Vec::new() }
    }
    fn u16s(&self, v: u16) -> [u8; 2] {
        if self.big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    fn u32s(&self, v: u32) -> [u8; 4] {
        if self.big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    fn block(mut self, block_type: u32, body: &[u8]) -> Ng {
        let mut body = body.to_vec();
        while !body.len().is_multiple_of(4) {
            body.push(0);
        }
        let total = (body.len() + 12) as u32;
        for w in [self.u32s(block_type), self.u32s(total)] {
            self.bytes.extend_from_slice(&w);
        }
        self.bytes.extend_from_slice(&body);
        let t = self.u32s(total);
        self.bytes.extend_from_slice(&t);
        self
    }
    fn section(mut self, big_endian: bool) -> Ng {
        self.big_endian = big_endian;
        let mut b = self.u32s(0x1a2b_3c4d).to_vec();
        b.extend_from_slice(&self.u16s(1));
        b.extend_from_slice(&self.u16s(0));
        b.extend_from_slice(&[0xff; 8]); // section length unknown
        self.block(0x0a0d_0d0a, &b)
    }
    /// IDB with optional if_tsresol and if_tsoffset options.
    fn interface(self, link_type: u16, snaplen: u32, tsresol: Option<u8>, tsoffset: Option<i64>) -> Ng {
        let mut b = self.u16s(link_type).to_vec();
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&self.u32s(snaplen));
        if let Some(r) = tsresol {
            b.extend_from_slice(&self.u16s(9));
            b.extend_from_slice(&self.u16s(1));
            b.extend_from_slice(&[r, 0, 0, 0]);
        }
        if let Some(o) = tsoffset {
            b.extend_from_slice(&self.u16s(14));
            b.extend_from_slice(&self.u16s(8));
            let v = if self.big_endian { o.to_be_bytes() } else { o.to_le_bytes() };
            b.extend_from_slice(&v);
        }
        b.extend_from_slice(&[0, 0, 0, 0]); // opt_endofopt
        self.block(1, &b)
    }
    fn epb(self, interface: u32, ts: u64, data: &[u8], wire_len: u32) -> Ng {
        let mut b = self.u32s(interface).to_vec();
        b.extend_from_slice(&self.u32s((ts >> 32) as u32));
        b.extend_from_slice(&self.u32s(ts as u32));
        b.extend_from_slice(&self.u32s(data.len() as u32));
        b.extend_from_slice(&self.u32s(wire_len));
        b.extend_from_slice(data);
        while !b.len().is_multiple_of(4) {
            b.push(0);
        }
        // An opt_comment, to be skipped.
        b.extend_from_slice(&self.u16s(1));
        b.extend_from_slice(&self.u16s(3));
        b.extend_from_slice(b"hi!\0");
        b.extend_from_slice(&[0, 0, 0, 0]);
        self.block(6, &b)
    }
    fn opb(self, interface: u16, ts: u64, data: &[u8], wire_len: u32) -> Ng {
        let mut b = self.u16s(interface).to_vec();
        b.extend_from_slice(&self.u16s(0)); // drops
        b.extend_from_slice(&self.u32s((ts >> 32) as u32));
        b.extend_from_slice(&self.u32s(ts as u32));
        b.extend_from_slice(&self.u32s(data.len() as u32));
        b.extend_from_slice(&self.u32s(wire_len));
        b.extend_from_slice(data);
        self.block(2, &b)
    }
    fn spb(self, wire_len: u32, data: &[u8]) -> Ng {
        let mut b = self.u32s(wire_len).to_vec();
        b.extend_from_slice(data);
        self.block(3, &b)
    }
}

// ---- reading --------------------------------------------------------------

#[derive(Debug, PartialEq)]
struct Owned {
    ts_ns: i64,
    cap_len: u32,
    wire_len: u32,
    link_type: u32,
    interface: u32,
    data: Vec<u8>,
}

fn read_all(src: &mut dyn FrameSource) -> (Vec<Owned>, Option<ReadError>) {
    let mut frames = Vec::new();
    loop {
        match src.next_frame() {
            Ok(Some(f)) => frames.push(Owned {
                ts_ns: f.ts_ns,
                cap_len: f.cap_len,
                wire_len: f.wire_len,
                link_type: f.link_type,
                interface: f.interface,
                data: f.data.to_vec(),
            }),
            Ok(None) => return (frames, None),
            Err(e) => {
                assert!(matches!(src.next_frame(), Ok(None)), "a source ends after its error");
                return (frames, Some(e));
            }
        }
    }
}

fn read_bytes(bytes: &[u8]) -> (Vec<Owned>, Option<ReadError>) {
    let mut src = from_reader(bytes, "mem").expect("header accepted");
    let out = read_all(&mut src);
    // (A gzip file's offsets count decompressed bytes.)
    if out.1.is_none() && !bytes.starts_with(&[0x1f, 0x8b]) {
        assert_eq!(src.offset(), bytes.len() as u64, "offset at the end is the file length");
    }
    out
}

fn open_error(bytes: &[u8]) -> ReadError {
    match from_reader(bytes, "mem") {
        Ok(_) => panic!("header accepted"),
        Err(e) => e,
    }
}

fn frame(ts_ns: i64, data: &[u8], wire_len: u32, link_type: u32, interface: u32) -> Owned {
    Owned { ts_ns, cap_len: data.len() as u32, wire_len, link_type, interface, data: data.to_vec() }
}

// ---- pcap -----------------------------------------------------------------

#[test]
fn pcap_microseconds_little_endian() {
    let p = Pcap::new(false, false, 65535, 1).record(1_600_000_000, 250_000, b"abcd", 60).record(
        1_600_000_001,
        999_999,
        b"",
        0,
    );
    let (frames, err) = read_bytes(&p.bytes);
    assert!(err.is_none());
    assert_eq!(
        frames,
        [frame(1_600_000_000_250_000_000, b"abcd", 60, 1, 0), frame(1_600_000_001_999_999_000, b"", 0, 1, 0)]
    );
}

#[test]
fn pcap_nanoseconds_big_endian_and_fcs_bits() {
    // Link type 1 with the FCS-present bits (0x1000_0000 | 4 << 29) set.
    let p = Pcap::new(true, true, 0, 0x9000_0001).record(3_000_000_000, 123_456_789, b"xyz", 3);
    let (frames, err) = read_bytes(&p.bytes);
    assert!(err.is_none());
    // Seconds are unsigned: 3e9 is past 2038, not negative.
    assert_eq!(frames, [frame(3_000_000_000_123_456_789, b"xyz", 3, 1, 0)]);
}

#[test]
fn pcap_truncated_record_header_and_data() {
    let good = Pcap::new(false, false, 65535, 1).record(1, 0, b"0123456789", 10);
    let record_start = good.bytes.len() as u64;
    let two = good.record(2, 0, b"abcdefgh", 8);
    // Cut inside the second record's header, then inside its data.
    for (cut, what) in [(record_start + 7, "record header (7 of 16"), (record_start + 20, "record (4 of 8")] {
        let (frames, err) = read_bytes(&two.bytes[..cut as usize]);
        assert_eq!(frames.len(), 1);
        let err = err.expect("an error for the broken record");
        assert_eq!(err.offset, record_start);
        assert!(err.reason.contains(what), "{}", err.reason);
        assert_eq!(err.kind, ReadErrorKind::TruncatedTail, "a cut, not corruption");
        assert_eq!(err.to_string(), format!("mem: offset {record_start}: {}", err.reason));
    }
}

#[test]
fn pcap_caplen_limits() {
    // A corrupt length: an error at that record, not an allocation.
    let mut p = Pcap::new(false, false, 0, 1).record(1, 0, b"ok", 2);
    let at = p.bytes.len() as u64;
    p.u32(1);
    p.u32(0);
    p.u32(MAX_CAPLEN + 1);
    p.u32(60);
    let (frames, err) = read_bytes(&p.bytes);
    assert_eq!(frames.len(), 1);
    let err = err.unwrap();
    assert_eq!(err.offset, at);
    assert!(err.reason.contains("exceeds the limit"), "{}", err.reason);
    assert_eq!(err.kind, ReadErrorKind::Corrupt);

    // Longer than the snaplen (8): cut to the snaplen, as libpcap does,
    // and the next record is still found.
    let p = Pcap::new(false, false, 8, 1).record(1, 0, b"0123456789ab", 12).record(2, 0, b"cd", 2);
    let (frames, err) = read_bytes(&p.bytes);
    assert!(err.is_none());
    assert_eq!(frames, [frame(1_000_000_000, b"01234567", 12, 1, 0), frame(2_000_000_000, b"cd", 2, 1, 0)]);
}

#[test]
fn bad_headers() {
    let e = open_error(b"\xa1\xb2");
    assert!(e.reason.contains("too short") && e.offset == 0, "{e}");
    let e = open_error(b"GIF89a-not-a-capture");
    assert!(e.reason.contains("not a pcap, pcapng or gzip file (magic 47494638)"), "{e}");
    let p = Pcap::new(false, false, 0, 1);
    assert!(open_error(&p.bytes[..20]).reason.contains("truncated pcap file header"));
    let mut v1 = Pcap::new(false, false, 0, 1);
    v1.bytes[4] = 1;
    assert!(open_error(&v1.bytes).reason.contains("version 1"));
}

// ---- pcapng ---------------------------------------------------------------

#[test]
fn pcapng_sections_interfaces_and_packet_blocks() {
    let ng = Ng::new()
        .section(false)
        // Ethernet, nanoseconds, 10 s offset.
        .interface(1, 0, Some(9), Some(10))
        // Raw IP, 2^-10 s units.
        .interface(101, 0, Some(0x80 | 10), None)
        .epb(0, 1_500_000_000, b"eth-frame", 64)
        .block(0x0000_0bad, b"custom block, skipped")
        .epb(1, 3 * 1024 + 1, b"raw", 3)
        // A statistics block, skipped.
        .block(5, &[0; 20])
        // SPB: interface 0, no timestamp, wire length 70, 8 bytes present.
        .spb(70, b"12345678")
        // A second section in the other byte order resets the interfaces.
        .section(true)
        .interface(113, 0, None, None)
        .opb(0, 2_000_001, b"cooked", 100);
    let (frames, err) = read_bytes(&ng.bytes);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(
        frames,
        [
            frame(11_500_000_000, b"eth-frame", 64, 1, 0),
            // 3073 / 1024 s = 3.0009765625 s.
            frame(3_000_976_562, b"raw", 3, 101, 1),
            frame(0, b"12345678", 70, 1, 0),
            frame(2_000_001_000, b"cooked", 100, 113, 0),
        ]
    );
}

#[test]
fn pcapng_simple_packet_block_respects_snaplen() {
    let ng = Ng::new().section(false).interface(1, 4, None, None).spb(70, b"12345678");
    let (frames, _) = read_bytes(&ng.bytes);
    assert_eq!(frames, [frame(0, b"1234", 70, 1, 0)]);
}

#[test]
fn pcapng_errors() {
    // A packet on an interface the section never described.
    let ng = Ng::new().section(false).interface(1, 0, None, None).epb(0, 0, b"a", 1);
    let at = ng.bytes.len() as u64;
    let ng = ng.epb(5, 0, b"b", 1);
    let (frames, err) = read_bytes(&ng.bytes);
    assert_eq!(frames.len(), 1);
    let err = err.unwrap();
    assert_eq!(err.offset, at);
    assert!(err.reason.contains("interface 5"), "{}", err.reason);

    // Cut in the middle of the second EPB.
    let (frames, err) = read_bytes(&ng.bytes[..at as usize + 30]);
    assert_eq!(frames.len(), 1);
    assert_eq!(err.unwrap().offset, at);
    // A cut (in the first EPB's data) is told from corruption.
    let (frames, err) = read_bytes(&ng.bytes[..at as usize - 6]);
    let err = err.unwrap();
    assert_eq!((frames.len(), err.kind), (0, ReadErrorKind::TruncatedTail), "{err}");

    // Block length not a multiple of 4.
    let mut bad = Ng::new().section(false).interface(1, 0, None, None);
    let at = bad.bytes.len();
    bad = bad.epb(0, 0, b"a", 1);
    bad.bytes[at + 4] += 1;
    let (_, err) = read_bytes(&bad.bytes);
    let err = err.unwrap();
    assert!(err.reason.contains("invalid block length"));
    assert_eq!(err.kind, ReadErrorKind::Corrupt);

    // Caplen beyond its block.
    let mut over = Ng::new().section(false).interface(1, 0, None, None);
    let at = over.bytes.len();
    over = over.epb(0, 0, b"abcd", 4);
    over.bytes[at + 20..at + 24].copy_from_slice(&200u32.to_le_bytes());
    let (_, err) = read_bytes(&over.bytes);
    assert!(err.unwrap().reason.contains("exceeds its block"));

    // Byte-order magic wrong.
    let mut bom = Ng::new().section(false);
    bom.bytes[8] = 0;
    assert!(open_error(&bom.bytes).reason.contains("byte-order magic"));

    // if_tsresol out of range.
    let (_, err) = read_bytes(&Ng::new().section(false).interface(1, 0, Some(20), None).bytes);
    assert!(err.unwrap().reason.contains("if_tsresol"));
}

// ---- gzip and files -------------------------------------------------------

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

#[test]
fn gzip_of_pcap_and_pcapng() {
    let p = Pcap::new(false, true, 0, 1).record(5, 6, b"gz", 2);
    let (frames, err) = read_bytes(&gzip(&p.bytes));
    assert!(err.is_none());
    assert_eq!(frames, [frame(5_000_000_006, b"gz", 2, 1, 0)]);

    let ng = Ng::new().section(true).interface(228, 0, None, None).epb(0, 7, b"v4", 2);
    let (frames, _) = read_bytes(&gzip(&ng.bytes));
    assert_eq!(frames, [frame(7_000, b"v4", 2, 228, 0)]);

    // A cut gzip stream: the frames before the cut, then an error.
    let big = (0..200).fold(Pcap::new(false, false, 0, 1), |p, i| p.record(i, 0, &[i as u8; 100], 100));
    let z = gzip(&big.bytes);
    let (frames, err) = read_bytes(&z[..z.len() / 2]);
    assert!(!frames.is_empty() && frames.len() < 200);
    assert_eq!(err.unwrap().kind, ReadErrorKind::TruncatedTail, "a cut stream, as a file still being written");
    // Without its trailer (CRC and length) too; a wrong CRC is corruption.
    let (frames, err) = read_bytes(&z[..z.len() - 4]);
    assert_eq!((frames.len(), err.unwrap().kind), (200, ReadErrorKind::TruncatedTail));
    let mut bad_crc = z.clone();
    let crc_at = z.len() - 8;
    bad_crc[crc_at] ^= 0xff;
    let (_, err) = read_bytes(&bad_crc);
    assert_eq!(err.unwrap().kind, ReadErrorKind::Corrupt);
}

#[test]
fn open_files_by_content_not_name() {
    let dir = std::env::temp_dir().join(format!("tracelab-pcap-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plain = dir.join("capture.pcapng"); // a classic pcap despite the name
    let p = Pcap::new(false, false, 0, 1).record(1, 0, b"f", 1);
    std::fs::write(&plain, &p.bytes).unwrap();
    let mut src = tracelab_pcap::open(&plain).unwrap();
    assert_eq!(src.size_hint(), Some(p.bytes.len() as u64));
    assert_eq!(read_all(&mut src).0.len(), 1);

    let gz = dir.join("capture.pcap.gz");
    std::fs::write(&gz, gzip(&p.bytes)).unwrap();
    let mut src = tracelab_pcap::open(&gz).unwrap();
    // Offsets count decompressed bytes: no on-disk size to compare them to.
    assert_eq!(src.size_hint(), None);
    assert_eq!(read_all(&mut src).0.len(), 1);
    assert_eq!(src.offset(), p.bytes.len() as u64);

    let missing = dir.join("missing.pcap");
    let e = tracelab_pcap::open(&missing).err().unwrap();
    assert!(e.to_string().starts_with(&format!("{}: offset 0: cannot open", missing.display())));
    std::fs::remove_dir_all(&dir).unwrap();
}
