//! `rtnetlab-testbed`: the testbed's processes, started by the Python front (`rtnetlab testbed`).
//!
//! * `rtnetlab-testbed plan DESCRIPTION.json`: the run's plan (JSON on stdout);
//! * `rtnetlab-testbed node DESCRIPTION.json CONFIG.json`: runs one node (end system or
//!   user-space switch) and prints its measurements (JSON on stdout).
//!
//! Errors: one line on stderr, exit code 2. Started by the front, a node dies with it (parent-death
//! signal) and stops when its standard input, the front's control pipe, closes.

// No bare `unwrap` outside tests (clippy.toml): `expect` with the reason, or an error.
#![deny(clippy::unwrap_used)]

use rtnetlab_testbed::node::{Node, NodeConfig};
use rtnetlab_testbed::plan::Plan;
use std::process::ExitCode;

fn load(path: &str) -> Result<rtnetlab_core::model::Network, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let (net, diags) = rtnetlab_core::model::load_network(&text);
    net.ok_or_else(|| {
        let first = diags.0.iter().find(|d| d.severity == rtnetlab_core::model::Severity::Error);
        first
            .map_or_else(|| format!("{path}: invalid description"), |d| format!("{}: {}", d.place, d.message))
    })
}

fn run(args: &[String]) -> Result<String, String> {
    match args {
        [cmd, description] if cmd == "plan" => {
            let net = load(description)?;
            let plan = Plan::new(&net)?;
            serde_json::to_string(&plan).map_err(|e| e.to_string())
        }
        [cmd, description, config] if cmd == "node" => {
            rtnetlab_testbed::sys::stop_when_stdin_closes();
            let net = load(description)?;
            let plan = Plan::new(&net)?;
            let text = std::fs::read_to_string(config).map_err(|e| format!("{config}: {e}"))?;
            let cfg: NodeConfig = serde_json::from_str(&text).map_err(|e| format!("{config}: {e}"))?;
            let result = Node::new(&net, &plan, cfg)?.run()?;
            serde_json::to_string(&result).map_err(|e| e.to_string())
        }
        _ => Err("usage: rtnetlab-testbed plan DESCRIPTION.json | node DESCRIPTION.json CONFIG.json".into()),
    }
}

fn main() -> ExitCode {
    rtnetlab_testbed::sys::die_with_parent();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(out) => {
            println!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}
