//! BAG and MTU per virtual link from the messages it carries (seed 001D, AFDX-CONF).
//!
//! An, Jeon, Kim and Kim (REACTION 2013) configure AFDX virtual links in two steps:
//!
//! 1. [`find_feasible_bag_mtu`] (their Fig. 4): for each BAG = 2^k ms, k = 0..7, the least MTU with
//!    which the VL carries its message flows (Eq. 1). The least MTU is the one to pick: a larger
//!    MTU only costs more bandwidth and jitter.
//! 2. A [`Problem`] selects one of those (BAG, MTU) pairs per VL so that every port it crosses
//!    meets Eq. 2 (bandwidth) and, where the ARINC 664 jitter constraint applies, Eq. 3. The
//!    paper has one switch output port shared by all VLs; a problem may have any number of ports.
//!    Solvers: [`branch_and_bound`] (Fig. 5's DFS_BandB, corrected), [`brute_force`],
//!    [`min_bandwidth`] (the least total reserved bandwidth, exact) and [`paper_dfs_bandb`] (Fig. 5
//!    as printed, for comparison).
//!
//! Units and exactness. MTCs are integer µs, BAGs 2^k ms, sizes bytes, rates bit/s. Every
//! constraint is decided in integers, so a configuration exactly at a limit is accepted:
//!
//! * Eq. 1, Σ_j ⌈l_j/MTU⌉/p_j ≤ 1/BAG, is scaled by L = lcm(p_j, 128 ms);
//! * Eq. 2, Σ 8·(MTU + 67)/BAG ≤ rate, is counted in bytes per 128 ms (the longest BAG);
//! * Eq. 3, 40 µs + 8·Σ (MTU + 67)/rate ≤ 500 µs, is a bound on the burst Σ (MTU + 67) in bytes.
//!
//! The paper's Eq. 3 and its DFS jitter test mix µs and seconds (catalogue I-001D-1/2), its DFS
//! reports success even when the recursion failed (I-001D-3) and its Fig. 4 has no MTU cap. The
//! correct readings are the default; the printed ones are kept as [`paper_find_feasible_bag_mtu`]
//! and [`paper_dfs_bandb`]. docs/CONFIGURATION.md has the model, the corrections and the figures.

use crate::constants::{
    AFDX_BAGS_MS, AFDX_FRAME_HEADERS_BYTES, AFDX_FRAME_OVERHEAD_BYTES, ETHERNET_MAX_FRAME_BYTES,
};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::time::{Duration, Instant};

/// BAG = 2^k ms for k = 0..7: 1, 2, 4, …, 128 ms.
pub const BAG_COUNT: usize = AFDX_BAGS_MS.len();
/// The largest payload per frame: a 1518 B Ethernet frame minus 47 B of headers and FCS.
pub const MAX_MTU: u32 = ETHERNET_MAX_FRAME_BYTES - AFDX_FRAME_HEADERS_BYTES;
/// Bytes a frame costs besides its payload: headers, FCS, preamble and inter-frame gap (67).
pub const FRAME_OVERHEAD: u32 = AFDX_FRAME_OVERHEAD_BYTES;
/// ARINC 664: 40 µs technological jitter, 500 µs maximum jitter at the transmitting port.
pub const ARINC_664_JITTER: JitterBudget = JitterBudget { technological_us: 40, limit_us: 500 };

/// The longest BAG in ms; every reserved bandwidth is counted in bytes per this period, an integer.
const LONGEST_BAG_MS: u64 = 1 << (BAG_COUNT - 1);
const US_PER_MS: u64 = 1000;

/// The least MTU (payload bytes per frame) with which a VL meets Eq. 1, per BAG: index k is
/// BAG = 2^k ms, `None` when no MTU of at most [`MAX_MTU`] does.
pub type MtuPerBag = [Option<u32>; BAG_COUNT];

/// A message of `payload_bytes` released once per MTC (message transmit cycle).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MessageFlow {
    pub payload_bytes: u32,
    pub mtc_us: u64,
}

impl MessageFlow {
    /// A flow whose MTC is a whole number of ms, as in the paper's examples.
    pub const fn ms(payload_bytes: u32, mtc_ms: u64) -> Self {
        MessageFlow { payload_bytes, mtc_us: mtc_ms * US_PER_MS }
    }
}

/// One VL's configuration: a frame of at most `mtu` payload bytes every `bag_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BagMtu {
    pub bag_ms: u32,
    pub mtu: u32,
}

impl BagMtu {
    fn with_exponent(k: usize, mtu: u32) -> Self {
        BagMtu { bag_ms: 1 << k, mtu }
    }

    /// Bytes reserved per 128 ms by frames that carry `overhead` bytes besides the payload.
    fn bytes_per_128ms(self, overhead: u64) -> u64 {
        (self.mtu as u64 + overhead) * (LONGEST_BAG_MS / self.bag_ms as u64)
    }

    /// The pair's own reserved bandwidth in AFDX wire bytes per 128 ms: (MTU + 67)/BAG.
    fn reserved(self) -> u64 {
        self.bytes_per_128ms(FRAME_OVERHEAD as u64)
    }
}

/// The candidate pairs of one VL, in BAG order.
pub fn candidate_pairs(mtus: &MtuPerBag) -> impl Iterator<Item = BagMtu> + '_ {
    mtus.iter().enumerate().filter_map(|(k, m)| m.map(|m| BagMtu::with_exponent(k, m)))
}

/// Invalid input; each message names the place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("flows: a virtual link needs at least one message flow")]
    NoFlows,
    #[error("flows[{flow}].payload: must be at least 1 B")]
    ZeroPayload { flow: usize },
    #[error("flows[{flow}].mtc: must be positive")]
    ZeroMtc { flow: usize },
    #[error(
        "flows: the MTCs' least common multiple is too large for exact arithmetic; round them to whole ms"
    )]
    MtcLcmOverflow,
    #[error("vls[{vl}]: MTU for BAG {bag_ms} ms must be 1..=1471 B, got {mtu} B")]
    Mtu { vl: usize, bag_ms: u32, mtu: u32 },
    #[error("ports[{port}].rate: must be positive")]
    ZeroRate { port: usize },
    #[error("ports[{port}].vls: VL {vl} does not exist ({count} VLs)")]
    UnknownVl { port: usize, vl: usize, count: usize },
    #[error("ports[{port}].vls: VL {vl} is listed twice")]
    DuplicateVl { port: usize, vl: usize },
    #[error(
        "ports[{port}].jitter: limit {limit_us} µs is below the technological jitter {technological_us} µs"
    )]
    JitterBudget { port: usize, technological_us: u32, limit_us: u32 },
    #[error("choice: {got} pairs for {expected} VLs")]
    ChoiceLength { expected: usize, got: usize },
    #[error("choice[{vl}].bag: must be a power of two between 1 ms and 128 ms, got {bag_ms} ms")]
    Bag { vl: usize, bag_ms: u32 },
    #[error("choice[{vl}].mtu: must be 1..=1471 B, got {mtu} B")]
    ChoiceMtu { vl: usize, mtu: u32 },
}

// ------------------------------------------------------------------------------------------------
// Step 1: the least MTU per BAG of one VL (Eq. 1, Fig. 4)
// ------------------------------------------------------------------------------------------------

/// Eq. 1 in integers. With L = lcm(p_1, …, p_n, 128 ms) in µs, Σ_j ⌈l_j/m⌉/p_j ≤ 1/BAG becomes
/// Σ_j ⌈l_j/m⌉·(L/p_j) ≤ L/BAG, and L/BAG is an integer for every BAG.
struct FrameDemand {
    /// (l_j, L/p_j) per flow.
    flows: Vec<(u64, u128)>,
    lcm: u128,
}

impl FrameDemand {
    fn new(flows: &[MessageFlow]) -> Result<Self, ConfigError> {
        if flows.is_empty() {
            return Err(ConfigError::NoFlows);
        }
        let mut lcm = (LONGEST_BAG_MS * US_PER_MS) as u128;
        for (i, f) in flows.iter().enumerate() {
            if f.payload_bytes == 0 {
                return Err(ConfigError::ZeroPayload { flow: i });
            }
            if f.mtc_us == 0 {
                return Err(ConfigError::ZeroMtc { flow: i });
            }
            let p = f.mtc_us as u128;
            lcm = (lcm / gcd(lcm, p)).checked_mul(p).ok_or(ConfigError::MtcLcmOverflow)?;
        }
        let flows: Vec<_> = flows.iter().map(|f| (f.payload_bytes as u64, lcm / f.mtc_us as u128)).collect();
        // The demand is largest at m = 1 (one byte per frame): if it fits, every sum below does.
        flows
            .iter()
            .try_fold(0u128, |sum, &(l, w)| sum.checked_add((l as u128).checked_mul(w)?))
            .ok_or(ConfigError::MtcLcmOverflow)?;
        Ok(FrameDemand { flows, lcm })
    }

    /// Frames per L µs that the flows need with frames of at most `mtu` payload bytes.
    fn frames(&self, mtu: u32) -> u128 {
        self.flows.iter().map(|&(l, w)| l.div_ceil(mtu as u64) as u128 * w).sum()
    }

    /// Frames per L µs that BAG = 2^k ms allows.
    fn capacity(&self, k: usize) -> u128 {
        self.lcm / (US_PER_MS << k) as u128
    }

    /// The utilisation floor Σ_j 1/p_j (one frame per message), in frames per L µs: the demand of
    /// every MTU at or above the largest payload.
    fn floor(&self) -> u128 {
        self.flows.iter().map(|&(_, w)| w).sum()
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Fig. 4's N_step: the MTUs at which some flow's fragment count drops, from the smallest useful
/// one up to `cap`. Returns `None` when a flow's MTC is below 1 ms: it would need more than
/// one frame per ms, more than the shortest BAG gives.
///
/// Fig. 4 walks the fragment count f from f_0 = ⌈l/⌈l/p⌉⌉ down to 1 and collects ⌈l/f⌉. Here each
/// step jumps from m (c = ⌈l/m⌉ fragments) straight to ⌈l/(c−1)⌉, the next MTU that saves a
/// fragment: the same set, without visiting each of up to l fragment counts.
fn step_points(flows: &[MessageFlow], cap: u32) -> Option<Vec<u32>> {
    let mut steps = Vec::new();
    for f in flows {
        // BAG ≥ 1 ms: at most one frame per ms, so at most p fragments per message (p in ms).
        let max_fragments = f.mtc_us / US_PER_MS;
        if max_fragments == 0 {
            return None;
        }
        let l = f.payload_bytes as u64;
        let first_fragments = l.div_ceil(l.div_ceil(max_fragments));
        let mut m = l.div_ceil(first_fragments);
        while m <= cap as u64 {
            steps.push(m as u32);
            let fragments = l.div_ceil(m);
            if fragments == 1 {
                break;
            }
            m = l.div_ceil(fragments - 1);
        }
    }
    steps.sort_unstable();
    steps.dedup();
    Some(steps)
}

/// The least MTU per BAG with which a VL carries `flows` (Fig. 4, "Find_Feasible_BAG_MUT"),
/// capped at [`MAX_MTU`].
///
/// Eq. 1's left side is a non-increasing step function of the MTU that changes only at the step
/// points, so the least MTU that satisfies it is one of them, and it never decreases as the BAG
/// grows: one pass over the sorted points serves all eight BAGs, O(n·|N_step|). Once the demand
/// reaches its floor Σ 1/p_j (MTU ≥ every payload), no MTU helps: a BAG above 1/floor and every
/// longer one is infeasible.
pub fn find_feasible_bag_mtu(flows: &[MessageFlow]) -> Result<MtuPerBag, ConfigError> {
    least_mtu_per_bag(flows, MAX_MTU)
}

/// Fig. 4 as printed, without the cap: the least MTU may exceed [`MAX_MTU`], more payload than an
/// Ethernet frame carries (for payloads above 1471 B and short MTCs).
pub fn paper_find_feasible_bag_mtu(flows: &[MessageFlow]) -> Result<MtuPerBag, ConfigError> {
    least_mtu_per_bag(flows, u32::MAX)
}

fn least_mtu_per_bag(flows: &[MessageFlow], cap: u32) -> Result<MtuPerBag, ConfigError> {
    let demand = FrameDemand::new(flows)?;
    let mut least = [None; BAG_COUNT];
    let Some(steps) = step_points(flows, cap) else { return Ok(least) };
    let mut next = 0;
    for (k, slot) in least.iter_mut().enumerate() {
        let capacity = demand.capacity(k);
        if demand.floor() > capacity {
            break;
        }
        while next < steps.len() && demand.frames(steps[next]) > capacity {
            next += 1;
        }
        match steps.get(next) {
            Some(&m) => *slot = Some(m),
            None => break,
        }
    }
    Ok(least)
}

/// The same as [`find_feasible_bag_mtu`] by trying every MTU 1..=1471 for every BAG: the reference
/// the step-point algorithm is tested against.
pub fn find_feasible_bag_mtu_exhaustive(flows: &[MessageFlow]) -> Result<MtuPerBag, ConfigError> {
    let demand = FrameDemand::new(flows)?;
    Ok(std::array::from_fn(|k| (1..=MAX_MTU).find(|&m| demand.frames(m) <= demand.capacity(k))))
}

// ------------------------------------------------------------------------------------------------
// Step 2: one pair per VL under the port constraints (Eq. 2, Eq. 3)
// ------------------------------------------------------------------------------------------------

/// Eq. 3's budget: a port's jitter is `technological_us` plus the time to send one frame of every
/// VL that crosses it, and must not exceed `limit_us`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct JitterBudget {
    pub technological_us: u32,
    pub limit_us: u32,
}

/// An output port: its rate, the VLs that cross it, and its constraints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Port {
    pub rate_bps: u64,
    /// Indices into [`Problem`]'s VLs.
    pub vls: Vec<usize>,
    /// Eq. 3 applies here when set (ARINC 664 sets it at the end system's output).
    pub jitter: Option<JitterBudget>,
    pub frame_overhead_bytes: u32,
}

impl Port {
    /// A port of `rate_bps` crossed by `vls`, with ARINC 664's jitter budget and 67 B per frame.
    pub fn new(rate_bps: u64, vls: Vec<usize>) -> Self {
        Port { rate_bps, vls, jitter: Some(ARINC_664_JITTER), frame_overhead_bytes: FRAME_OVERHEAD }
    }

    /// The same port without the jitter constraint.
    pub fn without_jitter(self) -> Self {
        Port { jitter: None, ..self }
    }

    /// Eq. 2 in bytes per 128 ms: Σ (MTU + o)·128/BAG ≤ rate·0.128/8, i.e. ≤ 2·rate/125.
    fn max_bytes_per_128ms(&self) -> u64 {
        (2 * self.rate_bps as u128 / 125) as u64
    }

    /// Eq. 3 as a burst bound, t and J in µs, rate in bit/s:
    /// t + 8·10^6·Σ (MTU + o)/rate ≤ J ⟺ Σ (MTU + o) ≤ (J − t)·rate/(8·10^6).
    fn max_burst_bytes(&self) -> u64 {
        match self.jitter {
            Some(b) => {
                let bytes = (b.limit_us - b.technological_us) as u128 * self.rate_bps as u128 / 8_000_000;
                u64::try_from(bytes).unwrap_or(u64::MAX)
            }
            None => u64::MAX,
        }
    }
}

/// VLs, each with its least MTU per BAG (from [`find_feasible_bag_mtu`] or given directly), and
/// the ports they cross.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    vls: Vec<MtuPerBag>,
    ports: Vec<Port>,
}

impl Problem {
    pub fn new(vls: Vec<MtuPerBag>, ports: Vec<Port>) -> Result<Self, ConfigError> {
        for (vl, mtus) in vls.iter().enumerate() {
            if let Some(p) = candidate_pairs(mtus).find(|p| !(1..=MAX_MTU).contains(&p.mtu)) {
                return Err(ConfigError::Mtu { vl, bag_ms: p.bag_ms, mtu: p.mtu });
            }
        }
        for (port, p) in ports.iter().enumerate() {
            if p.rate_bps == 0 {
                return Err(ConfigError::ZeroRate { port });
            }
            if let Some(b) = p.jitter.filter(|b| b.limit_us < b.technological_us) {
                return Err(ConfigError::JitterBudget {
                    port,
                    technological_us: b.technological_us,
                    limit_us: b.limit_us,
                });
            }
            let mut seen = vec![false; vls.len()];
            for &vl in &p.vls {
                match seen.get_mut(vl) {
                    None => return Err(ConfigError::UnknownVl { port, vl, count: vls.len() }),
                    Some(true) => return Err(ConfigError::DuplicateVl { port, vl }),
                    Some(s) => *s = true,
                }
            }
        }
        Ok(Problem { vls, ports })
    }

    /// The paper's setting: one switch output port of `rate_bps` shared by every VL.
    pub fn single_port(
        vls: Vec<MtuPerBag>,
        rate_bps: u64,
        jitter: Option<JitterBudget>,
    ) -> Result<Self, ConfigError> {
        let port = Port { jitter, ..Port::new(rate_bps, (0..vls.len()).collect()) };
        Problem::new(vls, vec![port])
    }

    pub fn vls(&self) -> &[MtuPerBag] {
        &self.vls
    }

    pub fn ports(&self) -> &[Port] {
        &self.ports
    }

    /// The figures of any choice of one pair per VL, feasible or not (the pairs need not be
    /// candidates: Eq. 1 is not checked here).
    pub fn evaluate(&self, choice: &[BagMtu]) -> Result<Configuration, ConfigError> {
        if choice.len() != self.vls.len() {
            return Err(ConfigError::ChoiceLength { expected: self.vls.len(), got: choice.len() });
        }
        for (vl, p) in choice.iter().enumerate() {
            if !p.bag_ms.is_power_of_two() || p.bag_ms as u64 > LONGEST_BAG_MS {
                return Err(ConfigError::Bag { vl, bag_ms: p.bag_ms });
            }
            if !(1..=MAX_MTU).contains(&p.mtu) {
                return Err(ConfigError::ChoiceMtu { vl, mtu: p.mtu });
            }
        }
        Ok(self.configuration(choice.to_vec()))
    }

    fn configuration(&self, choice: Vec<BagMtu>) -> Configuration {
        let ports = self
            .ports
            .iter()
            .enumerate()
            .map(|(port, p)| {
                let o = p.frame_overhead_bytes as u64;
                let reserved: u64 = p.vls.iter().map(|&v| choice[v].bytes_per_128ms(o)).sum();
                let burst: u64 = p.vls.iter().map(|&v| choice[v].mtu as u64 + o).sum();
                let jitter = p.jitter.map(|b| JitterLoad {
                    jitter_us: b.technological_us as f64 + burst as f64 * 8e6 / p.rate_bps as f64,
                    limit_us: b.limit_us,
                });
                PortLoad {
                    port,
                    reserved_bps: bytes_per_128ms_to_bps(reserved),
                    rate_bps: p.rate_bps,
                    burst_bytes: burst,
                    jitter,
                    bandwidth_ok: reserved <= p.max_bytes_per_128ms(),
                    jitter_ok: burst <= p.max_burst_bytes(),
                }
            })
            .collect();
        let reserved_bps = bytes_per_128ms_to_bps(choice.iter().map(|p| p.reserved()).sum());
        Configuration { choice, ports, reserved_bps }
    }
}

/// Bytes per 128 ms to bit/s: × 8 / 0.128 s = × 62.5, exact in f64.
fn bytes_per_128ms_to_bps(bytes: u64) -> f64 {
    bytes as f64 * 62.5
}

/// One pair per VL and the figures that justify it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Configuration {
    /// The chosen (BAG, MTU) per VL, in the problem's VL order.
    pub choice: Vec<BagMtu>,
    pub ports: Vec<PortLoad>,
    /// Σ_i 8·(MTU_i + 67)/BAG_i over the VLs, each counted once whatever ports it crosses: the
    /// bandwidth the configuration reserves, in bit/s.
    pub reserved_bps: f64,
}

impl Configuration {
    /// Every port meets Eq. 2 and, where it applies, Eq. 3.
    pub fn is_feasible(&self) -> bool {
        self.ports.iter().all(|p| p.bandwidth_ok && p.jitter_ok)
    }
}

/// A port's load under a configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PortLoad {
    pub port: usize,
    /// Eq. 2's left side: Σ 8·(MTU + overhead)/BAG over the VLs crossing the port (exact).
    pub reserved_bps: f64,
    pub rate_bps: u64,
    /// One frame of every VL crossing the port: Σ (MTU + overhead), bytes.
    pub burst_bytes: u64,
    /// Eq. 3's figures, where it applies.
    pub jitter: Option<JitterLoad>,
    pub bandwidth_ok: bool,
    /// True where Eq. 3 does not apply.
    pub jitter_ok: bool,
}

impl PortLoad {
    /// Reserved bandwidth in the paper's unit, bytes per ms.
    pub fn reserved_bytes_per_ms(&self) -> f64 {
        self.reserved_bps / 8000.0
    }
}

/// Technological jitter plus the burst's transmission time, against the limit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct JitterLoad {
    pub jitter_us: f64,
    pub limit_us: u32,
}

/// Why no configuration exists.
#[derive(Debug, Clone, PartialEq, Serialize, thiserror::Error)]
pub enum Infeasible {
    #[error("VL {vl}: no BAG of 1..128 ms with an MTU of at most 1471 B carries its message flows (Eq. 1)")]
    NoCandidate { vl: usize },
    #[error(
        "port {port}: bandwidth (Eq. 2): even the least-bandwidth pair of every VL reserves \
         {least_bps} bit/s > {rate_bps} bit/s"
    )]
    Bandwidth { port: usize, least_bps: f64, rate_bps: u64 },
    #[error(
        "port {port}: jitter (Eq. 3): even the smallest MTU of every VL gives {least_jitter_us:.1} µs > \
         {limit_us} µs"
    )]
    Jitter { port: usize, least_jitter_us: f64, limit_us: u32 },
    #[error(
        "port {port}: bandwidth (Eq. 2) and jitter (Eq. 3) each hold for some choice but never together: \
         the BAGs short enough for small MTUs reserve more than the rate"
    )]
    PortConflict { port: usize },
    #[error("every port can be configured on its own, but no choice meets all ports at once")]
    NetworkConflict,
    #[error(
        "{rejected} configurations met every port constraint, but the acceptance check rejected them all"
    )]
    Rejected { rejected: u64 },
}

/// A solver's answer.
pub type Outcome = Result<Configuration, Infeasible>;

/// An optional extra check of a complete configuration (one pair per VL), for instance "every
/// end-to-end deadline is met"; the search goes on past the configurations it rejects.
pub type Accept<'a> = Option<&'a mut dyn FnMut(&[BagMtu]) -> bool>;

/// In which order a VL's pairs are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BranchOrder {
    /// BAG = 1, 2, …, 128 ms, as Fig. 5's loop is printed.
    BagOrder,
    /// The pair that reserves the least bandwidth first, as the paper's text suggests (ties: the
    /// shorter BAG).
    LeastBandwidthFirst,
}

/// How [`branch_and_bound`] searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Search {
    pub order: BranchOrder,
    /// Also prune a prefix when the least load the remaining VLs can add at a port no longer fits
    /// (Fig. 5 only checks the prefix itself).
    pub look_ahead: bool,
}

impl Search {
    /// Fig. 5's DFS_BandB with its return logic corrected (catalogue I-001D-3): BAG order, prefix
    /// pruning only.
    pub const FIG5: Search = Search { order: BranchOrder::BagOrder, look_ahead: false };
}

impl Default for Search {
    fn default() -> Self {
        Search { order: BranchOrder::LeastBandwidthFirst, look_ahead: true }
    }
}

/// What [`brute_force`] looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Goal {
    /// The first feasible configuration in BAG order (VL 0's pair varies slowest).
    FirstFeasible,
    /// The feasible configuration of least total reserved bandwidth (every configuration is tried).
    MinBandwidth,
}

/// Any configuration that meets every port constraint (and `accept`), by depth-first search over
/// the VLs in order, pruning each prefix that already violates a port constraint: Eq. 2 and Eq. 3
/// only grow as VLs are added. This is Fig. 5's DFS_BandB, corrected: it reports success only
/// when the recursion below succeeded, and otherwise tries the VL's next pair.
///
/// In [`BranchOrder::BagOrder`] it returns the same configuration as [`brute_force`] with
/// [`Goal::FirstFeasible`], the first in that order: pruning only skips prefixes without a
/// feasible leaf. Exponential in the worst case.
pub fn branch_and_bound(problem: &Problem, search: Search, accept: Accept) -> Outcome {
    no_candidate(problem)?;
    let mut engine = Engine::new(problem, search.order, search.look_ahead, accept);
    if engine.first_feasible(0, true) {
        Ok(problem.configuration(engine.chosen))
    } else {
        Err(diagnose(problem, engine.rejected))
    }
}

/// Every combination of one pair per VL (up to 8^N), each checked only once complete: the
/// exhaustive search the paper compares with.
pub fn brute_force(problem: &Problem, goal: Goal, accept: Accept) -> Outcome {
    no_candidate(problem)?;
    let mut engine = Engine::new(problem, BranchOrder::BagOrder, false, accept);
    let found = match goal {
        Goal::FirstFeasible => engine.first_feasible(0, false).then(|| engine.chosen.clone()),
        Goal::MinBandwidth => {
            let mut best = Best::default();
            engine.least_bandwidth(0, 0, &mut best, false);
            best.choice
        }
    };
    found.map(|c| problem.configuration(c)).ok_or_else(|| diagnose(problem, engine.rejected))
}

/// The feasible configuration (accepted by `accept`) that reserves the least total bandwidth
/// Σ_i (MTU_i + 67)/BAG_i, exactly: each VL reserves its bandwidth once, whatever ports it
/// crosses. Branch and bound: pairs in least-bandwidth order with look-ahead pruning as in
/// [`branch_and_bound`], and a prefix is cut once its reserved bandwidth plus the least each
/// remaining VL can reserve is no better than the best configuration found so far.
pub fn min_bandwidth(problem: &Problem, accept: Accept) -> Outcome {
    no_candidate(problem)?;
    let mut engine = Engine::new(problem, BranchOrder::LeastBandwidthFirst, true, accept);
    let mut best = Best::default();
    engine.least_bandwidth(0, 0, &mut best, true);
    best.choice.map(|c| problem.configuration(c)).ok_or_else(|| diagnose(problem, engine.rejected))
}

/// A solver of [`search_with_stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Solver {
    /// [`branch_and_bound`] with this search.
    BranchAndBound(Search),
    /// [`min_bandwidth`]: the exact least-bandwidth configuration by branch and bound.
    MinBandwidth,
    /// [`brute_force`] with this goal: the exhaustive search.
    BruteForce(Goal),
}

/// What a search cost, from [`search_with_stats`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SearchStats {
    /// Prefixes of the search tree visited: the root, every partial choice and every leaf.
    /// A search that never starts (a VL without candidates) visits none.
    pub nodes: u64,
    /// Wall time of the search, s.
    pub elapsed_s: f64,
    /// The time cap passed before the search finished: it has no answer.
    pub gave_up: bool,
}

/// Runs `solver` on `problem`, counting the nodes it visits, and gives up once `time_cap` has
/// passed (`None`: never). The answer is `None` when it gave up, else what the solver returns.
/// The searches are those of the solvers themselves, so the answer, when there is one, is
/// theirs; the count is what lets a branch and bound be compared with the exhaustive search
/// independently of the machine's speed.
pub fn search_with_stats(
    problem: &Problem,
    solver: Solver,
    time_cap: Option<Duration>,
) -> (Option<Outcome>, SearchStats) {
    let start = Instant::now();
    if let Err(e) = no_candidate(problem) {
        return (
            Some(Err(e)),
            SearchStats { nodes: 0, elapsed_s: start.elapsed().as_secs_f64(), gave_up: false },
        );
    }
    let (order, prune) = match solver {
        Solver::BranchAndBound(search) => (search.order, search.look_ahead),
        Solver::MinBandwidth => (BranchOrder::LeastBandwidthFirst, true),
        Solver::BruteForce(_) => (BranchOrder::BagOrder, false),
    };
    let mut engine = Engine::new(problem, order, prune, None);
    engine.deadline = time_cap.map(|cap| start + cap);
    let found = match solver {
        Solver::BranchAndBound(_) => engine.first_feasible(0, true).then(|| engine.chosen.clone()),
        Solver::BruteForce(Goal::FirstFeasible) => {
            engine.first_feasible(0, false).then(|| engine.chosen.clone())
        }
        Solver::MinBandwidth | Solver::BruteForce(Goal::MinBandwidth) => {
            let mut best = Best::default();
            let bound = matches!(solver, Solver::MinBandwidth);
            engine.least_bandwidth(0, 0, &mut best, bound);
            best.choice
        }
    };
    let stats = SearchStats {
        nodes: engine.nodes,
        elapsed_s: start.elapsed().as_secs_f64(),
        gave_up: engine.gave_up,
    };
    if engine.gave_up {
        return (None, stats);
    }
    let outcome = found.map(|c| problem.configuration(c)).ok_or_else(|| diagnose(problem, engine.rejected));
    (Some(outcome), stats)
}

fn no_candidate(problem: &Problem) -> Result<(), Infeasible> {
    match problem.vls.iter().position(|mtus| mtus.iter().all(Option::is_none)) {
        Some(vl) => Err(Infeasible::NoCandidate { vl }),
        None => Ok(()),
    }
}

/// The reason a search failed: the acceptance check, else the first port whose bandwidth or
/// jitter cannot hold even with each VL's least load there, else the first port that cannot be
/// configured on its own, else the ports together.
fn diagnose(problem: &Problem, rejected: u64) -> Infeasible {
    if rejected > 0 {
        return Infeasible::Rejected { rejected };
    }
    for (port, p) in problem.ports.iter().enumerate() {
        let o = p.frame_overhead_bytes as u64;
        let least = |load: &dyn Fn(BagMtu) -> u64| -> u64 {
            p.vls.iter().map(|&v| candidate_pairs(&problem.vls[v]).map(load).min().unwrap_or(0)).sum()
        };
        let least_bw = least(&|c| c.bytes_per_128ms(o));
        if least_bw > p.max_bytes_per_128ms() {
            return Infeasible::Bandwidth {
                port,
                least_bps: bytes_per_128ms_to_bps(least_bw),
                rate_bps: p.rate_bps,
            };
        }
        let least_burst = least(&|c| c.mtu as u64 + o);
        if let Some(b) = p.jitter.filter(|_| least_burst > p.max_burst_bytes()) {
            return Infeasible::Jitter {
                port,
                least_jitter_us: b.technological_us as f64 + least_burst as f64 * 8e6 / p.rate_bps as f64,
                limit_us: b.limit_us,
            };
        }
    }
    if problem.ports.len() == 1 {
        return Infeasible::PortConflict { port: 0 };
    }
    for (port, p) in problem.ports.iter().enumerate() {
        let alone = Problem { vls: problem.vls.clone(), ports: vec![p.clone()] };
        if branch_and_bound(&alone, Search::default(), None).is_err() {
            return Infeasible::PortConflict { port };
        }
    }
    Infeasible::NetworkConflict
}

/// A port a VL crosses, and the least load the VLs after it that cross the same port will add
/// (zero without look-ahead).
struct Link {
    port: usize,
    rest_bytes_per_128ms: u64,
    rest_burst: u64,
}

#[derive(Default)]
struct Best {
    reserved: Option<u64>,
    choice: Option<Vec<BagMtu>>,
}

/// The search state shared by the solvers: per port, the prefix's reserved bytes per 128 ms and
/// burst, against the port's limits in the same units.
struct Engine<'a> {
    /// Per VL, its candidate pairs in branch order.
    options: Vec<Vec<BagMtu>>,
    links: Vec<Vec<Link>>,
    /// Σ_{v ≥ i} least reserved bandwidth of VL v: the bound of [`min_bandwidth`].
    rest_reserved: Vec<u64>,
    overhead: Vec<u64>,
    max_bytes_per_128ms: Vec<u64>,
    max_burst: Vec<u64>,
    bytes_per_128ms: Vec<u64>,
    burst: Vec<u64>,
    chosen: Vec<BagMtu>,
    accept: Accept<'a>,
    rejected: u64,
    /// Prefixes visited (the root, every partial choice and every leaf).
    nodes: u64,
    /// Give up once this instant is passed (checked every [`DEADLINE_CHECK`] nodes).
    deadline: Option<Instant>,
    gave_up: bool,
}

/// How often (in nodes) a search with a time cap reads the clock: often enough to stop within
/// a few ms of the cap, rarely enough to cost nothing against the search itself.
const DEADLINE_CHECK: u64 = 4096;

impl<'a> Engine<'a> {
    fn new(problem: &Problem, order: BranchOrder, look_ahead: bool, accept: Accept<'a>) -> Self {
        let n = problem.vls.len();
        let options: Vec<Vec<BagMtu>> = problem
            .vls
            .iter()
            .map(|mtus| {
                let mut pairs: Vec<_> = candidate_pairs(mtus).collect();
                if order == BranchOrder::LeastBandwidthFirst {
                    pairs.sort_by_key(|p| (p.reserved(), p.bag_ms)); // stable: BAG order on ties
                }
                pairs
            })
            .collect();
        let mut links: Vec<Vec<Link>> = (0..n).map(|_| Vec::new()).collect();
        for (port, p) in problem.ports.iter().enumerate() {
            let o = p.frame_overhead_bytes as u64;
            let mut vls = p.vls.clone();
            vls.sort_unstable_by_key(|&v| Reverse(v));
            let (mut rest_bw, mut rest_burst) = (0, 0);
            for v in vls {
                links[v].push(Link { port, rest_bytes_per_128ms: rest_bw, rest_burst });
                if look_ahead {
                    rest_bw += options[v].iter().map(|c| c.bytes_per_128ms(o)).min().unwrap_or(0);
                    rest_burst += options[v].iter().map(|c| c.mtu as u64 + o).min().unwrap_or(0);
                }
            }
        }
        let mut rest_reserved = vec![0; n + 1];
        for v in (0..n).rev() {
            rest_reserved[v] =
                rest_reserved[v + 1] + options[v].iter().map(|c| c.reserved()).min().unwrap_or(0);
        }
        let ports = problem.ports.len();
        Engine {
            options,
            links,
            rest_reserved,
            overhead: problem.ports.iter().map(|p| p.frame_overhead_bytes as u64).collect(),
            max_bytes_per_128ms: problem.ports.iter().map(Port::max_bytes_per_128ms).collect(),
            max_burst: problem.ports.iter().map(Port::max_burst_bytes).collect(),
            bytes_per_128ms: vec![0; ports],
            burst: vec![0; ports],
            chosen: Vec::with_capacity(n),
            accept,
            rejected: 0,
            nodes: 0,
            deadline: None,
            gave_up: false,
        }
    }

    /// Counts a node; true once the time cap has passed (the search then unwinds).
    fn visit(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes.is_multiple_of(DEADLINE_CHECK) && self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.gave_up = true;
        }
        self.gave_up
    }

    /// VL i's `pair` keeps every port it crosses within Eq. 2 and Eq. 3, together with the least
    /// the later VLs there will add.
    fn fits(&self, i: usize, pair: BagMtu) -> bool {
        self.links[i].iter().all(|l| {
            let o = self.overhead[l.port];
            self.bytes_per_128ms[l.port] + pair.bytes_per_128ms(o) + l.rest_bytes_per_128ms
                <= self.max_bytes_per_128ms[l.port]
                && self.burst[l.port] + pair.mtu as u64 + o + l.rest_burst <= self.max_burst[l.port]
        })
    }

    fn within_limits(&self) -> bool {
        (0..self.burst.len()).all(|p| {
            self.bytes_per_128ms[p] <= self.max_bytes_per_128ms[p] && self.burst[p] <= self.max_burst[p]
        })
    }

    fn take(&mut self, i: usize, pair: BagMtu) {
        for l in &self.links[i] {
            let o = self.overhead[l.port];
            self.bytes_per_128ms[l.port] += pair.bytes_per_128ms(o);
            self.burst[l.port] += pair.mtu as u64 + o;
        }
        self.chosen.push(pair);
    }

    fn untake(&mut self, i: usize, pair: BagMtu) {
        for l in &self.links[i] {
            let o = self.overhead[l.port];
            self.bytes_per_128ms[l.port] -= pair.bytes_per_128ms(o);
            self.burst[l.port] -= pair.mtu as u64 + o;
        }
        self.chosen.pop();
    }

    fn accepts(&mut self) -> bool {
        let ok = self.accept.as_mut().is_none_or(|accept| accept(&self.chosen));
        self.rejected += u64::from(!ok);
        ok
    }

    /// Depth-first from VL i; on success `chosen` holds the configuration. `prune`: cut prefixes
    /// that cannot lead to a feasible leaf (branch and bound); otherwise check complete leaves
    /// only (brute force).
    fn first_feasible(&mut self, i: usize, prune: bool) -> bool {
        if self.visit() {
            return false;
        }
        if i == self.options.len() {
            return (prune || self.within_limits()) && self.accepts();
        }
        for c in 0..self.options[i].len() {
            let pair = self.options[i][c];
            if prune && !self.fits(i, pair) {
                continue;
            }
            self.take(i, pair);
            if self.first_feasible(i + 1, prune) {
                return true;
            }
            self.untake(i, pair);
            if self.gave_up {
                return false;
            }
        }
        false
    }

    /// Depth-first from VL i whose prefix reserves `reserved` (bytes per 128 ms), keeping the
    /// feasible, accepted leaf of least reserved bandwidth (the first found on ties).
    fn least_bandwidth(&mut self, i: usize, reserved: u64, best: &mut Best, prune: bool) {
        let beats = |bound: u64, best: &Best| best.reserved.is_none_or(|b| bound < b);
        if self.visit() {
            return;
        }
        if i == self.options.len() {
            // The acceptance check is asked only about a leaf that would improve.
            if beats(reserved, best) && (prune || self.within_limits()) && self.accepts() {
                *best = Best { reserved: Some(reserved), choice: Some(self.chosen.clone()) };
            }
            return;
        }
        for c in 0..self.options[i].len() {
            let pair = self.options[i][c];
            let reserved = reserved + pair.reserved();
            if prune {
                if !beats(reserved + self.rest_reserved[i + 1], best) {
                    break; // pairs come in least-bandwidth order: the rest are no better
                }
                if !self.fits(i, pair) {
                    continue;
                }
            }
            self.take(i, pair);
            self.least_bandwidth(i + 1, reserved, best, prune);
            self.untake(i, pair);
            if self.gave_up {
                return;
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Fig. 5 as printed
// ------------------------------------------------------------------------------------------------

/// What Fig. 5 as printed computes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PaperDfs {
    /// DFS_BandB(0, 0, 1, S)'s return value.
    pub returned: bool,
    /// S by VL. A VL is `None` where line 14's unconditional `return true` reported success
    /// although the recursion below had failed: `returned` may be true with an incomplete S.
    pub chosen: Vec<Option<BagMtu>>,
}

/// Find_Feasible_Configurations / DFS_BandB exactly as Fig. 5 prints it, on one port of
/// `rate_bps` shared by all VLs, for comparison with [`branch_and_bound`]:
///
/// * pairs in BAG order;
/// * bandwidth test Σ (MTU + 67)/BAG ≤ B/8000 in bytes per ms (consistent with Eq. 2);
/// * jitter test Σ (67 + MTU) ≤ 460·B with B in bit/s (I-001D-2): bytes against bits per second,
///   so it passes for any configuration the bandwidth test passes;
/// * line 14 returns true once the first pair that passes both tests has been explored, whatever
///   the recursion returned (I-001D-3).
pub fn paper_dfs_bandb(vls: &[MtuPerBag], rate_bps: u64) -> PaperDfs {
    fn dfs(
        vls: &[MtuPerBag],
        rate_bps: u64,
        b_curr: u64,
        j_curr: u64,
        i: usize,
        s: &mut [Option<BagMtu>],
    ) -> bool {
        if i == vls.len() {
            return true;
        }
        for pair in candidate_pairs(&vls[i]) {
            // bandwidth (bytes per ms) ≤ B/8000, scaled by 128: bytes per 128 ms ≤ 2·B/125.
            let bandwidth = b_curr + pair.reserved();
            let jitter = j_curr + FRAME_OVERHEAD as u64 + pair.mtu as u64;
            let budget = (ARINC_664_JITTER.limit_us - ARINC_664_JITTER.technological_us) as u128;
            if 125 * bandwidth as u128 <= 2 * rate_bps as u128 && jitter as u128 <= budget * rate_bps as u128
            {
                if dfs(vls, rate_bps, bandwidth, jitter, i + 1, s) {
                    s[i] = Some(pair);
                }
                return true;
            }
        }
        false
    }
    let mut chosen = vec![None; vls.len()];
    let returned = dfs(vls, rate_bps, 0, 0, 0, &mut chosen);
    PaperDfs { returned, chosen }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn pair(bag_ms: u32, mtu: u32) -> BagMtu {
        BagMtu { bag_ms, mtu }
    }

    fn mtus(pairs: &[(u32, u32)]) -> MtuPerBag {
        let mut m = [None; BAG_COUNT];
        for &(bag, mtu) in pairs {
            m[bag.trailing_zeros() as usize] = Some(mtu);
        }
        m
    }

    /// Table I's printed pairs (1 Mbps).
    fn table_i() -> Vec<MtuPerBag> {
        vec![
            mtus(&[(1, 5), (2, 9), (4, 17), (8, 34), (16, 67), (32, 200)]),
            mtus(&[(1, 6), (2, 12), (4, 25), (8, 50), (16, 100), (32, 200)]),
        ]
    }

    // --------------------------------------------------------------------------------------------
    // Step 1
    // --------------------------------------------------------------------------------------------

    #[test]
    fn tv_001d_1_worked_example() {
        let flows = [MessageFlow::ms(80, 10), MessageFlow::ms(100, 12)];
        assert_eq!(
            step_points(&flows, MAX_MTU).unwrap(),
            [8, 9, 10, 12, 13, 14, 15, 16, 17, 20, 25, 27, 34, 40, 50, 80, 100]
        );
        let least = find_feasible_bag_mtu(&flows).unwrap();
        assert_eq!(least, mtus(&[(1, 17), (2, 40), (4, 100)]));
        let demand = FrameDemand::new(&flows).unwrap();
        // m = 17: 5/10 + 6/12 = 1 frame per ms exactly; m = 16: 0.5 + 7/12 > 1.
        assert_eq!(demand.frames(17), demand.capacity(0));
        assert!(demand.frames(16) > demand.capacity(0));
        // Utilisation floor 1/10 + 1/12 = 11/60 per ms: BAG 4 ms fits (1/4 ≥ 11/60), 8 ms does not.
        assert_eq!(demand.floor() * 60_000, 11 * demand.lcm);
        assert!(demand.floor() <= demand.capacity(2) && demand.floor() > demand.capacity(3));
        assert_eq!(find_feasible_bag_mtu_exhaustive(&flows).unwrap(), least);
    }

    #[test]
    fn tv_001d_2_table_i_vl1() {
        let flows = [MessageFlow::ms(200, 80), MessageFlow::ms(250, 160)];
        assert_eq!(find_feasible_bag_mtu(&flows).unwrap(), table_i()[0]);
        // Floor 1/80 + 1/160 = 0.01875 per ms > 1/64.
        assert_eq!(find_feasible_bag_mtu(&flows).unwrap()[6], None);
    }

    #[test]
    fn tv_001d_3_table_i_vl2_recomputed() {
        let printed = [MessageFlow::ms(250, 220), MessageFlow::ms(200, 40)];
        let recomputed = mtus(&[(1, 7), (2, 13), (4, 25), (8, 50), (16, 125), (32, 250)]);
        assert_eq!(find_feasible_bag_mtu(&printed).unwrap(), recomputed);
        assert_eq!(find_feasible_bag_mtu_exhaustive(&printed).unwrap(), recomputed);
        // The printed row follows from f_{2,1} with an MTC of 320..439 ms or a payload of 121..192 B.
        for mtc in 300..460 {
            let flows = [MessageFlow::ms(250, mtc), MessageFlow::ms(200, 40)];
            let printed_row = find_feasible_bag_mtu(&flows).unwrap() == table_i()[1];
            assert_eq!(printed_row, (320..=439).contains(&mtc), "MTC {mtc} ms");
        }
        for payload in 100..220 {
            let flows = [MessageFlow::ms(payload, 220), MessageFlow::ms(200, 40)];
            let printed_row = find_feasible_bag_mtu(&flows).unwrap() == table_i()[1];
            assert_eq!(printed_row, (121..=192).contains(&payload), "payload {payload} B");
        }
    }

    #[test]
    fn mtu_cap_and_short_mtcs() {
        // 3000 B every 3 ms: at most 3 frames per message, so at least 1000 B per frame (BAG 1 ms).
        assert_eq!(find_feasible_bag_mtu(&[MessageFlow::ms(3000, 3)]).unwrap(), mtus(&[(1, 1000)]));
        // 6000 B every 3 ms would need 2000 B frames: above 1471 B, so nothing.
        assert_eq!(find_feasible_bag_mtu(&[MessageFlow::ms(6000, 3)]).unwrap(), [None; BAG_COUNT]);
        // 6000 B every 8 ms: 8 frames of 750 B at BAG 1 ms; BAG 2 ms would need 1500 B frames.
        assert_eq!(find_feasible_bag_mtu(&[MessageFlow::ms(6000, 8)]).unwrap(), mtus(&[(1, 750)]));
        // Fig. 4 as printed has no cap: 3000 B every 2 ms gets 1500 B frames at BAG 1 ms and one
        // 3000 B frame at BAG 2 ms.
        let printed = paper_find_feasible_bag_mtu(&[MessageFlow::ms(3000, 2)]).unwrap();
        assert_eq!(printed, mtus(&[(1, 1500), (2, 3000)]));
        assert_eq!(find_feasible_bag_mtu(&[MessageFlow::ms(3000, 2)]).unwrap(), [None; BAG_COUNT]);
        // An MTC below 1 ms needs more than one frame per ms.
        let fast = MessageFlow { payload_bytes: 10, mtc_us: 999 };
        assert_eq!(find_feasible_bag_mtu(&[fast]).unwrap(), [None; BAG_COUNT]);
        assert_eq!(find_feasible_bag_mtu_exhaustive(&[fast]).unwrap(), [None; BAG_COUNT]);
        // Exactly at the limit: 1 B every 128 ms fits BAG 128 ms with a 1 B MTU.
        assert_eq!(find_feasible_bag_mtu(&[MessageFlow::ms(1, 128)]).unwrap(), [Some(1); BAG_COUNT]);
    }

    #[test]
    fn invalid_flows_are_named() {
        assert_eq!(find_feasible_bag_mtu(&[]), Err(ConfigError::NoFlows));
        let zero = [MessageFlow::ms(10, 10), MessageFlow::ms(0, 10)];
        assert_eq!(find_feasible_bag_mtu(&zero), Err(ConfigError::ZeroPayload { flow: 1 }));
        let err = find_feasible_bag_mtu(&[MessageFlow::ms(10, 0)]).unwrap_err();
        assert_eq!(err.to_string(), "flows[0].mtc: must be positive");
        // Pairwise coprime MTCs in µs whose lcm exceeds 128 bits.
        let primes = [1_000_003, 1_000_033, 1_000_037, 1_000_039, 1_000_081, 1_000_099];
        let flows: Vec<_> = primes.iter().map(|&p| MessageFlow { payload_bytes: 100, mtc_us: p }).collect();
        assert_eq!(find_feasible_bag_mtu(&flows), Err(ConfigError::MtcLcmOverflow));
    }

    fn random_flows(rng: &mut ChaCha8Rng) -> Vec<MessageFlow> {
        (0..rng.gen_range(1..=4))
            .map(|_| {
                let payload_bytes =
                    if rng.gen_bool(0.4) { rng.gen_range(1..=100) } else { rng.gen_range(1..=3000) };
                let mtc_us = if rng.gen_bool(0.6) {
                    rng.gen_range(1..=300) * US_PER_MS
                } else {
                    rng.gen_range(500..=300_000)
                };
                MessageFlow { payload_bytes, mtc_us }
            })
            .collect()
    }

    /// The step-point algorithm and the scan of every MTU agree on thousands of random VLs.
    #[test]
    fn step_points_match_every_mtu() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut found = 0;
        for _ in 0..3000 {
            let flows = random_flows(&mut rng);
            let least = find_feasible_bag_mtu(&flows).unwrap();
            assert_eq!(least, find_feasible_bag_mtu_exhaustive(&flows).unwrap(), "{flows:?}");
            let uncapped = paper_find_feasible_bag_mtu(&flows).unwrap();
            for (capped, printed) in least.iter().zip(uncapped) {
                assert!(*capped == printed || (capped.is_none() && printed.is_some_and(|m| m > MAX_MTU)));
            }
            found += least.iter().flatten().count();
        }
        assert!(found > 3000, "the random VLs exercise feasible BAGs too ({found})");
    }

    /// The exhaustive scan against Eq. 1 cross-multiplied by the MTCs, with no common multiple.
    #[test]
    fn exhaustive_scan_matches_cross_multiplied_eq1() {
        // Σ_j f_j/p_j ≤ 1/BAG ⟺ Σ_j f_j·BAG·Π_{i≠j} p_i ≤ Π_i p_i (p and BAG in µs).
        fn eq1(flows: &[MessageFlow], mtu: u32, k: usize) -> bool {
            let product: u128 = flows.iter().map(|f| f.mtc_us as u128).product();
            let bag_us = (US_PER_MS << k) as u128;
            let lhs: u128 = flows
                .iter()
                .map(|f| {
                    (f.payload_bytes as u128).div_ceil(mtu as u128) * bag_us * (product / f.mtc_us as u128)
                })
                .sum();
            lhs <= product
        }
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        for _ in 0..300 {
            let flows: Vec<_> = random_flows(&mut rng).into_iter().take(3).collect();
            let least = find_feasible_bag_mtu_exhaustive(&flows).unwrap();
            for (k, m) in least.iter().enumerate() {
                match *m {
                    Some(m) => assert!(eq1(&flows, m, k) && (m == 1 || !eq1(&flows, m - 1, k))),
                    None => assert!(!eq1(&flows, MAX_MTU, k)),
                }
            }
        }
    }

    // --------------------------------------------------------------------------------------------
    // Step 2: the paper's pair-selection example (TV-001D-4)
    // --------------------------------------------------------------------------------------------

    #[test]
    fn tv_001d_4_figures() {
        let problem = Problem::single_port(table_i(), 1_000_000, Some(ARINC_664_JITTER)).unwrap();
        // (selection, B/ms, bandwidth ok, Σ(67 + MTU), jitter µs with correct units)
        let cases = [
            ([pair(1, 5), pair(1, 6)], 145.0, false, 145, 1200.0),
            ([pair(2, 9), pair(2, 12)], 77.5, true, 155, 1280.0),
            ([pair(1, 5), pair(2, 12)], 111.5, true, 151, 1248.0),
        ];
        for (choice, bytes_per_ms, bandwidth_ok, burst, jitter_us) in cases {
            let c = problem.evaluate(&choice).unwrap();
            let port = &c.ports[0];
            assert_eq!(port.reserved_bytes_per_ms(), bytes_per_ms);
            assert_eq!(port.bandwidth_ok, bandwidth_ok);
            assert_eq!(port.burst_bytes, burst);
            assert_eq!(port.jitter, Some(JitterLoad { jitter_us, limit_us: 500 }));
            assert!(!port.jitter_ok && !c.is_feasible());
        }
    }

    #[test]
    fn tv_001d_4_printed_dfs_returns_the_papers_answer() {
        let printed = paper_dfs_bandb(&table_i(), 1_000_000);
        assert_eq!(printed, PaperDfs { returned: true, chosen: vec![Some(pair(1, 5)), Some(pair(2, 12))] });
        // The corrected search agrees when the jitter constraint does not apply ...
        let unconstrained = Problem::single_port(table_i(), 1_000_000, None).unwrap();
        let c = branch_and_bound(&unconstrained, Search::FIG5, None).unwrap();
        assert_eq!(c.choice, [pair(1, 5), pair(2, 12)]);
        assert_eq!(c.ports[0].reserved_bytes_per_ms(), 111.5);
        assert_eq!(brute_force(&unconstrained, Goal::FirstFeasible, None).unwrap(), c);
        // ... and with the jitter in µs nothing fits: 460 µs at 1 Mbps is 57.5 B, less than one frame.
        let problem = Problem::single_port(table_i(), 1_000_000, Some(ARINC_664_JITTER)).unwrap();
        assert_eq!(problem.ports()[0].max_burst_bytes(), 57);
        let jitter = Infeasible::Jitter { port: 0, least_jitter_us: 1200.0, limit_us: 500 };
        for search in [Search::FIG5, Search::default()] {
            assert_eq!(branch_and_bound(&problem, search, None), Err(jitter.clone()));
        }
        assert_eq!(brute_force(&problem, Goal::MinBandwidth, None), Err(jitter.clone()));
        assert_eq!(min_bandwidth(&problem, None), Err(jitter.clone()));
        assert_eq!(
            jitter.to_string(),
            "port 0: jitter (Eq. 3): even the smallest MTU of every VL gives 1200.0 µs > 500 µs"
        );
    }

    #[test]
    fn min_bandwidth_of_table_i() {
        let problem = Problem::single_port(table_i(), 1_000_000, None).unwrap();
        let c = min_bandwidth(&problem, None).unwrap();
        // (32, 200) reserves 267/32 = 8.34375 B/ms, the least of both VLs.
        assert_eq!(c.choice, [pair(32, 200), pair(32, 200)]);
        assert_eq!(c.reserved_bps, 2.0 * 267.0 / 32.0 * 8000.0);
        assert_eq!(c.ports[0].reserved_bps, c.reserved_bps);
        assert_eq!(brute_force(&problem, Goal::MinBandwidth, None).unwrap(), c);
    }

    /// Line 14 of Fig. 5 returns true after the first pair that passes the tests, even when the
    /// recursion failed: success with an incomplete S. The corrected search tries the next pair.
    #[test]
    fn printed_return_logic_reports_false_success() {
        let vls = vec![mtus(&[(1, 5), (2, 9)]), mtus(&[(1, 60)])];
        // 170 B/ms: 72 + 127 does not fit, 38 + 127 does.
        let rate = 170 * 8000;
        assert_eq!(paper_dfs_bandb(&vls, rate), PaperDfs { returned: true, chosen: vec![None, None] });
        let problem = Problem::single_port(vls, rate, None).unwrap();
        let c = branch_and_bound(&problem, Search::FIG5, None).unwrap();
        assert_eq!(c.choice, [pair(2, 9), pair(1, 60)]);
        assert_eq!(c.ports[0].reserved_bytes_per_ms(), 165.0);
    }

    // --------------------------------------------------------------------------------------------
    // Reasons for infeasibility, validation
    // --------------------------------------------------------------------------------------------

    fn all_solvers(problem: &Problem) -> Vec<Outcome> {
        vec![
            branch_and_bound(problem, Search::FIG5, None),
            branch_and_bound(problem, Search::default(), None),
            brute_force(problem, Goal::FirstFeasible, None),
            brute_force(problem, Goal::MinBandwidth, None),
            min_bandwidth(problem, None),
        ]
    }

    #[test]
    fn infeasibility_names_port_and_constraint() {
        let no_pairs = Problem::single_port(vec![table_i()[0], [None; BAG_COUNT]], 1_000_000, None).unwrap();
        for outcome in all_solvers(&no_pairs) {
            assert_eq!(outcome, Err(Infeasible::NoCandidate { vl: 1 }));
        }
        // 100 kbit/s = 12.5 B/ms < 2 × 267/32 B/ms.
        let slow = Problem::single_port(table_i(), 100_000, None).unwrap();
        for outcome in all_solvers(&slow) {
            assert_eq!(
                outcome,
                Err(Infeasible::Bandwidth { port: 0, least_bps: 133_500.0, rate_bps: 100_000 })
            );
        }
        // One VL with (1, 5) and (2, 12). 400 kbit/s = 50 B/ms rules out (1, 5) (72 B/ms); a burst
        // limit of 72 B rules out (2, 12) (79 B).
        let vl = vec![mtus(&[(1, 5), (2, 12)])];
        let bandwidth_port = Port::new(400_000, vec![0]).without_jitter();
        let jitter_budget = JitterBudget { technological_us: 0, limit_us: 576 }; // 72 B at 1 Mbit/s
        let jitter_port = Port { jitter: Some(jitter_budget), ..Port::new(1_000_000, vec![0]) };
        let both = Port {
            jitter: Some(JitterBudget { technological_us: 0, limit_us: 1440 }),
            ..bandwidth_port.clone()
        };
        assert_eq!(both.max_burst_bytes(), 72);
        let one_port = Problem::new(vl.clone(), vec![both]).unwrap();
        for outcome in all_solvers(&one_port) {
            assert_eq!(outcome, Err(Infeasible::PortConflict { port: 0 }));
        }
        let free = Port::new(1_000_000_000, vec![0]);
        let conflict_at_1 = Problem::new(vl.clone(), vec![free.clone(), one_port.ports[0].clone()]).unwrap();
        assert_eq!(min_bandwidth(&conflict_at_1, None), Err(Infeasible::PortConflict { port: 1 }));
        let network =
            Problem::new(vl.clone(), vec![free, bandwidth_port.clone(), jitter_port.clone()]).unwrap();
        for outcome in all_solvers(&network) {
            assert_eq!(outcome, Err(Infeasible::NetworkConflict));
        }
        for alone in [bandwidth_port, jitter_port] {
            assert!(branch_and_bound(
                &Problem::new(vl.clone(), vec![alone]).unwrap(),
                Search::default(),
                None
            )
            .is_ok());
        }
    }

    #[test]
    fn invalid_problems_are_named() {
        let vl = || vec![mtus(&[(1, 5)])];
        let err = |vls, ports| Problem::new(vls, ports).unwrap_err();
        assert_eq!(err(vec![mtus(&[(4, 1472)])], vec![]), ConfigError::Mtu { vl: 0, bag_ms: 4, mtu: 1472 });
        assert_eq!(err(vl(), vec![Port::new(0, vec![0])]), ConfigError::ZeroRate { port: 0 });
        let unknown = err(vl(), vec![Port::new(1, vec![]), Port::new(1, vec![1])]);
        assert_eq!(unknown.to_string(), "ports[1].vls: VL 1 does not exist (1 VLs)");
        assert_eq!(err(vl(), vec![Port::new(1, vec![0, 0])]), ConfigError::DuplicateVl { port: 0, vl: 0 });
        let budget = JitterBudget { technological_us: 40, limit_us: 39 };
        let bad = Port { jitter: Some(budget), ..Port::new(1, vec![]) };
        assert!(matches!(err(vl(), vec![bad]), ConfigError::JitterBudget { port: 0, .. }));
        let problem = Problem::single_port(vl(), 1_000_000, None).unwrap();
        assert_eq!(problem.evaluate(&[]).unwrap_err(), ConfigError::ChoiceLength { expected: 1, got: 0 });
        assert_eq!(problem.evaluate(&[pair(3, 5)]).unwrap_err(), ConfigError::Bag { vl: 0, bag_ms: 3 });
        assert_eq!(problem.evaluate(&[pair(256, 5)]).unwrap_err(), ConfigError::Bag { vl: 0, bag_ms: 256 });
        assert_eq!(problem.evaluate(&[pair(1, 0)]).unwrap_err(), ConfigError::ChoiceMtu { vl: 0, mtu: 0 });
    }

    #[test]
    fn limits_are_inclusive() {
        // (1, 5) + (2, 12): 111.5 B/ms = 892 kbit/s and a burst of 151 B.
        let exact = 892_000;
        let vls = vec![mtus(&[(1, 5)]), mtus(&[(2, 12)])];
        let at = Problem::single_port(vls.clone(), exact, None).unwrap();
        assert!(branch_and_bound(&at, Search::FIG5, None).is_ok());
        let below = Problem::single_port(vls.clone(), exact - 1, None).unwrap();
        assert!(matches!(min_bandwidth(&below, None), Err(Infeasible::Bandwidth { .. })));
        // 40 µs + 151 B × 8 / 892 kbit/s ≤ 40 + 1355 µs (1354.26…).
        let budget = |limit_us| Some(JitterBudget { technological_us: 40, limit_us });
        let fits = Problem::single_port(vls.clone(), exact, budget(1395)).unwrap();
        assert!(brute_force(&fits, Goal::FirstFeasible, None).unwrap().ports[0].jitter_ok);
        let tight = Problem::single_port(vls, exact, budget(1394)).unwrap();
        assert!(matches!(brute_force(&tight, Goal::FirstFeasible, None), Err(Infeasible::Jitter { .. })));
    }

    // --------------------------------------------------------------------------------------------
    // The acceptance check
    // --------------------------------------------------------------------------------------------

    #[test]
    fn acceptance_check_continues_past_rejected_configurations() {
        let problem = Problem::single_port(table_i(), 1_000_000, None).unwrap();
        // Say the analysis needs VL 1's BAG at 4 ms or less and VL 0's at 8 ms or more.
        let deadlines = |c: &[BagMtu]| c[0].bag_ms >= 8 && c[1].bag_ms <= 4;
        let mut asked = 0;
        let mut check = |c: &[BagMtu]| {
            asked += 1;
            deadlines(c)
        };
        let c = branch_and_bound(&problem, Search::FIG5, Some(&mut check)).unwrap();
        assert_eq!(c.choice, [pair(8, 34), pair(1, 6)]);
        assert!(asked > 1, "the first leaves were rejected");
        let min = min_bandwidth(&problem, Some(&mut |c: &[BagMtu]| deadlines(c))).unwrap();
        // (32, 200) and (4, 25): 8.34375 + 23 B/ms.
        assert_eq!(min.choice, [pair(32, 200), pair(4, 25)]);
        assert_eq!(min.ports[0].reserved_bytes_per_ms(), 31.34375);
        let mut never = |_: &[BagMtu]| false;
        let rejected = brute_force(&problem, Goal::MinBandwidth, Some(&mut never)).unwrap_err();
        // Every one of the 36 combinations except (1,5)+(1,6) (145 B/ms) meets the port.
        assert_eq!(rejected, Infeasible::Rejected { rejected: 35 });
        assert!(matches!(
            branch_and_bound(&problem, Search::default(), Some(&mut never)),
            Err(Infeasible::Rejected { .. })
        ));
    }

    // --------------------------------------------------------------------------------------------
    // Properties on random networks
    // --------------------------------------------------------------------------------------------

    fn least_and_most(vls: &[MtuPerBag], port_vls: &[usize], load: impl Fn(BagMtu) -> u64) -> (u64, u64) {
        port_vls.iter().fold((0, 0), |(lo, hi), &v| {
            let loads: Vec<u64> = candidate_pairs(&vls[v]).map(&load).collect();
            (lo + loads.iter().min().unwrap_or(&0), hi + loads.iter().max().unwrap_or(&0))
        })
    }

    /// 1 to 5 VLs (pairs from random flows, or arbitrary pairs) over 1 to 3 ports whose rates and
    /// jitter limits fall around the range the VLs span, so feasibility is often a close call.
    fn random_problem(rng: &mut ChaCha8Rng) -> Problem {
        let n = if rng.gen_bool(0.1) { 5 } else { rng.gen_range(1..=4) };
        let vls: Vec<MtuPerBag> = (0..n)
            .map(|_| {
                if rng.gen_bool(0.7) {
                    let flows: Vec<_> = (0..rng.gen_range(1..=3))
                        .map(|_| MessageFlow::ms(rng.gen_range(1..=400), rng.gen_range(5..=200)))
                        .collect();
                    find_feasible_bag_mtu(&flows).unwrap()
                } else {
                    std::array::from_fn(|_| rng.gen_bool(0.6).then(|| rng.gen_range(1..=MAX_MTU)))
                }
            })
            .collect();
        let ports = (0..rng.gen_range(1..=3))
            .map(|_| {
                let on: Vec<usize> = (0..n).filter(|_| rng.gen_bool(0.7)).collect();
                let overhead = if rng.gen_bool(0.8) { FRAME_OVERHEAD } else { rng.gen_range(0..=100) };
                let o = overhead as u64;
                let (lo, hi) = least_and_most(&vls, &on, |c| c.bytes_per_128ms(o));
                let target = rng.gen_range(lo * 4 / 5..=hi * 11 / 10 + 1);
                let rate_bps = (bytes_per_128ms_to_bps(target) as u64).max(1);
                let jitter = rng.gen_bool(0.6).then(|| {
                    let (lo, hi) = least_and_most(&vls, &on, |c| c.mtu as u64 + o);
                    let burst = rng.gen_range(lo * 4 / 5..=hi * 11 / 10 + 1) as u128;
                    let limit = 40 + (burst * 8_000_000).div_ceil(rate_bps as u128) as u32;
                    JitterBudget { technological_us: 40, limit_us: limit }
                });
                Port { rate_bps, vls: on, jitter, frame_overhead_bytes: overhead }
            })
            .collect();
        Problem::new(vls, ports).unwrap()
    }

    fn assert_valid(problem: &Problem, c: &Configuration) {
        assert!(c.is_feasible(), "{c:?}");
        assert_eq!(problem.evaluate(&c.choice).unwrap(), *c);
        for (mtus, chosen) in problem.vls().iter().zip(&c.choice) {
            assert!(candidate_pairs(mtus).any(|p| p == *chosen), "{chosen:?} is a candidate");
        }
    }

    /// Branch and bound finds a configuration exactly when brute force does; in BAG order it finds
    /// the same one; min_bandwidth reaches brute force's minimum.
    #[test]
    fn solvers_agree_with_brute_force_on_random_networks() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let (mut feasible, mut infeasible) = (0, 0);
        for _ in 0..3000 {
            let problem = random_problem(&mut rng);
            let first = brute_force(&problem, Goal::FirstFeasible, None);
            let least = brute_force(&problem, Goal::MinBandwidth, None);
            assert_eq!(first.is_ok(), least.is_ok());
            for look_ahead in [false, true] {
                let in_order = Search { order: BranchOrder::BagOrder, look_ahead };
                assert_eq!(branch_and_bound(&problem, in_order, None), first, "{problem:?}");
                let cheapest = Search { order: BranchOrder::LeastBandwidthFirst, look_ahead };
                match branch_and_bound(&problem, cheapest, None) {
                    Ok(c) => assert_valid(&problem, &c),
                    other => assert_eq!(other, first),
                }
            }
            match (min_bandwidth(&problem, None), &least) {
                (Ok(c), Ok(best)) => {
                    assert_valid(&problem, &c);
                    assert_eq!(c.reserved_bps, best.reserved_bps, "{problem:?}");
                    assert!(c.reserved_bps <= first.as_ref().unwrap().reserved_bps);
                    feasible += 1;
                }
                (other, best) => {
                    assert_eq!(other, *best);
                    infeasible += 1;
                }
            }
        }
        assert!(feasible > 500 && infeasible > 500, "{feasible} feasible, {infeasible} infeasible");
    }

    #[test]
    fn acceptance_check_agrees_with_brute_force_on_random_networks() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        // An arbitrary check that rejects about half of the configurations.
        let check = |c: &[BagMtu]| c.iter().map(|p| p.mtu + 3 * p.bag_ms).sum::<u32>() % 2 == 0;
        for _ in 0..1000 {
            let problem = random_problem(&mut rng);
            let first = brute_force(&problem, Goal::FirstFeasible, Some(&mut |c: &[BagMtu]| check(c)));
            let bnb = branch_and_bound(&problem, Search::FIG5, Some(&mut |c: &[BagMtu]| check(c)));
            assert_eq!(bnb.as_ref().map(|c| &c.choice), first.as_ref().map(|c| &c.choice));
            let least = brute_force(&problem, Goal::MinBandwidth, Some(&mut |c: &[BagMtu]| check(c)));
            let min = min_bandwidth(&problem, Some(&mut |c: &[BagMtu]| check(c)));
            assert_eq!(min.as_ref().map(|c| c.reserved_bps), least.as_ref().map(|c| c.reserved_bps));
            if let Ok(c) = &min {
                assert!(check(&c.choice));
                assert_valid(&problem, c);
            }
            if let Err(e) = &min {
                assert_eq!(std::mem::discriminant(e), std::mem::discriminant(least.as_ref().unwrap_err()));
            }
        }
    }
}
