//! Asynchronous traffic shaping (IEEE 802.1Qcr-2020): interleaved regulators in front of
//! non-preemptive static priority between classes.
//!
//! **Behaviour.** A frame of a regulated class (listed in `classes`) enters the shaped queue of
//! its input port and class: one FIFO shared by every flow that comes in through that port in
//! that class. Only the head of a shaped queue is examined (head of line): it becomes eligible
//! at E = max(its arrival, the eligibility time of the frame before it in the same shaped queue,
//! the time its own flow's token bucket holds its length), the bucket being the flow's rate and
//! burst on the wire (the flow's own arrival curve at its source). At E the frame takes its
//! tokens and joins the transmission queue of its class's priority level, where eligible frames
//! wait in the order they became eligible. Frames of the classes not listed join their level at
//! once. The highest non-empty level sends first, non-preemptively. This is the interleaved
//! regulator of Specht & Samii ("Urgency-based scheduler for time-sensitive switched Ethernet
//! networks", ECRTS 2016, UBS) as 802.1Qcr standardises it with token-bucket (length-rate
//! quotient with burst) parameters.
//!
//! **Service model.** Le Boudec ("A theory of traffic regulators for deterministic networks with
//! application to interleaved regulators", IEEE/ACM ToN 26(6), 2018, Theorem 5) proves that an
//! interleaved regulator placed after a FIFO system whose input flows each conform to the
//! regulator's curve adds nothing to the worst-case delay of that system ("shaping for free").
//! Here the FIFO system of a shaped queue is the level's queue of the port upstream with the link
//! and the forwarding latency after it; its flows conform at its input when that port is itself
//! regulated for them or is their source. So every regulated queue sees the sum of its flows'
//! own token buckets (bursts do not grow from hop to hop, and cyclic dependencies need no fixed
//! point), each level is served as under static priority, and a flow's end-to-end bound is the
//! sum of its queues' bounds: the regulator's holding time is inside the upstream queue's bound.
//! A regulated flow whose port upstream is neither its source nor regulated for it has no bound
//! here (its regulator's delay is not free).

use super::static_priority::StaticPriority;
use super::{Behaviour, ConfigProblem, Queued};
use crate::model::{Network, PortId, TrafficClass};
use std::collections::{HashMap, VecDeque};

/// Slack on the token comparison (bits): float arithmetic may leave a bucket a hair short at the
/// nanosecond [`Behaviour::next_ready`] named.
const TOKEN_SLACK_BITS: f64 = 1e-6;

/// The input key of frames released at the port's own node (not forwarded from a port).
pub const LOCAL_INPUT: u32 = u32::MAX;

/// Asynchronous traffic shaping's configuration as written (`kind: ats`).
pub struct AtsDiscipline<'a> {
    pub classes: &'a [String],
}

/// The regulator parameters of one flow at a port, and where its frames come in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowRegulator {
    /// Rate in bits per ns and burst in bits (on the wire).
    pub rate: f64,
    pub burst: f64,
    /// The egress port the flow comes from ([`LOCAL_INPUT`] when released at this node).
    pub input: u32,
}

/// A flow's token bucket: tokens held at `at` (ns).
#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    at: f64,
}

struct ShapedQueue {
    class: u16,
    frames: VecDeque<(Queued, f64)>,
    /// Eligibility time of the last frame released from this queue (ns).
    last: f64,
}

/// The interleaved regulators of a port and the static-priority selection behind them.
pub struct Interleaved {
    regulated_class: Vec<bool>,
    /// Per flow index: its regulator and bucket (`None`: a flow not crossing the port).
    flows: Vec<Option<(FlowRegulator, Bucket)>>,
    shaped: Vec<ShapedQueue>,
    shaped_of: HashMap<(u32, u16), usize>,
    held: usize,
    eligible: StaticPriority,
}

impl Interleaved {
    /// The port over `classes`, regulating those with `regulated[class]`, with the regulators of
    /// the flows that cross it by flow index. A frame of an unknown flow passes unregulated.
    pub fn new(classes: &[TrafficClass], regulated: Vec<bool>, flows: Vec<Option<FlowRegulator>>) -> Self {
        Interleaved {
            regulated_class: regulated,
            flows: flows
                .into_iter()
                .map(|f| f.map(|r| (r, Bucket { tokens: r.burst, at: f64::MIN })))
                .collect(),
            shaped: Vec::new(),
            shaped_of: HashMap::new(),
            held: 0,
            eligible: StaticPriority::new(classes),
        }
    }

    /// When the head of shaped queue `s` becomes eligible (ns).
    fn head_eligible(&self, s: &ShapedQueue) -> Option<f64> {
        let &(q, arrival) = s.frames.front()?;
        let (reg, bucket) = self.flows[q.flow as usize].expect("only regulated flows are held");
        let tokens = if bucket.at == f64::MIN { reg.burst } else { bucket.tokens };
        let need = q.wire_bits as f64 - tokens - TOKEN_SLACK_BITS;
        let by_tokens = if need > 0.0 { bucket.at + need / reg.rate } else { f64::MIN };
        Some(arrival.max(s.last).max(by_tokens))
    }

    /// Moves every head frame eligible by `now`, earliest eligibility first.
    fn release(&mut self, now: i64) {
        loop {
            let next = (0..self.shaped.len())
                .filter_map(|k| self.head_eligible(&self.shaped[k]).map(|e| (e, k)))
                .filter(|&(e, _)| e <= now as f64)
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let Some((e, k)) = next else { return };
            let (q, _) = self.shaped[k].frames.pop_front().expect("a head");
            self.shaped[k].last = e;
            let (reg, bucket) = self.flows[q.flow as usize].as_mut().expect("regulated");
            let tokens = if bucket.at == f64::MIN {
                reg.burst
            } else {
                (bucket.tokens + reg.rate * (e - bucket.at)).min(reg.burst)
            };
            *bucket = Bucket { tokens: tokens - q.wire_bits as f64, at: e };
            self.held -= 1;
            self.eligible.enqueue(q, now);
        }
    }
}

impl Behaviour for Interleaved {
    fn enqueue(&mut self, item: Queued, now_ns: i64) {
        self.release(now_ns);
        let regulated = self.regulated_class.get(item.class as usize).copied().unwrap_or(false)
            && self.flows.get(item.flow as usize).is_some_and(|f| f.is_some());
        if !regulated {
            self.eligible.enqueue(item, now_ns);
            return;
        }
        let input = self.flows[item.flow as usize].expect("regulated").0.input;
        let n = self.shaped.len();
        let k = *self.shaped_of.entry((input, item.class)).or_insert(n);
        if k == n {
            self.shaped.push(ShapedQueue { class: item.class, frames: VecDeque::new(), last: f64::MIN });
        }
        debug_assert_eq!(self.shaped[k].class, item.class);
        self.shaped[k].frames.push_back((item, now_ns as f64));
        self.held += 1;
        self.release(now_ns);
    }

    fn dequeue(&mut self, now_ns: i64) -> Option<Queued> {
        self.release(now_ns);
        self.eligible.dequeue(now_ns)
    }

    /// The first nanosecond at which a held head frame is eligible.
    fn next_ready(&self, now_ns: i64) -> Option<i64> {
        if !self.eligible.is_empty() {
            return Some(now_ns);
        }
        self.shaped
            .iter()
            .filter_map(|s| self.head_eligible(s))
            .map(|e| (e.ceil().min(i64::MAX as f64) as i64).max(now_ns + 1))
            .min()
    }

    fn len(&self) -> usize {
        self.held + self.eligible.len()
    }
}

impl AtsDiscipline<'_> {
    /// Whether the class `name` passes the regulators.
    pub fn regulates(&self, name: &str) -> bool {
        self.classes.iter().any(|c| c == name)
    }

    /// The regulators of the flows crossing egress port `p`: each flow's own token bucket, and
    /// the port it comes from on its route.
    pub fn regulators(&self, net: &Network, p: PortId) -> Vec<Option<FlowRegulator>> {
        let mut out = vec![None; net.flows.len()];
        for &f in &net.flows_per_port()[p] {
            let flow = &net.flows[f];
            let input = flow
                .routes
                .iter()
                .find_map(|r| {
                    let at = r.ports.iter().position(|&q| q == p)?;
                    Some(if at == 0 { LOCAL_INPUT } else { r.ports[at - 1] as u32 })
                })
                .unwrap_or(LOCAL_INPUT);
            out[f] = Some(FlowRegulator { rate: flow.rate * 1e-9, burst: flow.burst, input });
        }
        out
    }
}

impl super::Discipline for AtsDiscipline<'_> {
    fn kind(&self) -> &'static str {
        "ats"
    }
    fn check(&self, place: &str, class_known: &dyn Fn(&str) -> bool) -> Vec<ConfigProblem> {
        let mut out = Vec::new();
        if self.classes.is_empty() {
            out.push(ConfigProblem::Error {
                place: format!("{place}.classes"),
                message: "must list at least one class to regulate".into(),
            });
        }
        for (i, c) in self.classes.iter().enumerate() {
            let at = format!("{place}.classes[{i}]");
            if !class_known(c) {
                out.push(ConfigProblem::UnknownClass { place: at, class: c.clone() });
            } else if self.classes[..i].contains(c) {
                out.push(ConfigProblem::Error { place: at, message: format!("class '{c}' is listed twice") });
            }
        }
        out
    }
    fn service(&self) -> super::Service<'_> {
        super::Service::Asynchronous(self)
    }
    fn kernel(&self) -> super::Kernel {
        super::Kernel::NoShaper {
            plan: "asynchronous traffic shaping (802.1Qcr)",
            script: "asynchronous traffic shaping (802.1Qcr)",
            qdisc: "per-flow interleaved regulator qdisc",
        }
    }
    /// Without the network's flows no frame can be matched to its regulator: every frame is
    /// eligible at once (static priority). The simulator builds ports by [`Self::port_behaviour`].
    fn behaviour(&self, classes: &[TrafficClass], _link_rate: f64) -> Box<dyn Behaviour> {
        Box::new(Interleaved::new(classes, vec![false; classes.len()], Vec::new()))
    }
    fn port_behaviour(&self, net: &Network, p: PortId) -> Box<dyn Behaviour> {
        let regulated = net.classes.iter().map(|c| self.regulates(&c.name)).collect();
        Box::new(Interleaved::new(&net.classes, regulated, self.regulators(net, p)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes() -> Vec<TrafficClass> {
        ["a", "b"]
            .iter()
            .enumerate()
            .map(|(p, n)| TrafficClass { name: n.to_string(), priority: p as u32, description: None })
            .collect()
    }

    fn frame(id: u32, flow: u32, class: u16, wire_bits: u32) -> Queued {
        Queued { frame: id, class, flow, wire_bits, frame_bits: wire_bits - 160 }
    }

    /// Two flows of class a through one input port (one shared queue), link of 1 bit per ns.
    /// Flow 0: rate 0.1 bit/ns, burst 1000 bits; flow 1: rate 0.5, burst 1000. Frames of 1000
    /// bits: F0 (flow 0) at 0 is eligible at once and empties its bucket; F1 (flow 0) at 0 needs
    /// 1000 tokens: eligible at 1000/0.1 = 10000. F2 (flow 1) at 0 has a full bucket but is behind
    /// F1 in the shared queue (head of line): eligible at 10000 too, after F1. A frame of flow 1
    /// from another input port (flow 2, same parameters, own queue) at 0 goes at once.
    #[test]
    fn head_of_line_by_hand() {
        let reg = |rate: f64, input: u32| Some(FlowRegulator { rate, burst: 1000.0, input });
        let mut s =
            Interleaved::new(&classes(), vec![true, false], vec![reg(0.1, 7), reg(0.5, 7), reg(0.5, 8)]);
        s.enqueue(frame(0, 0, 0, 1000), 0);
        s.enqueue(frame(1, 0, 0, 1000), 0);
        s.enqueue(frame(2, 1, 0, 1000), 0);
        s.enqueue(frame(3, 2, 0, 1000), 0);
        assert_eq!(s.dequeue(0).map(|q| q.frame), Some(0));
        assert_eq!(s.dequeue(1000).map(|q| q.frame), Some(3));
        assert!(s.dequeue(2000).is_none());
        assert_eq!(s.next_ready(2000), Some(10_000));
        assert_eq!(s.dequeue(10_000).map(|q| q.frame), Some(1));
        assert_eq!(s.dequeue(11_000).map(|q| q.frame), Some(2));
        assert!(s.is_empty());
        // Class b is not regulated: at once, behind nothing.
        s.enqueue(frame(4, 0, 1, 1000), 11_000);
        assert_eq!(s.dequeue(11_000).map(|q| q.frame), Some(4));
    }

    /// A flow's bucket refills at its rate up to its burst: flow 0 (rate 0.25, burst 2000) sends
    /// two frames of 1000 at 0 (its burst), which empty the bucket at 0; a third at 100 waits
    /// until the bucket holds 1000 again, at 0 + 1000/0.25 = 4000.
    #[test]
    fn bucket_refills_at_the_flow_rate() {
        let mut s = Interleaved::new(
            &classes(),
            vec![true, true],
            vec![Some(FlowRegulator { rate: 0.25, burst: 2000.0, input: LOCAL_INPUT })],
        );
        s.enqueue(frame(0, 0, 0, 1000), 0);
        s.enqueue(frame(1, 0, 0, 1000), 0);
        assert_eq!(s.dequeue(0).map(|q| q.frame), Some(0));
        s.enqueue(frame(2, 0, 0, 1000), 100);
        assert_eq!(s.dequeue(1000).map(|q| q.frame), Some(1));
        assert!(s.dequeue(2000).is_none());
        assert_eq!(s.next_ready(2000), Some(4000));
        assert_eq!(s.dequeue(4000).map(|q| q.frame), Some(2));
    }
}
