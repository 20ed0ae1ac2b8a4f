//! CAN 2.0 data frames on the wire: identifiers, arbitration order and frame lengths.
//!
//! Lengths follow Davis, Burns, Bril and Lukkien (2007), "Controller Area Network (CAN)
//! schedulability analysis: refuted, revisited and revised", eq. (1): of a frame's bits only the
//! `g + 8s` bits from the start-of-frame bit to the end of the CRC are subject to bit stuffing
//! (a stuff bit after five equal bits), and in the worst case the stuff bits themselves start new
//! runs, giving at most `⌊(g + 8s − 1)/4⌋` of them. The 13 fixed-form bits after the CRC (CRC
//! delimiter, ACK slot and delimiter, end of frame, 3-bit inter-frame space) are never stuffed.
//! Every length here includes the inter-frame space, so frames can be laid back to back.
//!
//! CAN FD (flexible data rate, up to 64 data bytes, a second bit rate for the data phase,
//! fixed stuff bits in the CRC field) is out of scope.

use serde::{Deserialize, Serialize};

/// The largest payload of a CAN 2.0 data frame, in bytes.
pub const MAX_DATA_BYTES: u8 = 8;

/// Bits subject to stuffing besides the data field (start of frame through CRC): 11-bit format.
const STUFFED_OVERHEAD_STANDARD: i64 = 34;
/// Bits subject to stuffing besides the data field (start of frame through CRC): 29-bit format.
const STUFFED_OVERHEAD_EXTENDED: i64 = 54;
/// CRC delimiter, ACK slot, ACK delimiter, 7-bit end of frame and 3-bit inter-frame space.
const UNSTUFFED_TAIL: i64 = 13;

/// Identifier format: CAN 2.0A (11 bits) or CAN 2.0B (29 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdFormat {
    Standard,
    Extended,
}

/// How many stuff bits a frame carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stuffing {
    /// The most stuff bits any content can produce (what response-time analysis assumes).
    #[default]
    WorstCase,
    /// No stuff bits: the shortest the frame can be.
    None,
}

/// A CAN identifier. Lower values win arbitration (dominant bits are 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CanId {
    /// 11-bit identifier, `0..=0x7FF`.
    Standard(u16),
    /// 29-bit identifier, `0..=0x1FFF_FFFF`.
    Extended(u32),
}

impl CanId {
    pub fn format(self) -> IdFormat {
        match self {
            CanId::Standard(_) => IdFormat::Standard,
            CanId::Extended(_) => IdFormat::Extended,
        }
    }

    /// Whether the value fits its format.
    pub fn is_valid(self) -> bool {
        match self {
            CanId::Standard(id) => id <= 0x7FF,
            CanId::Extended(id) => id <= 0x1FFF_FFFF,
        }
    }

    /// The arbitration field as one number: of two frames on the bus, the one with the smaller
    /// key wins. The bits go out in the order base identifier (11 bits), then SRR/RTR and IDE,
    /// then (29-bit only) the 18 extension bits. A standard data frame sends a dominant RTR where
    /// an extended frame sends a recessive SRR, so a standard frame beats an extended frame with
    /// the same 11-bit base. Valid identifiers only.
    pub fn arbitration_key(self) -> u32 {
        match self {
            CanId::Standard(id) => u32::from(id) << 19,
            CanId::Extended(id) => ((id >> 18) << 19) | (1 << 18) | (id & 0x3_FFFF),
        }
    }
}

impl std::fmt::Display for CanId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CanId::Standard(id) => write!(f, "0x{id:03X}"),
            CanId::Extended(id) => write!(f, "0x{id:08X}"),
        }
    }
}

fn stuffed_overhead(format: IdFormat) -> i64 {
    match format {
        IdFormat::Standard => STUFFED_OVERHEAD_STANDARD,
        IdFormat::Extended => STUFFED_OVERHEAD_EXTENDED,
    }
}

fn check_data_bytes(data_bytes: u8) {
    assert!(data_bytes <= MAX_DATA_BYTES, "a CAN 2.0 data frame carries at most 8 bytes, got {data_bytes}");
}

/// Worst-case length in bits of a data frame with `data_bytes` bytes, inter-frame space
/// included: 55 + 10·s (11-bit identifier) or 80 + 10·s (29-bit identifier).
///
/// # Panics
/// If `data_bytes` exceeds [`MAX_DATA_BYTES`].
pub fn worst_case_bits(format: IdFormat, data_bytes: u8) -> i64 {
    check_data_bytes(data_bytes);
    let stuffed = stuffed_overhead(format) + 8 * i64::from(data_bytes);
    stuffed + UNSTUFFED_TAIL + (stuffed - 1) / 4
}

/// Length in bits without any stuff bit, inter-frame space included: 47 + 8·s (11-bit) or
/// 67 + 8·s (29-bit).
///
/// # Panics
/// If `data_bytes` exceeds [`MAX_DATA_BYTES`].
pub fn best_case_bits(format: IdFormat, data_bytes: u8) -> i64 {
    check_data_bytes(data_bytes);
    stuffed_overhead(format) + 8 * i64::from(data_bytes) + UNSTUFFED_TAIL
}

/// Length in bits under the given stuffing assumption.
///
/// # Panics
/// If `data_bytes` exceeds [`MAX_DATA_BYTES`].
pub fn frame_bits(format: IdFormat, data_bytes: u8, stuffing: Stuffing) -> i64 {
    match stuffing {
        Stuffing::WorstCase => worst_case_bits(format, data_bytes),
        Stuffing::None => best_case_bits(format, data_bytes),
    }
}

/// Time to send `bits` at `bit_rate_bps`, in ns, rounded up so that a frame never takes less
/// time than on a real bus (exact at the usual 125 k, 250 k, 500 k and 1 Mbit/s).
///
/// # Panics
/// If `bit_rate_bps` is not positive.
pub fn transmission_ns(bits: i64, bit_rate_bps: i64) -> i64 {
    assert!(bit_rate_bps > 0, "bit rate must be positive, got {bit_rate_bps} bit/s");
    assert!(bits >= 0, "a frame cannot have {bits} bits");
    let ns = (bits as u128 * 1_000_000_000).div_ceil(bit_rate_bps as u128);
    i64::try_from(ns).expect("transmission time overflows i64 ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worst_case_lengths_match_the_closed_forms() {
        for s in 0..=MAX_DATA_BYTES {
            let s64 = i64::from(s);
            assert_eq!(worst_case_bits(IdFormat::Standard, s), 55 + 10 * s64, "s = {s}");
            assert_eq!(worst_case_bits(IdFormat::Extended, s), 80 + 10 * s64, "s = {s}");
            assert_eq!(best_case_bits(IdFormat::Standard, s), 47 + 8 * s64, "s = {s}");
            assert_eq!(best_case_bits(IdFormat::Extended, s), 67 + 8 * s64, "s = {s}");
        }
    }

    /// Oracle item 5 (Davis, Burns, Bril, Lukkien 2007; linux can-utils): 8 bytes with an
    /// 11-bit identifier = 135 bits = 270 µs at 500 kbit/s, 1080 µs at 125 kbit/s.
    #[test]
    fn oracle_eight_byte_standard_frame() {
        let bits = worst_case_bits(IdFormat::Standard, 8);
        assert_eq!(bits, 135);
        assert_eq!(transmission_ns(bits, 500_000), 270_000);
        assert_eq!(transmission_ns(bits, 125_000), 1_080_000);
        assert_eq!(worst_case_bits(IdFormat::Extended, 8), 160);
        assert_eq!(frame_bits(IdFormat::Standard, 8, Stuffing::None), 111);
    }

    #[test]
    fn transmission_time_rounds_up() {
        // 55 bits at 33.3 kbit/s = 1 651 651.65… ns.
        assert_eq!(transmission_ns(55, 33_300), 1_651_652);
        assert_eq!(transmission_ns(0, 1_000_000), 0);
    }

    #[test]
    #[should_panic(expected = "at most 8 bytes")]
    fn nine_bytes_is_not_a_can_2_frame() {
        worst_case_bits(IdFormat::Standard, 9);
    }

    #[test]
    fn arbitration_order() {
        let std = |id| CanId::Standard(id).arbitration_key();
        let ext = |id| CanId::Extended(id).arbitration_key();
        assert!(std(0x100) < std(0x101));
        // Same 11-bit base: the standard frame wins (dominant RTR against recessive SRR).
        assert!(std(0x123) < ext(0x123 << 18));
        // A smaller base wins whatever the extension bits.
        assert!(ext((0x122 << 18) | 0x3_FFFF) < std(0x123));
        assert!(std(0x124) > ext((0x123 << 18) | 0x3_FFFF));
        // Among extended frames the whole 29-bit value decides.
        assert!(ext(0x0123_4567) < ext(0x0123_4568));
        assert!(CanId::Standard(0x7FF).is_valid() && !CanId::Standard(0x800).is_valid());
        assert!(CanId::Extended(0x1FFF_FFFF).is_valid() && !CanId::Extended(0x2000_0000).is_valid());
    }
}
