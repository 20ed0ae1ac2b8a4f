//! Code that reproduces a seed paper's figure or table from the engine (not part of the engine):
//!
//! * [`afdx_table2`]: seed 001D's Table II and Fig. 6 at growing sizes, branch and bound against
//!   the exhaustive search (nodes, time, same answer).
//! * [`dopa_fig6`]: seed 001E's Fig. 6, acceptance of DOPA's PARTITION with OPA and with deadline
//!   monotonic over random task sets.
//! * [`nss_overhead`]: seed 004's Table 4, the CPU overhead of the network sporadic server.
//!
//! The other seed studies run from the Python front (`rtnetlab experiment ...`) on the engine's
//! public functions.

pub mod afdx_table2;
pub mod dopa_fig6;
pub mod nss_overhead;
