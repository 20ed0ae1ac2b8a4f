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
/// (the last the root), then, nearest to the root first, under every node of the tree each
/// queue from which one of its flows comes. The tree is the network unfolded backwards from the
/// root: a queue that feeds two nodes appears under both (each copy's constraints hold of the one
/// real queue, so the program stays a bound, and nothing is cut). Past [`UNFOLD_DATES`] dates
/// a queue already in the tree is not copied again, and past the effort's cap no queue is added:
/// the flows from it to the node are cut there (they enter with the burst they gathered
/// upstream). A queue that is already on the node's way
/// to the root (a cyclic network) is cut too. Flows that pass an interleaved regulator start
/// afresh there and bring no queue behind them.
pub(super) struct Tree {
    /// The queue of each node; the trunk first, from the source, the root at `root`.
    pub queues: Vec<usize>,
    pub next: Vec<Option<usize>>,
    pub root: usize,
    /// The nodes under each node (whose output goes to it), by queue.
    pub children: Vec<Vec<usize>>,
}

/// How many dates (Σ over the nodes of depth + 1) a tree may grow to by copying queues it
/// already holds; past it, flows from such a queue are cut ([`Tree`]).
pub const UNFOLD_DATES: usize = 400;

impl Tree {
    #[cfg(test)]
    pub fn of(m: &Model, f: FlowId, end: PortId) -> Tree {
        Tree::unfolded(m, f, end, usize::MAX, UNFOLD_DATES)
    }

    /// The tree of at most `cap` dates (the trunk whole, whatever its size): past it, flows from
    /// a queue not yet in it are cut; past `unfold` dates, flows from a queue already in it.
    pub fn unfolded(m: &Model, f: FlowId, end: PortId, cap: usize, unfold: usize) -> Tree {
        let trunk: Vec<usize> = m.prefix(f, end).iter().map(|&p| m.queue(f, p)).collect();
        let k = trunk.len();
        let mut queues = trunk;
        let mut next: Vec<Option<usize>> = (0..k).map(|i| (i + 1 < k).then_some(i + 1)).collect();
        let mut depth: Vec<usize> = (0..k).map(|i| k - i).collect();
        let mut children: Vec<Vec<usize>> =
            (0..k).map(|i| if i > 0 { vec![i - 1] } else { Vec::new() }).collect();
        let mut seen: std::collections::HashSet<usize> = queues.iter().copied().collect();
        // Nearest the root first (ties: the first added), as a heap of (depth, index).
        let mut todo: std::collections::BinaryHeap<std::cmp::Reverse<(usize, usize)>> =
            (0..k).map(|i| std::cmp::Reverse((depth[i], i))).collect();
        // Its dates: depth + 1 per node.
        let mut size: usize = depth.iter().map(|d| d + 1).sum();
        while let Some(std::cmp::Reverse((_, b))) = todo.pop() {
            for member in &m.members[queues[b]] {
                let Some(from) = member.from.filter(|_| !member.regulated) else { continue };
                let up = m.queue(member.flow, from);
                if children[b].iter().any(|&c| queues[c] == up) {
                    continue;
                }
                let on_the_way = std::iter::successors(Some(b), |&j| next[j]).any(|j| queues[j] == up);
                let room = size + depth[b] + 2 <= cap && (!seen.contains(&up) || size <= unfold);
                if on_the_way || !room {
                    continue; // cut: its flows enter b with the burst they gathered upstream
                }
                seen.insert(up);
                size += depth[b] + 2;
                let node = queues.len();
                todo.push(std::cmp::Reverse((depth[b] + 1, node)));
                queues.push(up);
                next.push(Some(b));
                depth.push(depth[b] + 1);
                children.push(Vec::new());
                children[b].push(node);
            }
        }
        Tree { queues, next, root: k - 1, children }
    }

    /// The depth of tree server `h` (the root's is 1).
    pub fn depth(&self, h: usize) -> usize {
        std::iter::successors(Some(h), |&j| self.next[j]).count()
    }

    /// The queues from node `h` down to the root: what a node of the unfolded network is.
    pub fn path(&self, h: usize) -> Vec<usize> {
        std::iter::successors(Some(h), |&j| self.next[j]).map(|j| self.queues[j]).collect()
    }
}

/// A tree's program up to the order of its nodes and pieces: its nodes (each as its
/// [`Tree::path`]), sorted, and its pieces (each where it enters and its first and last nodes),
/// sorted. Two trees of the same shape give one program, its columns and rows permuted: the same
/// servers, pieces (a cut piece's burst is its flow's bound up to where it enters) and lines.
#[derive(PartialEq, Eq)]
pub(super) struct Shape {
    nodes: Vec<Vec<usize>>,
    pieces: Vec<(Entry, Vec<usize>, Vec<usize>)>,
}

pub(super) fn shape(tree: &Tree, entries: &[(Entry, Piece)]) -> Shape {
    let mut nodes: Vec<Vec<usize>> = (0..tree.queues.len()).map(|h| tree.path(h)).collect();
    nodes.sort_unstable();
    let mut pieces: Vec<_> =
        entries.iter().map(|(e, p)| (*e, tree.path(p.first), tree.path(p.last))).collect();
    pieces.sort_unstable_by_key(|(e, first, last)| {
        (e.flow, e.port, e.from, e.fresh, first.clone(), last.clone())
    });
    Shape { nodes, pieces }
}

/// Where a piece of a flow's traffic enters a tree: the flow, its port there, the port it comes
/// from, and whether it is its source or a regulator (own token bucket) or a cut (the burst it
/// gathered upstream).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Entry {
    pub flow: FlowId,
    pub port: PortId,
    pub from: Option<PortId>,
    pub fresh: bool,
}

/// The flows through `tree`, as pieces over its nodes with where each enters: flow `f` first
/// (over the trunk, from its source), then every flow per maximal run of its route along the
/// tree's edges (in every copy of a queue it crosses), each with its own token bucket (σ, ρ).
pub(super) fn pieces(m: &Model, f: FlowId, tree: &Tree) -> Vec<(Entry, Piece)> {
    let net = m.net;
    let own = &net.flows[f];
    let first_port = m.servers[tree.queues[0]].port;
    let mut out = vec![(
        Entry { flow: f, port: first_port, from: None, fresh: true },
        Piece { sigma: own.burst, rho: own.rate, first: 0, last: tree.root },
    )];
    // g's crossing at node h: (port, from, regulated), if g is in h's queue.
    let crossing = |g: FlowId, h: usize| -> Option<(PortId, Option<PortId>, bool)> {
        let p = m.servers[tree.queues[h]].port;
        m.crossings[g].get(&p).filter(|x| x.0 == tree.queues[h]).map(|&(_, from, reg)| (p, from, reg))
    };
    // A run goes on from node h to its parent when g goes on from h's port to the parent's.
    let continues = |g: FlowId, h: usize| -> Option<usize> {
        let n = tree.next[h]?;
        let (_, from, reg) = crossing(g, n)?;
        (from == Some(m.servers[tree.queues[h]].port) && !reg).then_some(n)
    };
    let mut starts: Vec<(FlowId, usize, usize)> = Vec::new(); // (flow, place on its route, node)
    for (h, &q) in tree.queues.iter().enumerate() {
        for member in &m.members[q] {
            let g = member.flow;
            if g == f && h <= tree.root {
                continue; // the trunk's own piece
            }
            let (p, from, reg) = crossing(g, h).expect("a member crosses its queue");
            // It continues from the node under h that holds its previous queue, if any.
            let below = from.filter(|_| !reg).and_then(|fp| {
                let up = m.queue(g, fp);
                tree.children[h].iter().copied().find(|&c| tree.queues[c] == up)
            });
            if below.is_some_and(|c| continues(g, c) == Some(h)) {
                continue;
            }
            starts.push((g, m.prefix(g, p).len(), h));
        }
    }
    // In flow order, then in the order of each flow's route.
    starts.sort_unstable();
    for (g, _, h) in starts {
        let (p, from, reg) = crossing(g, h).expect("a member crosses its queue");
        let mut last = h;
        while let Some(n) = continues(g, last) {
            last = n;
        }
        let flow = &net.flows[g];
        out.push((
            Entry { flow: g, port: p, from, fresh: reg || from.is_none() },
            Piece { sigma: flow.burst, rho: flow.rate, first: h, last },
        ));
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

/// The number of variables of the program of flow `f` up to `end` (its dates and the pieces'
/// traffic; the token-bucket chains add one per date of the long levels).
pub(super) fn variables(m: &Model, f: FlowId, end: PortId, cap: usize, unfold: usize) -> usize {
    let tree = Tree::unfolded(m, f, end, cap, unfold);
    let dates: usize = (0..tree.queues.len()).map(|h| tree.depth(h) + 1).sum::<usize>() + 1;
    let traffic: usize = pieces(m, f, &tree).iter().map(|(_, p)| tree.depth(p.first) + 1).sum();
    dates + traffic
}
