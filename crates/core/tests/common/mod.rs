//! What several integration tests share: a description loaded from YAML text, and `best`'s bound
//! per flow.

use rtnetlab_core::analysis::{run, Request};
use rtnetlab_core::model::{load_text, parse::Format, Limits, Network};

/// A YAML description (an example file's text), validated; panics with the diagnostics.
pub fn load(text: &str) -> Network {
    let (net, d) = load_text(text, Format::Yaml, "example.yaml", &Limits::default());
    net.unwrap_or_else(|| panic!("{:?}", d.0))
}

/// `best`'s delay bound per (flow, destination, plane) row, µs, with the flow's name.
#[allow(dead_code)] // not every test file that loads a description needs the bounds
pub fn bounds(net: &Network) -> Vec<(String, f64)> {
    let r = run(net, &Request { method: "best".into(), ..Default::default() }).unwrap();
    r.flows.iter().map(|f| (net.flows[f.flow].name.clone(), f.delay_us)).collect()
}
