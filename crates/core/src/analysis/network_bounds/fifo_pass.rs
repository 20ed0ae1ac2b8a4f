//! afdx-naive's TFA (FIFO ports, no grouping, bursts grown by b + r·d) over flat arrays.
//!
//! A FIFO port whose flows are token buckets, behind the rate-latency service β_{C,T}, has TFA's
//! bounds in closed form (Le Boudec & Thiran Thm 1.4.1-1.4.2): delay T + B/C and backlog B + R·T,
//! with B and R the sums of the bursts and rates entering the port; each flow leaves with its
//! burst grown by its rate × that delay, the rule of WOPANet-family tools. No curve is needed:
//! one pass over the ports in feed-forward order, with the (flow, port) crossings in one flat
//! array grouped by port, computes what the general path computes with that rule
//! ([`BurstGrowth::ByDelay`]), with the same operations in the same order, so every bound is the
//! same to the last bit (`tests` below check it on many networks).
//!
//! It applies when every port carrying traffic has one FIFO queue (shaped or not), the port
//! dependencies are feed-forward, and every route of a multicast flow reaches a port through the
//! same upstream port. Anything else (cycles, diverging routes) takes the general path.

use super::*;

use crate::model::indices::NONE;

/// Per-port results of the pass, as the general path reports them.
pub(super) struct FifoPass {
    /// Delay of each port (s), or why there is none.
    pub delay: Vec<Result<f64, Unbounded>>,
    /// Backlog of each port (bits), or why there is none.
    pub backlog: Vec<Result<f64, Unbounded>>,
    /// Σ bursts entering each port (bits).
    pub bursts: Vec<f64>,
}

/// What result rows read of each port and node, side by side.
pub(crate) struct PortTables {
    pub propagation: Vec<f64>,
    pub rate: Vec<f64>,
    /// Technological latency of the port's node.
    pub latency: Vec<f64>,
    /// Whether the port is a switch's.
    pub switch: Vec<bool>,
    /// Receive latency of each node.
    pub receive: Vec<f64>,
}

impl PortTables {
    pub fn of(net: &Network) -> PortTables {
        PortTables {
            propagation: net.ports.iter().map(|p| p.propagation_delay).collect(),
            rate: net.ports.iter().map(|p| p.rate).collect(),
            latency: net.ports.iter().map(|p| net.nodes[p.node].technological_latency).collect(),
            switch: net
                .ports
                .iter()
                .map(|p| net.nodes[p.node].kind == crate::model::NodeKind::Switch)
                .collect(),
            receive: net.nodes.iter().map(|n| n.receive_latency).collect(),
        }
    }

    /// [`best_case_delay`] of `flow` through `ports` to `destination`, term by term.
    #[cfg(test)]
    pub fn best_case(&self, flow: &crate::model::FlowModel, ports: &[u32], destination: usize) -> f64 {
        ports.iter().map(|&p| self.best_case_hop(flow, p as usize)).sum::<f64>() + self.receive[destination]
    }

    /// One hop of [`Self::best_case`]: latency, the smallest frame, propagation.
    #[inline]
    pub fn best_case_hop(&self, flow: &crate::model::FlowModel, p: usize) -> f64 {
        self.latency[p] + flow.min_frame_wire / self.rate[p] + self.propagation[p]
    }
}

/// TFA without grouping on FIFO ports, or `None` when the general path must run.
pub(super) fn pass(net: &Network) -> Option<FifoPass> {
    let np = net.ports.len();
    let per_port = net.flows_per_port();
    // Service rate of every port carrying traffic: one FIFO queue, or the general path.
    let mut rate = vec![0.0; np];
    for (p, flows) in per_port.iter().enumerate() {
        if !flows.is_empty() {
            match port_model(net, p, flows) {
                Ok(PortModel { rate: r, sharing: Sharing::Fifo }) => rate[p] = r,
                _ => return None,
            }
        }
    }
    let sl = net.crossings()?;
    // Rate and source burst of each crossing's flow, gathered from per-flow arrays that stay in
    // cache (the flow records are large and far apart).
    let (flow_rate, flow_burst): (Vec<f64>, Vec<f64>) = net.flows.iter().map(|f| (f.rate, f.burst)).unzip();
    let slot_rate: Vec<f64> = sl.flow.iter().map(|&f| flow_rate[f as usize]).collect();
    // Bursts entering each crossing: the source burst, grown below at every later port.
    let mut burst: Vec<f64> = sl.flow.iter().map(|&f| flow_burst[f as usize]).collect();
    let mut out = FifoPass {
        delay: (0..np).map(|_| Ok(0.0)).collect(),
        backlog: (0..np).map(|_| Ok(0.0)).collect(),
        bursts: vec![0.0; np],
    };
    // Delay of each finished port, and whether it is bounded.
    let mut delay = vec![0.0; np];
    let mut bounded = vec![true; np];
    // Cyclic dependencies: TFA iterates to a fixed point on the general path.
    let ports = net.port_order();
    if !ports.acyclic {
        return None;
    }
    for &p in &ports.order {
        let slots = sl.of_port(p);
        // Bursts entering p: upstream burst grown by the upstream port's delay.
        for k in slots.clone() {
            let u = sl.up[k];
            if u != NONE {
                let pu = sl.up_port[k] as usize;
                burst[k] =
                    if bounded[pu] { burst[u as usize] + slot_rate[k] * delay[pu] } else { f64::INFINITY };
            }
        }
        out.bursts[p] = burst[slots.clone()].iter().fold(0.0, |s, &b| s + b);
        let port = &net.ports[p];
        let latency = net.nodes[port.node].technological_latency;
        if slots.is_empty() {
            // No traffic: the general path's curves give the backlog.
            let model =
                port_model(net, p, &[]).unwrap_or(PortModel { rate: port.rate, sharing: Sharing::Fifo });
            let beta = Curve::rate_latency(model.rate, latency);
            out.backlog[p] =
                curves::vertical_deviation(&Curve::zero(), &beta).map_err(|u| u.context(&net.port_label(p)));
            continue;
        }
        let load: f64 = slot_rate[slots.clone()].iter().sum();
        let why = if load > rate[p] {
            Some(format!(
                "{} overloaded: offered {} > {} rate {}",
                net.port_label(p),
                rate_text(net, load),
                if rate[p] < port.rate { "shaped" } else { "link" },
                rate_text(net, rate[p])
            ))
        } else {
            slots.clone().find(|&k| !burst[k].is_finite()).map(|k| {
                format!(
                    "{}: an upstream port has no finite bound for flow '{}'",
                    net.port_label(p),
                    net.flows[sl.flow[k] as usize].name
                )
            })
        };
        if let Some(why) = why {
            bounded[p] = false;
            out.delay[p] = Err(Unbounded::new(why.clone()));
            out.backlog[p] = Err(Unbounded::new(why));
            continue;
        }
        let (b, r) = slots.fold((0.0, 0.0), |(b, r), k| (b + burst[k], r + slot_rate[k]));
        delay[p] = latency + b / rate[p];
        out.delay[p] = Ok(delay[p]);
        out.backlog[p] = Ok(b + r * latency);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::afdx_naive;
    use crate::generate::{afdx, random_small, AfdxParams, RandomSchedulers};
    use crate::model::validate_spec;

    /// The pass and the general path (with afdx-naive's rule, b + r·d) give the same port delays
    /// and bursts to afdx-naive, bit for bit, and the same afdx-naive report; `false` when the
    /// pass does not apply.
    fn same_as_general(net: &Network, what: &str) -> bool {
        if pass(net).is_none() {
            return false;
        }
        let (a, b) = (fifo_tfa(net), fifo_tfa_general(net));
        let v = |x: &[f64]| x.iter().map(|d| d.to_bits()).collect::<Vec<_>>();
        assert_eq!(v(&a.port_delay), v(&b.port_delay), "{what}: afdx-naive port delays");
        assert_eq!(v(&a.port_bursts), v(&b.port_bursts), "{what}: afdx-naive port bursts");
        assert_eq!(a.notes, b.notes, "{what}");
        let (a, b) = (afdx_naive::report(net, a), afdx_naive::report(net, b));
        assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap(), "{what}");
        true
    }

    /// Flattened routes and port tables give what the nested routes and `best_case_delay` give.
    #[test]
    fn flat_routes_and_best_case() {
        for seed in 0..100 {
            let net = small(seed, RandomSchedulers::Any);
            let (routes, tables) = (net.flat_routes(), PortTables::of(&net));
            let mut k = 0;
            for (f, flow) in net.flows.iter().enumerate() {
                for r in &flow.routes {
                    let ports: Vec<usize> = routes.ports(k).iter().map(|&p| p as usize).collect();
                    assert_eq!((routes.flow[k] as usize, &ports), (f, &r.ports), "seed {seed}");
                    assert_eq!(routes.destination[k] as usize, r.destination);
                    assert_eq!(routes.plane[k] as usize, r.plane);
                    assert_eq!(
                        tables.best_case(flow, routes.ports(k), r.destination).to_bits(),
                        best_case_delay(&net, f, &r.ports, r.destination).to_bits(),
                        "seed {seed}"
                    );
                    k += 1;
                }
            }
            assert_eq!(k, routes.len());
        }
    }

    fn small(seed: u64, s: RandomSchedulers) -> Network {
        validate_spec(random_small(seed, s)).0.expect("random networks validate")
    }

    /// Every random FIFO network, the same with its flows' rates scaled up until ports overload
    /// (infinite bounds downstream, with reasons), and with a third of its ports shaped by a token
    /// bucket (one FIFO queue at the shaped rate; a shaper burst below the largest frame has no
    /// model and leaves the network to the general path).
    #[test]
    fn same_bounds_as_the_general_path_on_random_fifo_networks() {
        let (mut overloaded, mut shaped) = (0, 0);
        for seed in 0..300 {
            let net = small(seed, RandomSchedulers::Fifo);
            assert!(same_as_general(&net, &format!("seed {seed}")));

            let mut heavy = net.clone();
            for (f, flow) in heavy.flows.iter_mut().enumerate() {
                flow.rate *= [1.0, 3.0, 7.0][f % 3];
            }
            assert!(same_as_general(&heavy, &format!("seed {seed}, rates scaled")));
            let r = afdx_naive::report(&heavy, fifo_tfa(&heavy));
            overloaded += r.flows.iter().filter(|f| f.reason.is_some()).count();

            let mut net = net;
            for (p, port) in net.ports.iter_mut().enumerate() {
                if p % 3 == 1 {
                    let burst = if seed % 5 == 0 { 100.0 } else { 3000.0 };
                    port.shaper = Some(crate::model::Shaper { rate: port.rate * 0.6, burst: burst * 8.0 });
                }
            }
            shaped += same_as_general(&net, &format!("seed {seed}, shaped")) as usize;
        }
        assert!(overloaded > 100 && shaped > 200, "{overloaded} unbounded rows, {shaped} shaped networks");
    }

    /// Priorities and per-class schedulers take the general path unless no port carrying traffic
    /// has one.
    #[test]
    fn other_schedulers_take_the_general_path() {
        for seed in 0..60 {
            for s in [RandomSchedulers::StaticPriority, RandomSchedulers::Mixed, RandomSchedulers::Any] {
                same_as_general(&small(seed, s), &format!("seed {seed}, {s:?}"));
            }
        }
    }

    #[test]
    fn same_bounds_as_the_general_path_on_generated_afdx_networks() {
        for (vls, switches, planes, seed) in
            [(100, 4, 2, 1), (300, 6, 1, 2), (1000, 8, 2, 3), (5000, 16, 2, 1)]
        {
            let spec = afdx(&AfdxParams { virtual_links: vls, switches, planes, seed, ..Default::default() });
            let net = validate_spec(spec).0.expect("generated networks validate");
            assert!(same_as_general(&net, &format!("afdx {vls} VLs, seed {seed}")));
        }
    }

    fn load(doc: serde_json::Value) -> Network {
        let (n, d) = crate::model::load_network(&doc.to_string());
        n.unwrap_or_else(|| panic!("{:?}", d.0))
    }

    /// Cyclic port dependencies (a ring of switches) and a multicast flow reaching one port
    /// through two upstream ports: the general path, with its fixed point and notes.
    #[test]
    fn cycles_and_diverging_routes_take_the_general_path() {
        let vl = |name: &str, src: &str, dst: &str, path: &[&str]| {
            serde_json::json!({"name": name, "type": "virtual_link", "bag": "1ms", "lmin": "64B",
                "lmax": "1000B", "source": src, "destinations": [{"node": dst, "path": path}]})
        };
        let ring = load(serde_json::json!({
            "name": "ring",
            "end_systems": [{"name": "E1"}, {"name": "E2"}, {"name": "E3"}],
            "switches": [{"name": "S1"}, {"name": "S2"}, {"name": "S3"}],
            "links": [
                {"from": "E1", "to": "S1"}, {"from": "E2", "to": "S2"}, {"from": "E3", "to": "S3"},
                {"from": "S1", "to": "S2"}, {"from": "S2", "to": "S3"}, {"from": "S3", "to": "S1"}],
            "flows": [
                vl("A", "E1", "E3", &["E1", "S1", "S2", "S3", "E3"]),
                vl("B", "E2", "E1", &["E2", "S2", "S3", "S1", "E1"]),
                vl("C", "E3", "E2", &["E3", "S3", "S1", "S2", "E2"])]
        }));
        assert!(!same_as_general(&ring, "ring"));
        assert!(fifo_tfa(&ring).notes.iter().any(|n| n.contains("fixed point")));

        // M goes to E2 through S2 and to E3 through S3, N from E2 to E3 through S2 and S3.
        let doc = serde_json::json!({
            "name": "diverging",
            "end_systems": [{"name": "E1"}, {"name": "E2"}, {"name": "E3"}],
            "switches": [{"name": "S1"}, {"name": "S2"}, {"name": "S3"}],
            "links": [
                {"from": "E1", "to": "S1"}, {"from": "E2", "to": "S2"}, {"from": "E3", "to": "S3"},
                {"from": "S1", "to": "S2"}, {"from": "S2", "to": "S3"}, {"from": "S1", "to": "S3"}],
            "flows": [{"name": "M", "type": "virtual_link", "bag": "1ms", "lmin": "64B", "lmax": "1000B",
                "source": "E1", "destinations": [
                    {"node": "E2", "path": ["E1", "S1", "S2", "E2"]},
                    {"node": "E3", "path": ["E1", "S1", "S3", "E3"]}]},
                vl("N", "E2", "E3", &["E2", "S2", "S3", "E3"])]
        });
        let mut net = load(doc);
        assert!(same_as_general(&net, "tree"));
        // By hand (validation would refuse it), M's first route goes on from S2 to S3 and E3, so
        // that S3's port to E3 is reached from S2 on one route and from S1 on the other.
        let s2 = net.nodes.iter().position(|n| n.name == "S2").unwrap();
        let s2_s3 = net.nodes[s2].ports.iter().copied().find(|&p| net.nodes[net.ports[p].peer].name == "S3");
        let to_e3 = *net.flows[0].routes[1].ports.last().unwrap();
        let first = &mut net.flows[0].routes[0];
        first.ports.pop();
        first.ports.extend([s2_s3.unwrap(), to_e3]);
        net.index_port_flows();
        assert!(!same_as_general(&net, "diverging"));
    }
}
