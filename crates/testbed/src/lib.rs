//! rtnetlab's testbed: the same network description on real frames, in Linux network namespaces.
//!
//! [`plan`] reads the validated model into what a run sets up (namespaces, veth pairs, forwarding
//! tables, what kernel qdiscs can express); [`node`] runs one end system or user-space switch,
//! whose egress ports run the engine's own scheduler modules (`rtnetlab_core::schedulers`), paced
//! at the link rate; [`frame`] is the frame layout (AFDX addressing, the measurement in the
//! payload); [`board`] the run's stall board (which frames the host disturbed); [`sys`] the raw sockets, namespaces, clock and real-time scheduling.

// No bare `unwrap` outside tests (clippy.toml): `expect` with the reason, or an error.
#![deny(clippy::unwrap_used)]

pub mod board;
pub mod frame;
pub mod node;
pub mod plan;
pub mod sys;
