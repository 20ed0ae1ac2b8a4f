//! The network as `fifo-lp` reads it: every FIFO queue a server, with the service curve its
//! port's scheduler module gives it (TFA's, [`network_bounds::fifo_queues`]), packetized where
//! frames are stored and forwarded, and the lines between them; and per flow of interest the
//! sink tree of the queues that can delay it, with the pieces of every flow that crosses it.

use super::program::{Line, Piece, TreeServer};
use crate::analysis::network_bounds::{self, FifoQueues};
use crate::curves::{Curve, Unbounded};
use crate::model::{FlowId, Network, PortId};
use std::collections::HashMap;

/// A queue as the programs take it.
#[derive(Clone, Debug)]
pub(super) struct Server {
    pub port: PortId,
    /// Its service curve's convex minorant as pieces (R_i, T_i), β = max_i R_i·[t − T_i]^+; or
    /// why it has none (an overloaded class, an unbounded burst upstream).
    pub service: Result<Vec<(f64, f64)>, Unbounded>,
    /// TFA's delay bound (s), infinite where there is none.
    pub cap: f64,
    /// The largest frame of its flows on the wire (bits): a store-and-forward receiver takes
    /// it at once, so the queue and its output's packetizer offer β − packet (Le Boudec &
    /// Thiran Thm 1.7.3). 0 on a server graph (fluid).
    pub packet: f64,
    /// The propagation delay of its link: a pure delay between it and the next queue.
    pub propagation: f64,
}

/// One flow in one queue.
#[derive(Clone, Copy, Debug)]
pub(super) struct Member {
    pub flow: FlowId,
    /// The port it comes from (`None` at its source).
    pub from: Option<PortId>,
    /// An interleaved regulator reshapes it to its own token bucket before the queue.
    pub regulated: bool,
}

/// Per flow: port -> (queue, the port it comes from, regulated there).
pub(super) type Crossings = HashMap<PortId, (usize, Option<PortId>, bool)>;

/// The network's queues as servers, and who crosses them.
pub(super) struct Model<'a> {
    pub net: &'a Network,
    pub servers: Vec<Server>,
    pub members: Vec<Vec<Member>>,
    /// Per flow: port -> (queue, port it comes from, regulated there).
    pub crossings: Vec<Crossings>,
    /// Per port: its maximum service (rate, packet), [`Network::max_service`].
    pub lines: Vec<Option<(f64, f64)>>,
}

/// The pieces (R_i, T_i) of the convex minorant of `beta`, a service curve (0 at the origin):
/// every affine piece of positive slope, extended to a line R·(t − T).
fn convex_pieces(beta: &Curve) -> Vec<(f64, f64)> {
    let hull = if beta.is_convex() { beta.clone() } else { beta.convex_minorant() };
    let pts = hull.points();
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut push = |x: f64, y: f64, slope: f64| {
        if slope > 0.0 && slope.is_finite() {
            let piece = (slope, x - y / slope);
            if !out.iter().any(|&(r, t)| r == piece.0 && t == piece.1) {
                out.push(piece);
            }
        }
    };
    for w in pts.windows(2) {
        let dx = w[1].x - w[0].x;
        if dx > 0.0 {
            push(w[0].x, w[0].y, (w[1].y - w[0].y) / dx);
        }
    }
    if let Some(last) = pts.last() {
        push(last.x, last.y, hull.tail_slope());
    }
    out
}

impl<'a> Model<'a> {
    pub fn new(net: &'a Network) -> Model<'a> {
        Model::from_queues(net, network_bounds::fifo_queues(net))
    }

    fn from_queues(net: &'a Network, q: FifoQueues) -> Model<'a> {
        let mut crossings: Vec<Crossings> = vec![HashMap::new(); net.flows.len()];
        for (f, flow) in net.flows.iter().enumerate() {
            let queue_at: HashMap<PortId, (usize, bool)> =
                q.crossings[f].iter().map(|&(p, qu, reg)| (p, (qu, reg))).collect();
            for r in &flow.routes {
                let mut from = None;
                for &p in &r.ports {
                    let (qu, reg) = queue_at[&p];
                    crossings[f].entry(p).or_insert((qu, from, reg));
                    from = Some(p);
                }
            }
        }
        let mut members: Vec<Vec<Member>> = vec![Vec::new(); q.port.len()];
        for (queue, flows) in q.flows.iter().enumerate() {
            let p = q.port[queue];
            for &f in flows {
                let (_, from, regulated) = crossings[f][&p];
                members[queue].push(Member { flow: f, from, regulated });
            }
        }
        let servers = (0..q.port.len())
            .map(|queue| {
                let p = q.port[queue];
                let packet =
                    members[queue].iter().map(|m| net.flows[m.flow].max_frame_wire).fold(0.0, f64::max);
                Server {
                    port: p,
                    service: q.service[queue].clone().map(|beta| convex_pieces(&beta)),
                    cap: *q.delay[queue].as_ref().unwrap_or(&f64::INFINITY),
                    packet,
                    propagation: net.ports[p].propagation_delay,
                }
            })
            .collect();
        let lines = (0..net.ports.len()).map(|p| net.max_service(p)).collect();
        Model { net, servers, members, crossings, lines }
    }

    /// The queue flow `f` is in at port `p`.
    pub fn queue(&self, f: FlowId, p: PortId) -> usize {
        self.crossings[f][&p].0
    }

    /// Flow `f`'s ports from its source to `end`, in order.
    pub fn prefix(&self, f: FlowId, end: PortId) -> Vec<PortId> {
        let mut out = vec![end];
        while let Some(from) = self.crossings[f][out.last().expect("not empty")].1 {
            out.push(from);
        }
        out.reverse();
        out
    }
}

/// The sink tree of flow `f` up to the output of its port `end`: its queues there are the trunk
/// (the last the root), then, nearest to the root first, every queue from which a flow goes to
/// a queue of the tree, its `next` being that queue (the first found: a queue whose flows go to
/// two queues of the tree feeds one, and the flows to the other are cut there). Flows that pass
/// an interleaved regulator start afresh there and bring no queue behind them.
pub(super) struct Tree {
    /// Queues of the tree; the trunk first, from the source, the root at `root`.
    pub queues: Vec<usize>,
    pub next: Vec<Option<usize>>,
    pub root: usize,
}

impl Tree {
    pub fn of(m: &Model, f: FlowId, end: PortId, limit: usize) -> Option<Tree> {
        let trunk: Vec<usize> = m.prefix(f, end).iter().map(|&p| m.queue(f, p)).collect();
        let k = trunk.len();
        let mut queues = trunk;
        let mut next: Vec<Option<usize>> = (0..k).map(|i| (i + 1 < k).then_some(i + 1)).collect();
        let mut depth: Vec<usize> = (0..k).map(|i| k - i).collect();
        let mut index: HashMap<usize, usize> = queues.iter().enumerate().map(|(i, &q)| (q, i)).collect();
        // Nearest the root first (ties: the first added), as a heap of (depth, index).
        let mut todo: std::collections::BinaryHeap<std::cmp::Reverse<(usize, usize)>> =
            (0..k).map(|i| std::cmp::Reverse((depth[i], i))).collect();
        let mut size = 0;
        while let Some(std::cmp::Reverse((_, b))) = todo.pop() {
            // Its dates alone: a lower bound of the program's variables.
            size += depth[b] + 1;
            if size > limit {
                return None;
            }
            for member in &m.members[queues[b]] {
                let Some(from) = member.from.filter(|_| !member.regulated) else { continue };
                let up = m.queue(member.flow, from);
                if let std::collections::hash_map::Entry::Vacant(e) = index.entry(up) {
                    e.insert(queues.len());
                    todo.push(std::cmp::Reverse((depth[b] + 1, queues.len())));
                    queues.push(up);
                    next.push(Some(b));
                    depth.push(depth[b] + 1);
                }
            }
        }
        Some(Tree { queues, next, root: k - 1 })
    }

    /// The depth of tree server `h` (the root's is 1).
    pub fn depth(&self, h: usize) -> usize {
        std::iter::successors(Some(h), |&j| self.next[j]).count()
    }
}

/// Where a piece of a flow's traffic enters a tree: the flow, its port there, the port it comes
/// from, and whether it is its source or a regulator (own token bucket) or a cut (the burst it
/// gathered upstream).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Entry {
    pub flow: FlowId,
    pub port: PortId,
    pub from: Option<PortId>,
    pub fresh: bool,
}

/// The flows through `tree`, as pieces over its servers with where each enters: flow `f` first
/// (over the trunk, from its source), then every flow per maximal run of its route along the
/// tree's edges, each with its own token bucket (σ, ρ).
pub(super) fn pieces(m: &Model, f: FlowId, tree: &Tree) -> Vec<(Entry, Piece)> {
    let net = m.net;
    let at: HashMap<usize, usize> = tree.queues.iter().enumerate().map(|(i, &q)| (q, i)).collect();
    let own = &net.flows[f];
    let first_port = m.servers[tree.queues[0]].port;
    let mut out = vec![(
        Entry { flow: f, port: first_port, from: None, fresh: true },
        Piece { sigma: own.burst, rho: own.rate, first: 0, last: tree.root },
    )];
    // The flows of the tree's queues, each once, in flow order (f too: a multicast flow's other
    // branches, or a cycle, may bring it to the tree's other queues).
    let mut flows: Vec<FlowId> =
        tree.queues.iter().flat_map(|&q| m.members[q].iter().map(|x| x.flow)).collect();
    flows.sort_unstable();
    flows.dedup();
    for g in flows {
        let flow = &net.flows[g];
        // g's crossings in the tree, but f's trunk: (tree server, port, from, regulated).
        let mut mine: Vec<(usize, PortId, Option<PortId>, bool)> = m.crossings[g]
            .iter()
            .filter_map(|(&p, &(q, from, reg))| at.get(&q).map(|&h| (h, p, from, reg)))
            .filter(|&(h, ..)| g != f || h > tree.root)
            .collect();
        mine.sort_by_key(|x| x.0);
        let inside = |h: usize| mine.iter().find(|x| x.0 == h);
        // A run goes on from h to next[h] when g goes from h's port to next[h]'s, unregulated.
        let continues = |h: usize| -> Option<usize> {
            let n = tree.next[h]?;
            let &(_, _, from, reg) = inside(n)?;
            (from == Some(m.servers[tree.queues[h]].port) && !reg).then_some(n)
        };
        let mut starts: Vec<&(usize, PortId, Option<PortId>, bool)> = mine
            .iter()
            .filter(|&&(h, _, from, reg)| {
                reg || !from.is_some_and(|fp| mine.iter().any(|x| x.1 == fp && continues(x.0) == Some(h)))
            })
            .collect();
        // In the order of the flow's route.
        starts.sort_by_key(|x| m.prefix(g, x.1).len());
        for &&(h, p, from, reg) in &starts {
            let mut last = h;
            while let Some(n) = continues(last) {
                last = n;
            }
            let fresh = reg || from.is_none();
            out.push((
                Entry { flow: g, port: p, from, fresh },
                Piece { sigma: flow.burst, rho: flow.rate, first: h, last },
            ));
        }
    }
    out
}

/// The servers of the tree a piece crosses, from its first to its last, along `next`.
pub(super) fn along(next: &[Option<usize>], piece: Piece) -> impl Iterator<Item = usize> + '_ {
    std::iter::successors(Some(piece.first), move |&h| if h == piece.last { None } else { next[h] })
}

/// The lines into the tree's servers: at each server, the pieces it receives grouped by the port
/// they come from (none from a source, none out of a regulator, which sends at its own pace),
/// each group bounded by that port's maximum service.
pub(super) fn lines(m: &Model, tree: &Tree, pieces: &[(Entry, Piece)]) -> Vec<Line> {
    let mut groups: HashMap<(usize, PortId), Vec<usize>> = HashMap::new();
    for (i, (entry, piece)) in pieces.iter().enumerate() {
        let mut previous: Option<PortId> = None;
        for h in along(&tree.next, *piece) {
            let from = if h == piece.first {
                if entry.fresh && entry.from.is_some() {
                    None // out of a regulator: not the line's pace
                } else {
                    entry.from
                }
            } else {
                previous
            };
            if let Some(from) = from {
                groups.entry((h, from)).or_default().push(i);
            }
            previous = Some(m.servers[tree.queues[h]].port);
        }
    }
    let mut out: Vec<Line> = groups
        .into_iter()
        .filter_map(|((server, from), members)| {
            m.lines[from].map(|(rate, packet)| Line { server, members, rate, packet })
        })
        .collect();
    out.sort_by_key(|l| (l.server, l.members[0]));
    out
}

/// The tree's servers as the program takes them. A server that is not the root hands its
/// frames on to the next: its packetizer and its link's propagation delay are inside it (it
/// offers [β − packet]^+ shifted by the propagation, and holds a bit at most its cap plus the
/// propagation); the root's output is where the bit of interest arrives.
pub(super) fn servers(m: &Model, tree: &Tree) -> Result<Vec<TreeServer>, Unbounded> {
    tree.queues
        .iter()
        .zip(&tree.next)
        .map(|(&q, &next)| {
            let s = &m.servers[q];
            let pieces = s.service.clone()?;
            if pieces.is_empty() {
                return Err(Unbounded::new(format!("{}: no service", m.net.port_label(s.port))));
            }
            let (extra, cap) = match next {
                Some(_) => (s.propagation, s.cap + s.propagation),
                None => (0.0, s.cap),
            };
            let packet = if next.is_some() { s.packet } else { 0.0 };
            let service = pieces.iter().map(|&(r, t)| (r, t + packet / r + extra)).collect();
            Ok(TreeServer { service, cap, next })
        })
        .collect()
}

/// The number of variables of the program of flow `f` up to `end`, or `None` above `limit`.
pub(super) fn variables(m: &Model, f: FlowId, end: PortId, limit: usize) -> Option<usize> {
    let tree = Tree::of(m, f, end, limit)?;
    let dates: usize = (0..tree.queues.len()).map(|h| tree.depth(h) + 1).sum::<usize>() + 1;
    let traffic: usize = pieces(m, f, &tree).iter().map(|(_, p)| tree.depth(p.first) + 1).sum();
    let n = dates + traffic;
    (n <= limit).then_some(n)
}
