//! Lossless interconnection fabrics with virtual channels: a packet-level discrete-event
//! simulator (interfaces, CIOQ switches with VOQs and a crossbar with speedup, credit-based
//! flow control per VC, any egress scheduler made credit-aware), the perfect-shuffle BMIN,
//! the IEEE 802.1D classes' traffic models, and seed 003's multimedia scenario with the
//! scheduler configurations of its Table 5. See docs/FABRIC.md.
//!
//! ```no_run
//! use rtnetlab_core::fabric::{run_scenario, Scenario, Table5, MULTIMEDIA_BEST_EFFORT};
//! let report = run_scenario(&Scenario::multimedia(Table5::Drr, MULTIMEDIA_BEST_EFFORT)).unwrap();
//! for c in &report.classes {
//!     println!("{} {:.3} {:.1} us", c.class, c.accepted_load, c.latency.p99_us);
//! }
//! ```

mod engine;
mod queue;
mod scenario;
mod topology;
mod traffic;

#[cfg(test)]
mod tests;

pub use scenario::{
    decoupled_layout, wf2q_layout, ClassConfig, ClassReport, FabricChecks, FabricReport, LinkConfig,
    RunStats, Scenario, SwitchConfig, Table5, TopologyConfig, BEST_EFFORT_PARETO_ALPHA,
    MULTIMEDIA_BEST_EFFORT, TABLE4_DISTANCE, TABLE5_CLASSES, TABLE5_DTABLE_ENTRY_WEIGHT, TABLE5_TOTAL_WEIGHT,
    TABLE5_WF2Q_ENTRIES,
};
pub use topology::{Node, PortRef, Topology};
pub use traffic::{FrameSizes, ParetoSize, TrafficModel};

/// Runs a scenario: validates it, builds the topology and one scheduler behaviour per egress
/// port through [`crate::schedulers::behaviour`], simulates, and reports.
pub fn run_scenario(scenario: &Scenario) -> Result<FabricReport, String> {
    scenario.validate()?;
    Ok(engine::Fabric::new(scenario)?.run())
}
