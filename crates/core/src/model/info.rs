//! Summary of a validated network: counts and the load of every egress port.

use super::network::*;
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct PortLoad {
    pub node: String,
    pub port: String,
    pub peer: String,
    pub link: String,
    pub plane: String,
    pub scheduler: String,
    /// Bits per second offered on the wire (each multicast flow counted once).
    pub load_bps: f64,
    pub rate_bps: f64,
    /// load_bps / rate_bps.
    pub utilisation: f64,
    pub flows: usize,
    pub overloaded: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct LinkLoad {
    pub name: String,
    pub from: String,
    pub to: String,
    /// Load of the `from` -> `to` direction and of the reverse one, bits per second.
    pub direct_bps: f64,
    pub reverse_bps: f64,
    pub rate_bps: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Counts {
    pub end_systems: usize,
    pub switches: usize,
    pub links: usize,
    pub egress_ports: usize,
    pub flows: usize,
    pub virtual_links: usize,
    pub routes: usize,
    pub planes: usize,
    pub processors: usize,
    pub buses: usize,
    pub tasks: usize,
    pub messages: usize,
    pub servers: usize,
    pub chains: usize,
}

/// Utilisation of a processor or bus: Σ C/T over what it runs (a server counts its budget).
#[derive(Clone, Debug, Serialize)]
pub struct ResourceLoad {
    pub name: String,
    /// `processor` or `bus`.
    pub kind: &'static str,
    pub utilisation: f64,
    /// Tasks or messages placed on it, servers included.
    pub items: usize,
    pub overloaded: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Info {
    pub name: String,
    /// `ethernet`, or `server_graph` for an abstract network-calculus network.
    pub kind: super::NetworkKind,
    pub planes: Vec<String>,
    pub counts: Counts,
    pub ports: Vec<PortLoad>,
    pub links: Vec<LinkLoad>,
    pub overloaded_ports: usize,
    pub resources: Vec<ResourceLoad>,
}

pub fn info(net: &Network) -> Info {
    let loads = net.port_loads();
    let per_port = net.flows_per_port();
    let ports: Vec<PortLoad> = net
        .ports
        .iter()
        .enumerate()
        .map(|(p, port)| PortLoad {
            node: net.nodes[port.node].name.clone(),
            port: port.name.clone(),
            peer: net.nodes[port.peer].name.clone(),
            link: net.links[port.link].name.clone(),
            plane: net.planes[port.plane].clone(),
            scheduler: port.scheduler_name.clone(),
            load_bps: loads[p],
            rate_bps: port.rate,
            utilisation: loads[p] / port.rate,
            flows: per_port[p].len(),
            overloaded: loads[p] > port.rate * (1.0 + 1e-12),
        })
        .collect();
    // A server graph has servers, not links.
    let graph = net.kind == super::NetworkKind::ServerGraph;
    let links = net
        .links
        .iter()
        .filter(|_| !graph)
        .map(|l| LinkLoad {
            name: l.name.clone(),
            from: net.nodes[net.ports[l.forward].node].name.clone(),
            to: net.nodes[net.ports[l.backward].node].name.clone(),
            direct_bps: loads[l.forward],
            reverse_bps: loads[l.backward],
            rate_bps: net.ports[l.forward].rate,
        })
        .collect();
    let count = |k: NodeKind| net.nodes.iter().filter(|n| n.kind == k).count();
    let fp = &net.fixed_priority;
    Info {
        name: net.spec.name.clone(),
        kind: net.kind,
        planes: net.planes.clone(),
        counts: Counts {
            end_systems: count(NodeKind::EndSystem),
            switches: count(NodeKind::Switch),
            links: net.links.len(),
            egress_ports: net.ports.len(),
            flows: net.flows.len(),
            virtual_links: net.flows.iter().filter(|f| f.kind_name() == "virtual_link").count(),
            routes: net.flows.iter().map(|f| f.routes.len()).sum(),
            planes: net.planes.len(),
            processors: fp.processors.len(),
            buses: fp.buses.len(),
            tasks: fp.tasks.len(),
            messages: fp.messages.len(),
            servers: fp.servers.len(),
            chains: fp.chains.len(),
        },
        resources: resource_loads(fp),
        overloaded_ports: ports.iter().filter(|p| p.overloaded).count(),
        ports,
        links,
    }
}

fn resource_loads(fp: &super::FixedPrioritySystem) -> Vec<ResourceLoad> {
    let loads = fp.loads();
    let summary = |ls: &Vec<super::fixed_priority::Load>| {
        let utilisation: f64 = ls.iter().map(|l| l.cost as f64 / l.period as f64).sum();
        (utilisation, ls.len())
    };
    let processors =
        fp.processors.iter().zip(&loads.processors).map(|(p, ls)| (p.name.clone(), "processor", ls));
    let buses = fp.buses.iter().zip(&loads.buses).map(|(b, ls)| (b.name.clone(), "bus", ls));
    processors
        .chain(buses)
        .map(|(name, kind, ls)| {
            let (utilisation, items) = summary(ls);
            ResourceLoad { name, kind, utilisation, items, overloaded: utilisation > 1.0 + 1e-12 }
        })
        .collect()
}
