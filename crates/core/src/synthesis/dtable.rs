//! Arbitration-table configuration that decouples latency from bandwidth (seed 003, §4-5).
