//! The testbed's frames: AFDX addressing (ARINC 664 Part 7) with the measurement in the payload.
//!
//! A frame of `F` bytes in the model (FCS included, 64..=1518) is sent as its first `F - 4`
//! bytes (veth and AF_PACKET carry no FCS), laid out as the simulator's pcapng trace does
//! (`rtnetlab_core::sim::pcap`), so the same Wireshark filters work on both:
//!
//! | bytes | field | value |
//! |---|---|---|
//! | 0..6 | destination MAC | `03:00:00:00:VV:VV`, VV:VV the frame id (the VL id) |
//! | 6..12 | source MAC | `02:00:00:NN:NN:PP`: node index, plane index |
//! | 12..14 | EtherType | `0x0800` |
//! | 14..34 | IPv4 | TOS = DSCP << 2 (DSCP: class index + 1, 0 without a class), identification = the host delay (below), TTL 1, UDP, `10.NN.NN.PP` → `224.224.VV.VV` |
//! | 34..42 | UDP | source port `0x2000 + plane`, destination port [`UDP_PORT`], checksum 0 |
//! | 42..50 | emission | when the source released the frame, `CLOCK_REALTIME` ns |
//! | 50..54 | frame number | the flow's frame counter; the top bit marks the idle baseline |
//! | 54..58 | start offset | ns from the emission to this copy's latency reference (its plane skew) |
//! | 58..F-5 | zeros | |
//! | F-5 | sequence number | ARINC 664's, 1..=255 then 1 again |
//!
//! The *host delay* in the IPv4 identification is the sum, in µs (saturating at 65535), of how
//! late each process that sent the frame was against its planned instant: the noise the host
//! added to this frame, which the receiver can take out of its latency.
//!
//! The smallest frame (64 B) has exactly the 17 payload bytes this needs. Every integer is big
//! endian. The sequence number sits after the IP datagram as in ARINC 664: IPv4 total length
//! `F - 19`, UDP length `F - 39`.

/// UDP destination port of every testbed frame ("RT").
pub const UDP_PORT: u16 = 0x5254;
/// UDP source ports: this plus the plane index.
pub const UDP_SOURCE_BASE: u16 = 0x2000;
/// The frame-number bit that marks frames of the idle baseline.
pub const BASELINE_BIT: u32 = 1 << 31;
/// Bytes not sent: the Ethernet FCS.
pub const FCS_BYTES: usize = 4;
/// The smallest and largest Ethernet frame, FCS included.
pub const MIN_FRAME: u32 = 64;
pub const MAX_FRAME: u32 = 1518;
/// Offset of the AFDX payload (after the UDP header).
const PAYLOAD: usize = 42;

/// What a testbed frame carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fields {
    /// 16-bit frame id (the VL id), in the destination MAC and IP.
    pub frame_id: u16,
    pub src_node: u16,
    pub plane: u8,
    /// Class index (DSCP), what kernel-mode ports classify on.
    pub class: u8,
    /// Frame size in the model, FCS included.
    pub frame_bytes: u32,
    pub emit_ns: u64,
    /// Frame number (the top bit: baseline).
    pub number: u32,
    pub start_offset_ns: u32,
    pub seq: u8,
}

/// Bytes sent for a frame of `frame_bytes` (FCS included).
pub fn sent_len(frame_bytes: u32) -> usize {
    frame_bytes.clamp(MIN_FRAME, MAX_FRAME) as usize - FCS_BYTES
}

fn ip_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header.chunks(2).map(|c| u16::from_be_bytes([c[0], c[1]]) as u32).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Writes the frame into `buf` (at least [`sent_len`] bytes) and returns the bytes to send.
pub fn encode<'a>(buf: &'a mut [u8], f: &Fields) -> &'a [u8] {
    let len = sent_len(f.frame_bytes);
    let frame_bytes = len + FCS_BYTES;
    let b = &mut buf[..len];
    b.fill(0);
    let id = f.frame_id.to_be_bytes();
    let node = f.src_node.to_be_bytes();
    b[0..6].copy_from_slice(&[0x03, 0, 0, 0, id[0], id[1]]);
    b[6..12].copy_from_slice(&[0x02, 0, 0, node[0], node[1], f.plane]);
    b[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip_len = (frame_bytes - 19) as u16;
    let ip = &mut b[14..34];
    ip[0] = 0x45;
    ip[1] = f.class << 2;
    ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
    ip[6] = 0x40; // don't fragment
    ip[8] = 1; // TTL
    ip[9] = 17; // UDP
    ip[12..16].copy_from_slice(&[10, node[0], node[1], f.plane]);
    ip[16..20].copy_from_slice(&[224, 224, id[0], id[1]]);
    let sum = ip_checksum(ip);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    let udp = &mut b[34..42];
    udp[0..2].copy_from_slice(&(UDP_SOURCE_BASE + f.plane as u16).to_be_bytes());
    udp[2..4].copy_from_slice(&UDP_PORT.to_be_bytes());
    udp[4..6].copy_from_slice(&((frame_bytes - 39) as u16).to_be_bytes());
    b[PAYLOAD..PAYLOAD + 8].copy_from_slice(&f.emit_ns.to_be_bytes());
    b[PAYLOAD + 8..PAYLOAD + 12].copy_from_slice(&f.number.to_be_bytes());
    b[PAYLOAD + 12..PAYLOAD + 16].copy_from_slice(&f.start_offset_ns.to_be_bytes());
    b[len - 1] = f.seq;
    &buf[..len]
}

/// Adds `late_ns` to the frame's host delay (IPv4 identification, µs) and mends the checksum.
pub fn add_host_delay(b: &mut [u8], late_ns: i64) {
    let us = u16::from_be_bytes([b[18], b[19]]) as i64 + (late_ns.max(0) + 500) / 1000;
    b[18..20].copy_from_slice(&(us.min(u16::MAX as i64) as u16).to_be_bytes());
    b[24..26].fill(0);
    let sum = ip_checksum(&b[14..34]);
    b[24..26].copy_from_slice(&sum.to_be_bytes());
}

/// Bits a received frame (sent without FCS) takes on the wire: FCS, preamble, SFD and gap added.
pub fn wire_bits_of(b: &[u8]) -> u32 {
    (b.len() + FCS_BYTES + 20) as u32 * 8
}

/// The host delay a frame accumulated, ns.
pub fn host_delay_ns(b: &[u8]) -> i64 {
    u16::from_be_bytes([b[18], b[19]]) as i64 * 1000
}

/// The frame id of a received frame, when it is a testbed frame (AFDX destination MAC, IPv4,
/// UDP to [`UDP_PORT`], long enough); what a switch reads.
pub fn frame_id(b: &[u8]) -> Option<u16> {
    if b.len() < sent_len(MIN_FRAME)
        || b[0..4] != [0x03, 0, 0, 0]
        || b[12..14] != [0x08, 0x00]
        || b[23] != 17
        || b[36..38] != UDP_PORT.to_be_bytes()
    {
        return None;
    }
    Some(u16::from_be_bytes([b[4], b[5]]))
}

/// Every field of a received testbed frame.
pub fn decode(b: &[u8]) -> Option<Fields> {
    let frame_id = frame_id(b)?;
    let u32_at = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().expect("4 bytes"));
    Some(Fields {
        frame_id,
        src_node: u16::from_be_bytes([b[9], b[10]]),
        plane: b[11],
        class: b[15] >> 2,
        frame_bytes: (b.len() + FCS_BYTES) as u32,
        emit_ns: u64::from_be_bytes(b[PAYLOAD..PAYLOAD + 8].try_into().expect("8 bytes")),
        number: u32_at(PAYLOAD + 8),
        start_offset_ns: u32_at(PAYLOAD + 12),
        seq: b[b.len() - 1],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_at_every_size_limit() {
        for bytes in [64u32, 65, 570, 1518] {
            let f = Fields {
                frame_id: 0xABCD,
                src_node: 0x0102,
                plane: 1,
                class: 5,
                frame_bytes: bytes,
                emit_ns: 1_700_000_000_123_456_789,
                number: BASELINE_BIT | 77,
                start_offset_ns: 500_000,
                seq: 78,
            };
            let mut buf = [0u8; 2048];
            let sent = encode(&mut buf, &f).to_vec();
            assert_eq!(sent.len(), bytes as usize - 4);
            assert_eq!(decode(&sent), Some(f));
            // The IPv4 header checks (its checksum over itself is 0) and the lengths are
            // ARINC 664's: IP total length F - 19, UDP length F - 39.
            assert_eq!(ip_checksum(&sent[14..34]), 0);
            assert_eq!(u16::from_be_bytes([sent[16], sent[17]]) as u32, bytes - 19);
            assert_eq!(u16::from_be_bytes([sent[38], sent[39]]) as u32, bytes - 39);
            assert_eq!(&sent[30..34], &[224, 224, 0xAB, 0xCD]);
            let mut late = sent.clone();
            add_host_delay(&mut late, 1_400);
            add_host_delay(&mut late, 2_600);
            assert_eq!(host_delay_ns(&late), 4_000);
            assert_eq!(ip_checksum(&late[14..34]), 0);
            assert_eq!(decode(&late), Some(f));
        }
    }

    #[test]
    fn foreign_frames_are_not_read() {
        let mut buf = [0u8; 2048];
        let f = Fields {
            frame_id: 1,
            src_node: 0,
            plane: 0,
            class: 0,
            frame_bytes: 100,
            emit_ns: 0,
            number: 0,
            start_offset_ns: 0,
            seq: 1,
        };
        let mut sent = encode(&mut buf, &f).to_vec();
        assert!(frame_id(&sent).is_some());
        sent[37] ^= 1; // another UDP port
        assert!(frame_id(&sent).is_none());
        assert!(frame_id(&sent[..40]).is_none());
    }
}
