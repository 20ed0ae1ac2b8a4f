//! What several integration tests share: a description loaded from YAML text, `best`'s bound per
//! flow, and a packet-level run checked against its bounds.

#[allow(dead_code)] // the campaigns that check fifo-lp use it
pub mod lp;

use rtnetlab_core::analysis::results::AnalysisReport;
use rtnetlab_core::analysis::{run, Request};
use rtnetlab_core::model::{load_text, parse::Format, Limits, Network};
use rtnetlab_core::sim::SimReport;

/// A YAML description (an example file's text), validated; panics with the diagnostics.
#[allow(dead_code)] // not every test file that checks a run against its bounds loads YAML
pub fn load(text: &str) -> Network {
    let (net, d) = load_text(text, Format::Yaml, "example.yaml", &Limits::default());
    net.unwrap_or_else(|| panic!("{:?}", d.0))
}

/// `best`'s delay bound per (flow, destination, plane) row, µs, with the flow's name.
#[allow(dead_code)] // not every test file that loads a description needs the bounds
pub fn bounds(net: &Network) -> Vec<(String, f64)> {
    let r =
        run(net, &Request { method: rtnetlab_core::analysis::Method::Best, ..Default::default() }).unwrap();
    r.flows.iter().map(|f| (net.flows[f.flow].name.clone(), f.delay_us)).collect()
}

/// What a packet-level run was checked on: frames measured, frames under a finite bound, and the
/// largest simulated / bound ratio among those.
#[allow(dead_code)] // not every test file that loads a description simulates it
pub struct Checked {
    pub frames: u64,
    pub bounded_frames: u64,
    pub closest: f64,
}

/// Asserts that no simulated maximum latency exceeds its bound (the run's rows and the analysis'
/// in the same order; integer-ns transmission times round up by < 1 ns per hop, hence 0.01 µs).
/// `what` names the run in a failure.
#[allow(dead_code)]
pub fn assert_flows_within(sim: &SimReport, bounds: &AnalysisReport, what: &str) -> Checked {
    let mut checked = Checked { frames: 0, bounded_frames: 0, closest: 0.0 };
    for (s, b) in sim.flows.iter().zip(&bounds.flows) {
        assert!(
            s.latency.max_us <= b.delay_us + 0.01,
            "{what}: {} -> {} ({}): simulated {} us > bound {} us ({})",
            s.flow,
            s.destination,
            s.plane,
            s.latency.max_us,
            b.delay_us,
            b.method
        );
        checked.frames += s.latency.count;
        if b.delay_us.is_finite() {
            checked.bounded_frames += s.latency.count;
            checked.closest = checked.closest.max(s.latency.max_us / b.delay_us);
        }
    }
    checked
}

/// Asserts that no simulated port backlog exceeds its bound by more than a byte.
#[allow(dead_code)]
pub fn assert_ports_within(sim: &SimReport, bounds: &AnalysisReport, what: &str) {
    for (s, b) in sim.ports.iter().zip(&bounds.ports) {
        assert!(
            s.max_backlog_bytes <= b.backlog_bytes + 1.0,
            "{what}: port {}:{} backlog {} B > bound {} B",
            s.node,
            s.port,
            s.max_backlog_bytes,
            b.backlog_bytes
        );
    }
}
