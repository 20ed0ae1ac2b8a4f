//! Lossless interconnection fabrics with virtual channels. See docs/FABRIC.md.

mod topology;

pub use topology::{Node, PortRef, Topology};
