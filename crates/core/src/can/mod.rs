//! CAN-like fixed-priority buses: frame lengths with worst-case bit stuffing, the bus simulator
//! (bitwise arbitration, non-preemptive frames, per-node transmit queues) and the network
//! sporadic server of seed 004.

pub mod bus;
pub mod frame;
pub mod model;
pub mod sporadic_server;
