//! The fabric's discrete-event engine: integer nanoseconds and bytes, events ordered by (time,
//! sequence number), traffic from one seeded ChaCha8 stream per (endpoint, class).
//!
//! A packet's life: its application generates it; it enters its interface's VC buffer (or the
//! application's pending queue while that buffer is full); the interface's egress scheduler
//! sends it once the first switch's input buffer of its VC has credits for it; at each switch
//! its header crosses (145 ns) into the VOQ of (input, output, VC), the crossbar moves it to the
//! output buffer of its VC, and the output's egress scheduler sends it on when the next buffer
//! has credits; the destination interface takes it at its last byte.
//!
//! Virtual cut-through at packet level: a packet may cross the crossbar and leave on the next
//! link as soon as its header has crossed, before its tail has arrived; the crossbar transfer
//! then cannot end before the tail is in (the crossbar runs at speedup × link rate, the link
//! feeding it at 1×). The output link, at 1×, never overtakes the data.
//!
//! Buffers are counted in credits (64 B): a packet holds ⌈bytes / credit⌉ of its VC's buffer
//! from entering it until its tail has left (an input buffer frees at the end of the crossbar
//! transfer, an output or interface buffer at the end of transmission). Each freed credit
//! travels back on the reverse link (propagation + `credit_return`) to the sender's counter.
//!
//! Credit-aware egress scheduling: a packet is handed to the port's scheduler (any
//! [`Behaviour`]) only once the credits it needs downstream are reserved, in FIFO order per VC;
//! packets behind one that lacks credits wait outside the scheduler. So the scheduler sees a VC
//! as backlogged exactly when it has a head packet and credits for it, and any scheduler becomes
//! credit-aware: a VC without credits looks empty (DRR, for instance, drops it from its active
//! list and resets its deficit, as the credit-aware DRR of the seed's reference [21]).
//!
//! Crossbar arbitration: one-iteration round-robin matching, run whenever a packet reaches a VOQ
//! or a crossbar port or an output buffer frees (packets have variable sizes, so there are no
//! time slots). Free outputs are visited round robin from the one after the last output served;
//! each grants the first free input, from its round-robin pointer, with a VOQ packet for it
//! whose output VC buffer has room; the input accepts (it is free), and among that input's VCs
//! for that output the VC after the last one served goes first. Pointers move one past the
//! input and VC served, as iSLIP's, so no VOQ starves.

use super::queue::EventQueue;
use super::scenario::{ClassReport, FabricChecks, FabricReport, RunStats, Scenario};
use super::topology::{Node, Topology};
use super::traffic::{ClassLaw, Emitted, Source};
use crate::schedulers::{Behaviour, Queued};
use crate::sim::stats::{Latency, LatencySummary};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug)]
enum Event {
    /// A traffic source fires.
    Source(u32),
    /// An egress link has sent its packet's last byte.
    TxEnd(u32),
    /// A packet's header has crossed into the switch (ingress) and joins its VOQ.
    HeaderReady { ingress: u32, packet: u32 },
    /// A crossbar transfer out of an ingress has ended.
    XbarEnd { ingress: u32 },
    /// Credits reach an egress port's counter for one VC.
    Credit { egress: u32, vc: u16, credits: u16 },
    /// A packet's last byte reaches its destination interface.
    Deliver(u32),
    /// An egress scheduler said a packet may go at this time (shapers).
    Kick(u32),
}

#[derive(Clone, Copy, Debug)]
struct Packet {
    src: u32,
    dst: u32,
    vc: u16,
    credits: u16,
    bytes: u32,
    /// Order within its (source, destination, VC), from 0.
    seq: u32,
    generated_ns: i64,
    injected_ns: i64,
    /// When its last byte reaches the input it is heading to (set at each transmission).
    tail_ns: i64,
}

/// A packet waiting in an application's pending queue.
#[derive(Clone, Copy, Debug)]
struct Pending {
    generated_ns: i64,
    dst: u32,
    bytes: u32,
    seq: u32,
}

/// One VC of an egress port: its buffer (interface or switch output) and its credit counter for
/// the buffer downstream.
#[derive(Clone, Debug, Default)]
struct EgressVc {
    /// Packets in the buffer without credits yet, in order (those with credits are in the
    /// scheduler).
    waiting: VecDeque<u32>,
    /// Credits free downstream as the sender knows them.
    credits: u32,
    /// Credits of this buffer held by packets.
    fill: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Downstream {
    Ingress(u32),
    Endpoint(u32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    Endpoint(u32),
    Switch(u32),
}

/// The sending side of one link direction.
struct Egress {
    scheduler: Box<dyn Behaviour>,
    vcs: Vec<EgressVc>,
    owner: Owner,
    to: Downstream,
    /// Size (credits per VC) of this buffer and of the buffer downstream.
    capacity: u32,
    downstream_capacity: u32,
    busy: bool,
    tx_vc: u16,
    tx_credits: u16,
    kick_pending: bool,
}

/// A switch input: its VC buffers holding the VOQs.
struct Ingress {
    switch: u32,
    port: u8,
    /// VOQ of (output, VC) at [output · vcs + vc].
    voq: Vec<VecDeque<u32>>,
    fill: Vec<u32>,
    /// The egress port feeding this input (credits go back to it).
    upstream: u32,
    xbar_output: u8,
    xbar_vc: u16,
    xbar_credits: u16,
}

/// A switch's crossbar state, as bit masks over its ports (at most 64) and VCs (at most 64) so
/// that matching touches only the inputs and VCs that request.
struct SwitchState {
    /// Ingress and egress index of each port (`u32::MAX`: unconnected).
    ingress: Vec<u32>,
    egress: Vec<u32>,
    /// Connected crossbar inputs and outputs not transferring.
    free_inputs: u64,
    free_outputs: u64,
    /// Per output, the inputs with a packet for it; the outputs some input wants.
    requests: Vec<u64>,
    wanted: u64,
    /// Per (input, output) at [input · ports + output], the VCs whose VOQ holds a packet.
    voq_vcs: Vec<u64>,
    /// Round-robin pointers: per output over inputs, per (input, output) over VCs, over outputs.
    grant: Vec<u8>,
    vc_pointer: Vec<u8>,
    out_pointer: u8,
}

/// The first set bit of `mask` at or after `from`, wrapping around.
fn next_bit(mask: u64, from: usize) -> Option<usize> {
    let high = if from < 64 { mask & (u64::MAX << from) } else { 0 };
    let pick = if high != 0 { high } else { mask };
    (pick != 0).then(|| pick.trailing_zeros() as usize)
}

struct EndpointState {
    pending: Vec<VecDeque<Pending>>,
    /// The switch egress port delivering to this endpoint (credits go back to it).
    upstream: u32,
}

#[derive(Default, Clone)]
struct ClassStats {
    offered_bytes: u64,
    delivered_bytes: u64,
    generated: u64,
    delivered: u64,
    latency: Latency,
    from_generation: Latency,
}

/// Resolved integer parameters.
struct Params {
    endpoints: u32,
    vcs: usize,
    credit_bytes: u32,
    mtu: u32,
    link_bps: u64,
    xbar_bps: u64,
    propagation_ns: i64,
    credit_delay_ns: i64,
    header_crossing_ns: i64,
    interface_credits: u32,
    input_credits: u32,
    output_credits: u32,
    warmup_ns: i64,
    end_ns: i64,
}

/// Time to send `bytes` at `bps`, rounded up to the nanosecond.
fn serialisation_ns(bytes: u32, bps: u64) -> i64 {
    (bytes as u128 * 8_000_000_000).div_ceil(bps as u128) as i64
}

pub(crate) struct Fabric<'a> {
    scenario: &'a Scenario,
    topo: Topology,
    p: Params,
    now: i64,
    seq: u64,
    events: u64,
    heap: EventQueue<Event>,
    packets: Vec<Packet>,
    free: Vec<u32>,
    endpoints: Vec<EndpointState>,
    egress: Vec<Egress>,
    ingress: Vec<Ingress>,
    switches: Vec<SwitchState>,
    sources: Vec<Source>,
    rngs: Vec<ChaCha8Rng>,
    /// Reused buffer for what a source emits.
    emitted: Vec<Emitted>,
    /// Next sequence number to send / expected, per (source, destination, VC).
    flow_sent: Vec<u32>,
    flow_expected: Vec<u32>,
    classes: Vec<ClassStats>,
    generated: u64,
    delivered: u64,
    checks: FabricChecks,
}

impl<'a> Fabric<'a> {
    pub fn new(scenario: &'a Scenario) -> Result<Self, String> {
        let topo = scenario.topology.build()?;
        // The order check keeps two counters per (source, destination, VC).
        let flows = (topo.endpoints as usize).pow(2) * scenario.classes.len();
        if flows > 1 << 24 {
            return Err(format!("{flows} (source, destination, VC) triples: at most 2^24 are simulated"));
        }
        let credit_bytes = scenario.credit.bytes().round() as u32;
        let credits_of = |d: crate::units::DataSize| (d.bytes().round() as u32) / credit_bytes;
        let link_bps = scenario.link.rate.bps().round() as u64;
        let warmup_ns = scenario.warmup.as_ns().max(0);
        let p = Params {
            endpoints: topo.endpoints,
            vcs: scenario.classes.len(),
            credit_bytes,
            mtu: scenario.mtu.bytes().round() as u32,
            link_bps,
            xbar_bps: ((link_bps as f64 * scenario.switch.speedup).round() as u64).max(1),
            propagation_ns: scenario.link.propagation.as_ns().max(0),
            credit_delay_ns: (scenario.link.propagation.as_ns() + scenario.link.credit_return.as_ns()).max(0),
            header_crossing_ns: scenario.switch.header_crossing.as_ns().max(0),
            interface_credits: credits_of(scenario.interface_buffer),
            input_credits: credits_of(scenario.switch.input_buffer),
            output_credits: credits_of(scenario.switch.output_buffer),
            warmup_ns,
            end_ns: warmup_ns + scenario.duration.as_ns(),
        };
        let classes = scenario.traffic_classes();
        let make_scheduler = |name: &str| -> Result<Box<dyn Behaviour>, String> {
            crate::schedulers::resolve(name, &scenario.schedulers)
                .map(|r| r.behaviour(&classes, scenario.link.rate.bps()))
                .ok_or_else(|| {
                    format!(
                        "scheduler '{name}': unknown, or a shaper around an unknown scheduler or a shaper"
                    )
                })
        };
        let iface_scheduler = scenario.interface_scheduler.as_deref().unwrap_or(&scenario.scheduler);
        let vcs = p.vcs;
        let new_egress = |owner, to, capacity, downstream_capacity, name: &str| -> Result<Egress, String> {
            Ok(Egress {
                scheduler: make_scheduler(name)?,
                vcs: vec![EgressVc { credits: downstream_capacity, ..Default::default() }; vcs],
                owner,
                to,
                capacity,
                downstream_capacity,
                busy: false,
                tx_vc: 0,
                tx_credits: 0,
                kick_pending: false,
            })
        };

        // Endpoints' egress ports first (egress e = endpoint e), then switch ports in order.
        let mut egress = Vec::new();
        let mut switches: Vec<SwitchState> = (0..topo.switches())
            .map(|s| {
                let n = topo.ports(s) as usize;
                SwitchState {
                    ingress: vec![u32::MAX; n],
                    egress: vec![u32::MAX; n],
                    free_inputs: 0,
                    free_outputs: 0,
                    requests: vec![0; n],
                    wanted: 0,
                    voq_vcs: vec![0; n * n],
                    grant: vec![0; n],
                    vc_pointer: vec![0; n * n],
                    out_pointer: 0,
                }
            })
            .collect();
        let mut ingress = Vec::new();
        for s in 0..topo.switches() {
            let n = topo.ports(s) as usize;
            for port in 0..n {
                if topo.switch_peer[s as usize][port].is_some() {
                    let sw = &mut switches[s as usize];
                    sw.ingress[port] = ingress.len() as u32;
                    sw.free_inputs |= 1 << port;
                    sw.free_outputs |= 1 << port;
                    ingress.push(Ingress {
                        switch: s,
                        port: port as u8,
                        voq: vec![VecDeque::new(); n * vcs],
                        fill: vec![0; vcs],
                        upstream: u32::MAX,
                        xbar_output: 0,
                        xbar_vc: 0,
                        xbar_credits: 0,
                    });
                }
            }
        }
        let mut endpoints = Vec::new();
        for e in 0..topo.endpoints {
            let peer = topo.endpoint_peer[e as usize];
            let Node::Switch(s) = peer.node else { return Err("endpoints must attach to switches".into()) };
            let ing = switches[s as usize].ingress[peer.port as usize];
            ingress[ing as usize].upstream = e;
            egress.push(new_egress(
                Owner::Endpoint(e),
                Downstream::Ingress(ing),
                p.interface_credits,
                p.input_credits,
                iface_scheduler,
            )?);
            endpoints.push(EndpointState { pending: vec![VecDeque::new(); vcs], upstream: u32::MAX });
        }
        for s in 0..topo.switches() {
            for port in 0..topo.ports(s) as usize {
                let Some(peer) = topo.switch_peer[s as usize][port] else { continue };
                let id = egress.len() as u32;
                let (to, downstream_capacity) = match peer.node {
                    Node::Endpoint(e) => {
                        endpoints[e as usize].upstream = id;
                        (Downstream::Endpoint(e), p.interface_credits)
                    }
                    Node::Switch(o) => {
                        let ing = switches[o as usize].ingress[peer.port as usize];
                        ingress[ing as usize].upstream = id;
                        (Downstream::Ingress(ing), p.input_credits)
                    }
                };
                switches[s as usize].egress[port] = id;
                egress.push(new_egress(
                    Owner::Switch(s),
                    to,
                    p.output_credits,
                    downstream_capacity,
                    &scenario.scheduler,
                )?);
            }
        }

        let mut f = Fabric {
            scenario,
            p,
            now: 0,
            seq: 0,
            events: 0,
            heap: EventQueue::new(),
            packets: Vec::new(),
            free: Vec::new(),
            endpoints,
            egress,
            ingress,
            switches,
            sources: Vec::new(),
            rngs: Vec::new(),
            emitted: Vec::new(),
            flow_sent: vec![0; flows],
            flow_expected: vec![0; flows],
            classes: vec![ClassStats::default(); vcs],
            generated: 0,
            delivered: 0,
            checks: FabricChecks {
                in_network_at_end: 0,
                pending_at_end: 0,
                conserved: false,
                out_of_order: 0,
                buffer_overflows: 0,
                credit_violations: 0,
                max_interface_fill: 0.0,
                max_input_fill: 0.0,
                max_output_fill: 0.0,
                max_pending: 0,
            },
            topo,
        };
        f.build_sources()?;
        Ok(f)
    }

    fn build_sources(&mut self) -> Result<(), String> {
        let sc = self.scenario;
        let laws = sc
            .classes
            .iter()
            .map(|c| {
                ClassLaw::new(&c.traffic, c.injection * sc.reference_rate.bps())
                    .map_err(|e| format!("class '{}': {e}", c.name))
            })
            .collect::<Result<Vec<_>, _>>()?;
        for e in 0..self.p.endpoints {
            for (c, law) in laws.iter().enumerate() {
                // One stream per (endpoint, class): the traffic does not depend on the schedulers.
                let stream = self.rngs.len();
                let mut rng = ChaCha8Rng::seed_from_u64(sc.seed);
                rng.set_stream(stream as u64);
                let made = law
                    .as_ref()
                    .map(|law| law.sources(e, self.p.endpoints, c as u16, stream, &mut rng, self.p.mtu))
                    .unwrap_or_default();
                self.rngs.push(rng);
                for (source, first) in made {
                    let id = self.sources.len() as u32;
                    self.sources.push(source);
                    self.schedule(first, Event::Source(id));
                }
            }
        }
        Ok(())
    }

    /// Adds packets sent by `endpoint` on `vc` at given times: (time ns, destination, bytes).
    #[cfg(test)]
    pub fn add_script(&mut self, endpoint: u32, vc: u16, mut packets: Vec<(i64, u32, u32)>) {
        packets.sort_by_key(|p| p.0);
        let first = packets.first().map_or(i64::MAX, |p| p.0);
        let packets = packets.into_iter().map(|(t, dst, bytes)| (t, Emitted { dst, bytes })).collect();
        let kind = super::traffic::SourceKind::Script { packets, next: 0 };
        let id = self.sources.len() as u32;
        self.sources.push(Source { endpoint, class: vc, rng: 0, kind });
        self.schedule(first, Event::Source(id));
    }

    fn schedule(&mut self, time: i64, event: Event) {
        if time != i64::MAX {
            self.heap.push(EventQueue::<Event>::key(time, self.seq), event);
            self.seq += 1;
        }
    }

    pub fn run(mut self) -> FabricReport {
        let wall = std::time::Instant::now();
        // Events from the end on stay in the queue, so the packets they carry are counted.
        while self.heap.peek_key().is_some_and(|k| EventQueue::<Event>::time_of(k) < self.p.end_ns) {
            let (key, event) = self.heap.pop().expect("peeked");
            self.now = EventQueue::<Event>::time_of(key);
            self.events += 1;
            match event {
                Event::Source(id) => self.fire_source(id),
                Event::TxEnd(eg) => self.tx_end(eg),
                Event::HeaderReady { ingress, packet } => self.header_ready(ingress, packet),
                Event::XbarEnd { ingress } => self.xbar_end(ingress),
                Event::Credit { egress, vc, credits } => self.credit(egress, vc, credits),
                Event::Deliver(packet) => self.deliver(packet),
                Event::Kick(eg) => {
                    self.egress[eg as usize].kick_pending = false;
                    self.try_start(eg);
                }
            }
        }
        self.now = self.p.end_ns;
        let wall_s = wall.elapsed().as_secs_f64();
        self.report(wall_s)
    }

    // ---- applications and interfaces ----

    fn fire_source(&mut self, id: u32) {
        let (endpoints, mtu, now) = (self.p.endpoints, self.p.mtu, self.now);
        let mut emitted = std::mem::take(&mut self.emitted);
        let source = &mut self.sources[id as usize];
        let next = source.fire(now, &mut self.rngs[source.rng], endpoints, mtu, &mut |e| emitted.push(e));
        let (endpoint, class) = (source.endpoint, source.class);
        for e in emitted.drain(..) {
            self.generate(endpoint, class, e);
        }
        self.emitted = emitted;
        self.schedule(next, Event::Source(id));
    }

    /// The application hands a packet to its interface, or to its pending queue if the VC
    /// buffer is full or older packets already wait.
    fn generate(&mut self, src: u32, vc: u16, e: Emitted) {
        let flow = self.flow_index(src, e.dst, vc);
        let seq = self.flow_sent[flow];
        self.flow_sent[flow] += 1;
        self.generated += 1;
        if self.now >= self.p.warmup_ns {
            let c = &mut self.classes[vc as usize];
            c.generated += 1;
            c.offered_bytes += e.bytes as u64;
        }
        let pending = Pending { generated_ns: self.now, dst: e.dst, bytes: e.bytes, seq };
        let fits = self.fits_interface(src, vc, e.bytes);
        let queue = &mut self.endpoints[src as usize].pending[vc as usize];
        if queue.is_empty() && fits {
            self.inject(src, vc, pending);
        } else {
            queue.push_back(pending);
            self.checks.max_pending = self.checks.max_pending.max(queue.len() as u64);
        }
    }

    fn credits_for(&self, bytes: u32) -> u16 {
        bytes.div_ceil(self.p.credit_bytes) as u16
    }

    fn fits_interface(&self, src: u32, vc: u16, bytes: u32) -> bool {
        let v = &self.egress[src as usize].vcs[vc as usize];
        v.fill + self.credits_for(bytes) as u32 <= self.p.interface_credits
    }

    /// A packet enters its interface's VC buffer: the latency clock starts.
    fn inject(&mut self, src: u32, vc: u16, p: Pending) {
        let packet = Packet {
            src,
            dst: p.dst,
            vc,
            credits: self.credits_for(p.bytes),
            bytes: p.bytes,
            seq: p.seq,
            generated_ns: p.generated_ns,
            injected_ns: self.now,
            tail_ns: 0,
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.packets[id as usize] = packet;
                id
            }
            None => {
                self.packets.push(packet);
                self.packets.len() as u32 - 1
            }
        };
        self.fill_egress(src, vc, packet.credits);
        self.egress_enqueue(src, id);
    }

    /// Moves pending packets of `vc` into the interface buffer while they fit.
    fn drain_pending(&mut self, src: u32, vc: u16) {
        while let Some(&p) = self.endpoints[src as usize].pending[vc as usize].front() {
            if !self.fits_interface(src, vc, p.bytes) {
                break;
            }
            self.endpoints[src as usize].pending[vc as usize].pop_front();
            self.inject(src, vc, p);
        }
    }

    // ---- egress ports: credit-aware scheduling and transmission ----

    /// A packet takes space in an egress buffer (interface or switch output).
    fn fill_egress(&mut self, eg: u32, vc: u16, credits: u16) {
        let e = &mut self.egress[eg as usize];
        let v = &mut e.vcs[vc as usize];
        v.fill += credits as u32;
        let fill = v.fill as f64 / e.capacity as f64;
        if v.fill > e.capacity {
            self.checks.buffer_overflows += 1;
        }
        let max = match e.owner {
            Owner::Endpoint(_) => &mut self.checks.max_interface_fill,
            Owner::Switch(_) => &mut self.checks.max_output_fill,
        };
        *max = max.max(fill);
    }

    /// A packet joins its VC at an egress port: straight into the scheduler if it is first in
    /// line and its credits can be reserved, else behind the others.
    fn egress_enqueue(&mut self, eg: u32, id: u32) {
        let pk = self.packets[id as usize];
        let e = &mut self.egress[eg as usize];
        let v = &mut e.vcs[pk.vc as usize];
        if v.waiting.is_empty() && v.credits >= pk.credits as u32 {
            v.credits -= pk.credits as u32;
            e.scheduler.enqueue(queued(id, &pk), self.now);
        } else {
            v.waiting.push_back(id);
        }
        self.try_start(eg);
    }

    /// If the link is idle, asks the scheduler for the next packet and sends it.
    fn try_start(&mut self, eg: u32) {
        let now = self.now;
        let e = &mut self.egress[eg as usize];
        if e.busy || e.scheduler.is_empty() {
            return;
        }
        let Some(q) = e.scheduler.dequeue(now) else {
            if let Some(t) = e.scheduler.next_ready(now).filter(|&t| t > now) {
                if !e.kick_pending {
                    e.kick_pending = true;
                    self.schedule(t, Event::Kick(eg));
                }
            }
            return;
        };
        let id = q.frame;
        let pk = self.packets[id as usize];
        let tx = serialisation_ns(pk.bytes, self.p.link_bps);
        e.busy = true;
        e.tx_vc = pk.vc;
        e.tx_credits = pk.credits;
        let to = e.to;
        self.packets[id as usize].tail_ns = now + self.p.propagation_ns + tx;
        self.schedule(now + tx, Event::TxEnd(eg));
        match to {
            Downstream::Ingress(ingress) => self.schedule(
                now + self.p.propagation_ns + self.p.header_crossing_ns,
                Event::HeaderReady { ingress, packet: id },
            ),
            Downstream::Endpoint(_) => self.schedule(now + self.p.propagation_ns + tx, Event::Deliver(id)),
        }
    }

    /// The last byte is out: the buffer frees (the interface takes pending packets, the switch
    /// may cross more), and the link takes the next packet.
    fn tx_end(&mut self, eg: u32) {
        let e = &mut self.egress[eg as usize];
        e.busy = false;
        let (vc, credits) = (e.tx_vc, e.tx_credits);
        e.vcs[vc as usize].fill -= credits as u32;
        match e.owner {
            Owner::Endpoint(src) => self.drain_pending(src, vc),
            Owner::Switch(s) => self.arbitrate(s),
        }
        self.try_start(eg);
    }

    /// Credits come back: reserve them for the VC's waiting packets, in order.
    fn credit(&mut self, eg: u32, vc: u16, credits: u16) {
        let now = self.now;
        let e = &mut self.egress[eg as usize];
        let v = &mut e.vcs[vc as usize];
        v.credits += credits as u32;
        if v.credits > e.downstream_capacity {
            self.checks.credit_violations += 1;
        }
        while let Some(&id) = v.waiting.front() {
            let pk = &self.packets[id as usize];
            if v.credits < pk.credits as u32 {
                break;
            }
            v.credits -= pk.credits as u32;
            v.waiting.pop_front();
            e.scheduler.enqueue(queued(id, pk), now);
        }
        self.try_start(eg);
    }

    // ---- switches ----

    /// The header has crossed: the packet joins the VOQ of its output and VC.
    fn header_ready(&mut self, ing: u32, id: u32) {
        let pk = self.packets[id as usize];
        let i = &mut self.ingress[ing as usize];
        let (s, port) = (i.switch, i.port as usize);
        let out = self.topo.output_port(s, pk.dst) as usize;
        i.voq[out * self.p.vcs + pk.vc as usize].push_back(id);
        let fill = &mut i.fill[pk.vc as usize];
        *fill += pk.credits as u32;
        if *fill > self.p.input_credits {
            self.checks.buffer_overflows += 1;
        }
        self.checks.max_input_fill =
            self.checks.max_input_fill.max(*fill as f64 / self.p.input_credits as f64);
        let sw = &mut self.switches[s as usize];
        let ports = sw.egress.len();
        sw.voq_vcs[port * ports + out] |= 1 << pk.vc;
        sw.requests[out] |= 1 << port;
        sw.wanted |= 1 << out;
        self.arbitrate(s);
    }

    /// Round-robin crossbar matching over the free inputs and outputs (see the module doc).
    fn arbitrate(&mut self, s: u32) {
        let sw = &self.switches[s as usize];
        let ports = sw.egress.len();
        let mut outputs = sw.free_outputs & sw.wanted;
        let mut o = sw.out_pointer as usize;
        while let Some(next) = next_bit(outputs, o) {
            o = next;
            outputs &= !(1 << o);
            let sw = &self.switches[s as usize];
            let out_eg = sw.egress[o] as usize;
            let mut inputs = sw.requests[o] & sw.free_inputs;
            let mut i = sw.grant[o] as usize;
            let mut granted = None;
            'inputs: while let Some(next) = next_bit(inputs, i) {
                i = next;
                inputs &= !(1 << i);
                let input = &self.ingress[sw.ingress[i] as usize];
                let mut vcs = sw.voq_vcs[i * ports + o];
                let mut v = sw.vc_pointer[i * ports + o] as usize;
                while let Some(next) = next_bit(vcs, v) {
                    v = next;
                    vcs &= !(1 << v);
                    let id = *input.voq[o * self.p.vcs + v].front().expect("VC mask matches its VOQ");
                    let credits = self.packets[id as usize].credits as u32;
                    if self.egress[out_eg].vcs[v].fill + credits <= self.p.output_credits {
                        granted = Some((i, v, id));
                        break 'inputs;
                    }
                }
            }
            if let Some((i, v, id)) = granted {
                let sw = &mut self.switches[s as usize];
                sw.grant[o] = ((i + 1) % ports) as u8;
                sw.vc_pointer[i * ports + o] = ((v + 1) % self.p.vcs) as u8;
                sw.out_pointer = ((o + 1) % ports) as u8;
                sw.free_outputs &= !(1 << o);
                sw.free_inputs &= !(1 << i);
                self.cross(s, i, o, v, id);
            }
        }
    }

    /// Starts a crossbar transfer: the packet's header is in the output buffer at once (it may
    /// leave on the link now); the transfer ends at speedup × link rate, but not before the
    /// packet's tail has reached the input.
    fn cross(&mut self, s: u32, port: usize, out: usize, vc: usize, id: u32) {
        let pk = self.packets[id as usize];
        let sw = &mut self.switches[s as usize];
        let ports = sw.egress.len();
        let (ing, out_eg) = (sw.ingress[port], sw.egress[out]);
        let input = &mut self.ingress[ing as usize];
        let voq = &mut input.voq[out * self.p.vcs + vc];
        voq.pop_front();
        if voq.is_empty() {
            let vcs = &mut sw.voq_vcs[port * ports + out];
            *vcs &= !(1 << vc);
            if *vcs == 0 {
                sw.requests[out] &= !(1 << port);
                if sw.requests[out] == 0 {
                    sw.wanted &= !(1 << out);
                }
            }
        }
        input.xbar_output = out as u8;
        input.xbar_vc = vc as u16;
        input.xbar_credits = pk.credits;
        let end = (self.now + serialisation_ns(pk.bytes, self.p.xbar_bps)).max(pk.tail_ns);
        self.schedule(end, Event::XbarEnd { ingress: ing });
        self.fill_egress(out_eg, pk.vc, pk.credits);
        self.egress_enqueue(out_eg, id);
    }

    /// The tail has crossed: the input buffer frees (credits go upstream), both crossbar ports
    /// free, and the crossbar is matched again.
    fn xbar_end(&mut self, ing: u32) {
        let input = &mut self.ingress[ing as usize];
        let (vc, credits, out, s, port, upstream) =
            (input.xbar_vc, input.xbar_credits, input.xbar_output, input.switch, input.port, input.upstream);
        input.fill[vc as usize] -= credits as u32;
        let sw = &mut self.switches[s as usize];
        sw.free_outputs |= 1 << out;
        sw.free_inputs |= 1 << port;
        self.schedule(self.now + self.p.credit_delay_ns, Event::Credit { egress: upstream, vc, credits });
        self.arbitrate(s);
    }

    // ---- destinations ----

    fn deliver(&mut self, id: u32) {
        let pk = self.packets[id as usize];
        self.free.push(id);
        self.delivered += 1;
        let flow = self.flow_index(pk.src, pk.dst, pk.vc);
        if pk.seq != self.flow_expected[flow] {
            self.checks.out_of_order += 1;
        }
        self.flow_expected[flow] = pk.seq + 1;
        if self.now >= self.p.warmup_ns {
            let c = &mut self.classes[pk.vc as usize];
            c.delivered += 1;
            c.delivered_bytes += pk.bytes as u64;
            c.latency.record(self.now - pk.injected_ns);
            c.from_generation.record(self.now - pk.generated_ns);
        }
        // The reception buffer hands the packet to the application at once: credits go back.
        let upstream = self.endpoints[pk.dst as usize].upstream;
        self.schedule(
            self.now + self.p.credit_delay_ns,
            Event::Credit { egress: upstream, vc: pk.vc, credits: pk.credits },
        );
    }

    fn flow_index(&self, src: u32, dst: u32, vc: u16) -> usize {
        (src as usize * self.p.endpoints as usize + dst as usize) * self.p.vcs + vc as usize
    }

    // ---- end of run ----

    /// Counts every live packet where it is: pending queues, egress buffers (waiting or in the
    /// scheduler), VOQs, and on the way to the next hop (header or delivery events).
    fn count_in_network(&self) -> (u64, u64) {
        let pending: u64 = self.endpoints.iter().flat_map(|e| &e.pending).map(|q| q.len() as u64).sum();
        let egress: u64 = self
            .egress
            .iter()
            .map(|e| e.scheduler.len() as u64 + e.vcs.iter().map(|v| v.waiting.len() as u64).sum::<u64>())
            .sum();
        let voq: u64 = self.ingress.iter().flat_map(|i| &i.voq).map(|q| q.len() as u64).sum();
        let on_links =
            self.heap.iter().filter(|x| matches!(x.1, Event::HeaderReady { .. } | Event::Deliver(_))).count()
                as u64;
        (egress + voq + on_links, pending)
    }

    fn report(mut self, wall_s: f64) -> FabricReport {
        let (in_network, pending) = self.count_in_network();
        let alive = (self.packets.len() - self.free.len()) as u64;
        self.checks.in_network_at_end = in_network;
        self.checks.pending_at_end = pending;
        self.checks.conserved = in_network == alive && self.generated == self.delivered + alive + pending;
        let sc = self.scenario;
        let measured_s = (self.p.end_ns - self.p.warmup_ns) as f64 * 1e-9;
        let per_endpoint_bps = |bytes: u64| bytes as f64 * 8.0 / measured_s / self.p.endpoints as f64;
        let reference = sc.reference_rate.bps();
        let classes: Vec<ClassReport> = self
            .classes
            .iter()
            .enumerate()
            .map(|(vc, c)| ClassReport {
                class: sc.classes[vc].name.clone(),
                vc: vc as u16,
                offered_load: per_endpoint_bps(c.offered_bytes) / reference,
                accepted_load: per_endpoint_bps(c.delivered_bytes) / reference,
                offered_gbps: per_endpoint_bps(c.offered_bytes) / 1e9,
                accepted_gbps: per_endpoint_bps(c.delivered_bytes) / 1e9,
                packets_generated: c.generated,
                packets_delivered: c.delivered,
                latency: LatencySummary::from(&c.latency),
                latency_from_generation: LatencySummary::from(&c.from_generation),
                histogram_ns: c.latency.histogram(),
            })
            .collect();
        FabricReport {
            scenario: sc.name.clone(),
            scheduler: sc.scheduler.clone(),
            topology: self.topo.name.clone(),
            endpoints: self.p.endpoints,
            switches: self.topo.switches(),
            measured_s,
            offered_load: classes.iter().map(|c| c.offered_load).sum(),
            accepted_load: classes.iter().map(|c| c.accepted_load).sum(),
            classes,
            stats: RunStats {
                simulated_ns: self.p.end_ns,
                events: self.events,
                packets_generated: self.generated,
                packets_delivered: self.delivered,
                wall_s,
                events_per_s: self.events as f64 / wall_s.max(1e-9),
            },
            checks: self.checks,
        }
    }
}

fn queued(id: u32, pk: &Packet) -> Queued {
    Queued { flow: u32::MAX, frame: id, class: pk.vc, wire_bits: pk.bytes * 8, frame_bits: pk.bytes * 8 }
}
