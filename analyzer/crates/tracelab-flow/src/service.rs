//! Service detection by payload, with Zeek's service names (conn.log
//! `service`). Pure functions, no state: [`clues`] reads the first bytes of
//! one payload and says which protocol messages they can start;
//! [`confirm`] names a connection's service from the clues of each side,
//! the way a Zeek analyzer confirms its protocol. The tracker keeps the
//! clues of the first [`LOOK_PKTS`] payload packets per direction (a few
//! bytes per connection) and calls [`confirm`] once, when the connection
//! ends.
//!
//! Limits (Suricata style, explicit and fuzzed in analyzer/fuzz):
//! * a parser reads at most the [`PAYLOAD_HEAD`] bytes the decoder keeps
//!   of each payload, plus the payload's length from the headers;
//! * nothing is reassembled: a message that starts mid-segment, or whose
//!   signature lies beyond [`PAYLOAD_HEAD`], is not seen.
//!
//! What names a service (Zeek: the analyzer's `AnalyzerConfirmation`):
//! * TCP protocols by payload on any port (Zeek finds them by port or by
//!   its DPD signatures), both sides having spoken: `http` a request line
//!   from the originator and a status line from the responder (HTTP.cc
//!   confirms on a reply to a request); `ssl` a TLS ClientHello and a
//!   ServerHello record; `ssh` version banners from both sides; `smtp`
//!   EHLO/HELO and a numeric reply; `ftp` an FTP command and a numeric
//!   reply; `pop3` a command and `+OK`; `imap` a tagged command and
//!   `* OK`; `irc` NICK (or CAP) and a server message. Not for a TCP
//!   connection picked up mid-stream (neither SYN nor SYN/ACK seen): Zeek
//!   names none there (wikipedia.pcap's 35634 > 80, an HTTP exchange
//!   without handshake, has service `-`).
//! * UDP protocols without a DPD signature in Zeek (`dns`, `ntp`, `dhcp`,
//!   `sip`), which Zeek attaches only on their registered ports: on those
//!   ports, and only when a message from either side parses (`dns` also
//!   over TCP port 53, after the 2-byte length).
//!
//! A connection gets at most one service: the first of [`confirm`]'s order
//! that matches (Zeek would list two analyzers that both confirmed, e.g.
//! "ssl,http" for HTTP inside TLS it decrypted, which payload-prefix
//! detection cannot see).

use tracelab_decode::{ip_proto, PAYLOAD_HEAD};

/// Payload packets read per direction of a connection.
pub const LOOK_PKTS: u8 = 4;

/// What a payload's first bytes can start, as bits.
pub mod clue {
    pub const HTTP_REQUEST: u32 = 1 << 0;
    pub const HTTP_REPLY: u32 = 1 << 1;
    pub const TLS_CLIENT_HELLO: u32 = 1 << 2;
    pub const TLS_SERVER_HELLO: u32 = 1 << 3;
    pub const SSH_BANNER: u32 = 1 << 4;
    /// "220 " / "331-": an FTP or SMTP reply.
    pub const NUMERIC_REPLY: u32 = 1 << 5;
    pub const SMTP_HELO: u32 = 1 << 6;
    /// USER, PASS, AUTH, FEAT, SYST, OPTS: FTP's opening commands (USER
    /// and AUTH also open POP3).
    pub const FTP_COMMAND: u32 = 1 << 7;
    /// CAPA, APOP, STLS (with USER and AUTH above).
    pub const POP3_COMMAND: u32 = 1 << 8;
    pub const POP3_OK: u32 = 1 << 9;
    pub const IMAP_GREETING: u32 = 1 << 10;
    pub const IMAP_COMMAND: u32 = 1 << 11;
    /// NICK, or IRCv3's capability negotiation ("CAP LS") that precedes it.
    pub const IRC_CLIENT: u32 = 1 << 12;
    /// ":server 001 ...", "NOTICE ...", "PING ...".
    pub const IRC_SERVER: u32 = 1 << 13;
    pub const DNS: u32 = 1 << 14;
    pub const NTP: u32 = 1 << 15;
    pub const DHCP: u32 = 1 << 16;
    pub const SIP: u32 = 1 << 17;
}

/// The services detected, with Zeek's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Service {
    Dhcp,
    Dns,
    Ftp,
    Http,
    Imap,
    Irc,
    Ntp,
    Pop3,
    Sip,
    Smtp,
    Ssh,
    Ssl,
}

impl Service {
    /// Zeek's analyzer name, as conn.log writes it.
    pub fn name(self) -> &'static str {
        match self {
            Service::Dhcp => "dhcp",
            Service::Dns => "dns",
            Service::Ftp => "ftp",
            Service::Http => "http",
            Service::Imap => "imap",
            Service::Irc => "irc",
            Service::Ntp => "ntp",
            Service::Pop3 => "pop3",
            Service::Sip => "sip",
            Service::Smtp => "smtp",
            Service::Ssh => "ssh",
            Service::Ssl => "ssl",
        }
    }
}

/// The service the clues of the originator's and the responder's first
/// payloads confirm, if any.
pub fn confirm(orig: u32, resp: u32) -> Option<Service> {
    use clue::*;
    let both = orig | resp;
    let rules: [(bool, Service); 12] = [
        (orig & TLS_CLIENT_HELLO != 0 && resp & TLS_SERVER_HELLO != 0, Service::Ssl),
        (orig & HTTP_REQUEST != 0 && resp & HTTP_REPLY != 0, Service::Http),
        (orig & SSH_BANNER != 0 && resp & SSH_BANNER != 0, Service::Ssh),
        (both & DNS != 0, Service::Dns),
        (orig & SMTP_HELO != 0 && resp & NUMERIC_REPLY != 0, Service::Smtp),
        (orig & (FTP_COMMAND | POP3_COMMAND) != 0 && resp & POP3_OK != 0, Service::Pop3),
        (orig & IMAP_COMMAND != 0 && resp & IMAP_GREETING != 0, Service::Imap),
        (orig & FTP_COMMAND != 0 && resp & NUMERIC_REPLY != 0, Service::Ftp),
        (orig & IRC_CLIENT != 0 && resp & IRC_SERVER != 0, Service::Irc),
        (both & NTP != 0, Service::Ntp),
        (both & DHCP != 0, Service::Dhcp),
        (both & SIP != 0, Service::Sip),
    ];
    rules.iter().find(|(hit, _)| *hit).map(|&(_, s)| s)
}

/// What the first bytes `head` of one payload of `len` bytes (from the
/// headers; `head` holds at most [`PAYLOAD_HEAD`] of them) can start, for
/// a packet of `proto` between ports `sport` and `dport`. Direction-free:
/// [`confirm`] decides which side must have said what.
pub fn clues(proto: u8, sport: u16, dport: u16, head: &[u8], len: u32) -> u32 {
    let head = &head[..head.len().min(PAYLOAD_HEAD).min(len as usize)];
    let on = |ports: &[u16]| ports.contains(&sport) || ports.contains(&dport);
    match proto {
        ip_proto::TCP => {
            let mut c = stream_clues(head);
            if on(&[53]) && head.len() >= 2 {
                // DNS over TCP: a 2-byte length, then the message.
                let msg_len = u32::from(u16::from_be_bytes([head[0], head[1]]));
                if is_dns(&head[2..], msg_len) {
                    c |= clue::DNS;
                }
            }
            c
        }
        ip_proto::UDP => {
            if on(&[53, 137, 5353, 5355]) && is_dns(head, len) {
                clue::DNS
            } else if on(&[123]) && is_ntp(head, len) {
                clue::NTP
            } else if on(&[67, 68]) && is_dhcp(head, len) {
                clue::DHCP
            } else if on(&[5060]) && is_sip(head) {
                clue::SIP
            } else {
                0
            }
        }
        _ => 0,
    }
}

/// `head` starts with `word` (ASCII letters compared case-insensitively).
fn starts_with_ci(head: &[u8], word: &[u8]) -> bool {
    head.len() >= word.len() && head[..word.len()].eq_ignore_ascii_case(word)
}

fn digit(b: Option<&u8>) -> bool {
    b.is_some_and(u8::is_ascii_digit)
}

/// Clues of the text and TLS protocols over TCP. The first byte picks the
/// candidates, so a data segment costs a lookup or two.
fn stream_clues(h: &[u8]) -> u32 {
    use clue::*;
    let Some(&first) = h.first() else { return 0 };
    match first {
        0x16 => tls_clues(h),
        b'1'..=b'5' if h.len() >= 4 && h[..3].iter().all(u8::is_ascii_digit) && matches!(h[3], b' ' | b'-') => {
            NUMERIC_REPLY
        }
        b'+' if h.starts_with(b"+OK") => POP3_OK,
        b'*' if h.starts_with(b"* OK") || h.starts_with(b"* PREAUTH") => IMAP_GREETING,
        b':' if h.get(1).is_some_and(|b| b.is_ascii_graphic()) => IRC_SERVER,
        b'A'..=b'Z' | b'a'..=b'z' => text_clues(h),
        _ => 0,
    }
}

/// Methods of Zeek's HTTP request signature (base/protocols/http/dpd.sig).
const HTTP_METHODS: &[&[u8]] = &[
    b"GET",
    b"HEAD",
    b"POST",
    b"PUT",
    b"DELETE",
    b"OPTIONS",
    b"TRACE",
    b"CONNECT",
    b"PATCH",
    b"PROPFIND",
    b"PROPPATCH",
    b"MKCOL",
    b"COPY",
    b"MOVE",
    b"LOCK",
    b"UNLOCK",
    b"SEARCH",
    b"REPORT",
];

/// A line starting with a letter: HTTP, SSH, SMTP, FTP, POP3, IMAP, IRC.
fn text_clues(h: &[u8]) -> u32 {
    use clue::*;
    let mut c = 0;
    // "METHOD SP request-target": an upper-case method, one space, then
    // the start of a target (not a space or a control byte).
    if let Some(sp) = h.iter().take(11).position(|&b| b == b' ') {
        let target = h.get(sp + 1).is_some_and(|b| b.is_ascii_graphic());
        if target && HTTP_METHODS.contains(&&h[..sp]) {
            c |= HTTP_REQUEST;
        }
    }
    // "HTTP/1.1 200"
    if h.starts_with(b"HTTP/")
        && digit(h.get(5))
        && h.get(6) == Some(&b'.')
        && digit(h.get(7))
        && h.get(8) == Some(&b' ')
        && (9..12).all(|i| digit(h.get(i)))
    {
        c |= HTTP_REPLY;
    }
    // "SSH-2.0-", "SSH-1.99-"
    if h.starts_with(b"SSH-") && digit(h.get(4)) && h.get(5) == Some(&b'.') && digit(h.get(6)) {
        c |= SSH_BANNER;
    }
    // Commands: a keyword, then a space or the end of the line.
    let command = |word: &[u8]| starts_with_ci(h, word) && matches!(h.get(word.len()), Some(b' ' | b'\r' | b'\n'));
    if command(b"EHLO") || command(b"HELO") {
        c |= SMTP_HELO;
    }
    if [&b"USER"[..], b"PASS", b"AUTH", b"FEAT", b"SYST", b"OPTS"].iter().any(|w| command(w)) {
        c |= FTP_COMMAND;
    }
    if [&b"CAPA"[..], b"APOP", b"STLS"].iter().any(|w| command(w)) {
        c |= POP3_COMMAND;
    }
    if command(b"NICK") || starts_with_ci(h, b"CAP LS") || starts_with_ci(h, b"CAP REQ") {
        c |= IRC_CLIENT;
    }
    if command(b"NOTICE") || command(b"PING") {
        c |= IRC_SERVER;
    }
    c | imap_command(h)
}

/// "a001 LOGIN ...": a tag of letters, digits or dots, a space, then a
/// command IMAP clients open with.
fn imap_command(h: &[u8]) -> u32 {
    let Some(sp) = h.iter().take(17).position(|&b| b == b' ') else { return 0 };
    if sp == 0 || !h[..sp].iter().all(|&b| b.is_ascii_alphanumeric() || b == b'.') {
        return 0;
    }
    let rest = &h[sp + 1..];
    let opening = [&b"CAPABILITY"[..], b"LOGIN ", b"AUTHENTICATE ", b"STARTTLS", b"ID ", b"NOOP"];
    if opening.iter().any(|w| starts_with_ci(rest, w)) {
        clue::IMAP_COMMAND
    } else {
        0
    }
}

/// A TLS handshake record (content type 22, version 3.x) whose first
/// message is a ClientHello (1) or ServerHello (2) of version 3.x.
fn tls_clues(h: &[u8]) -> u32 {
    let &[0x16, 3, minor, l0, l1, kind, _, _, _, 3, hello_minor, ..] = h else { return 0 };
    let record_len = u16::from_be_bytes([l0, l1]);
    // A record holds at most 2^14 bytes plus expansion (RFC 8446 §5.2).
    if minor > 4 || hello_minor > 4 || !(4..=16384 + 2048).contains(&record_len) {
        return 0;
    }
    match kind {
        1 => clue::TLS_CLIENT_HELLO,
        2 => clue::TLS_SERVER_HELLO,
        _ => 0,
    }
}

/// A DNS message of `len` bytes whose first bytes are `h`: header counts
/// that fit the message, a known opcode, and a question name well formed
/// as far as `h` shows it, then (when shown) its class.
pub fn is_dns(h: &[u8], len: u32) -> bool {
    let Some(hdr) = h.first_chunk::<12>() else { return false };
    if len < 12 {
        return false;
    }
    let count = |i: usize| u32::from(u16::from_be_bytes([hdr[i], hdr[i + 1]]));
    let (qd, an, ns, ar) = (count(4), count(6), count(8), count(10));
    let response = hdr[2] & 0x80 != 0;
    let opcode = (hdr[2] >> 3) & 0xf;
    // 0 query, 1 inverse, 2 status, 4 notify, 5 update; NetBIOS (port 137)
    // also uses 6-8 (release, WACK, refresh).
    if opcode == 3 || opcode > 8 {
        return false;
    }
    // Every record takes at least 5 (question) or 11 (resource) bytes.
    if qd > 64 || 12 + 5 * qd + 11 * (an + ns + ar) > len {
        return false;
    }
    if qd == 0 {
        // A response without the question (mDNS announcements).
        return response && an + ns + ar > 0;
    }
    let mut at = 12usize;
    let mut name_len = 0usize;
    loop {
        let Some(&label) = h.get(at) else {
            // The name runs beyond what the decoder kept: fine so far.
            return true;
        };
        if label == 0 {
            break;
        }
        // No compression pointer can precede the first name.
        if label > 63 {
            return false;
        }
        name_len += usize::from(label) + 1;
        at += usize::from(label) + 1;
        if name_len > 255 || at + 1 + 4 > len as usize {
            return false;
        }
    }
    if at + 5 > len as usize {
        return false;
    }
    match h.get(at + 3..at + 5) {
        // QCLASS: IN, CH, HS or ANY; mDNS sets the top bit (unicast response).
        Some(&[c0, c1]) => matches!(u16::from_be_bytes([c0, c1]) & 0x7fff, 1 | 3 | 4 | 255),
        _ => true,
    }
}

/// An NTP message (RFC 5905; modes 6 and 7 are the control and private
/// messages Zeek's analyzer also parses): version 1-4, a mode, the length
/// that mode needs.
pub fn is_ntp(h: &[u8], len: u32) -> bool {
    let Some(&b) = h.first() else { return false };
    let (version, mode) = ((b >> 3) & 7, b & 7);
    (1..=4).contains(&version)
        && match mode {
            1..=5 => len >= 48,
            6 | 7 => len >= 12,
            _ => false,
        }
}

/// A BOOTP/DHCP message (RFC 2131): request or reply, Ethernet addresses,
/// the fixed 236 bytes and the 4-byte magic cookie (which lies beyond
/// [`PAYLOAD_HEAD`], so only the length vouches for it).
pub fn is_dhcp(h: &[u8], len: u32) -> bool {
    matches!(h, [1 | 2, 1, 6, ..]) && len >= 240
}

/// SIP methods (RFC 3261 and its extensions).
const SIP_METHODS: &[&[u8]] = &[
    b"INVITE",
    b"ACK",
    b"BYE",
    b"CANCEL",
    b"OPTIONS",
    b"REGISTER",
    b"PRACK",
    b"SUBSCRIBE",
    b"NOTIFY",
    b"PUBLISH",
    b"INFO",
    b"REFER",
    b"MESSAGE",
    b"UPDATE",
];

/// A SIP request line ("INVITE sip:...") or status line ("SIP/2.0 200").
pub fn is_sip(h: &[u8]) -> bool {
    if h.starts_with(b"SIP/2.0 ") {
        return (8..11).all(|i| digit(h.get(i)));
    }
    let Some(sp) = h.iter().take(10).position(|&b| b == b' ') else { return false };
    let uri = &h[sp + 1..];
    SIP_METHODS.contains(&&h[..sp]) && (starts_with_ci(uri, b"sip:") || starts_with_ci(uri, b"sips:"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clue::*;

    const T: u8 = ip_proto::TCP;
    const U: u8 = ip_proto::UDP;

    fn tcp(h: &[u8]) -> u32 {
        clues(T, 40000, 8080, h, h.len() as u32)
    }

    fn head(b: &[u8]) -> Vec<u8> {
        b[..b.len().min(PAYLOAD_HEAD)].to_vec()
    }

    /// A DNS query for `name` (dotted), type A, class IN.
    fn dns_query(name: &str) -> Vec<u8> {
        let mut m = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        for l in name.split('.') {
            m.push(l.len() as u8);
            m.extend(l.as_bytes());
        }
        m.extend([0, 0, 1, 0, 1]);
        m
    }

    #[test]
    fn http_request_and_reply() {
        assert_eq!(tcp(b"GET /index.html HTTP/1.1\r\nHost: x\r\n"), HTTP_REQUEST);
        assert_eq!(tcp(b"POST /api HTTP/1.0\r\n"), HTTP_REQUEST);
        assert_eq!(tcp(b"HTTP/1.1 200 OK\r\n"), HTTP_REPLY);
        // Near misses: lower-case method, two spaces, an unknown method,
        // a status line without a code.
        assert_eq!(tcp(b"get / HTTP/1.1\r\n"), 0);
        assert_eq!(tcp(b"GET  / HTTP/1.1\r\n"), 0);
        assert_eq!(tcp(b"FETCH / HTTP/1.1\r\n"), 0);
        assert_eq!(tcp(b"HTTP/1.1 OK\r\n"), 0);
        assert_eq!(confirm(HTTP_REQUEST, HTTP_REPLY), Some(Service::Http));
        // A request nobody answered is not confirmed (Zeek: HTTP.cc
        // confirms on the reply to a request).
        assert_eq!(confirm(HTTP_REQUEST, 0), None);
        assert_eq!(confirm(HTTP_REPLY, HTTP_REQUEST), None);
    }

    #[test]
    fn tls_hellos() {
        // Record: handshake, TLS 1.0 record version, length 0x00c4; ClientHello
        // of length 0x0000c0, version 3.3.
        let ch = [0x16, 3, 1, 0, 0xc4, 1, 0, 0, 0xc0, 3, 3, 0xaa];
        let sh = [0x16, 3, 3, 0, 0x5a, 2, 0, 0, 0x56, 3, 3, 0xbb];
        assert_eq!(tcp(&ch), TLS_CLIENT_HELLO);
        assert_eq!(tcp(&sh), TLS_SERVER_HELLO);
        assert_eq!(confirm(TLS_CLIENT_HELLO, TLS_SERVER_HELLO), Some(Service::Ssl));
        // Near misses: an application-data record, version 2.x, a
        // certificate message first, an empty record, cut short.
        let mut m = ch;
        m[0] = 0x17;
        assert_eq!(tcp(&m), 0);
        let mut m = ch;
        m[1] = 2;
        assert_eq!(tcp(&m), 0);
        let mut m = sh;
        m[5] = 11;
        assert_eq!(tcp(&m), 0);
        let mut m = ch;
        m[4] = 0;
        assert_eq!(tcp(&m), 0);
        assert_eq!(tcp(&ch[..10]), 0);
    }

    #[test]
    fn ssh_banners() {
        assert_eq!(tcp(b"SSH-2.0-OpenSSH_9.6\r\n"), SSH_BANNER);
        assert_eq!(tcp(b"SSH-1.99-Cisco-1.25\r\n"), SSH_BANNER);
        assert_eq!(tcp(b"SSH-two-OpenSSH\r\n"), 0);
        assert_eq!(confirm(SSH_BANNER, SSH_BANNER), Some(Service::Ssh));
        assert_eq!(confirm(0, SSH_BANNER), None);
    }

    #[test]
    fn mail_and_file_transfer_dialogues() {
        assert_eq!(tcp(b"220 mail.example.com ESMTP\r\n"), NUMERIC_REPLY);
        assert_eq!(tcp(b"220-ftp.example.com\r\n"), NUMERIC_REPLY);
        assert_eq!(tcp(b"EHLO client\r\n"), SMTP_HELO);
        assert_eq!(tcp(b"helo client\r\n"), SMTP_HELO);
        assert_eq!(tcp(b"USER anonymous\r\n"), FTP_COMMAND);
        assert_eq!(tcp(b"CAPA\r\n"), POP3_COMMAND);
        assert_eq!(tcp(b"+OK POP3 ready\r\n"), POP3_OK);
        assert_eq!(tcp(b"* OK IMAP4rev1 ready\r\n"), IMAP_GREETING);
        assert_eq!(tcp(b"a001 LOGIN joe secret\r\n"), IMAP_COMMAND);
        assert_eq!(tcp(b"NICK joe\r\n"), IRC_CLIENT);
        assert_eq!(tcp(b"CAP LS 302\r\n"), IRC_CLIENT);
        assert_eq!(tcp(b":irc.example.net 001 joe :Welcome\r\n"), IRC_SERVER);
        // Near misses: a 6xx code, digits without a separator, a command
        // glued to its argument, a tag with a symbol.
        assert_eq!(tcp(b"600 nope\r\n"), 0);
        assert_eq!(tcp(b"2200\r\n"), 0);
        assert_eq!(tcp(b"USERjoe\r\n"), 0);
        assert_eq!(tcp(b"a#1 LOGIN joe x\r\n"), 0);
        assert_eq!(confirm(SMTP_HELO, NUMERIC_REPLY), Some(Service::Smtp));
        assert_eq!(confirm(FTP_COMMAND, NUMERIC_REPLY), Some(Service::Ftp));
        assert_eq!(confirm(FTP_COMMAND, POP3_OK), Some(Service::Pop3));
        assert_eq!(confirm(IMAP_COMMAND, IMAP_GREETING), Some(Service::Imap));
        assert_eq!(confirm(IRC_CLIENT, IRC_SERVER), Some(Service::Irc));
        // The server's greeting alone names nothing.
        assert_eq!(confirm(0, NUMERIC_REPLY), None);
    }

    #[test]
    fn dns_over_udp_and_tcp() {
        let q = dns_query("www.example.com");
        assert_eq!(clues(U, 53000, 53, &head(&q), q.len() as u32), DNS);
        assert_eq!(clues(U, 5353, 5353, &head(&q), q.len() as u32), DNS);
        // Not on a DNS port: Zeek would not attach its DNS analyzer.
        assert_eq!(clues(U, 53000, 5300, &head(&q), q.len() as u32), 0);
        // A long name runs past the head: still well formed so far.
        let long = dns_query("a-rather-long-label-for-a-host.example.org");
        assert_eq!(clues(U, 53000, 53, &head(&long), long.len() as u32), DNS);
        let mut t = (q.len() as u16).to_be_bytes().to_vec();
        t.extend(&q);
        assert_eq!(clues(T, 40000, 53, &head(&t), t.len() as u32), DNS);
        // An mDNS announcement: a response with answers and no question.
        let mut ann = vec![0, 0, 0x84, 0, 0, 0, 0, 1, 0, 0, 0, 0];
        ann.extend([0u8; 20]);
        assert_eq!(clues(U, 5353, 5353, &ann, ann.len() as u32), DNS);
        // Near misses: a label over 63, a compression pointer first, counts
        // the message cannot hold, opcode 3, a bad class, a query without
        // question, a message shorter than its header.
        let mut m = q.clone();
        m[12] = 64;
        assert_eq!(clues(U, 1, 53, &head(&m), m.len() as u32), 0);
        m[12] = 0xc0;
        assert_eq!(clues(U, 1, 53, &head(&m), m.len() as u32), 0);
        let mut m = q.clone();
        m[7] = 9;
        assert_eq!(clues(U, 1, 53, &head(&m), m.len() as u32), 0);
        let mut m = q.clone();
        m[2] = 3 << 3;
        assert_eq!(clues(U, 1, 53, &head(&m), m.len() as u32), 0);
        let short = dns_query("a.b");
        let mut m = short.clone();
        let n = m.len();
        m[n - 1] = 9;
        assert_eq!(clues(U, 1, 53, &m, m.len() as u32), 0);
        let mut m = short.clone();
        m[5] = 0;
        assert_eq!(clues(U, 1, 53, &m, m.len() as u32), 0);
        assert_eq!(clues(U, 1, 53, &short[..11], 11), 0);
        assert_eq!(confirm(0, DNS), Some(Service::Dns));
    }

    #[test]
    fn ntp_dhcp_sip() {
        let mut ntp = [0u8; 48];
        ntp[0] = 0x23; // version 4, mode 3 (client)
        assert_eq!(clues(U, 123, 123, &ntp[..32], 48), NTP);
        assert_eq!(clues(U, 123, 123, &ntp[..32], 40), 0);
        ntp[0] = 0x03; // version 0
        assert_eq!(clues(U, 123, 123, &ntp[..32], 48), 0);
        ntp[0] = 0x20; // mode 0
        assert_eq!(clues(U, 123, 123, &ntp[..32], 48), 0);
        let mut dhcp = [0u8; 32];
        dhcp[..3].copy_from_slice(&[1, 1, 6]);
        assert_eq!(clues(U, 68, 67, &dhcp, 300), DHCP);
        assert_eq!(clues(U, 68, 67, &dhcp, 200), 0);
        dhcp[2] = 8;
        assert_eq!(clues(U, 68, 67, &dhcp, 300), 0);
        assert_eq!(clues(U, 5060, 5060, b"INVITE sip:bob@example.com SIP/2.0", 300), SIP);
        assert_eq!(clues(U, 5060, 5060, b"SIP/2.0 180 Ringing\r\n", 300), SIP);
        assert_eq!(clues(U, 5060, 5060, b"INVITE http://x SIP/2.0", 300), 0);
        assert_eq!(clues(U, 5060, 5061, b"SIP/2.0 18 Ringing\r\n", 300), 0);
        assert_eq!(confirm(NTP, 0), Some(Service::Ntp));
    }

    /// Payload beyond the length the headers give is ignored (Ethernet
    /// padding is not payload).
    #[test]
    fn reads_no_further_than_the_payload() {
        assert_eq!(clues(T, 1, 2, b"GET / HTTP/1.1", 3), 0);
        assert_eq!(clues(T, 1, 2, b"", 0), 0);
        assert_eq!(clues(ip_proto::ICMP, 1, 2, b"GET / HTTP/1.1", 14), 0);
    }

    /// The question-count bound: 64 questions are read (the length allows
    /// them), 65 are not DNS.
    #[test]
    fn dns_question_count_bound_is_64() {
        for (qd, dns) in [(64u8, true), (65, false)] {
            let mut m = dns_query("a.b");
            m[5] = qd;
            let room = 12 + 5 * u32::from(qd);
            assert_eq!(is_dns(&m, room), dns, "qd {qd}");
        }
    }
}
