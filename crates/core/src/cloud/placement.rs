//! Where a VSN goes: components onto cores, virtual links onto paths.
//!
//! Components: partitioned EDF, each component on one core, a core admitting components while
//! Σ Q/T ≤ 1 (EDF's exact test for implicit deadlines, what SCHED_DEADLINE reservations pinned
//! to a core need). The heuristic takes a request's components by decreasing utilisation and
//! puts each on the core, among those with room, of (1) a host already holding a component of
//! the same VSN linked to it (affinity: a virtual link inside a host costs no network), then
//! (2) the least used core of the infrastructure (worst fit: spreading leaves room for large
//! components later); ties go to the host and core listed first.
//!
//! Virtual links: the k shortest simple paths between the two hosts through switches only
//! (fewest hops first, then the order of the network's links), each tried in turn by the
//! admission.

use super::vsn::Reservation;
use crate::model::{Network, NodeId, NodeKind};

/// Cores and what they hold.
#[derive(Clone, Debug)]
pub struct Cores {
    /// Per host (index into the infrastructure's hosts), per core, the utilisation in use.
    pub used: Vec<Vec<f64>>,
}

/// A component's place: (host, core).
pub type Place = (usize, usize);

const ROOM: f64 = 1.0 + 1e-12;

impl Cores {
    pub fn new(cores: &[u32]) -> Cores {
        Cores { used: cores.iter().map(|&c| vec![0.0; c as usize]).collect() }
    }

    pub fn fits(&self, (h, c): Place, u: f64) -> bool {
        self.used[h][c] + u <= ROOM
    }

    pub fn add(&mut self, (h, c): Place, u: f64) {
        self.used[h][c] += u;
    }

    pub fn remove(&mut self, (h, c): Place, u: f64) {
        self.used[h][c] = (self.used[h][c] - u).max(0.0);
    }

    /// The largest free capacity of any core, for a refusal's message.
    pub fn largest_free(&self) -> f64 {
        self.used.iter().flatten().map(|u| 1.0 - u).fold(0.0, f64::max)
    }
}

/// Why a request's components found no place: the first that found no core, the request's
/// components placed before it (largest first), and the largest free capacity once they were
/// (what the refused component was offered, not what the cores had before the request).
#[derive(Clone, Debug, PartialEq)]
pub struct NoRoom {
    pub component: usize,
    pub placed: Vec<usize>,
    pub largest_free: f64,
}

/// The heuristic: a place per component (in the request's order), or why one found no core. `linked[i]` lists the components joined to i by a virtual link.
pub fn place(
    cores: &Cores,
    reservations: &[Reservation],
    linked: &[Vec<usize>],
) -> Result<Vec<Place>, NoRoom> {
    let mut cores = cores.clone();
    let mut order: Vec<usize> = (0..reservations.len()).collect();
    order.sort_by(|&a, &b| {
        reservations[b].utilisation().total_cmp(&reservations[a].utilisation()).then(a.cmp(&b))
    });
    let mut places: Vec<Option<Place>> = vec![None; reservations.len()];
    for &i in &order {
        let u = reservations[i].utilisation();
        let affinity: Vec<usize> = linked[i].iter().filter_map(|&j| places[j].map(|p| p.0)).collect();
        let best_on = |hosts: &mut dyn Iterator<Item = usize>| -> Option<Place> {
            let mut best: Option<(Place, f64)> = None;
            for h in hosts {
                for (c, used) in cores.used[h].iter().enumerate() {
                    if cores.fits((h, c), u) && best.is_none_or(|(_, b)| *used < b) {
                        best = Some(((h, c), *used));
                    }
                }
            }
            best.map(|b| b.0)
        };
        let mut hosts_with_peers = affinity.clone();
        hosts_with_peers.sort();
        hosts_with_peers.dedup();
        let chosen =
            best_on(&mut hosts_with_peers.into_iter()).or_else(|| best_on(&mut (0..cores.used.len())));
        match chosen {
            Some(p) => {
                cores.add(p, u);
                places[i] = Some(p);
            }
            None => {
                let placed = order.iter().copied().take_while(|&j| j != i).collect();
                return Err(NoRoom { component: i, placed, largest_free: cores.largest_free() });
            }
        }
    }
    Ok(places.into_iter().map(|p| p.expect("every component placed")).collect())
}

/// Up to `k` simple paths (node lists) from `from` to `to` whose inner nodes are switches,
/// fewest hops first; among paths of equal length, the order of a depth-first search that
/// follows each node's ports in the network's order. Paths at most 2 hops longer than the
/// shortest are considered (and at most 10,000 of them enumerated).
pub fn k_shortest_paths(net: &Network, from: NodeId, to: NodeId, k: usize) -> Vec<Vec<NodeId>> {
    let neighbours = |n: NodeId| net.nodes[n].ports.iter().map(|&p| net.ports[p].peer);
    // Hop distance to `to` through switches (breadth first from the destination).
    let mut dist = vec![usize::MAX; net.nodes.len()];
    dist[to] = 0;
    let mut queue = std::collections::VecDeque::from([to]);
    while let Some(n) = queue.pop_front() {
        if n != to && net.nodes[n].kind != NodeKind::Switch {
            continue;
        }
        for m in neighbours(n) {
            if dist[m] == usize::MAX {
                dist[m] = dist[n] + 1;
                queue.push_back(m);
            }
        }
    }
    if dist[from] == usize::MAX {
        return Vec::new();
    }
    let limit = dist[from] + 2;
    let mut found: Vec<Vec<NodeId>> = Vec::new();
    let mut path = vec![from];
    let mut on_path = vec![false; net.nodes.len()];
    on_path[from] = true;
    // Iterative depth-first search: a stack of (node, next port index).
    let mut stack: Vec<(NodeId, usize)> = vec![(from, 0)];
    while let Some(&mut (n, ref mut next)) = stack.last_mut() {
        let ports = &net.nodes[n].ports;
        if *next >= ports.len() || found.len() >= 10_000 {
            stack.pop();
            path.pop();
            on_path[n] = false;
            continue;
        }
        let m = net.ports[ports[*next]].peer;
        *next += 1;
        if on_path[m] || dist[m] == usize::MAX || path.len() + dist[m] > limit {
            continue;
        }
        if m == to {
            let mut p = path.clone();
            p.push(m);
            found.push(p);
            continue;
        }
        if net.nodes[m].kind != NodeKind::Switch {
            continue;
        }
        on_path[m] = true;
        path.push(m);
        stack.push((m, 0));
    }
    found.sort_by_key(|p| p.len()); // stable: equal lengths keep the search's order
    found.truncate(k);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinity_then_worst_fit() {
        // Two hosts of two cores; host 0 core 0 at 0.5. Components: a (0.4) linked to b (0.3),
        // c (0.2) alone. a first (largest): no peer placed, worst fit → host 0 core 1 (0.0, the
        // first empty core). b: its peer a is on host 0 → host 0's least used core with room:
        // core 1 at 0.4 vs core 0 at 0.5 → core 1. c: worst fit over all → host 1 core 0.
        let mut cores = Cores::new(&[2, 2]);
        cores.add((0, 0), 0.5);
        let r = |u: f64| Reservation { runtime_ns: (u * 1e7) as i64, period_ns: 10_000_000 };
        let places = place(&cores, &[r(0.4), r(0.3), r(0.2)], &[vec![1], vec![0], vec![]]).unwrap();
        assert_eq!(places, vec![(0, 1), (0, 1), (1, 0)]);
        // A component larger than any core's room fails, naming it.
        cores.add((1, 0), 0.9);
        cores.add((1, 1), 0.9);
        cores.add((0, 1), 0.9);
        let no_room = place(&cores, &[r(0.2), r(0.6)], &[vec![], vec![]]).unwrap_err();
        assert_eq!((no_room.component, no_room.placed.clone()), (1, vec![]));
        assert!((no_room.largest_free - 0.5).abs() < 1e-12, "{no_room:?}");
        // Components of the same request take the room the next one needed: the free capacity
        // named is what was left once they were placed (one core of 1.0, three of 0.9).
        let empty = Cores::new(&[1, 1]);
        let no_room = place(&empty, &[r(0.9), r(0.9), r(0.9)], &[vec![], vec![], vec![]]).unwrap_err();
        assert_eq!((no_room.component, no_room.placed.clone()), (2, vec![0, 1]));
        assert!((no_room.largest_free - 0.1).abs() < 1e-9, "{no_room:?}");
    }
}
