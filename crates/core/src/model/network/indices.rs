//! Indices derived from a validated network's routes and kept with it: the routes as flat
//! arrays, the (flow, egress port) crossings grouped by port, the ports' feed-forward order, and
//! the names shared by result rows.
//!
//! Every analysis call reads them, so they are computed once per network rather than once per
//! call (on a 5000-VL network, walking the nested route vectors costs more than TFA itself).
//! Validation builds them as it finishes. A validated network is not changed afterwards; code that
//! edits routes by hand calls [`Network::index_port_flows`], which drops them, and they are built
//! again on first use. Nothing here reads a flow's rate or burst, or a port's scheduler, so
//! editing those needs no re-indexing.

use super::{Network, PortId};
use std::sync::{Arc, OnceLock};

/// "No such index" in the `u32` arrays below.
pub const NONE: u32 = u32::MAX;

/// The names of a network's flows, nodes and planes, shared by the reports on it (their rows
/// hold indices).
pub struct Names {
    pub flows: Vec<String>,
    pub nodes: Vec<String>,
    pub planes: Vec<String>,
}

impl Names {
    fn of(net: &Network) -> Names {
        Names {
            flows: net.flows.iter().map(|f| f.name.clone()).collect(),
            nodes: net.nodes.iter().map(|n| n.name.clone()).collect(),
            planes: net.planes.clone(),
        }
    }
}

/// Every route of every flow, in flow then route order, as flat arrays: route `k` is
/// `flow[k]`'s route to `destination[k]` on `plane[k]` through `ports[start[k]..start[k + 1]]`.
/// Every report lists its rows in this order.
pub struct FlatRoutes {
    pub start: Vec<u32>,
    pub ports: Vec<u32>,
    pub flow: Vec<u32>,
    pub destination: Vec<u32>,
    pub plane: Vec<u32>,
}

impl FlatRoutes {
    fn of(net: &Network) -> FlatRoutes {
        let routes = net.flows.iter().flat_map(|f| &f.routes);
        let (n, hops) = (routes.clone().count(), routes.map(|r| r.ports.len()).sum());
        let mut out = FlatRoutes {
            start: Vec::with_capacity(n + 1),
            ports: Vec::with_capacity(hops),
            flow: Vec::with_capacity(n),
            destination: Vec::with_capacity(n),
            plane: Vec::with_capacity(n),
        };
        out.start.push(0);
        for (f, flow) in net.flows.iter().enumerate() {
            for r in &flow.routes {
                out.ports.extend(r.ports.iter().map(|&p| p as u32));
                out.start.push(out.ports.len() as u32);
                out.flow.push(f as u32);
                out.destination.push(r.destination as u32);
                out.plane.push(r.plane as u32);
            }
        }
        out
    }

    /// Number of routes.
    pub fn len(&self) -> usize {
        self.flow.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flow.is_empty()
    }

    /// Egress ports of route `k`, source first.
    pub fn ports(&self, k: usize) -> &[u32] {
        &self.ports[self.start[k] as usize..self.start[k + 1] as usize]
    }
}

/// The (flow, egress port) crossings, grouped by port in flow order (the order of
/// [`Network::flows_per_port`]): port `p`'s crossings are `start[p]..start[p + 1]`. A multicast
/// flow crosses a port once whatever the number of its routes through it.
pub struct Crossings {
    pub start: Vec<u32>,
    /// The crossing's flow.
    pub flow: Vec<u32>,
    /// The same flow's crossing just upstream, and its port ([`NONE`] at the source port).
    pub up: Vec<u32>,
    pub up_port: Vec<u32>,
}

impl Crossings {
    /// `None` when a route reaches a port through another upstream port than an earlier route of
    /// the same flow (a tree that is not one; validation refuses it, hand-edited routes may not),
    /// or when the network is too large for `u32` indices.
    fn of(net: &Network) -> Option<Crossings> {
        let per_port = net.flows_per_port();
        let np = net.ports.len();
        if per_port.len() != np || np >= NONE as usize || net.flows.len() >= NONE as usize {
            return None;
        }
        let mut start = Vec::with_capacity(np + 1);
        let mut n = 0usize;
        start.push(0u32);
        for flows in per_port {
            n += flows.len();
            start.push(u32::try_from(n).ok().filter(|&n| n != NONE)?);
        }
        let mut next: Vec<u32> = start[..np].to_vec();
        let (mut flow, mut up, mut up_port) = (vec![NONE; n], vec![NONE; n], vec![NONE; n]);
        // The last flow met at each port: routes of a multicast flow share their crossings.
        let mut last = vec![u32::MAX; np];
        // Over the flat routes (in flow order), not the nested ones: no pointer chasing.
        let routes = net.flat_routes();
        for k in 0..routes.len() {
            let f = routes.flow[k];
            let (mut prev, mut prev_port) = (NONE, NONE);
            for &p in routes.ports(k) {
                let pi = p as usize;
                let s = if last[pi] == f {
                    let s = next[pi] - 1;
                    if up[s as usize] != prev {
                        return None;
                    }
                    s
                } else {
                    last[pi] = f;
                    let s = next[pi];
                    if s == start[pi + 1] {
                        return None;
                    }
                    next[pi] += 1;
                    flow[s as usize] = f;
                    up[s as usize] = prev;
                    up_port[s as usize] = prev_port;
                    s
                };
                prev = s;
                prev_port = p;
            }
        }
        if next.iter().zip(&start[1..]).any(|(a, b)| a != b) {
            return None;
        }
        Some(Crossings { start, flow, up, up_port })
    }

    /// Crossings of port `p`.
    pub fn of_port(&self, p: usize) -> std::ops::Range<usize> {
        self.start[p] as usize..self.start[p + 1] as usize
    }
}

/// The egress ports that follow each port on some route, in the order routes first make them
/// follow (what the dependency order and the cycle check read).
pub(crate) fn port_successors(net: &Network) -> Vec<Vec<PortId>> {
    let mut next: Vec<Vec<PortId>> = vec![Vec::new(); net.ports.len()];
    for flow in &net.flows {
        for r in &flow.routes {
            for w in r.ports.windows(2) {
                if !next[w[0]].contains(&w[1]) {
                    next[w[0]].push(w[1]);
                }
            }
        }
    }
    next
}

/// The egress ports in an order where every port comes after the ports that feed it (Kahn),
/// followed by the ports on cycles, if any.
pub struct PortOrder {
    pub order: Vec<PortId>,
    /// No cyclic dependency: `order` is a feed-forward order of every port.
    pub acyclic: bool,
}

impl PortOrder {
    fn of(net: &Network) -> PortOrder {
        let next = port_successors(net);
        let n = next.len();
        let mut indegree = vec![0usize; n];
        for &q in next.iter().flatten() {
            indegree[q] += 1;
        }
        let mut order: Vec<PortId> = (0..n).filter(|&p| indegree[p] == 0).collect();
        let mut head = 0;
        while head < order.len() {
            let p = order[head];
            head += 1;
            for &q in &next[p] {
                indegree[q] -= 1;
                if indegree[q] == 0 {
                    order.push(q);
                }
            }
        }
        let acyclic = order.len() == n;
        if !acyclic {
            order.extend((0..n).filter(|&p| indegree[p] > 0));
        }
        PortOrder { order, acyclic }
    }
}

/// The indices of one network, each built on first use.
#[derive(Clone, Debug, Default)]
pub struct Derived {
    names: OnceLock<Arc<Names>>,
    routes: OnceLock<Arc<FlatRoutes>>,
    crossings: OnceLock<Option<Arc<Crossings>>>,
    port_order: OnceLock<Arc<PortOrder>>,
}

impl std::fmt::Debug for Names {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Names({} flows)", self.flows.len())
    }
}

impl std::fmt::Debug for FlatRoutes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FlatRoutes({} routes)", self.len())
    }
}

impl std::fmt::Debug for PortOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PortOrder({} ports, acyclic: {})", self.order.len(), self.acyclic)
    }
}

impl std::fmt::Debug for Crossings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Crossings({})", self.flow.len())
    }
}

impl Network {
    /// [`Self::index_port_flows`] after flows were appended (those from `first` on) or the last
    /// ones taken away (down to `first` flows): the ports' flow lists updated in place (they are
    /// in flow order), and the feed-forward order kept when `same_successors` (no port gained
    /// or lost a successor: the order is then the one built again, which follows the successors'
    /// order of first appearance in the flows before `first`).
    pub(crate) fn index_port_flows_from(&mut self, first: usize, same_successors: bool) {
        let order = if same_successors { self.derived.port_order.get().cloned() } else { None };
        self.derived = Default::default();
        for list in self.port_flows.iter_mut() {
            while list.last().is_some_and(|&f| f >= first) {
                list.pop();
            }
        }
        for f in first..self.flows.len() {
            for route in &self.flows[f].routes {
                for &p in &route.ports {
                    if self.port_flows[p].last() != Some(&f) {
                        self.port_flows[p].push(f);
                    }
                }
            }
        }
        if let Some(order) = order {
            let _ = self.derived.port_order.set(order);
        }
    }

    /// Builds every index now (validation does, while the routes are still in cache), rather
    /// than on first use.
    pub(crate) fn build_indices(&self) {
        self.names();
        self.crossings();
        self.port_order();
    }

    /// Names of flows, nodes and planes, shared by reports.
    pub fn names(&self) -> Arc<Names> {
        self.derived.names.get_or_init(|| Arc::new(Names::of(self))).clone()
    }

    /// The routes as flat arrays.
    pub fn flat_routes(&self) -> &FlatRoutes {
        self.derived.routes.get_or_init(|| Arc::new(FlatRoutes::of(self)))
    }

    /// The ports in feed-forward order.
    pub fn port_order(&self) -> &PortOrder {
        self.derived.port_order.get_or_init(|| Arc::new(PortOrder::of(self)))
    }

    /// The crossings grouped by port, or `None` (see [`Crossings`]).
    pub fn crossings(&self) -> Option<&Crossings> {
        self.derived.crossings.get_or_init(|| Crossings::of(self).map(Arc::new)).as_deref()
    }
}
