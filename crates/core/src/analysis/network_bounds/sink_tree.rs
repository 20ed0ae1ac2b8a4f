//! `sink-tree-backlog`: the backlog bound of a server that is the root of a sink tree, from
//! DNC's sink-tree arrival bounds (NetCal/DNC `Backlog_SinkTree.derivePmooSinkTreeAffine`,
//! `SinkTree_AffineCurves`; Bondorf & Schmitt, "Boosting sensor network calculus by thoroughly
//! bounding cross-traffic", INFOCOM 2015). A network-level bound of one server's whole backlog,
//! not a flow's: no delay.
//!
//! A server s is the root of a sink tree when everything that reaches it from upstream goes on
//! to it: at every server u before s on the path of a flow at s, every flow at u goes on to the
//! same next server and reaches s. Then the traffic entering s through its turns is the output
//! of a tree whose every server serves it whole, and each flow's share of it is bounded by its
//! token bucket deconvolved by the concatenation of the whole services it crossed:
//! b_f + r_f Σ T_x (x before s on its path), rate r_f. With the flows that start at s, the
//! arrivals at s are the token bucket (Σ b, Σ r), whose backlog behind β_{R,T} is Σ b + Σ r·T
//! (none when Σ r > R). DNC's three variants (`SINKTREE_AFFINE_MINPLUS`, `_DIRECT`, `_HOMO`)
//! compute this same curve on rate-latency servers and token buckets (min-plus operations,
//! their closed form, and the closed form with every latency the first server's, which holds
//! on homogeneous trees only); this is the closed form.
//!
//! Where flows leave before the root (a flow served at u that does not reach s), the sum misses
//! what they did to the others at u, and there is no bound: DNC's functional tests skip those
//! flows ("not applicable"). Each flow's row gives the bound of the server where it leaves.

use super::{flow_bound, port_bounds};
use crate::analysis::results::{AnalysisReport, FlowBound};
use crate::curves::Unbounded;
use crate::model::{FlowId, Network, NetworkKind, PortId};

pub const NAME: &str = "sink-tree-backlog";

/// Whether the method applies to `net`: a server graph with one path per flow.
pub fn applies(net: &Network) -> Result<(), String> {
    if net.kind != NetworkKind::ServerGraph {
        return Err(format!("{NAME} applies to server graphs (rate-latency servers, token-bucket flows)"));
    }
    if net.flows.iter().any(|f| f.routes.len() != 1) {
        return Err(format!("{NAME}: every flow needs one path"));
    }
    Ok(())
}

/// The backlog bound of server `s` as the root of a sink tree, or why it is not one.
fn root_backlog(
    net: &Network,
    paths: &[&[PortId]],
    flows_at: &[Vec<FlowId>],
    s: PortId,
) -> Result<f64, String> {
    let (mut burst, mut rate) = (0.0, 0.0);
    for &f in &flows_at[s] {
        let path = paths[f];
        let at = path.iter().position(|&x| x == s).expect("the flow crosses s");
        let mut latency = 0.0;
        for (k, &u) in path[..at].iter().enumerate() {
            let next = path[k + 1];
            for &g in &flows_at[u] {
                let other = paths[g];
                let i = other.iter().position(|&x| x == u).expect("the flow crosses u");
                if other.get(i + 1) != Some(&next) || !other[i + 1..].contains(&s) {
                    return Err(format!(
                        "{}: not the root of a sink tree (flow {} at {} does not go on to it with flow {})",
                        net.port_label(s),
                        net.flows[g].name,
                        net.port_label(u),
                        net.flows[f].name
                    ));
                }
            }
            latency += net.nodes[net.ports[u].node].technological_latency;
        }
        let flow = &net.flows[f];
        burst += flow.burst + flow.rate * latency;
        rate += flow.rate;
    }
    let port = &net.ports[s];
    if rate > port.rate {
        return Err(format!(
            "{}: its sink tree offers rate {rate} > its rate {}",
            net.port_label(s),
            port.rate
        ));
    }
    Ok(burst + rate * net.nodes[port.node].technological_latency)
}

/// Every server's sink-tree backlog bound where it is a root; per flow, the bound of the server
/// where it leaves.
pub fn analyze(net: &Network) -> AnalysisReport {
    let paths: Vec<&[PortId]> = net.flows.iter().map(|f| &f.routes[0].ports[..]).collect();
    let flows_at = net.flows_per_port();
    let backlog: Vec<Result<f64, Unbounded>> = (0..net.ports.len())
        .map(|s| {
            if flows_at[s].is_empty() {
                return Ok(0.0);
            }
            root_backlog(net, &paths, flows_at, s).map_err(Unbounded::new)
        })
        .collect();
    let no_delay = format!("{NAME} bounds a sink tree's backlog at its root, no delay");
    let delay: Vec<Result<f64, Unbounded>> = backlog
        .iter()
        .map(|b| Err(b.as_ref().err().cloned().unwrap_or_else(|| Unbounded::new(no_delay.clone()))))
        .collect();
    let flows: Vec<FlowBound> = net
        .flows
        .iter()
        .enumerate()
        .map(|(f, flow)| {
            let route = &flow.routes[0];
            let sink = *route.ports.last().expect("a path has a server");
            let (b, reason) = match &backlog[sink] {
                Ok(b) => (*b, no_delay.clone()),
                Err(u) => (f64::INFINITY, u.to_string()),
            };
            flow_bound(net, f, route, (f64::INFINITY, b), Some(reason), NAME)
        })
        .collect();
    let notes = vec![format!(
        "{NAME}: each flow's row gives the backlog bound of the server where it leaves, the root of a sink tree \
         (the whole server's backlog, not the flow's)"
    )];
    AnalysisReport::new(net, NAME, flows, port_bounds(net, &delay, &backlog), notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::load_network;

    fn net(servers: &[(f64, f64)], flows: &[(f64, f64, &[usize])]) -> Network {
        let servers: Vec<String> = servers
            .iter()
            .enumerate()
            .map(|(i, (r, t))| format!("{{\"name\": \"s{i}\", \"rate\": {r}, \"latency\": {t}}}"))
            .collect();
        let flows: Vec<String> = flows
            .iter()
            .enumerate()
            .map(|(i, (b, r, p))| {
                let p: Vec<String> = p.iter().map(|s| format!("\"s{s}\"")).collect();
                format!("{{\"name\": \"f{i}\", \"burst\": {b}, \"rate\": {r}, \"path\": [{}]}}", p.join(", "))
            })
            .collect();
        let doc = format!(
            "{{\"name\": \"t\", \"server_graph\": {{\"servers\": [{}], \"flows\": [{}]}}}}",
            servers.join(", "),
            flows.join(", ")
        );
        let (n, diags) = load_network(&doc);
        n.unwrap_or_else(|| panic!("{:?}", diags.0))
    }

    /// A sink tree s0 → s2 ← s1 (rate 10, latency 2 each), f0 (b 4, r 1) from s0 and f1 (b 6,
    /// r 2) from s1, f2 (b 1, r 1) starting at s2: f0 enters s2 with 4 + 1·2 = 6, f1 with
    /// 6 + 2·2 = 10, f2 with 1; Σ b = 17, Σ r = 4, backlog 17 + 4·2 = 25 (bits: the report's
    /// bytes ×8). A flow g added at s0 that leaves there breaks the tree: no bound at s2, but s0
    /// (a root with no turn into it) keeps its (4 + 3) + 2·2 = 11.
    #[test]
    fn the_root_backlog_by_hand_and_a_flow_leaving_early() {
        let tree = net(&[(10.0, 2.0); 3], &[(4.0, 1.0, &[0, 2]), (6.0, 2.0, &[1, 2]), (1.0, 1.0, &[2])]);
        let r = analyze(&tree);
        for row in r.flows.iter() {
            assert!((row.backlog_bytes * 8.0 - 25.0).abs() < 1e-9, "{row:?}");
            assert!(row.delay_us.is_infinite() && row.reason.is_some());
        }
        let broken = net(&[(10.0, 2.0); 3], &[(4.0, 1.0, &[0, 2]), (6.0, 2.0, &[1, 2]), (3.0, 1.0, &[0])]);
        let r = analyze(&broken);
        assert!(r.flows[0].backlog_bytes.is_infinite());
        assert!(r.flows[0].reason.as_deref().unwrap().contains("not the root of a sink tree"));
        assert!((r.flows[2].backlog_bytes * 8.0 - 11.0).abs() < 1e-9);
    }
}
