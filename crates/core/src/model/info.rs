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
}

#[derive(Clone, Debug, Serialize)]
pub struct Info {
    pub name: String,
    pub planes: Vec<String>,
    pub counts: Counts,
    pub ports: Vec<PortLoad>,
    pub links: Vec<LinkLoad>,
    pub overloaded_ports: usize,
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
    let links = net
        .links
        .iter()
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
    Info {
        name: net.spec.name.clone(),
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
        },
        overloaded_ports: ports.iter().filter(|p| p.overloaded).count(),
        ports,
        links,
    }
}
