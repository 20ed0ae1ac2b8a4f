//! Physical quantities with explicit units, parsed in one place.
//!
//! Files write `100Mbps`, `2ms`, `16us`, `1500B`, `12000b`. Inside the engine a quantity is an
//! `f64` in the base unit (seconds, bits, bits per second); the simulator converts to integer
//! nanoseconds and bits with [`Duration::as_ns`] and [`DataSize::as_bits`]. Writing a quantity back
//! picks the largest unit in which the number stays readable, so a round trip keeps the value.

use schemars::gen::SchemaGenerator;
use schemars::schema::{InstanceType, Schema, SchemaObject, StringValidation};
use schemars::JsonSchema;
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// One unit: its spellings and its factor to the base unit.
struct Unit {
    names: &'static [&'static str],
    factor: f64,
}

const DURATION_UNITS: &[Unit] = &[
    Unit { names: &["s"], factor: 1.0 },
    Unit { names: &["ms"], factor: 1e-3 },
    Unit { names: &["us", "µs", "μs"], factor: 1e-6 },
    Unit { names: &["ns"], factor: 1e-9 },
];

const SIZE_UNITS: &[Unit] = &[
    Unit { names: &["MiB"], factor: 8.0 * 1024.0 * 1024.0 },
    Unit { names: &["KiB"], factor: 8.0 * 1024.0 },
    Unit { names: &["MB"], factor: 8e6 },
    Unit { names: &["kB"], factor: 8e3 },
    Unit { names: &["B"], factor: 8.0 },
    Unit { names: &["Mb", "Mbit"], factor: 1e6 },
    Unit { names: &["kb", "kbit"], factor: 1e3 },
    Unit { names: &["b", "bit"], factor: 1.0 },
];

const RATE_UNITS: &[Unit] = &[
    Unit { names: &["Gbps", "Gb/s"], factor: 1e9 },
    Unit { names: &["Mbps", "Mb/s"], factor: 1e6 },
    Unit { names: &["kbps", "kb/s"], factor: 1e3 },
    Unit { names: &["bps", "b/s"], factor: 1.0 },
];

/// Units used when writing a quantity back, largest first.
const DURATION_OUT: &[(&str, f64)] = &[("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)];
const SIZE_OUT: &[(&str, f64)] = &[("B", 8.0), ("b", 1.0)];
const RATE_OUT: &[(&str, f64)] = &[("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3), ("bps", 1.0)];

/// Parses `<number><unit>` (spaces allowed between) into the base unit, or says what was expected.
fn parse_quantity(text: &str, units: &[Unit], what: &str, example: &str) -> Result<f64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'))
        .unwrap_or(t.len());
    // 'e' can start no unit we accept, but "1e3ms" must keep its exponent: back off a trailing 'e'.
    let (num, unit) = t.split_at(split);
    let unit = unit.trim();
    let bad = || {
        let names: Vec<&str> = units.iter().map(|u| u.names[0]).collect();
        format!("expected a {what} with a unit ({}), e.g. '{example}', got '{text}'", names.join(", "))
    };
    let value: f64 = num.parse().map_err(|_| bad())?;
    // Dividing by the inverse factor keeps `2ms` the nearest double to 0.002.
    if !value.is_finite() {
        return Err(bad());
    }
    let u = units.iter().find(|u| u.names.contains(&unit)).ok_or_else(bad)?;
    if value < 0.0 {
        return Err(format!("must not be negative, got '{text}'"));
    }
    let base = if u.factor < 1.0 { value / (1.0 / u.factor).round() } else { value * u.factor };
    if !base.is_finite() {
        return Err(format!("is too large to be a {what}, got '{text}'"));
    }
    Ok(base)
}

/// The longest duration a description may hold: a day. Beyond it nothing in a real-time network
/// lives, and sums of many such durations still fit the simulator's 64-bit nanoseconds.
pub const MAX_DURATION_S: f64 = 86_400.0;
/// The largest data size a description may hold: 1 TiB (buffers, bursts, quanta, weights).
pub const MAX_SIZE_BITS: f64 = 8.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0;
/// The fastest data rate a description may hold: 10 Tbps (beyond 1.6 Tbps Ethernet).
pub const MAX_RATE_BPS: f64 = 10e12;

/// Whether `x` is a whole number of `unit` (to a millionth, decimal fractions being inexact).
fn whole(x: f64, unit: f64) -> bool {
    let n = x / unit;
    (n - n.round()).abs() <= 1e-6 * n.abs().max(1.0)
}

/// The range a duration of a description must lie in: whole nanoseconds (the simulator's clock,
/// so that analysis and simulation read the same value), at most a day.
fn duration_rule(secs: f64) -> Result<(), String> {
    if secs > MAX_DURATION_S || !whole(secs, 1e-9) {
        return Err("must be a whole number of nanoseconds, at most 1 day (86400s)".into());
    }
    Ok(())
}

/// The range a data size of a description must lie in: whole bits, at most 1 TiB.
fn size_rule(bits: f64) -> Result<(), String> {
    if bits > MAX_SIZE_BITS || !whole(bits, 1.0) {
        return Err("must be a whole number of bits, at most 1 TiB (1099511627776B)".into());
    }
    Ok(())
}

/// The range a data rate of a description must lie in: 0, or 1 bps to 10 Tbps.
fn rate_rule(bps: f64) -> Result<(), String> {
    if bps != 0.0 && !(1.0..=MAX_RATE_BPS).contains(&bps) {
        return Err("must be 0 or between 1bps and 10 Tbps (10000Gbps)".into());
    }
    Ok(())
}

/// Writes `value` (base unit) in the largest unit that keeps it an exact short decimal.
/// Sizes are written in whole bytes or else in bits (`12001b`, not `1500.125B`).
fn format_quantity(value: f64, out: &[(&str, f64)]) -> String {
    let whole_only = std::ptr::eq(out, SIZE_OUT);
    if value == 0.0 {
        return format!("0{}", out[out.len() - 1].0);
    }
    for (name, factor) in out {
        let x = value / factor;
        if x.abs() < 1.0 {
            continue;
        }
        // Keep at most 6 decimals; accept the unit if that loses nothing significant.
        let rounded = if whole_only { x.round() } else { (x * 1e6).round() / 1e6 };
        if ((rounded - x) / x).abs() < 1e-12 {
            return format!("{}{}", trim_number(rounded), name);
        }
    }
    let (name, factor) = out[out.len() - 1];
    format!("{}{}", trim_number(value / factor), name)
}

fn trim_number(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// The most a count of a description may be (frames per round, packets per message, packets in
/// a server's budget): a million.
pub const MAX_COUNT: u64 = 1_000_000;
/// The largest weight or factor of a description (shares between classes): 10^12, room for
/// weights written as rates in bit/s.
pub const MAX_WEIGHT: f64 = 1e12;

/// The rule of a count: a whole number from 1 to a million.
pub fn count_rule(n: u64) -> Result<(), String> {
    if (1..=MAX_COUNT).contains(&n) {
        Ok(())
    } else {
        Err(format!("must be a whole number from 1 to 1000000, got {n}"))
    }
}

/// The rule of a weight or factor: a positive number, at most 10^12.
pub fn weight_rule(x: f64) -> Result<(), String> {
    if x > 0.0 && x <= MAX_WEIGHT {
        Ok(())
    } else {
        let shown =
            if x != 0.0 && !(1e-4..1e15).contains(&x.abs()) { format!("{x:e}") } else { format!("{x}") };
        Err(format!("must be a positive number, at most 1e12, got {shown}"))
    }
}

macro_rules! quantity {
    ($(#[$doc:meta])* $name:ident, $units:expr, $out:expr, $what:expr, $example:expr, $pattern:expr, $rule:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
        pub struct $name(pub f64);

        impl $name {
            /// Parses a quantity written with its unit.
            pub fn parse(text: &str) -> Result<Self, String> {
                parse_quantity(text, $units, $what, $example).map($name)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&format_quantity(self.0, $out))
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        write!(f, "a {} with a unit, e.g. '{}'", $what, $example)
                    }
                    // What a description reads obeys its kind's rule; `parse` alone (options) does not.
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$name, E> {
                        let q = $name::parse(v).map_err(E::custom)?;
                        $rule(q.0).map_err(|rule| E::custom(format!("{rule}, got '{}'", v.trim())))?;
                        Ok(q)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        self.number(v)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        self.number(v as f64)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        self.number(v as f64)
                    }
                }
                impl V {
                    // A bare number is ambiguous (ms or s? bytes or bits?): refuse it by name.
                    fn number<E: de::Error>(&self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!(
                            "expected a {} with a unit, e.g. '{}', got the bare number {}",
                            $what, $example, v
                        )))
                    }
                }
                d.deserialize_any(V)
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> String {
                stringify!($name).to_string()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                SchemaObject {
                    instance_type: Some(InstanceType::String.into()),
                    string: Some(Box::new(StringValidation {
                        pattern: Some($pattern.to_string()),
                        ..Default::default()
                    })),
                    metadata: Some(Box::new(schemars::schema::Metadata {
                        description: Some(format!("A {} with its unit, e.g. '{}'", $what, $example)),
                        ..Default::default()
                    })),
                    ..Default::default()
                }
                .into()
            }
        }
    };
}

quantity!(
    /// A duration, in seconds inside the engine.
    Duration,
    DURATION_UNITS,
    DURATION_OUT,
    "duration",
    "2ms",
    r"^\s*[0-9.eE+]+\s*(s|ms|us|µs|μs|ns)\s*$",
    duration_rule
);
quantity!(
    /// An amount of data, in bits inside the engine.
    DataSize,
    SIZE_UNITS,
    SIZE_OUT,
    "data size",
    "1500B",
    r"^\s*[0-9.eE+]+\s*(MiB|KiB|MB|kB|B|Mb|Mbit|kb|kbit|b|bit)\s*$",
    size_rule
);
quantity!(
    /// A data rate, in bits per second inside the engine.
    DataRate,
    RATE_UNITS,
    RATE_OUT,
    "data rate",
    "100Mbps",
    r"^\s*[0-9.eE+]+\s*(Gbps|Gb/s|Mbps|Mb/s|kbps|kb/s|bps|b/s)\s*$",
    rate_rule
);

impl Duration {
    pub fn from_secs(s: f64) -> Self {
        Duration(s)
    }
    pub fn from_ms(ms: f64) -> Self {
        Duration(ms * 1e-3)
    }
    pub fn from_us(us: f64) -> Self {
        Duration(us * 1e-6)
    }
    pub fn secs(self) -> f64 {
        self.0
    }
    pub fn us(self) -> f64 {
        self.0 * 1e6
    }
    pub fn ms(self) -> f64 {
        self.0 * 1e3
    }
    /// Whole nanoseconds, for the simulator's integer clock.
    pub fn as_ns(self) -> i64 {
        (self.0 * 1e9).round() as i64
    }
}

impl DataSize {
    pub fn from_bytes(b: f64) -> Self {
        DataSize(b * 8.0)
    }
    pub fn from_bits(b: f64) -> Self {
        DataSize(b)
    }
    pub fn bits(self) -> f64 {
        self.0
    }
    pub fn bytes(self) -> f64 {
        self.0 / 8.0
    }
    /// Whole bits, for the simulator.
    pub fn as_bits(self) -> i64 {
        self.0.round() as i64
    }
}

impl DataRate {
    pub fn from_bps(r: f64) -> Self {
        DataRate(r)
    }
    pub fn bps(self) -> f64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_unit_family() {
        assert_eq!(Duration::parse("2ms").unwrap().secs(), 2e-3);
        assert_eq!(Duration::parse("16us").unwrap().us(), 16.0);
        assert_eq!(Duration::parse("0.5 ms").unwrap().us(), 500.0);
        assert!((Duration::parse("1e3ns").unwrap().us() - 1.0).abs() < 1e-12);
        assert_eq!(DataSize::parse("1500B").unwrap().bits(), 12000.0);
        assert_eq!(DataSize::parse("12000b").unwrap().bytes(), 1500.0);
        assert_eq!(DataSize::parse("64KiB").unwrap().bytes(), 65536.0);
        assert_eq!(DataRate::parse("100Mbps").unwrap().bps(), 1e8);
        assert_eq!(DataRate::parse("1Gbps").unwrap().bps(), 1e9);
    }

    #[test]
    fn refuses_missing_or_unknown_units() {
        assert!(Duration::parse("2").unwrap_err().contains("expected a duration"));
        assert!(Duration::parse("2 fortnights").is_err());
        assert!(DataRate::parse("100MB").is_err());
        assert!(DataSize::parse("-3B").unwrap_err().contains("negative"));
        let e: Result<Duration, _> = serde_json::from_str("2");
        assert!(e.unwrap_err().to_string().contains("bare number"));
    }

    #[test]
    fn a_description_holds_quantities_the_model_can_stand_behind() {
        let read = |kind: &str, text: &str| -> Result<(), String> {
            let v = serde_json::Value::String(text.to_string());
            match kind {
                "duration" => serde_json::from_value::<Duration>(v).map(|_| ()),
                "size" => serde_json::from_value::<DataSize>(v).map(|_| ()),
                _ => serde_json::from_value::<DataRate>(v).map(|_| ()),
            }
            .map_err(|e| e.to_string())
        };
        // Limits of each kind pass; one step beyond them does not.
        for ok in [
            ("duration", "86400s"),
            ("duration", "85.36us"),
            ("duration", "0s"),
            ("size", "1099511627776B"),
            ("size", "12001b"),
            ("rate", "10000Gbps"),
            ("rate", "1bps"),
            ("rate", "0bps"),
        ] {
            assert_eq!(read(ok.0, ok.1), Ok(()), "{ok:?}");
        }
        assert_eq!(
            read("duration", "1e308s").unwrap_err(),
            "must be a whole number of nanoseconds, at most 1 day (86400s), got '1e308s'"
        );
        assert!(read("duration", "86400.001s").is_err());
        assert!(read("duration", "0.5ns").is_err());
        assert_eq!(read("size", "1e308B").unwrap_err(), "is too large to be a data size, got '1e308B'");
        assert_eq!(
            read("size", "1e300B").unwrap_err(),
            "must be a whole number of bits, at most 1 TiB (1099511627776B), got '1e300B'"
        );
        assert!(read("size", "0.5b").is_err());
        assert_eq!(read("rate", "1e308Mbps").unwrap_err(), "is too large to be a data rate, got '1e308Mbps'");
        assert_eq!(
            read("rate", "10001Gbps").unwrap_err(),
            "must be 0 or between 1bps and 10 Tbps (10000Gbps), got '10001Gbps'"
        );
        assert!(read("rate", "0.5bps").is_err());
        // Options parsed by the front keep only finiteness.
        assert!(Duration::parse("100000s").is_ok());
    }

    #[test]
    fn writes_back_readably_and_round_trips() {
        for (text, canon) in [
            ("2ms", "2ms"),
            ("0.5ms", "500us"),
            ("1500B", "1500B"),
            ("12001b", "12001b"),
            ("100Mbps", "100Mbps"),
            ("6000000bps", "6Mbps"),
            ("0s", "0ns"),
            ("85.36us", "85.36us"),
        ] {
            let d = match text.chars().last().unwrap() {
                's' if text.ends_with("ps") => DataRate::parse(text).unwrap().to_string(),
                's' => Duration::parse(text).unwrap().to_string(),
                _ => DataSize::parse(text).unwrap().to_string(),
            };
            assert_eq!(d, canon, "{text}");
        }
    }
}
