//! Worst-case analyses of a validated network.
//!
//! * [`afdx_naive`]: FIFO total-flow analysis as WOPANet-family AFDX tools compute it.
//! * [`network_bounds`]: TFA, SFA and `best` on a network's egress ports, with grouping.
//! * [`redundancy`]: first-valid-copy-wins bounds over redundant planes, SkewMax check.
//! * [`results`]: what every analysis reports (per flow and destination, per egress port).
//!
//! Abstract network-calculus networks (`server_graph:` in a description: rate-latency servers,
//! token-bucket or staircase flows, no framing) are resolved by the model into the same `Network`
//! and analysed by the same TFA and SFA, with DNC's semantics (crates/core/tests/dnc_functional.rs
//! reproduces NetCal/DNC's functional tests through `run`).

pub mod afdx_naive;
pub mod fifo_lp;
pub mod network_bounds;
pub mod redundancy;
pub mod response_time;
pub mod results;
pub mod what_if;

#[cfg(test)]
mod network_tests;
#[cfg(test)]
mod textbook_tests;

use crate::model::Network;
use results::AnalysisReport;

/// The analysis methods, by the names users give them: parsed once where the name enters (the
/// command line, a description, the binding), matched exhaustively everywhere else.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Method {
    /// Per route, the smallest bound of every method that applies.
    #[default]
    Best,
    Tfa,
    Sfa,
    SfaIter,
    Pmoo,
    FifoLp,
    AfdxNaive,
    SinkTreeBacklog,
    /// SFA with the flow of interest left out of its companions' arrival bounds under FIFO too, as
    /// DNC's functional tests compute it ([`network_bounds::with_foi_lowest_upstream`]): accepted
    /// to reproduce them, but no bound under FIFO, so neither listed nor offered.
    SfaFoiLowest,
}

impl Method {
    /// The methods offered to users, in the order help texts list them.
    pub const LISTED: &'static [Method] = &[
        Method::Best,
        Method::Tfa,
        Method::Sfa,
        Method::SfaIter,
        Method::Pmoo,
        Method::FifoLp,
        Method::AfdxNaive,
        Method::SinkTreeBacklog,
    ];

    /// The name users give it.
    pub const fn name(self) -> &'static str {
        match self {
            Method::Best => "best",
            Method::Tfa => "tfa",
            Method::Sfa => "sfa",
            Method::SfaIter => "sfa-iter",
            Method::Pmoo => "pmoo",
            Method::FifoLp => fifo_lp::NAME,
            Method::AfdxNaive => "afdx-naive",
            Method::SinkTreeBacklog => network_bounds::sink_tree::NAME,
            Method::SfaFoiLowest => SFA_FOI_LOWEST,
        }
    }
}

impl std::str::FromStr for Method {
    type Err = String;

    /// `text` as a method, or the one-line reason listing the methods.
    fn from_str(text: &str) -> Result<Method, String> {
        Method::LISTED.iter().chain([&Method::SfaFoiLowest]).copied().find(|m| m.name() == text).ok_or_else(
            || format!("unknown analysis method '{text}', expected one of {}", METHODS.join(", ")),
        )
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The name of [`Method::SfaFoiLowest`].
pub const SFA_FOI_LOWEST: &str = "sfa-foi-lowest";
/// The names of [`Method::LISTED`].
pub const METHODS: &[&str] =
    &["best", "tfa", "sfa", "sfa-iter", "pmoo", "fifo-lp", "afdx-naive", network_bounds::sink_tree::NAME];

/// What the user asked for: a method, grouping, blind instead of FIFO multiplexing, and on a
/// server graph how the cross traffic is bounded.
#[derive(Clone, Debug, Default)]
pub struct Request {
    pub method: Method,
    pub grouping: bool,
    pub blind: bool,
    pub arrival_bounds: network_bounds::ArrivalBounds,
    /// How hard fifo-lp works (alone, and inside `best`).
    pub lp_effort: fifo_lp::Effort,
}

/// Why an analysis cannot run as asked; its text is the one line users read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AnalysisError {
    /// The method, or an option asked with it, does not apply to this network.
    #[error("{0}")]
    NotApplicable(String),
    /// `fifo-lp` asked for without a linear-programming solver.
    #[error(
        "fifo-lp needs a linear-programming solver: install HiGHS for Python (highspy, the extra `cloud`)"
    )]
    NoSolver,
    /// No flow of this name (`explain`).
    #[error("no flow named '{0}' in the network")]
    UnknownFlow(String),
}

/// The methods' own refusals (`applies`) say why a method does not apply.
impl From<String> for AnalysisError {
    fn from(why: String) -> Self {
        AnalysisError::NotApplicable(why)
    }
}

impl From<&str> for AnalysisError {
    fn from(why: &str) -> Self {
        AnalysisError::NotApplicable(why.to_string())
    }
}

/// The one line, where callers still carry text.
impl From<AnalysisError> for String {
    fn from(e: AnalysisError) -> String {
        e.to_string()
    }
}

/// Runs the requested analysis; a method that does not apply, or an unknown one, is a user error.
/// Without a linear-programming solver: `fifo-lp` is refused, `best` does without it.
pub fn run(net: &Network, req: &Request) -> Result<AnalysisReport, AnalysisError> {
    run_with(net, req, None)
}

/// [`run`] with a linear-programming solver for `fifo-lp` (and `best` on server graphs).
pub fn run_with(
    net: &Network,
    req: &Request,
    lp: Option<fifo_lp::Solver>,
) -> Result<AnalysisReport, AnalysisError> {
    use network_bounds::{ArrivalBounds, Candidate, Multiplexing, Options};
    let mux = if req.blind { Multiplexing::Blind } else { Multiplexing::Fifo };
    let opt = |method| Options { method, grouping: req.grouping, multiplexing: mux };
    let graph = net.kind == crate::model::NetworkKind::ServerGraph;
    if graph && req.grouping {
        return Err(
            "a server graph has no links whose line rate would serialise flows: grouping does not apply"
                .into(),
        );
    }
    let arrival = req.arrival_bounds;
    if arrival == ArrivalBounds::Pmoo {
        if !graph {
            return Err("--arrival-bounds pmoo: applies to server graphs".into());
        }
        if !matches!(req.method, Method::Tfa | Method::Sfa | Method::Pmoo | Method::Best) {
            return Err(format!(
                "--arrival-bounds pmoo: applies to tfa, sfa, pmoo and best, not {}",
                req.method
            )
            .into());
        }
        if !req.blind && req.method != Method::Pmoo {
            return Err(
                "--arrival-bounds pmoo: PMOO arrival bounding assumes arbitrary multiplexing (add --blind)"
                    .into(),
            );
        }
    }
    let mut report = match req.method {
        Method::AfdxNaive if graph => {
            Err("afdx-naive applies to AFDX networks, not to a server graph (use tfa, sfa or best)".into())
        }
        Method::AfdxNaive => {
            if req.grouping || req.blind {
                return Err("afdx-naive has no grouping and no blind variant (use tfa or sfa)".into());
            }
            afdx_naive::applies(net).map(|_| afdx_naive::analyze(net))
        }
        Method::Tfa => network_bounds::applies(net)
            .map(|_| network_bounds::analyze_with(net, &opt(Candidate::Tfa), arrival)),
        Method::Sfa => network_bounds::applies(net)
            .map(|_| network_bounds::analyze_with(net, &opt(Candidate::Sfa), arrival)),
        // The functional tests' convention (the foi left out upstream under FIFO too): not a
        // bound under FIFO, not among METHODS; kept to reproduce DNC's functional tests.
        Method::SfaFoiLowest => network_bounds::applies(net).map(|_| {
            network_bounds::with_foi_lowest_upstream(|| {
                network_bounds::analyze_with(net, &opt(Candidate::Sfa), arrival)
            })
        }),
        Method::SfaIter => network_bounds::applies(net)
            .map(|_| network_bounds::analyze_with(net, &opt(Candidate::SfaIter), arrival)),
        // PMOO assumes arbitrary multiplexing: --blind changes nothing, and it is named so.
        Method::Pmoo => network_bounds::applies(net).map(|_| {
            let opt = Options { multiplexing: Multiplexing::Blind, ..opt(Candidate::Pmoo) };
            network_bounds::analyze_with(net, &opt, arrival)
        }),
        Method::SinkTreeBacklog => {
            if req.grouping || req.blind {
                return Err(format!(
                    "{}: a bound on aggregates, with no grouping and no blind variant",
                    req.method
                )
                .into());
            }
            network_bounds::sink_tree::applies(net).map(|_| network_bounds::sink_tree::analyze(net))
        }
        Method::FifoLp => {
            fifo_lp::applies(net, req.blind)?;
            let Some(solver) = lp else { return Err(AnalysisError::NoSolver) };
            Ok(fifo_lp::analyze(net, req.lp_effort, solver))
        }
        // On a server graph under FIFO multiplexing, the linear program where it applies.
        Method::Best => network_bounds::applies(net).map(|_| {
            let mut report = network_bounds::best_with(net, mux, arrival);
            if let (false, Some(solver)) = (req.blind, lp) {
                fifo_lp::tighten(net, &mut report, req.lp_effort, solver);
            }
            report
        }),
    }?;
    report.notes.extend(staircase_note(net, req.method));
    finish(net, &mut report);
    Ok(report)
}

/// What a report on a server graph with staircase flows says of them: where `method` takes them
/// exactly, and where by their affine envelopes.
fn staircase_note(net: &Network, method: Method) -> Option<String> {
    const NAMED: usize = 5;
    let stairs: Vec<&str> =
        net.flows.iter().filter(|f| f.staircase.is_some()).map(|f| f.name.as_str()).collect();
    let mut named = stairs.iter().take(NAMED).map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ");
    match stairs.len() {
        0 => return None,
        n if n > NAMED => named.push_str(&format!(" and {} more", n - NAMED)),
        _ => {}
    }
    let envelope =
        "affine envelope (burst size·(1 + tolerance/period), rate size/period: a valid arrival curve, \
                    looser than the staircase)";
    Some(match method {
        Method::Pmoo | Method::FifoLp => format!(
            "{method} takes token buckets: each staircase flow ({named}) enters by its {envelope}; tfa and sfa take \
             the staircases exactly where the flows enter"
        ),
        _ => format!(
            "staircase flows ({named}): taken exactly at the server each enters, in tfa's delay and backlog there \
             (FIFO multiplexing) and as sfa's arrival curve of the flow itself; elsewhere (the bursts they bring to \
             later servers, the cross traffic sfa sees, tfa under --blind, pmoo, fifo-lp, DNC's SFA) by its {envelope}"
        ),
    })
}

/// TFA (no grouping, FIFO multiplexing) on `net` as a cache that flows join in place
/// ([`network_bounds::incremental`]); its report is [`tfa_report`].
pub fn tfa_cache(net: &Network) -> Result<network_bounds::incremental::TfaCache, String> {
    network_bounds::applies(net)?;
    Ok(network_bounds::incremental::TfaCache::new(net))
}

/// What `run` gives with the method `tfa` on `net`, from `cache`, the cache of `net`.
pub fn tfa_report(net: &Network, cache: &network_bounds::incremental::TfaCache) -> AnalysisReport {
    let mut report = cache.report(net);
    report.notes.extend(staircase_note(net, Method::Tfa));
    finish(net, &mut report);
    report
}

/// Where flow `flow`'s bounds come from under `req` ([`network_bounds::explain`]): the report
/// `run` gives, and per route the hops' terms. afdx-naive's own rules are TFA's with WOPANet's
/// rounding: it is explained by TFA's terms.
pub fn explain(
    net: &Network,
    req: &Request,
    flow: &str,
) -> Result<network_bounds::explain::Explanation, AnalysisError> {
    explain_with(net, req, flow, None)
}

/// [`explain`] with `lp` solving fifo-lp's programs, as [`run_with`]: the bounds explained are
/// then those `analyze` gives (on a server graph `best` may take a flow's bound from fifo-lp,
/// which its row's method then names).
pub fn explain_with(
    net: &Network,
    req: &Request,
    flow: &str,
    lp: Option<fifo_lp::Solver>,
) -> Result<network_bounds::explain::Explanation, AnalysisError> {
    let f = net
        .flows
        .iter()
        .position(|x| x.name == flow)
        .ok_or_else(|| AnalysisError::UnknownFlow(flow.to_string()))?;
    if req.method == Method::SinkTreeBacklog {
        return Err(
            "--explain shows a flow's hop-by-hop terms; sink-tree-backlog bounds a server's backlog \
                    (docs/ANALYSIS.md)"
                .into(),
        );
    }
    let report = run_with(net, req, lp)?;
    // `best` groups on Ethernet; a server graph has no links.
    let grouping =
        req.grouping || (req.method == Method::Best && net.kind == crate::model::NetworkKind::Ethernet);
    let multiplexing =
        if req.blind { network_bounds::Multiplexing::Blind } else { network_bounds::Multiplexing::Fifo };
    Ok(network_bounds::explain::explain(net, (grouping, multiplexing), req.lp_effort, &report, f))
}

/// What every method's report gets: redundancy-managed bounds and the end-system jitter check.
fn finish(net: &Network, report: &mut AnalysisReport) {
    if !net.fixed_priority.is_empty() {
        report.fixed_priority = Some(response_time::analyze(&net.fixed_priority));
    }
    // Cut-through switches: the analyses assume store-and-forward, so a route through one has no
    // guaranteed bound. Said on every such row and in a note.
    let cut_through: Vec<usize> = (0..net.nodes.len())
        .filter(|&n| net.nodes[n].kind == crate::model::NodeKind::Switch)
        .filter(|&n| net.nodes[n].switching == crate::model::Switching::CutThrough)
        .collect();
    if !cut_through.is_empty() {
        let mut crossed = 0;
        for row in report.flows.iter_mut() {
            let route = net.flows[row.flow]
                .routes
                .iter()
                .find(|r| r.destination == row.destination && r.plane == row.plane);
            if route.is_some_and(|r| r.ports.iter().any(|&p| cut_through.contains(&net.ports[p].node))) {
                row.guaranteed = false;
                crossed += 1;
            }
        }
        let names: Vec<&str> = cut_through.iter().map(|&n| net.nodes[n].name.as_str()).collect();
        report.notes.push(format!(
            "cut-through switches ({}): the analyses assume store-and-forward (a frame enters its next \
             queue only once its last bit is in), so the {crossed} bounds of routes through them are not \
             guaranteed (rows with guaranteed: false)",
            names.join(", ")
        ));
    }
    if net.kind == crate::model::NetworkKind::ServerGraph {
        // A server graph's plain numbers are read as seconds, bits and bit/s; the report keeps the
        // units of every other network, which the reader must scale back to the description's.
        report.notes.push(
            "server graph: its numbers are read as seconds and bits, so delays in µs are 10^6 times its \
             time unit and backlogs in bytes 1/8 of its data unit"
                .into(),
        );
    }
    report.redundancy = redundancy::combine(net, &report.flows);
    // Every late pair is in `redundancy` (skew_ok = false); the note names the first few.
    const NAMED: usize = 10;
    let late: Vec<&results::RedundantBound> = report.redundancy.iter().filter(|r| !r.skew_ok).collect();
    if !late.is_empty() {
        let mut named = String::new();
        for (k, r) in late.iter().take(NAMED).enumerate() {
            let sep = if k == 0 { "" } else { ", " };
            named.push_str(&format!("{sep}{} -> {}", net.flows[r.flow].name, net.nodes[r.destination].name));
        }
        if late.len() > NAMED {
            named.push_str(&format!(" and {} more", late.len() - NAMED));
        }
        report.notes.push(format!(
            "copies may arrive further apart than SkewMax for {} (flow -> destination): {named}",
            late.len()
        ));
    }
    let per_port = net.flows_per_port();
    let overhead = net.spec.defaults.interframe_overhead.bits();
    let mut lmax = Vec::new();
    for (p, bound) in report.ports.iter_mut().enumerate() {
        let port = &net.ports[p];
        if net.nodes[port.node].kind != crate::model::NodeKind::EndSystem {
            continue;
        }
        lmax.clear();
        lmax.extend(
            per_port[p]
                .iter()
                .map(|&f| &net.flows[f])
                .filter(|f| {
                    matches!(f.traffic, crate::model::Traffic::VirtualLink { .. }) && f.source == port.node
                })
                .map(|f| (f.max_frame_wire - overhead) / 8.0),
        );
        if !lmax.is_empty() {
            let unbounded = crate::schedulers::fifo::paper::afdx_jitter_mux(&lmax, port.rate);
            bound.es_jitter_us = Some(unbounded * 1e6);
            if unbounded > 500e-6 {
                report.notes.push(format!(
                    "{}: end-system multiplexing jitter {:.1} us exceeds the 500 us of ARINC 664 (seed 002 Eq. 4)",
                    net.port_label(p),
                    unbounded * 1e6
                ));
            }
        }
    }
}
