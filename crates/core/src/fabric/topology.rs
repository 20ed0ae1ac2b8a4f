//! Fabric topologies: which port of which node each link joins, and the routing table.
//!
//! The perfect-shuffle bidirectional multistage interconnection network (BMIN) of radix k and n
//! stages has k^n endpoints and n stages of k^(n-1) switches of 2k ports: ports 0..k face down
//! (towards the endpoints), ports k..2k face up (unconnected at the last stage). Endpoint e sits
//! on down port e mod k of stage-0 switch e / k. Between stages the links follow the k-way perfect
//! shuffle: number the up ports of stage l globally j = k·switch + port (n base-k digits); up port
//! j joins down port σ(j) of stage l+1, where σ rotates the digits left by one. k = 4, n = 3 gives
//! the seed's 64 endpoints and 48 eight-port switches in 3 stages of 16.
//!
//! Routing is turnaround (up*/down*), deterministic: a packet climbs until it reaches a switch
//! from which its destination is reachable going down only (the lowest common ancestor stage),
//! then descends on the unique down path. Going up it takes, at stage 0, up port d_0 (the last
//! base-k digit of the destination) and at stage l ≥ 1 up port d_(n-l): with this shuffle, a
//! stage-l switch fixes the source digits 1..n-1-l, so digits 0 and n-l.. are the ones still
//! free. This is the destination-mod-k rule of k-ary n-trees in this labelling: uniform traffic
//! loads every up link equally, and every down link carries the traffic of one destination only
//! (tested). Deterministic
//! routing keeps every (source, destination, VC) stream on one path, hence in order, which the
//! fabric guarantees; adaptive routing is not implemented.

use serde::Serialize;

/// A node of the fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Node {
    Endpoint(u32),
    Switch(u32),
}

/// One end of a link: a node and one of its ports (an endpoint has port 0 only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct PortRef {
    pub node: Node,
    pub port: u8,
}

/// Endpoints, switches (at most 64 ports each), bidirectional links and the routing table.
#[derive(Clone, Debug)]
pub struct Topology {
    pub name: String,
    pub endpoints: u32,
    /// Stage of each switch (0: next to the endpoints).
    pub switch_stage: Vec<u8>,
    /// What each endpoint's single port is linked to.
    pub endpoint_peer: Vec<PortRef>,
    /// What each switch port is linked to (`None`: unconnected), indexed [switch][port].
    pub switch_peer: Vec<Vec<Option<PortRef>>>,
    /// Output port towards each destination, indexed [switch · endpoints + destination].
    route: Vec<u8>,
}

impl Topology {
    /// The perfect-shuffle BMIN of `radix` down (and up) ports per switch and `stages` stages.
    pub fn bmin(radix: u32, stages: u32) -> Result<Topology, String> {
        let (k, n) = (radix, stages);
        if !(2..=32).contains(&k) || n == 0 {
            return Err(format!("a BMIN needs a radix in 2..=32 and at least one stage, got {k} and {n}"));
        }
        let endpoints =
            k.checked_pow(n).filter(|&e| e <= 1 << 16).ok_or("a BMIN of at most 65536 endpoints")?;
        let per_stage = endpoints / k;
        let switches = (per_stage * n) as usize;
        let mut t = Topology {
            name: format!("bmin_k{k}_n{n}"),
            endpoints,
            switch_stage: (0..switches).map(|s| (s as u32 / per_stage) as u8).collect(),
            endpoint_peer: Vec::with_capacity(endpoints as usize),
            switch_peer: vec![vec![None; 2 * k as usize]; switches],
            route: Vec::new(),
        };
        for e in 0..endpoints {
            let (sw, port) = (e / k, (e % k) as u8);
            t.endpoint_peer.push(PortRef { node: Node::Switch(sw), port });
            t.switch_peer[sw as usize][port as usize] = Some(PortRef { node: Node::Endpoint(e), port: 0 });
        }
        for l in 0..n - 1 {
            for j in 0..endpoints {
                // σ(j): rotate the n base-k digits of j left by one.
                let m = (j * k) % endpoints + j / (endpoints / k);
                let (lower, up) = (l * per_stage + j / k, (k + j % k) as u8);
                let (upper, down) = ((l + 1) * per_stage + m / k, (m % k) as u8);
                t.switch_peer[lower as usize][up as usize] =
                    Some(PortRef { node: Node::Switch(upper), port: down });
                t.switch_peer[upper as usize][down as usize] =
                    Some(PortRef { node: Node::Switch(lower), port: up });
            }
        }
        // Up port at stage l: destination digit 0 at stage 0, digit n - l above (see the module doc).
        t.build_routes(|stage| if stage == 0 { 0 } else { n - stage })?;
        Ok(t)
    }

    /// One switch of `endpoints` ports with an endpoint on each (for unit tests).
    pub fn single_switch(endpoints: u32) -> Result<Topology, String> {
        if !(2..=64).contains(&endpoints) {
            return Err(format!("a single switch has 2..=64 endpoints, got {endpoints}"));
        }
        let mut t = Topology {
            name: format!("single_switch_{endpoints}"),
            endpoints,
            switch_stage: vec![0],
            endpoint_peer: (0..endpoints).map(|e| PortRef { node: Node::Switch(0), port: e as u8 }).collect(),
            switch_peer: vec![(0..endpoints)
                .map(|e| Some(PortRef { node: Node::Endpoint(e), port: 0 }))
                .collect()],
            route: Vec::new(),
        };
        t.build_routes(|_| 0)?;
        Ok(t)
    }

    pub fn switches(&self) -> u32 {
        self.switch_stage.len() as u32
    }

    /// Ports of a switch, connected or not.
    pub fn ports(&self, switch: u32) -> u8 {
        self.switch_peer[switch as usize].len() as u8
    }

    /// Bidirectional links (endpoint–switch and switch–switch).
    pub fn links(&self) -> usize {
        let switch_ends: usize = self.switch_peer.iter().map(|p| p.iter().flatten().count()).sum();
        (switch_ends + self.endpoints as usize) / 2
    }

    /// The output port of `switch` towards endpoint `dst`.
    pub fn output_port(&self, switch: u32, dst: u32) -> u8 {
        self.route[(switch * self.endpoints + dst) as usize]
    }

    /// The switches a packet crosses from `src` to `dst`: (switch, input port, output port).
    pub fn path(&self, src: u32, dst: u32) -> Vec<(u32, u8, u8)> {
        let mut hops = Vec::new();
        let mut at = self.endpoint_peer[src as usize];
        while let Node::Switch(s) = at.node {
            let out = self.output_port(s, dst);
            hops.push((s, at.port, out));
            at = self.switch_peer[s as usize][out as usize].expect("routes use connected ports");
            assert!(hops.len() <= 2 * self.switch_stage.len(), "routing loop from {src} to {dst}");
        }
        assert_eq!(at.node, Node::Endpoint(dst), "route from {src} ends at the wrong endpoint");
        hops
    }

    /// Fills the routing table: down towards the destination when it is reachable going down,
    /// else up on the up port numbered by the destination's base-(up ports) digit
    /// `up_digit(stage)`. Refuses a topology where some pair has no such route.
    fn build_routes(&mut self, up_digit: impl Fn(u32) -> u32) -> Result<(), String> {
        let (e, s) = (self.endpoints as usize, self.switch_stage.len());
        let words = e.div_ceil(64);
        // Endpoints reachable going down only, per switch, as bitsets; stages bottom-up.
        let mut reach = vec![vec![0u64; words]; s];
        let mut order: Vec<usize> = (0..s).collect();
        order.sort_by_key(|&x| self.switch_stage[x]);
        let is_down = |me: usize, p: &PortRef, stage: &[u8]| match p.node {
            Node::Endpoint(_) => true,
            Node::Switch(o) => stage[o as usize] < stage[me],
        };
        for &sw in &order {
            for p in self.switch_peer[sw].iter().flatten() {
                if is_down(sw, p, &self.switch_stage) {
                    match p.node {
                        Node::Endpoint(d) => reach[sw][d as usize / 64] |= 1 << (d % 64),
                        Node::Switch(o) => {
                            let below = reach[o as usize].clone();
                            reach[sw].iter_mut().zip(below).for_each(|(a, b)| *a |= b);
                        }
                    }
                }
            }
        }
        let has = |set: &[u64], d: usize| set[d / 64] >> (d % 64) & 1 == 1;
        self.route = vec![u8::MAX; s * e];
        for sw in 0..s {
            let peers = &self.switch_peer[sw];
            let ups: Vec<u8> = (0..peers.len())
                .filter(|&p| peers[p].is_some_and(|q| !is_down(sw, &q, &self.switch_stage)))
                .map(|p| p as u8)
                .collect();
            let radix = ups.len().max(1);
            for d in 0..e {
                let out = if has(&reach[sw], d) {
                    // The down path is unique in a MIN: exactly one down port leads to d.
                    let mut ports = peers.iter().enumerate().filter_map(|(p, q)| {
                        let q = q.as_ref()?;
                        let leads = match q.node {
                            Node::Endpoint(x) => x as usize == d,
                            Node::Switch(o) => {
                                is_down(sw, q, &self.switch_stage) && has(&reach[o as usize], d)
                            }
                        };
                        leads.then_some(p as u8)
                    });
                    let first = ports.next().ok_or(format!("switch {sw} reaches {d} through no port"))?;
                    if ports.next().is_some() {
                        return Err(format!("switch {sw} reaches endpoint {d} through two down ports"));
                    }
                    first
                } else if ups.is_empty() {
                    return Err(format!("switch {sw} neither reaches endpoint {d} nor has an up port"));
                } else {
                    let digit = d / radix.pow(up_digit(self.switch_stage[sw] as u32)) % radix;
                    ups[digit]
                };
                self.route[sw * e + d] = out;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed's network: 64 endpoints, 48 eight-port switches in 3 stages of 16; every port of
    /// stages 0 and 1 connected, the up half of the last stage free; links join ports both ways.
    #[test]
    fn bmin_64_shape() {
        let t = Topology::bmin(4, 3).unwrap();
        assert_eq!((t.endpoints, t.switches()), (64, 48));
        for s in 0..48 {
            assert_eq!(t.ports(s), 8);
            let connected = t.switch_peer[s as usize].iter().flatten().count();
            let stage = t.switch_stage[s as usize];
            assert_eq!(connected, if stage == 2 { 4 } else { 8 }, "switch {s}");
            assert_eq!((0..48).filter(|&x| t.switch_stage[x] == stage).count(), 16);
        }
        assert_eq!(t.links(), 64 + 2 * 64);
        for (s, ports) in t.switch_peer.iter().enumerate() {
            for (p, q) in ports.iter().enumerate() {
                let Some(q) = q else { continue };
                let back = match q.node {
                    Node::Endpoint(e) => t.endpoint_peer[e as usize],
                    Node::Switch(o) => t.switch_peer[o as usize][q.port as usize].unwrap(),
                };
                assert_eq!(back, PortRef { node: Node::Switch(s as u32), port: p as u8 });
            }
        }
    }

    /// Every pair has a route, of 2·(lowest common stage) + 1 switches: 1 within a stage-0
    /// switch, 3 within a stage-1 group, 5 otherwise; up on up ports, then down on down ports.
    #[test]
    fn bmin_routes_every_pair_minimally() {
        let t = Topology::bmin(4, 3).unwrap();
        let mut lengths = [0usize; 6];
        for src in 0..64 {
            for dst in 0..64 {
                let hops = t.path(src, dst);
                lengths[hops.len()] += 1;
                let top = hops.iter().map(|h| t.switch_stage[h.0 as usize]).max().unwrap();
                assert_eq!(hops.len(), 2 * top as usize + 1);
                for (i, &(s, _, out)) in hops.iter().enumerate() {
                    assert_eq!(t.switch_stage[s as usize] as usize, i.min(hops.len() - 1 - i));
                    assert_eq!(out >= 4, i < top as usize, "up before the top, down after");
                }
            }
        }
        assert_eq!(lengths, [0, 64 * 4, 0, 64 * 12, 0, 64 * 48]);
    }

    /// All-to-all traffic loads every link of a stage and direction equally (counted in
    /// (source, destination) pairs), and every down link carries one destination only.
    #[test]
    fn bmin_routes_spread_evenly() {
        let t = Topology::bmin(4, 3).unwrap();
        let mut load = std::collections::HashMap::new();
        let mut dsts = std::collections::HashMap::new();
        for src in 0..64 {
            for dst in 0..64 {
                for (s, _, out) in t.path(src, dst) {
                    *load.entry((s, out)).or_insert(0) += 1;
                    dsts.entry((s, out)).or_insert(std::collections::BTreeSet::new()).insert(dst);
                }
            }
        }
        assert_eq!(load.len(), 16 * 8 + 16 * 8 + 16 * 4, "every connected port is used");
        for ((s, out), n) in load {
            if out < 4 {
                assert_eq!(dsts[&(s, out)].len(), 1, "switch {s} down port {out}");
            }
            let (stage, up) = (t.switch_stage[s as usize], out >= 4);
            let expected = match (stage, up) {
                (0, false) => 64,
                (0, true) | (1, false) => 60,
                (1, true) | (2, false) => 48,
                _ => unreachable!(),
            };
            assert_eq!(n, expected, "switch {s} port {out}");
        }
    }

    #[test]
    fn single_switch_and_small_bmins() {
        let t = Topology::single_switch(4).unwrap();
        assert_eq!((t.endpoints, t.switches(), t.links()), (4, 1, 4));
        assert_eq!(t.path(1, 3), vec![(0, 1, 3)]);
        for (k, n) in [(2, 1), (2, 4), (3, 2), (8, 2)] {
            let t = Topology::bmin(k, n).unwrap();
            for src in 0..t.endpoints {
                for dst in 0..t.endpoints {
                    assert!(t.path(src, dst).len() < 2 * n as usize);
                }
            }
        }
        assert!(Topology::bmin(1, 3).is_err() && Topology::single_switch(1).is_err());
    }
}
