//! Hand-built frames for every link type, encapsulation and skip reason;
//! expected values are worked out from the bytes written here.

use std::collections::BTreeSet;

use tracelab_decode::{decode, ip_proto, linktype, tcp_flags, Addr, PacketMeta, SkipReason};

// ---- builders -------------------------------------------------------------

const A4: [u8; 4] = [10, 0, 0, 1];
const B4: [u8; 4] = [192, 168, 1, 2];
const A6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const B6: [u8; 16] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

/// TCP header with options (padded to 4 bytes) and payload.
fn tcp(sport: u16, dport: u16, flags: u8, options: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut opts = options.to_vec();
    while !opts.len().is_multiple_of(4) {
        opts.push(0);
    }
    let doff = (20 + opts.len()) / 4;
    let mut t = Vec::new();
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&1000u32.to_be_bytes()); // seq
    t.extend_from_slice(&2000u32.to_be_bytes()); // ack
    t.push((doff as u8) << 4);
    t.push(flags);
    t.extend_from_slice(&65535u16.to_be_bytes()); // window
    t.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent
    t.extend_from_slice(&opts);
    t.extend_from_slice(payload);
    t
}

fn udp(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut u = Vec::new();
    u.extend_from_slice(&sport.to_be_bytes());
    u.extend_from_slice(&dport.to_be_bytes());
    u.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(payload);
    u
}

fn icmp(kind: u8, code: u8, payload: &[u8]) -> Vec<u8> {
    let mut c = vec![kind, code, 0, 0, 0, 1, 0, 1];
    c.extend_from_slice(payload);
    c
}

/// IPv4 with `options` (a multiple of 4 bytes) and the given fragment field.
fn ipv4_full(proto: u8, options: &[u8], fragment: u16, body: &[u8]) -> Vec<u8> {
    let ihl = (20 + options.len()) / 4;
    let total = 20 + options.len() + body.len();
    let mut h = vec![0x40 | ihl as u8, 0];
    h.extend_from_slice(&(total as u16).to_be_bytes());
    h.extend_from_slice(&[0x12, 0x34]);
    h.extend_from_slice(&fragment.to_be_bytes());
    h.extend_from_slice(&[64, proto, 0, 0]);
    h.extend_from_slice(&A4);
    h.extend_from_slice(&B4);
    h.extend_from_slice(options);
    h.extend_from_slice(body);
    h
}

fn ipv4(proto: u8, body: &[u8]) -> Vec<u8> {
    ipv4_full(proto, &[], 0, body)
}

/// IPv6; `after` is the chain after the fixed header (extension headers
/// and transport), `next` the first next-header value.
fn ipv6(next: u8, after: &[u8]) -> Vec<u8> {
    let mut h = vec![0x60, 0, 0, 0];
    h.extend_from_slice(&(after.len() as u16).to_be_bytes());
    h.extend_from_slice(&[next, 64]);
    h.extend_from_slice(&A6);
    h.extend_from_slice(&B6);
    h.extend_from_slice(after);
    h
}

/// A generic 8-byte extension header (hop-by-hop, routing, destination).
fn ext8(next: u8) -> Vec<u8> {
    vec![next, 0, 1, 4, 0, 0, 0, 0]
}

fn eth(ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

fn vlan_tag(id: u16, ethertype: u16) -> Vec<u8> {
    let mut t = (0x2000 | id).to_be_bytes().to_vec(); // priority 1
    t.extend_from_slice(&ethertype.to_be_bytes());
    t
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

// ---- helpers --------------------------------------------------------------

fn ok(link: u32, f: &[u8]) -> PacketMeta {
    match decode(link, f, 7, f.len() as u32, 3) {
        Ok(m) => m,
        Err(e) => panic!("expected a decoded packet, got {e:?}"),
    }
}

fn skip(link: u32, f: &[u8]) -> SkipReason {
    skip_wire(link, f, f.len() as u32)
}

fn skip_wire(link: u32, f: &[u8], wire: u32) -> SkipReason {
    match decode(link, f, 7, wire, 3) {
        Ok(m) => panic!("expected a skip, got {m:?}"),
        Err(e) => e,
    }
}

fn syn_options() -> Vec<u8> {
    // MSS 1460, NOP, wscale 7, NOP, NOP, SACK-permitted, timestamps.
    vec![2, 4, 0x05, 0xb4, 1, 3, 3, 7, 1, 1, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0]
}

fn assert_v4_tcp(m: &PacketMeta) {
    assert_eq!(m.src, Addr::v4(A4));
    assert_eq!(m.dst, Addr::v4(B4));
    assert_eq!(m.ip_proto, ip_proto::TCP);
    assert_eq!((m.sport, m.dport), (40000, 80));
}

// ---- Ethernet and its encapsulations -------------------------------------

#[test]
fn ethernet_ipv4_tcp_syn_with_options() {
    let f = eth(0x0800, &ipv4(6, &tcp(40000, 80, tcp_flags::SYN, &syn_options(), &[])));
    let m = ok(linktype::ETHERNET, &f);
    assert_v4_tcp(&m);
    assert_eq!((m.ts_ns, m.wire_len, m.cap_len, m.interface), (7, f.len() as u32, f.len() as u32, 3));
    // 20 IP + 20 TCP + 24 options (22 padded).
    assert_eq!(m.ip_len, 64);
    assert_eq!((m.payload_len, m.payload_captured), (0, 0));
    assert_eq!(m.tcp.flags, tcp_flags::SYN);
    assert_eq!((m.tcp.seq, m.tcp.ack, m.tcp.window, m.tcp.header_len), (1000, 2000, 65535, 44));
    assert_eq!((m.tcp.mss, m.tcp.wscale, m.tcp.sack_permitted), (1460, Some(7), true));
    assert_eq!((m.vlan, m.inner_vlan), (0, 0));
}

#[test]
fn ethernet_padding_is_not_payload() {
    // 20 + 20 + 2 bytes of data = 42 IP bytes; the frame is padded to 60.
    let mut f = eth(0x0800, &ipv4(6, &tcp(40000, 80, tcp_flags::ACK | tcp_flags::PSH, &[], b"hi")));
    f.resize(60, 0);
    let m = ok(linktype::ETHERNET, &f);
    assert_eq!((m.ip_len, m.payload_len, m.payload_captured), (42, 2, 2));
    assert_eq!(m.tcp.wscale, None);
}

/// MSS, window scale and SACK-permitted are SYN options (RFC 9293, 7323,
/// 2018): on any other segment they are not read.
#[test]
fn syn_options_only_on_syn_segments() {
    for (flags, want) in [
        (tcp_flags::SYN | tcp_flags::ACK, (1460, Some(7), true)),
        (tcp_flags::ACK, (0, None, false)),
        (tcp_flags::ACK | tcp_flags::PSH, (0, None, false)),
    ] {
        let m = ok(linktype::RAW, &ipv4(6, &tcp(40000, 80, flags, &syn_options(), b"x")));
        assert_eq!((m.tcp.mss, m.tcp.wscale, m.tcp.sack_permitted), want, "flags {flags:#x}");
        assert_eq!((m.tcp.header_len, m.payload_len), (44, 1));
    }
}

#[test]
fn vlan_qinq_and_triple_tags() {
    let ip = ipv4(17, &udp(53, 5353, b"abcd"));
    let m = ok(linktype::ETHERNET, &eth(0x8100, &cat(&[&vlan_tag(100, 0x0800), &ip])));
    assert_eq!((m.vlan, m.inner_vlan, m.sport, m.dport, m.payload_len), (100, 0, 53, 5353, 4));

    let f = eth(0x88a8, &cat(&[&vlan_tag(200, 0x8100), &vlan_tag(300, 0x0800), &ip]));
    let m = ok(linktype::ETHERNET, &f);
    assert_eq!((m.vlan, m.inner_vlan), (200, 300));

    // A third tag overwrites the inner one (as Zeek does); 0x9100 outer.
    let f = eth(0x9100, &cat(&[&vlan_tag(1, 0x8100), &vlan_tag(2, 0x8100), &vlan_tag(3, 0x0800), &ip]));
    let m = ok(linktype::ETHERNET, &f);
    assert_eq!((m.vlan, m.inner_vlan), (1, 3));

    // Nine tags are more than a real frame carries.
    let mut tags = Vec::new();
    for i in 0..9 {
        tags.extend(vlan_tag(i, 0x8100));
    }
    let f = eth(0x8100, &cat(&[&tags, &ip]));
    assert_eq!(skip(linktype::ETHERNET, &f), SkipReason::UnsupportedEncapsulation);
    // A tag cut by the capture.
    assert_eq!(skip(linktype::ETHERNET, &eth(0x8100, &[0x00, 0x64, 0x08])), SkipReason::Truncated);
}

fn mpls_label(label: u32, bottom: bool) -> [u8; 4] {
    (label << 12 | u32::from(bottom) << 8 | 64).to_be_bytes()
}

#[test]
fn mpls_stacks() {
    let ip = ipv4(6, &tcp(40000, 80, tcp_flags::ACK, &[], b"xyz"));
    let f = eth(0x8847, &cat(&[&mpls_label(16, false), &mpls_label(17, true), &ip]));
    let m = ok(linktype::ETHERNET, &f);
    assert_v4_tcp(&m);
    assert_eq!(m.payload_len, 3);

    // VLAN then MPLS then IPv6 (by version nibble).
    let ip6 = ipv6(17, &udp(1, 2, b""));
    let f = eth(0x8100, &cat(&[&vlan_tag(5, 0x8847), &mpls_label(99, true), &ip6]));
    let m = ok(linktype::ETHERNET, &f);
    assert_eq!((m.vlan, m.src, m.ip_proto), (5, Addr::v6(A6), ip_proto::UDP));

    // After the bottom label something that is not IP (a pseudowire).
    let f = eth(0x8847, &cat(&[&mpls_label(16, true), &[0x00, 0x01, 0x02, 0x03]]));
    assert_eq!(skip(linktype::ETHERNET, &f), SkipReason::UnsupportedEncapsulation);
    // No bottom of stack within the limit.
    let labels: Vec<u8> = (0..17).flat_map(|i| mpls_label(i, false)).collect();
    assert_eq!(skip(linktype::ETHERNET, &eth(0x8847, &cat(&[&labels, &ip]))), SkipReason::UnsupportedEncapsulation);
    // The stack runs off the capture.
    assert_eq!(skip(linktype::ETHERNET, &eth(0x8847, &mpls_label(1, false))), SkipReason::Truncated);
}

fn pppoe(proto: u16, payload: &[u8]) -> Vec<u8> {
    let mut p = vec![0x11, 0x00, 0x12, 0x34];
    p.extend_from_slice(&((payload.len() + 2) as u16).to_be_bytes());
    p.extend_from_slice(&proto.to_be_bytes());
    p.extend_from_slice(payload);
    p
}

#[test]
fn pppoe_session() {
    let ip6 = ipv6(58, &icmp(128, 0, b"ping"));
    let m = ok(linktype::ETHERNET, &eth(0x8864, &pppoe(0x0057, &ip6)));
    assert_eq!((m.ip_proto, m.sport, m.dport, m.payload_len, m.ip_len), (ip_proto::ICMPV6, 128, 0, 4, 52));
    let ip = ipv4(17, &udp(67, 68, b""));
    assert_eq!(ok(linktype::ETHERNET, &eth(0x8864, &pppoe(0x0021, &ip))).sport, 67);
    // LCP is not IP.
    assert_eq!(skip(linktype::ETHERNET, &eth(0x8864, &pppoe(0xc021, &[1, 2, 3, 4]))), SkipReason::NotIp);
}

#[test]
fn vntag_pbb_and_fabricpath() {
    let ip = ipv4(6, &tcp(40000, 80, tcp_flags::ACK, &[], b""));
    // VN-Tag: 4 bytes of tag, then the Ethertype.
    let f = eth(0x8926, &cat(&[&[0x80, 0x01, 0x00, 0x02], &0x0800u16.to_be_bytes(), &ip]));
    assert_v4_tcp(&ok(linktype::ETHERNET, &f));
    // PBB: I-TAG, customer MACs, customer Ethertype (here a VLAN tag).
    let inner = cat(&[&[0, 0, 0, 1], &[0xaa; 12], &0x8100u16.to_be_bytes(), &vlan_tag(42, 0x0800), &ip]);
    let m = ok(linktype::ETHERNET, &eth(0x88e7, &inner));
    assert_v4_tcp(&m);
    assert_eq!(m.vlan, 42);
    // FabricPath: a 16-byte outer header before a whole Ethernet header.
    let mut f = vec![0u8; 12];
    f.extend_from_slice(&0x8903u16.to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend(eth(0x0800, &ip));
    assert_v4_tcp(&ok(linktype::ETHERNET, &f));
}

#[test]
fn not_ip_and_truncated_link_headers() {
    // ARP and an 802.3 length field (LLC).
    assert_eq!(skip(linktype::ETHERNET, &eth(0x0806, &[0; 28])), SkipReason::NotIp);
    assert_eq!(skip(linktype::ETHERNET, &eth(46, &[0xaa, 0xaa, 3, 0, 0, 0, 8, 0])), SkipReason::NotIp);
    assert_eq!(skip(linktype::ETHERNET, &[0u8; 13]), SkipReason::Truncated);
    // Ethernet header complete, IP missing.
    assert_eq!(skip(linktype::ETHERNET, &eth(0x0800, &[])), SkipReason::Truncated);
    assert_eq!(skip(105, &[0u8; 64]), SkipReason::UnsupportedLinkType);
}

// ---- other link types -----------------------------------------------------

#[test]
fn linux_cooked_v1_and_v2() {
    let ip = ipv4(17, &udp(1111, 2222, b"12345"));
    let mut sll = vec![0, 0, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0];
    sll.extend_from_slice(&0x0800u16.to_be_bytes());
    let m = ok(linktype::LINUX_SLL, &cat(&[&sll, &ip]));
    assert_eq!((m.sport, m.dport, m.payload_len, m.ip_len), (1111, 2222, 5, 33));

    let ip6 = ipv6(6, &tcp(40000, 443, tcp_flags::SYN | tcp_flags::ACK, &[2, 4, 0x23, 0x28], &[]));
    let mut sll2 = 0x86ddu16.to_be_bytes().to_vec();
    sll2.extend_from_slice(&[0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0]);
    let m = ok(linktype::LINUX_SLL2, &cat(&[&sll2, &ip6]));
    assert_eq!((m.src, m.dst, m.dport, m.tcp.mss, m.ip_len), (Addr::v6(A6), Addr::v6(B6), 443, 9000, 64));
    assert_eq!(skip(linktype::LINUX_SLL2, &sll2[..19]), SkipReason::Truncated);
    assert_eq!(skip(linktype::LINUX_SLL, &sll[..15]), SkipReason::Truncated);
    let mut arp = sll.clone();
    arp[14..16].copy_from_slice(&0x0806u16.to_be_bytes());
    assert_eq!(skip(linktype::LINUX_SLL, &cat(&[&arp, &[0; 28]])), SkipReason::NotIp);
}

#[test]
fn raw_ip_link_types() {
    let v4 = ipv4(1, &icmp(8, 0, b"abc"));
    let v6 = ipv6(58, &icmp(129, 0, b""));
    for link in [linktype::RAW, linktype::RAW_12, linktype::RAW_14, linktype::IPV4] {
        let m = ok(link, &v4);
        assert_eq!((m.ip_proto, m.sport, m.dport, m.payload_len, m.ip_len), (ip_proto::ICMP, 8, 0, 3, 31));
    }
    for link in [linktype::RAW, linktype::RAW_12, linktype::IPV6] {
        let m = ok(link, &v6);
        assert_eq!((m.ip_proto, m.sport, m.payload_len), (ip_proto::ICMPV6, 129, 0));
    }
}

#[test]
fn bsd_null_and_loop() {
    let v4 = ipv4(17, &udp(1, 2, b""));
    let v6 = ipv6(17, &udp(1, 2, b""));
    // Host order little-endian, then big-endian, AF_INET = 2.
    assert_eq!(ok(linktype::NULL, &cat(&[&[2, 0, 0, 0], &v4])).src, Addr::v4(A4));
    assert_eq!(ok(linktype::NULL, &cat(&[&[0, 0, 0, 2], &v4])).src, Addr::v4(A4));
    for af in [24u32, 28, 30] {
        assert_eq!(ok(linktype::NULL, &cat(&[&af.to_le_bytes(), &v6])).src, Addr::v6(A6));
        assert_eq!(ok(linktype::NULL, &cat(&[&af.to_be_bytes(), &v6])).src, Addr::v6(A6));
    }
    // AF_APPLETALK (16) is not IP.
    assert_eq!(skip(linktype::NULL, &cat(&[&[16, 0, 0, 0], &v4])), SkipReason::NotIp);
    assert_eq!(skip(linktype::NULL, &[2, 0, 0]), SkipReason::Truncated);
    // LOOP is always network order.
    assert_eq!(ok(linktype::LOOP, &cat(&[&[0, 0, 0, 2], &v4])).dst, Addr::v4(B4));
    assert_eq!(skip(linktype::LOOP, &cat(&[&[2, 0, 0, 0], &v4])), SkipReason::NotIp);
}

#[test]
fn ppp_and_nflog() {
    let v4 = ipv4(17, &udp(1, 2, b"z"));
    assert_eq!(ok(linktype::PPP, &cat(&[&[0xff, 0x03, 0x00, 0x21], &v4])).payload_len, 1);
    assert_eq!(ok(linktype::PPP, &cat(&[&[0x00, 0x21], &v4])).payload_len, 1);
    assert_eq!(ok(linktype::PPP_HDLC, &cat(&[&[0xff, 0x03, 0x00, 0x21], &v4])).payload_len, 1);
    assert_eq!(skip(linktype::PPP, &cat(&[&[0xff, 0x03, 0xc0, 0x21], &[1, 1, 0, 4]])), SkipReason::NotIp);

    // NFLOG: header, a 5-byte prefix TLV (type 10, padded to 8), payload TLV.
    let mut f = vec![2, 0, 0, 1];
    f.extend_from_slice(&[5, 0, 10, 0, b'x', 0, 0, 0]);
    f.extend_from_slice(&((4 + v4.len()) as u16).to_le_bytes());
    f.extend_from_slice(&9u16.to_le_bytes());
    f.extend_from_slice(&v4);
    let m = ok(linktype::NFLOG, &f);
    assert_eq!((m.src, m.payload_len), (Addr::v4(A4), 1));
    let mut bad_version = f.clone();
    bad_version[1] = 1;
    assert_eq!(skip(linktype::NFLOG, &bad_version), SkipReason::UnsupportedEncapsulation);
    assert_eq!(skip(linktype::NFLOG, &f[..10]), SkipReason::Truncated);
    let mut zero_len = f.clone();
    zero_len[4] = 0;
    assert_eq!(skip(linktype::NFLOG, &zero_len), SkipReason::UnsupportedEncapsulation);
}

// ---- IPv4 -----------------------------------------------------------------

#[test]
fn ipv4_options_and_bad_headers() {
    // 8 bytes of options (NOPs, then EOL): ihl 7.
    let ip = ipv4_full(6, &[1, 1, 1, 1, 1, 1, 1, 0], 0, &tcp(40000, 80, tcp_flags::ACK, &[], b"data!"));
    let m = ok(linktype::RAW, &ip);
    assert_v4_tcp(&m);
    assert_eq!((m.ip_len, m.payload_len), (28 + 20 + 5, 5));

    let mut v5 = ip.clone();
    v5[0] = 0x55;
    assert_eq!(skip(linktype::RAW, &v5), SkipReason::BadIpHeader);
    let mut ihl4 = ip.clone();
    ihl4[0] = 0x44;
    assert_eq!(skip(linktype::RAW, &ihl4), SkipReason::BadIpHeader);
    // Total length 24 < header length 28.
    let mut short_total = ip.clone();
    short_total[2..4].copy_from_slice(&24u16.to_be_bytes());
    assert_eq!(skip(linktype::RAW, &short_total), SkipReason::BadIpHeader);
    // Options cut by the capture (22 of 28 header bytes).
    assert_eq!(skip_wire(linktype::RAW, &ip[..22], ip.len() as u32), SkipReason::Truncated);
    assert_eq!(skip(linktype::RAW, &ip[..19]), SkipReason::Truncated);
    assert_eq!(skip(linktype::RAW, &[]), SkipReason::Truncated);
}

#[test]
fn ipv4_length_versus_capture_and_wire() {
    let ip = ipv4(6, &tcp(40000, 80, tcp_flags::ACK, &[], &[0x55; 1000]));
    // Snaplen 96: header lengths are kept, the capture says what is present.
    let m = decode(linktype::RAW, &ip[..96], 1, ip.len() as u32, 0).unwrap();
    assert_eq!((m.ip_len, m.payload_len, m.payload_captured, m.cap_len), (1040, 1000, 56, 96));
    // The IP length claims more than the wire carried: malformed.
    assert_eq!(skip_wire(linktype::RAW, &ip[..96], 96), SkipReason::BadIpHeader);
    // TCP header cut by the capture: 10 of its 20 bytes.
    assert_eq!(skip_wire(linktype::RAW, &ip[..30], ip.len() as u32), SkipReason::Truncated);
}

#[test]
fn ipv4_total_length_zero_uses_the_capture() {
    // A TSO segment: total length 0, 20 + 20 + 3000 bytes captured.
    let mut ip = ipv4(6, &tcp(40000, 80, tcp_flags::ACK, &[], &[7; 3000]));
    ip[2..4].copy_from_slice(&[0, 0]);
    let f = eth(0x0800, &ip);
    let m = ok(linktype::ETHERNET, &f);
    assert_eq!((m.ip_len, m.payload_len, m.payload_captured), (3040, 3000, 3000));
}

#[test]
fn ipv4_fragments() {
    // First fragment (MF, offset 0) of a 3000-byte UDP datagram: the UDP
    // length covers the whole datagram, as Zeek counts it after reassembly.
    let mut dgram = udp(5000, 6000, &[1; 2992]);
    dgram.truncate(1480);
    let first = ipv4_full(17, &[], 0x2000, &dgram);
    let m = ok(linktype::RAW, &first);
    assert_eq!((m.sport, m.dport, m.ip_len, m.payload_len, m.payload_captured), (5000, 6000, 1500, 2992, 1472));
    // Later fragments.
    let later = ipv4_full(17, &[], 0x2000 | 185, &[1; 1480]);
    assert_eq!(skip(linktype::RAW, &later), SkipReason::IpFragment);
    let last = ipv4_full(17, &[], 370, &[1; 40]);
    assert_eq!(skip(linktype::RAW, &last), SkipReason::IpFragment);
    // A first fragment too short for the TCP header it starts.
    let tiny = ipv4_full(6, &[], 0x2000, &tcp(1, 2, 0, &[], &[])[..8]);
    assert_eq!(skip(linktype::RAW, &tiny), SkipReason::IpFragment);
    // Don't-fragment bit alone is not a fragment.
    assert_eq!(ok(linktype::RAW, &ipv4_full(17, &[], 0x4000, &udp(1, 2, b""))).sport, 1);
}

// ---- IPv6 -----------------------------------------------------------------

#[test]
fn ipv6_extension_headers() {
    // hop-by-hop -> routing -> destination options -> AH (16 bytes) -> TCP.
    let t = tcp(40000, 80, tcp_flags::ACK, &[], b"0123456789");
    let mut ah = vec![6, 2, 0, 0];
    ah.extend_from_slice(&[0; 12]);
    let chain = cat(&[&ext8(43), &ext8(60), &ext8(51), &ah, &t]);
    let m = ok(linktype::RAW, &ipv6(0, &chain));
    assert_eq!((m.ip_proto, m.sport, m.dport), (ip_proto::TCP, 40000, 80));
    assert_eq!((m.ip_len, m.payload_len), (40 + 24 + 16 + 30, 10));

    // First fragment (offset 0, M set) of a UDP datagram.
    let frag = [17, 0, 0x00, 0x01, 0, 0, 0, 9];
    let m = ok(linktype::RAW, &ipv6(44, &cat(&[&frag, &udp(53, 53, b"dns")])));
    assert_eq!((m.ip_proto, m.sport, m.payload_len), (ip_proto::UDP, 53, 3));
    // Offset 8 (in 8-byte units: 0x0008 << 3).
    let later = [17, 0, 0x00, 0x40, 0, 0, 0, 9];
    assert_eq!(skip(linktype::RAW, &ipv6(44, &cat(&[&later, &[0; 16]]))), SkipReason::IpFragment);

    // Nine extension headers.
    let mut long = Vec::new();
    for _ in 0..8 {
        long.extend(ext8(60));
    }
    long.extend(ext8(17));
    long.extend(udp(1, 2, b""));
    assert_eq!(skip(linktype::RAW, &ipv6(60, &long)), SkipReason::Ipv6ExtensionLimit);
    // Eight are fine.
    let eight = cat(&[&long[8..], &[]]);
    assert_eq!(ok(linktype::RAW, &ipv6(60, &eight)).ip_proto, ip_proto::UDP);

    // Payload length 0 (BIG TCP; a jumbogram's hop-by-hop header): the
    // capture gives the length, 40 + 8 + 20 + 100.
    let mut big = ipv6(0, &cat(&[&ext8(6), &tcp(1, 2, tcp_flags::ACK, &[], &[1; 100])]));
    big[4..6].copy_from_slice(&[0, 0]);
    let m = ok(linktype::RAW, &big);
    assert_eq!((m.ip_proto, m.ip_len, m.payload_len), (ip_proto::TCP, 168, 100));
    // An extension header longer than the payload length says.
    let mut short = ipv6(0, &cat(&[&ext8(6), &tcp(1, 2, 0, &[], &[])]));
    short[4..6].copy_from_slice(&4u16.to_be_bytes());
    assert_eq!(skip(linktype::RAW, &short), SkipReason::BadIpHeader);
    // One cut by the capture.
    let p = ipv6(0, &cat(&[&ext8(6), &tcp(1, 2, 0, &[], &[])]));
    assert_eq!(skip_wire(linktype::RAW, &p[..44], p.len() as u32), SkipReason::Truncated);
    assert_eq!(skip(linktype::RAW, &p[..39]), SkipReason::Truncated);
    // Payload length beyond the wire.
    assert_eq!(skip_wire(linktype::RAW, &p[..60], 60), SkipReason::BadIpHeader);
}

#[test]
fn ipv6_other_protocols_have_no_ports() {
    // ESP: 40-byte fixed header, 24 bytes of ESP.
    let m = ok(linktype::RAW, &ipv6(50, &[9; 24]));
    assert_eq!((m.ip_proto, m.sport, m.dport, m.payload_len, m.ip_len), (50, 0, 0, 24, 64));
    // GRE over IPv4.
    let m = ok(linktype::RAW, &ipv4(47, &[0; 30]));
    assert_eq!((m.ip_proto, m.sport, m.dport, m.payload_len), (47, 0, 0, 30));
}

// ---- transport ------------------------------------------------------------

#[test]
fn tcp_bad_headers_and_options() {
    let good = tcp(40000, 80, tcp_flags::ACK, &[], b"abc");
    let mut doff4 = good.clone();
    doff4[12] = 4 << 4;
    assert_eq!(skip(linktype::RAW, &ipv4(6, &doff4)), SkipReason::BadTcpHeader);
    // Data offset 15 (60 bytes) beyond a 23-byte segment.
    let mut doff15 = good.clone();
    doff15[12] = 15 << 4;
    assert_eq!(skip(linktype::RAW, &ipv4(6, &doff15)), SkipReason::BadTcpHeader);
    // IP length leaves 12 bytes for TCP.
    assert_eq!(skip(linktype::RAW, &ipv4(6, &good[..12])), SkipReason::BadTcpHeader);

    // Options cut by the snaplen: what was captured is parsed, the header
    // lengths still count.
    let full = ipv4(6, &tcp(40000, 80, tcp_flags::SYN, &syn_options(), &[]));
    let m = decode(linktype::RAW, &full[..46], 0, full.len() as u32, 0).unwrap();
    assert_eq!((m.tcp.mss, m.tcp.wscale, m.tcp.sack_permitted, m.tcp.header_len), (1460, None, false, 44));
    // Malformed option lengths (0, then past the header) end the parse.
    let m = ok(linktype::RAW, &ipv4(6, &tcp(1, 2, tcp_flags::SYN, &[3, 3, 5, 8, 0, 2, 4, 0x05, 0xb4], &[])));
    assert_eq!((m.tcp.wscale, m.tcp.mss), (Some(5), 0));
    let m = ok(linktype::RAW, &ipv4(6, &tcp(1, 2, tcp_flags::SYN, &[1, 1, 2, 40, 5, 0xb4], &[])));
    assert_eq!(m.tcp.mss, 0);
    // Options after EOL are ignored.
    let m = ok(linktype::RAW, &ipv4(6, &tcp(1, 2, tcp_flags::SYN, &[0, 3, 3, 5], &[])));
    assert_eq!(m.tcp.wscale, None);
    // All eight flag bits are carried.
    let m = ok(linktype::RAW, &ipv4(6, &tcp(1, 2, 0xff, &[], &[])));
    assert_eq!(m.tcp.flags, 0xff);
}

#[test]
fn udp_lengths() {
    let good = udp(1000, 2000, b"hello");
    let m = ok(linktype::RAW, &ipv4(17, &good));
    assert_eq!((m.payload_len, m.payload_captured), (5, 5));
    let mut short = good.clone();
    short[4..6].copy_from_slice(&7u16.to_be_bytes());
    assert_eq!(skip(linktype::RAW, &ipv4(17, &short)), SkipReason::BadUdpHeader);
    let mut long = good.clone();
    long[4..6].copy_from_slice(&14u16.to_be_bytes());
    assert_eq!(skip(linktype::RAW, &ipv4(17, &long)), SkipReason::BadUdpHeader);
    // A UDP length shorter than the IP payload: Zeek counts the UDP length.
    let mut inner = good.clone();
    inner[4..6].copy_from_slice(&10u16.to_be_bytes());
    assert_eq!(ok(linktype::RAW, &ipv4(17, &inner)).payload_len, 2);
    assert_eq!(skip(linktype::RAW, &ipv4(17, &good[..6])), SkipReason::BadUdpHeader);
    assert_eq!(skip_wire(linktype::RAW, &ipv4(17, &good)[..25], 33), SkipReason::Truncated);
}

#[test]
fn icmp_type_and_code_as_ports() {
    let m = ok(linktype::RAW, &ipv4(1, &icmp(3, 3, &[0; 28])));
    assert_eq!((m.sport, m.dport, m.payload_len, m.ip_len), (3, 3, 28, 56));
    assert_eq!(skip(linktype::RAW, &ipv4(1, &[8, 0, 0, 0])), SkipReason::Truncated);
    let p = ipv4(1, &icmp(8, 0, b""));
    assert_eq!(skip_wire(linktype::RAW, &p[..24], 28), SkipReason::Truncated);
}

/// One frame per reason, so a reason no input can produce fails here.
#[test]
fn every_skip_reason_is_reachable() {
    let cases: [(u32, Vec<u8>, SkipReason); 9] = [
        (linktype::RAW, vec![0x45], SkipReason::Truncated),
        (147, vec![0; 40], SkipReason::UnsupportedLinkType),
        (linktype::ETHERNET, eth(0x88cc, &[0; 40]), SkipReason::NotIp),
        (
            linktype::RAW,
            ipv4(6, &[0; 20]).iter().enumerate().map(|(i, &b)| if i == 0 { 0x35 } else { b }).collect(),
            SkipReason::BadIpHeader,
        ),
        (linktype::RAW, ipv4(6, &[0; 20]), SkipReason::BadTcpHeader),
        (linktype::RAW, ipv4(17, &[0; 8]), SkipReason::BadUdpHeader),
        (linktype::RAW, ipv4_full(17, &[], 1, &[0; 8]), SkipReason::IpFragment),
        (
            linktype::RAW,
            ipv6(
                60,
                &[ext8(60), ext8(60), ext8(60), ext8(60), ext8(60), ext8(60), ext8(60), ext8(60), ext8(59)].concat(),
            ),
            SkipReason::Ipv6ExtensionLimit,
        ),
        (linktype::ETHERNET, eth(0x8847, &[0, 1, 1, 64, 0, 0, 0, 0]), SkipReason::UnsupportedEncapsulation),
    ];
    let mut reasons = BTreeSet::new();
    for (link, f, want) in cases {
        assert_eq!(skip(link, &f), want);
        reasons.insert(want);
    }
    assert_eq!(reasons.len(), SkipReason::ALL.len());
}
