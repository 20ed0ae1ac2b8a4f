//! Synthesis: parameters that make a network feasible.
//!
//! * [`afdx_bag_mtu`]: BAG and MTU per virtual link (seed 001D).
//! * [`dtable`]: arbitration tables that decouple latency from bandwidth (seed 003).
//! * [`priorities`]: a priority order per processor and bus (OPA or deadline monotonic).
//! * [`tsn`]: gate control lists, stream offsets and idle slopes for TSN ports.
//! * [`partition`]: tasks of chains placed on processors, with priorities (DOPA, seed 001E).

pub mod afdx_bag_mtu;
pub mod afdx_network;
pub mod dtable;
pub mod partition;
pub mod priorities;
pub mod tsn;
