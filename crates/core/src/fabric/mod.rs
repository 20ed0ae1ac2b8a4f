//! Lossless interconnection fabrics with virtual channels. See docs/FABRIC.md.

mod topology;
mod traffic;

pub use topology::{Node, PortRef, Topology};
pub use traffic::{FrameSizes, ParetoSize, TrafficModel};
