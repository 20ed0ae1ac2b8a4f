//! What `rtnetlab analyze` prints on the terminal, selected from a report without sending the
//! whole report to Python: a 5000-VL network's report is 18,000 rows (6.8 MB of JSON) of which a
//! table shows 40. The rows are ordered most critical first by the same keys as the tables of
//! `rtnetlab.cli.analyze` (a stable sort, so ties keep the report's order, as there); the counts
//! and deadline failures are those of `rtnetlab.results.verdict` over every row.

use rtnetlab_core::analysis::results::{
    AnalysisReport, FlowBound, NamedRow, PortBound, RedundantBound, Status,
};
use serde::Serialize;
use std::cmp::Ordering;

/// A report and the warnings of its network, written out as `analyze --json` writes them: the
/// report's fields, then `warnings`.
#[derive(Serialize)]
pub struct Document<'a> {
    #[serde(flatten)]
    pub report: &'a AnalysisReport,
    pub warnings: &'a [String],
}

#[derive(Serialize)]
struct Counts {
    flows: usize,
    ok: usize,
    miss: usize,
    unbounded: usize,
    /// Egress ports with a load above zero (the ports table's rows).
    ports: usize,
    /// Every egress port, loaded or not.
    all_ports: usize,
    redundancy: usize,
}

#[derive(Serialize)]
struct TableView<'a> {
    method: &'a str,
    network: &'a str,
    flows: Vec<<FlowBound as NamedRow>::Named<'a>>,
    ports: Vec<&'a PortBound>,
    redundancy: Vec<<RedundantBound as NamedRow>::Named<'a>>,
    notes: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    fixed_priority: Option<serde_json::Value>,
    counts: Counts,
    /// `flow -> destination (plane): status` of every row with a deadline that misses it or
    /// has no finite bound.
    failures: Vec<String>,
    /// Every unbounded port (their reasons name flows' overloaded ports).
    unbounded_ports: Vec<&'a PortBound>,
}

fn cmp_f64(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

fn status_rank(s: Status) -> u8 {
    match s {
        Status::Unbounded => 0,
        Status::Miss => 1,
        Status::Ok => 2,
    }
}

fn status_name(s: Status) -> &'static str {
    match s {
        Status::Unbounded => "unbounded",
        Status::Miss => "miss",
        Status::Ok => "ok",
    }
}

/// Unbounded, then missed, then the smallest slack, then (no deadline) the largest delay.
fn flow_key(f: &FlowBound) -> (u8, bool, f64, f64) {
    let slack = f.slack_us.filter(|s| s.is_finite());
    let delay = if f.delay_us.is_finite() { f.delay_us } else { 0.0 };
    (status_rank(f.status), slack.is_none(), slack.unwrap_or(0.0), -delay)
}

fn overflows(p: &PortBound) -> bool {
    match p.buffer_bytes {
        Some(b) if b.is_finite() => !p.backlog_bytes.is_finite() || p.backlog_bytes > b,
        _ => false,
    }
}

/// Unbounded or overflowing first, then the most loaded.
fn port_key(p: &PortBound) -> (bool, f64) {
    (!(p.status == Status::Unbounded || overflows(p)), -p.load)
}

/// Copies that may arrive further apart than SkewMax first, then the largest delay (an
/// unbounded, or zero, delay counts as infinite, as the table's key reads it).
fn redundancy_key(r: &RedundantBound) -> (bool, f64) {
    let d = if r.delay_us.is_finite() && r.delay_us != 0.0 { r.delay_us } else { f64::INFINITY };
    (r.skew_ok, -d)
}

fn first<T>(rows: &[T], limit: Option<usize>, cmp: impl Fn(&T, &T) -> Ordering) -> Vec<&T> {
    let mut v: Vec<&T> = rows.iter().collect();
    v.sort_by(|a, b| cmp(a, b));
    v.truncate(limit.unwrap_or(usize::MAX));
    v
}

/// The table view of `report` as JSON text: the first `limit` rows of each table (all when
/// None), most critical first, with the counts of every row.
pub fn table_json(report: &AnalysisReport, limit: Option<usize>) -> String {
    let flows = &report.flows;
    let (mut ok, mut miss, mut unbounded) = (0, 0, 0);
    let mut failures = Vec::new();
    for f in flows.iter() {
        match f.status {
            Status::Ok => ok += 1,
            Status::Miss => miss += 1,
            Status::Unbounded => unbounded += 1,
        }
        if f.deadline_us.is_some_and(f64::is_finite) && f.status != Status::Ok {
            let (flow, destination, plane) = flows.names_of(f);
            failures.push(format!("{flow} -> {destination} ({plane}): {}", status_name(f.status)));
        }
    }
    let loaded = report.ports.iter().filter(|p| p.load > 0.0).count();
    let flow_rows = first(&flows.rows, limit, |a, b| {
        let (x, y) = (flow_key(a), flow_key(b));
        x.0.cmp(&y.0).then(x.1.cmp(&y.1)).then(cmp_f64(x.2, y.2)).then(cmp_f64(x.3, y.3))
    });
    let port_rows: Vec<&PortBound> = {
        let mut v: Vec<&PortBound> = report.ports.iter().filter(|p| p.load > 0.0).collect();
        v.sort_by(|a, b| {
            let (x, y) = (port_key(a), port_key(b));
            x.0.cmp(&y.0).then(cmp_f64(x.1, y.1))
        });
        v.truncate(limit.unwrap_or(usize::MAX));
        v
    };
    let red_rows = first(&report.redundancy.rows, limit, |a, b| {
        let (x, y) = (redundancy_key(a), redundancy_key(b));
        x.0.cmp(&y.0).then(cmp_f64(x.1, y.1))
    });
    let view = TableView {
        method: &report.method,
        network: &report.network,
        flows: flow_rows.into_iter().map(|f| f.named(&flows.names)).collect(),
        ports: port_rows,
        redundancy: red_rows.into_iter().map(|r| r.named(&report.redundancy.names)).collect(),
        notes: &report.notes,
        fixed_priority: report
            .fixed_priority
            .as_ref()
            .map(|fp| serde_json::to_value(fp).expect("engine results serialise to JSON")),
        counts: Counts {
            flows: flows.len(),
            ok,
            miss,
            unbounded,
            ports: loaded,
            all_ports: report.ports.len(),
            redundancy: report.redundancy.len(),
        },
        failures,
        unbounded_ports: report.ports.iter().filter(|p| p.status == Status::Unbounded).collect(),
    };
    serde_json::to_string(&view).expect("engine results serialise to JSON")
}
