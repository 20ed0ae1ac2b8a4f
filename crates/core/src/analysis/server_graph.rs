//! An abstract feed-forward server graph: servers with a service curve and a multiplexing
//! discipline, flows with an arrival curve at their first server and a path.
//!
//! This is the interface later layers compile into (an AFDX port becomes a server with
//! `β_{C, tech latency}`, a virtual link a flow with its token bucket, or a group of flows
//! sharing an input link one concave `min(Σ buckets, C t + Lmax)` curve). Turns are implied by
//! consecutive servers of the paths; the graph of turns must be acyclic (feed-forward).

use std::fmt;

use crate::curves::Curve;

/// Index of a server in its [`ServerGraph`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServerId(pub usize);

/// Index of a flow in its [`ServerGraph`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub usize);

/// How a server shares its service among the flows that cross it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Multiplexing {
    /// Blind / arbitrary: no assumption on the order of service (Le Boudec–Thiran §6.2).
    Arbitrary,
    /// First in, first out across flows (Le Boudec–Thiran §6.4).
    Fifo,
}

/// A server: a service curve for the aggregate of all flows crossing it.
#[derive(Debug, Clone)]
pub struct Server {
    /// Name used in reports and in the reasons of unbounded results.
    pub name: String,
    /// Convex service curve offered to the aggregate (e.g. `β_{R,T}`).
    pub service: Curve,
    /// Multiplexing discipline among the flows at this server.
    pub multiplexing: Multiplexing,
}

/// A flow: an arrival curve at its first server and the servers it crosses, in order.
#[derive(Debug, Clone)]
pub struct Flow {
    /// Name used in reports.
    pub name: String,
    /// Concave arrival curve at the first server of the path (0 at the origin).
    pub arrival: Curve,
    /// Servers crossed, in order; non-empty, no server twice.
    pub path: Vec<ServerId>,
}

/// Why a server graph was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraphError {
    /// A flow with no server.
    EmptyPath(String),
    /// A path naming a server that does not exist.
    UnknownServer(String, usize),
    /// A path crossing the same server twice.
    RepeatedServer(String, String),
    /// The flow would close a cycle of turns: the analyses need a feed-forward graph.
    Cycle(String),
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphError::EmptyPath(fl) => write!(f, "flow {fl}: empty path"),
            GraphError::UnknownServer(fl, s) => write!(f, "flow {fl}: no server with index {s}"),
            GraphError::RepeatedServer(fl, s) => write!(f, "flow {fl}: crosses server {s} twice"),
            GraphError::Cycle(fl) => write!(f, "flow {fl}: its path closes a cycle (not feed-forward)"),
        }
    }
}

impl std::error::Error for GraphError {}

/// Servers and flows of a feed-forward network.
#[derive(Debug, Clone, Default)]
pub struct ServerGraph {
    servers: Vec<Server>,
    flows: Vec<Flow>,
    /// Flows crossing each server, in increasing id order.
    flows_at: Vec<Vec<FlowId>>,
}

impl ServerGraph {
    /// An empty graph.
    pub fn new() -> ServerGraph {
        ServerGraph::default()
    }

    /// Adds a server and returns its id.
    pub fn add_server(
        &mut self,
        name: impl Into<String>,
        service: Curve,
        multiplexing: Multiplexing,
    ) -> ServerId {
        self.servers.push(Server { name: name.into(), service, multiplexing });
        self.flows_at.push(Vec::new());
        ServerId(self.servers.len() - 1)
    }

    /// Adds a flow; refuses empty paths, unknown or repeated servers and cycles.
    pub fn add_flow(
        &mut self,
        name: impl Into<String>,
        arrival: Curve,
        path: Vec<ServerId>,
    ) -> Result<FlowId, GraphError> {
        let name = name.into();
        if path.is_empty() {
            return Err(GraphError::EmptyPath(name));
        }
        for (i, s) in path.iter().enumerate() {
            if s.0 >= self.servers.len() {
                return Err(GraphError::UnknownServer(name, s.0));
            }
            if path[..i].contains(s) {
                return Err(GraphError::RepeatedServer(name, self.servers[s.0].name.clone()));
            }
        }
        let id = FlowId(self.flows.len());
        self.flows.push(Flow { name: name.clone(), arrival, path });
        if !self.is_feed_forward() {
            self.flows.pop();
            return Err(GraphError::Cycle(name));
        }
        for s in &self.flows[id.0].path {
            self.flows_at[s.0].push(id);
        }
        Ok(id)
    }

    /// The server with this id.
    pub fn server(&self, s: ServerId) -> &Server {
        &self.servers[s.0]
    }

    /// The flow with this id.
    pub fn flow(&self, f: FlowId) -> &Flow {
        &self.flows[f.0]
    }

    /// All servers.
    pub fn servers(&self) -> &[Server] {
        &self.servers
    }

    /// All flows.
    pub fn flows(&self) -> &[Flow] {
        &self.flows
    }

    /// Ids of all flows.
    pub fn flow_ids(&self) -> impl Iterator<Item = FlowId> {
        (0..self.flows.len()).map(FlowId)
    }

    /// Flows crossing server `s`, in id order.
    pub fn flows_at(&self, s: ServerId) -> &[FlowId] {
        &self.flows_at[s.0]
    }

    /// The server `f` crosses just before `s`; `None` if `s` is its first server or not on its path.
    pub fn predecessor(&self, f: FlowId, s: ServerId) -> Option<ServerId> {
        let path = &self.flows[f.0].path;
        let i = path.iter().position(|&x| x == s)?;
        i.checked_sub(1).map(|j| path[j])
    }

    /// Whether `f` starts at `s`.
    pub fn is_source(&self, f: FlowId, s: ServerId) -> bool {
        self.flows[f.0].path[0] == s
    }

    /// Whether the turns of all paths form an acyclic graph (Kahn's algorithm).
    fn is_feed_forward(&self) -> bool {
        let n = self.servers.len();
        let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
        for f in &self.flows {
            for w in f.path.windows(2) {
                if !succ[w[0].0].contains(&w[1].0) {
                    succ[w[0].0].push(w[1].0);
                }
            }
        }
        let mut indeg = vec![0usize; n];
        for v in succ.iter().flatten() {
            indeg[*v] += 1;
        }
        let mut ready: Vec<usize> = (0..n).filter(|&v| indeg[v] == 0).collect();
        let mut seen = 0;
        while let Some(v) = ready.pop() {
            seen += 1;
            for &w in &succ[v] {
                indeg[w] -= 1;
                if indeg[w] == 0 {
                    ready.push(w);
                }
            }
        }
        seen == n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_bad_paths_and_cycles() {
        let mut g = ServerGraph::new();
        let a = g.add_server("a", Curve::rate_latency(1.0, 0.0), Multiplexing::Fifo);
        let b = g.add_server("b", Curve::rate_latency(1.0, 0.0), Multiplexing::Fifo);
        let tb = Curve::token_bucket(0.1, 1.0);
        assert!(matches!(g.add_flow("e", tb.clone(), vec![]), Err(GraphError::EmptyPath(_))));
        assert!(matches!(
            g.add_flow("u", tb.clone(), vec![ServerId(7)]),
            Err(GraphError::UnknownServer(_, 7))
        ));
        assert!(matches!(g.add_flow("r", tb.clone(), vec![a, b, a]), Err(GraphError::RepeatedServer(..))));
        let f = g.add_flow("ab", tb.clone(), vec![a, b]).unwrap();
        assert!(matches!(g.add_flow("ba", tb.clone(), vec![b, a]), Err(GraphError::Cycle(_))));
        assert_eq!(g.flows().len(), 1);
        assert_eq!(g.flows_at(b), &[f]);
        assert_eq!(g.predecessor(f, b), Some(a));
        assert_eq!(g.predecessor(f, a), None);
    }
}
