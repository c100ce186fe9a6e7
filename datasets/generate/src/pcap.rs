//! Classic pcap (microsecond, little-endian, LINKTYPE_ETHERNET) frames for
//! the model's packets. Payload bytes are zeros (but a DNS message's id and
//! flags); the IPv4, TCP and UDP checksums are those of the full packet
//! with that payload, so tools that verify them agree even though the
//! capture is cut at `snaplen`.

use std::io::{self, Write};

use crate::model::{Conn, Pkt, TCP};

const ETH: usize = 14;
const IP: usize = 20;
/// Longest header stack written: Ethernet + IPv4 + TCP with SYN options.
const MAX_HDR: usize = ETH + IP + 32;
/// Frames shorter than this are padded on the wire (Ethernet minimum
/// without the FCS), as a capture of received frames shows them.
const ETH_MIN: usize = 60;

pub struct PcapWriter<W: Write> {
    w: W,
    snaplen: usize,
    frame: Vec<u8>,
}

fn sum16(mut acc: u32, bytes: &[u8]) -> u32 {
    for c in bytes.chunks(2) {
        acc += u32::from(c[0]) << 8 | c.get(1).map_or(0, |&b| u32::from(b));
    }
    acc
}

fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

impl<W: Write> PcapWriter<W> {
    pub fn new(mut w: W, snaplen: u32) -> io::Result<Self> {
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        h.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        h.extend_from_slice(&snaplen.to_le_bytes());
        h.extend_from_slice(&1u32.to_le_bytes()); // LINKTYPE_ETHERNET
        w.write_all(&h)?;
        let snaplen = snaplen as usize;
        Ok(PcapWriter {
            w,
            snaplen,
            frame: vec![0; snaplen.max(MAX_HDR)],
        })
    }

    pub fn write(&mut self, c: &mut Conn, p: &Pkt) -> io::Result<()> {
        let side = usize::from(!p.from_client);
        let (src, dst, sport, dport) = if p.from_client {
            (c.client, c.server, c.cport, c.sport)
        } else {
            (c.server, c.client, c.sport, c.cport)
        };
        let l4 = if c.proto == TCP {
            if p.flags & crate::model::SYN != 0 {
                32
            } else {
                20
            }
        } else {
            8
        };
        let ip_len = IP + l4 + p.len as usize;
        let wire = (ETH + ip_len).max(ETH_MIN);
        let cap = wire.min(self.snaplen);
        let f = &mut self.frame;
        f[..MAX_HDR.max(cap)].fill(0); // the buffer holds max(snaplen, MAX_HDR)

        // Ethernet: locally administered MACs made from the IPv4 addresses.
        f[0..2].copy_from_slice(&[0x02, 0x00]);
        f[2..6].copy_from_slice(&dst);
        f[6..8].copy_from_slice(&[0x02, 0x00]);
        f[8..12].copy_from_slice(&src);
        f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());

        let ip = &mut f[ETH..ETH + IP];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&(ip_len as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&c.ip_id[side].to_be_bytes());
        c.ip_id[side] = c.ip_id[side].wrapping_add(1);
        ip[6] = 0x40; // DF
        ip[8] = c.ttl[side];
        ip[9] = c.proto;
        ip[12..16].copy_from_slice(&src);
        ip[16..20].copy_from_slice(&dst);
        let ck = fold(sum16(0, ip));
        ip[10..12].copy_from_slice(&ck.to_be_bytes());

        let l4_len = l4 + p.len as usize;
        let h = &mut f[ETH + IP..ETH + IP + l4];
        h[0..2].copy_from_slice(&sport.to_be_bytes());
        h[2..4].copy_from_slice(&dport.to_be_bytes());
        let ck_at = if c.proto == TCP {
            h[4..8].copy_from_slice(&p.seq.to_be_bytes());
            h[8..12].copy_from_slice(&p.ack.to_be_bytes());
            h[12] = ((l4 / 4) as u8) << 4;
            h[13] = p.flags;
            h[14..16].copy_from_slice(&p.win.to_be_bytes());
            if l4 == 32 {
                // MSS 1460, NOP, window scale 7, SACK permitted, NOP, NOP.
                h[20..32].copy_from_slice(&[2, 4, 0x05, 0xb4, 1, 3, 3, 7, 4, 2, 1, 1]);
            }
            16
        } else {
            h[4..6].copy_from_slice(&(l4_len as u16).to_be_bytes());
            6
        };
        // Pseudo-header + transport header + payload (zeros but for a DNS
        // header: id, and flags "query, recursion desired" or "response,
        // no error", so DNS dissectors see distinct, well-formed messages).
        let mut acc = sum16(0, &src);
        acc = sum16(acc, &dst);
        acc += u32::from(c.proto) + l4_len as u32;
        acc = sum16(acc, h);
        if c.proto != TCP && p.len >= 12 {
            let flags: u16 = if p.from_client { 0x0100 } else { 0x8180 };
            let dns = &mut f[ETH + IP + 8..ETH + IP + 12];
            dns[0..2].copy_from_slice(&(p.seq as u16).to_be_bytes());
            dns[2..4].copy_from_slice(&flags.to_be_bytes());
            acc = sum16(acc, dns);
        }
        let h = &mut f[ETH + IP..ETH + IP + l4];
        let mut ck = fold(acc);
        if c.proto != TCP && ck == 0 {
            ck = 0xffff; // UDP: 0 means "no checksum"
        }
        h[ck_at..ck_at + 2].copy_from_slice(&ck.to_be_bytes());

        let sec = p.ts.div_euclid(1_000_000_000);
        let usec = p.ts.rem_euclid(1_000_000_000) / 1_000;
        let mut rec = [0u8; 16];
        rec[0..4].copy_from_slice(&(sec as u32).to_le_bytes());
        rec[4..8].copy_from_slice(&(usec as u32).to_le_bytes());
        rec[8..12].copy_from_slice(&(cap as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&(wire as u32).to_le_bytes());
        self.w.write_all(&rec)?;
        self.w.write_all(&self.frame[..cap])
    }

    pub fn into_inner(self) -> W {
        self.w
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{End, Kind, ACK, SYN};

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
        assert_eq!(fold(sum16(0, &f[14..34])), 0);
        // TCP pseudo-header check over the whole segment (no payload).
        let mut acc = sum16(0, &f[26..34]);
        acc += 6 + 32;
        assert_eq!(fold(sum16(acc, &f[34..66])), 0);
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
        let mut acc = sum16(0, &f[26..34]);
        acc += 17 + 43;
        assert_eq!(fold(sum16(acc, &f[34..])), 0);
    }
}
