//! Numbers of the standards the engine implements, defined once: the engine computes with them
//! and the Python front reads them through the binding (`rtnetlab._core`), never retyping them.

/// Bytes a frame costs on the wire beyond the Ethernet frame: 7 B preamble, 1 B start frame
/// delimiter and 12 B inter-frame gap (a description's default `interframe_overhead`).
pub const INTERFRAME_BYTES: u32 = 20;
/// The shortest Ethernet frame, header and FCS included, bytes.
pub const ETHERNET_MIN_FRAME_BYTES: u32 = 64;
/// The longest Ethernet frame without a VLAN tag, header and FCS included, bytes.
pub const ETHERNET_MAX_FRAME_BYTES: u32 = 1518;
/// An AFDX frame's bytes beyond its payload: Ethernet (14), IP (20) and UDP (8) headers, the
/// sequence number (1) and the FCS (4).
pub const AFDX_FRAME_HEADERS_BYTES: u32 = 47;
/// An AFDX frame's cost on the wire beyond its payload: its headers and the interframe bytes
/// (67 B, WOPANet's default `overhead`).
pub const AFDX_FRAME_OVERHEAD_BYTES: u32 = AFDX_FRAME_HEADERS_BYTES + INTERFRAME_BYTES;
/// The bandwidth allocation gaps ARINC 664 allows, ms: 2^k for k = 0..7.
pub const AFDX_BAGS_MS: [u32; 8] = [1, 2, 4, 8, 16, 32, 64, 128];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_afdx_numbers_add_up() {
        assert_eq!(AFDX_FRAME_OVERHEAD_BYTES, 67);
        assert!(AFDX_BAGS_MS.iter().enumerate().all(|(k, &b)| b == 1 << k));
    }
}
