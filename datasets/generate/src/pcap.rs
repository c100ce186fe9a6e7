//! Classic pcap (microsecond, little-endian, LINKTYPE_ETHERNET) frames for
//! the model's packets, rendered by the project's pcap writer
//! (`tracelab_pcap::write`). Payload bytes are zeros (but a DNS message's id
//! and flags); the IPv4, TCP and UDP checksums are those of the full packet
//! with that payload, so tools that verify them agree even though the
//! capture is cut at `snaplen`.

use std::io::{self, Write};

use tracelab_pcap::write::{Ipv4Frame, PcapWriter as FileWriter, Resolution, Transport, LINKTYPE_ETHERNET};

use crate::model::{Conn, Pkt, SYN, TCP};

/// A SYN's options: MSS 1460, NOP, window scale 7, SACK permitted, NOP, NOP.
const SYN_OPTIONS: [u8; 12] = [2, 4, 0x05, 0xb4, 1, 3, 3, 7, 4, 2, 1, 1];

pub struct PcapWriter<W: Write> {
    file: FileWriter<W>,
    snaplen: usize,
    frame: Vec<u8>,
}

impl<W: Write> PcapWriter<W> {
    pub fn new(w: W, snaplen: u32) -> io::Result<Self> {
        let file = FileWriter::new(w, Resolution::Micro, snaplen, LINKTYPE_ETHERNET)?;
        Ok(PcapWriter {
            file,
            snaplen: snaplen as usize,
            frame: Vec::new(),
        })
    }

    pub fn write(&mut self, c: &mut Conn, p: &Pkt) -> io::Result<()> {
        let side = usize::from(!p.from_client);
        let (src, dst, sport, dport) = if p.from_client {
            (c.client, c.server, c.cport, c.sport)
        } else {
            (c.server, c.client, c.sport, c.cport)
        };
        let transport = if c.proto == TCP {
            let options: &[u8] = if p.flags & SYN != 0 { &SYN_OPTIONS } else { &[] };
            Transport::Tcp {
                seq: p.seq,
                ack: p.ack,
                flags: p.flags,
                window: p.win,
                options,
            }
        } else {
            Transport::Udp
        };
        // A DNS header's id, and flags "query, recursion desired" or
        // "response, no error", so DNS dissectors see distinct, well-formed
        // messages.
        let flags: u16 = if p.from_client { 0x0100 } else { 0x8180 };
        let id = (p.seq as u16).to_be_bytes();
        let dns = [id[0], id[1], (flags >> 8) as u8, flags as u8];
        let payload_head: &[u8] = if c.proto != TCP && p.len >= 12 { &dns } else { &[] };
        let frame = Ipv4Frame {
            src,
            dst,
            sport,
            dport,
            ttl: c.ttl[side],
            ip_id: c.ip_id[side],
            transport,
            payload_len: usize::from(p.len),
            payload_head,
        };
        c.ip_id[side] = c.ip_id[side].wrapping_add(1);
        frame.render(self.snaplen, &mut self.frame);
        self.file.write_record(p.ts, &self.frame, frame.wire_len() as u32)
    }

    pub fn into_inner(self) -> W {
        self.file.into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{End, Kind, ACK};
    use tracelab_pcap::write::{internet_checksum, Checksum};

    /// The transport checksum over pseudo-header and segment: 0 when the
    /// segment's checksum field is right.
    fn transport_sum(f: &[u8], proto: u8) -> u16 {
        let segment = &f[34..];
        Checksum::new()
            .add_bytes(&f[26..34])
            .add_word(proto.into())
            .add_word(segment.len() as u16)
            .add_bytes(segment)
            .finish()
    }

    fn conn() -> Conn {
        Conn {
            client: [10, 1, 0, 1],
            server: [93, 184, 216, 34],
            cport: 40000,
            sport: 80,
            proto: TCP,
            kind: Kind::LcRs,
            end: End::ClientFin,
            ttl: [63, 52],
            ip_id: [7, 9],
            pkts: Vec::new(),
            retransmissions: 0,
        }
    }

    #[test]
    fn syn_frame_matches_a_hand_built_one() {
        let mut c = conn();
        let p = Pkt {
            ts: 1_700_000_000_123_456_789,
            from_client: true,
            flags: SYN,
            seq: 1,
            ack: 0,
            len: 0,
            win: 64240,
        };
        let mut w = PcapWriter::new(Vec::new(), 96).unwrap();
        w.write(&mut c, &p).unwrap();
        let out = w.into_inner();
        assert_eq!(&out[..4], &[0xd4, 0xc3, 0xb2, 0xa1]);
        let rec = &out[24..40];
        assert_eq!(u32::from_le_bytes(rec[0..4].try_into().unwrap()), 1_700_000_000);
        assert_eq!(u32::from_le_bytes(rec[4..8].try_into().unwrap()), 123_456);
        assert_eq!(u32::from_le_bytes(rec[8..12].try_into().unwrap()), 66); // 14 + 20 + 32
        let f = &out[40..];
        assert_eq!(f.len(), 66);
        // IPv4 header: total length 52, id 7, DF, TTL 63, TCP.
        assert_eq!(&f[14..24], &[0x45, 0, 0, 52, 0, 7, 0x40, 0, 63, 6]);
        // A correct header checksum sums (with itself) to 0xffff.
        assert_eq!(internet_checksum(&f[14..34]), 0);
        // TCP pseudo-header check over the whole segment (no payload).
        assert_eq!(transport_sum(f, 6), 0);
        assert_eq!(f[34 + 12], 8 << 4);
        assert_eq!(f[34 + 13], SYN);
        assert_eq!(c.ip_id[0], 8, "the client's IP id advanced");
    }

    #[test]
    fn data_frame_is_cut_at_snaplen_and_small_frames_are_padded() {
        let mut c = conn();
        let data = Pkt {
            ts: 0,
            from_client: false,
            flags: ACK,
            seq: 5,
            ack: 2,
            len: 1460,
            win: 502,
        };
        let ack = Pkt {
            len: 0,
            from_client: true,
            ..data
        };
        let mut w = PcapWriter::new(Vec::new(), 96).unwrap();
        w.write(&mut c, &data).unwrap();
        w.write(&mut c, &ack).unwrap();
        let out = w.into_inner();
        let r1 = &out[24..40];
        assert_eq!(u32::from_le_bytes(r1[8..12].try_into().unwrap()), 96);
        assert_eq!(u32::from_le_bytes(r1[12..16].try_into().unwrap()), 1514);
        let r2 = &out[24 + 16 + 96..24 + 32 + 96];
        assert_eq!(u32::from_le_bytes(r2[8..12].try_into().unwrap()), 60);
        assert_eq!(u32::from_le_bytes(r2[12..16].try_into().unwrap()), 60);
        // Server to client: the server's address is the IP source.
        assert_eq!(&out[40 + 26..40 + 30], &[93, 184, 216, 34]);
    }

    #[test]
    fn dns_frame_is_whole_and_its_udp_checksum_verifies() {
        let mut c = Conn {
            proto: crate::model::UDP,
            sport: 53,
            kind: Kind::Dns,
            end: End::Datagram,
            ..conn()
        };
        let q = Pkt {
            ts: 0,
            from_client: true,
            flags: 0,
            seq: 0xbeef,
            ack: 0,
            len: 35,
            win: 0,
        };
        let mut w = PcapWriter::new(Vec::new(), 96).unwrap();
        w.write(&mut c, &q).unwrap();
        let f = &w.into_inner()[40..];
        assert_eq!(f.len(), 14 + 20 + 8 + 35);
        assert_eq!(&f[42..46], &[0xbe, 0xef, 0x01, 0x00]);
        assert_eq!(transport_sum(f, 17), 0);
    }
}
