//! Validation: from a [`NetworkSpec`] to a [`Network`], reporting every problem in one run.
//!
//! Each check names the place in the file and the rule broken. Checks go on after an error
//! wherever the rest still makes sense, and an element that could not even be read (its name is in
//! `broken`) is not reported again as an unknown reference.

use super::diagnostics::Diagnostics;
use super::limits::{exceeded, grouped, Limits};
use super::load::Origins;
use super::network::*;
use super::spec::*;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

/// Ethernet frame limits (untagged), bytes.
pub const ETHERNET_MIN_FRAME: f64 = 64.0;
pub const ETHERNET_MAX_FRAME: f64 = 1518.0;

struct Ctx<'a> {
    diags: &'a mut Diagnostics,
    broken: HashSet<String>,
    origins: &'a Origins,
    /// Some link was left out (unreadable, or an end unknown): a missing route may follow from
    /// that error and is then not reported again.
    links_incomplete: bool,
    /// Kinds of element (`node`, `class`) of which one could not be read, name included: a
    /// reference to an unknown one may be a reference to it, so it is not reported.
    nameless: HashSet<&'static str>,
}

impl Ctx<'_> {
    /// Reports an unknown name unless it belongs to an element already reported as broken.
    fn unknown(&mut self, place: String, what: &str, name: &str) {
        if !self.broken.contains(name) && !self.nameless.contains(what) {
            self.diags.error(place, format!("unknown {what} '{name}'"));
        }
    }
    /// `key[i]` as the file numbers it (see [`Origins`]).
    fn at(&self, key: &str, i: usize) -> String {
        self.origins.place(key, i)
    }
}

/// Builds the resolved network; `None` when any error was found (all of them are in `diags`).
pub fn build(spec: NetworkSpec, broken: &[String], diags: &mut Diagnostics) -> Option<Network> {
    build_at(spec, broken, &Origins::default(), diags)
}

/// [`build`] for a description read from a file, some of whose elements may have been dropped
/// as unreadable: places are given with the file's indices.
pub fn build_at(
    spec: NetworkSpec,
    broken: &[String],
    origins: &Origins,
    diags: &mut Diagnostics,
) -> Option<Network> {
    build_within(spec, broken, origins, &Limits::default(), diags)
}

/// [`build_at`] within `limits`: a description with more paths (flow, destination and plane)
/// than they allow is refused before any is routed.
pub fn build_within(
    spec: NetworkSpec,
    broken: &[String],
    origins: &Origins,
    limits: &Limits,
    diags: &mut Diagnostics,
) -> Option<Network> {
    if spec.server_graph.is_some() {
        return super::server_graph::build(spec, diags);
    }
    check_names(&spec, origins, diags);
    let plane_count = spec.redundancy.as_ref().map_or(1, |r| r.planes.len()) as u64;
    let paths: u64 = spec
        .flows
        .iter()
        .map(|f| f.destinations.len() as u64 * f.planes.as_ref().map_or(plane_count, |p| p.len() as u64))
        .sum();
    if paths > limits.paths {
        diags.error(
            "flows",
            exceeded(format!("{} paths (flow, destination, plane)", grouped(paths)), "paths", limits.paths),
        );
        return None;
    }
    let links_incomplete = origins.dropped_some("links")
        || origins.dropped_some("end_systems")
        || origins.dropped_some("switches");
    let mut nameless = HashSet::new();
    if origins.lost_a_name("end_systems") || origins.lost_a_name("switches") {
        nameless.insert("node");
    }
    if origins.lost_a_name("classes") {
        nameless.insert("class");
    }
    let mut cx = Ctx { diags, broken: broken.iter().cloned().collect(), origins, links_incomplete, nameless };

    // Planes and redundancy.
    let (planes, sending_skew, skew_max) = match &spec.redundancy {
        None => (vec!["A".to_string()], 0.0, 0.0),
        Some(r) => {
            if r.planes.is_empty() {
                cx.diags.error("redundancy.planes", "must name at least one plane");
            }
            check_unique(
                r.planes.iter().map(String::as_str),
                |i| format!("redundancy.planes[{i}]"),
                "plane",
                cx.diags,
            );
            if r.skew_max.secs() <= 0.0 {
                cx.diags.error("redundancy.skew_max", format!("must be positive, got {}", r.skew_max));
            }
            (r.planes.clone(), r.sending_skew.secs(), r.skew_max.secs())
        }
    };
    let plane_of = |name: &str| planes.iter().position(|p| p == name);

    // Classes.
    check_unique(
        spec.classes.iter().map(|c| c.name.as_str()),
        |i| origins.place("classes", i),
        "class",
        cx.diags,
    );
    let class_of = |name: &str| spec.classes.iter().position(|c| c.name == name);

    // Scheduler configurations.
    for (name, cfg) in &spec.schedulers {
        check_scheduler(name, cfg, &spec, &mut cx);
    }
    let scheduler_of = |name: &str| crate::schedulers::resolve(name, &spec.schedulers);
    if scheduler_of(&spec.defaults.scheduler).is_none() {
        cx.unknown("defaults.scheduler".into(), "scheduler", &spec.defaults.scheduler.clone());
    }
    if spec.defaults.link_rate.bps() <= 0.0 {
        cx.diags.error("defaults.link_rate", format!("must be positive, got {}", spec.defaults.link_rate));
    }

    // Nodes.
    let mut nodes: Vec<Node> = Vec::new();
    let mut node_index: HashMap<String, NodeId> = HashMap::new();
    let mut node_place: Vec<String> = Vec::new();
    let mut add_node = |cx: &mut Ctx, place: String, node: Node| {
        if let Some(&first) = node_index.get(&node.name) {
            cx.diags.error(
                format!("{place}.name"),
                format!(
                    "'{}' is already the name of {}; node names must be unique",
                    node.name, node_place[first]
                ),
            );
            return;
        }
        node_index.insert(node.name.clone(), nodes.len());
        node_place.push(place);
        nodes.push(node);
    };
    for (i, es) in spec.end_systems.iter().enumerate() {
        let place = cx.at("end_systems", i);
        check_scheduler_ref(es.scheduler.as_deref(), &format!("{place}.scheduler"), &scheduler_of, &mut cx);
        add_node(
            &mut cx,
            place,
            Node {
                name: es.name.clone(),
                kind: NodeKind::EndSystem,
                plane: None,
                technological_latency: es.technological_latency.map_or(0.0, |d| d.secs()),
                receive_latency: es.receive_latency.map_or(0.0, |d| d.secs()),
                switching: Switching::StoreAndForward,
                ports: Vec::new(),
            },
        );
    }
    for (i, sw) in spec.switches.iter().enumerate() {
        let place = cx.at("switches", i);
        let plane = match &sw.plane {
            None => Some(0),
            Some(p) => {
                let id = plane_of(p);
                if id.is_none() {
                    cx.diags.error(
                        format!("{place}.plane"),
                        format!("unknown plane '{p}' (planes: {})", planes.join(", ")),
                    );
                }
                id
            }
        };
        check_scheduler_ref(sw.scheduler.as_deref(), &format!("{place}.scheduler"), &scheduler_of, &mut cx);
        for (port, pc) in &sw.ports {
            check_scheduler_ref(
                pc.scheduler.as_deref(),
                &format!("{place}.ports.{port}.scheduler"),
                &scheduler_of,
                &mut cx,
            );
            check_buffer(pc.buffer, &format!("{place}.ports.{port}.buffer"), cx.diags);
        }
        check_buffer(sw.buffer, &format!("{place}.buffer"), cx.diags);
        add_node(
            &mut cx,
            place,
            Node {
                name: sw.name.clone(),
                kind: NodeKind::Switch,
                plane,
                technological_latency: sw
                    .technological_latency
                    .unwrap_or(spec.defaults.technological_latency)
                    .secs(),
                receive_latency: 0.0,
                switching: sw.switching.unwrap_or(spec.defaults.switching),
                ports: Vec::new(),
            },
        );
    }

    // Links: explicit port names first, so that automatic ones do not collide with them.
    let mut used_ports: HashMap<(NodeId, String), usize> = HashMap::new();
    let mut ends: Vec<Option<(NodeId, NodeId)>> = Vec::new();
    for (i, link) in spec.links.iter().enumerate() {
        let place = cx.at("links", i);
        let from = node_index.get(&link.from).copied();
        let to = node_index.get(&link.to).copied();
        if from.is_none() {
            cx.unknown(format!("{place}.from"), "node", &link.from);
        }
        if to.is_none() {
            cx.unknown(format!("{place}.to"), "node", &link.to);
        }
        if let (Some(a), Some(b)) = (from, to) {
            if a == b {
                cx.diags.error(
                    place.clone(),
                    format!("must join two different nodes, got '{}' to itself", link.from),
                );
                cx.links_incomplete = true;
                ends.push(None);
                continue;
            }
            for (node, port, key) in [(a, &link.from_port, "from_port"), (b, &link.to_port, "to_port")] {
                if let Some(p) = port {
                    if let Some(other) = used_ports.insert((node, p.clone()), i) {
                        cx.diags.error(
                            format!("{place}.{key}"),
                            format!(
                                "port '{p}' of '{}' is already used by {}; a port takes one link",
                                nodes[node].name,
                                cx.at("links", other)
                            ),
                        );
                    }
                }
            }
            ends.push(Some((a, b)));
        } else {
            cx.links_incomplete = true;
            ends.push(None);
        }
        if let Some(r) = link.rate {
            if r.bps() <= 0.0 {
                cx.diags.error(format!("{place}.rate"), format!("must be positive, got {r}"));
            }
        }
    }
    let mut next_auto: HashMap<NodeId, usize> = HashMap::new();
    let mut auto_port = |node: NodeId, used: &mut HashMap<(NodeId, String), usize>, link: usize| {
        let n = next_auto.entry(node).or_insert(0);
        loop {
            let name = n.to_string();
            *n += 1;
            if let std::collections::hash_map::Entry::Vacant(e) = used.entry((node, name.clone())) {
                e.insert(link);
                return name;
            }
        }
    };
    let mut ports: Vec<EgressPort> = Vec::new();
    let mut links: Vec<LinkInfo> = Vec::new();
    for (i, link) in spec.links.iter().enumerate() {
        let Some((a, b)) = ends[i] else { continue };
        let place = cx.at("links", i);
        let plane = link_plane(link, a, b, &nodes, &planes, &place, &mut cx);
        let from_port = link.from_port.clone().unwrap_or_else(|| auto_port(a, &mut used_ports, i));
        let to_port = link.to_port.clone().unwrap_or_else(|| auto_port(b, &mut used_ports, i));
        let rate = link.rate.unwrap_or(spec.defaults.link_rate).bps();
        let prop = link.propagation_delay.unwrap_or(spec.defaults.propagation_delay).secs();
        let li = links.len();
        let fwd = ports.len();
        for (k, (node, peer, pname)) in [(a, b, from_port), (b, a, to_port)].into_iter().enumerate() {
            let (sched_name, buffer) = port_settings(&spec, &nodes[node], &pname);
            // Unknown names are reported above; the network is then not built.
            let resolved = scheduler_of(&sched_name).unwrap_or(crate::schedulers::Resolved {
                written: SchedulerConfig::Fifo,
                discipline: SchedulerConfig::Fifo,
                shaper: None,
            });
            nodes[node].ports.push(ports.len());
            ports.push(EgressPort {
                node,
                name: pname,
                link: li,
                peer,
                rate,
                propagation_delay: prop,
                plane,
                scheduler_name: sched_name,
                scheduler: resolved.written,
                discipline: resolved.discipline,
                shaper: resolved.shaper,
                buffer: buffer.map(|b| b.bits()),
                reverse: if k == 0 { fwd + 1 } else { fwd },
            });
        }
        links.push(LinkInfo {
            name: link.name.clone().unwrap_or_else(|| format!("{}-{}", link.from, link.to)),
            forward: fwd,
            backward: fwd + 1,
        });
    }
    // Port settings that name a port no link uses are a typo, not a silent no-op.
    for (i, sw) in spec.switches.iter().enumerate() {
        if let Some(&n) = node_index.get(&sw.name) {
            for port in sw.ports.keys() {
                if !nodes[n].ports.iter().any(|&p| &ports[p].name == port) {
                    cx.diags.error(
                        format!("{}.ports.{port}", cx.at("switches", i)),
                        format!("no link uses port '{port}' of '{}'", sw.name),
                    );
                }
            }
        }
    }

    // Flows.
    let ifg = spec.defaults.interframe_overhead.bits();
    let mut flows: Vec<FlowModel> = Vec::new();
    let mut flow_names: HashMap<&str, usize> = HashMap::new();
    let mut vl_ids: HashMap<u32, String> = HashMap::new();
    let mut trees = RouteTrees::for_flows(&spec, &planes, &node_index, &nodes, &ports);
    for (i, f) in spec.flows.iter().enumerate() {
        let place = cx.at("flows", i);
        if let Some(prev) = flow_names.insert(f.name.as_str(), i) {
            cx.diags.error(
                format!("{place}.name"),
                format!(
                    "'{}' is already the name of {}; flow names must be unique",
                    f.name,
                    cx.at("flows", prev)
                ),
            );
        }
        // The rest of the flow is checked even when its traffic is wrong: every problem in one run.
        let (max_w, min_w, burst, rate) = check_traffic(&f.traffic, &place, ifg, &mut vl_ids, cx.diags);
        let class = match &f.class {
            None => None,
            Some(c) => {
                let id = class_of(c);
                if id.is_none() {
                    cx.unknown(format!("{place}.class"), "class", c);
                }
                id
            }
        };
        if let Some(d) = f.deadline {
            if d.secs() <= 0.0 {
                cx.diags.error(format!("{place}.deadline"), format!("must be positive, got {d}"));
            }
        }
        let flow_planes: Vec<PlaneId> = match &f.planes {
            None => (0..planes.len()).collect(),
            Some(ps) => ps
                .iter()
                .enumerate()
                .filter_map(|(k, p)| {
                    let id = plane_of(p);
                    if id.is_none() {
                        cx.diags.error(format!("{place}.planes[{k}]"), format!("unknown plane '{p}'"));
                    }
                    id
                })
                .collect(),
        };
        let routes =
            route_flow(f, &place, &flow_planes, &planes, &nodes, &node_index, &ports, &mut trees, &mut cx);
        flows.push(FlowModel {
            name: f.name.clone(),
            source: node_index.get(&f.source).copied().unwrap_or(usize::MAX),
            class,
            deadline: f.deadline.map(|d| d.secs()),
            traffic: f.traffic.clone(),
            staircase: None,
            max_frame_wire: max_w,
            min_frame_wire: min_w,
            burst,
            rate,
            planes: flow_planes,
            routes,
        });
    }

    let fixed_priority = super::fixed_priority::resolve(&spec, origins, cx.diags);
    if spec.end_systems.is_empty()
        && spec.links.is_empty()
        && fixed_priority.is_empty()
        && !cx.diags.has_errors()
    {
        cx.diags.error(
            "(top)",
            "describes nothing: give end_systems and links (a switched network), or tasks and messages \
             (a fixed-priority system)",
        );
    }
    if cx.diags.has_errors() {
        return None;
    }
    let mut net = Network {
        kind: NetworkKind::Ethernet,
        planes,
        classes: spec.classes.clone(),
        nodes,
        ports,
        links,
        flows,
        sending_skew,
        skew_max,
        spec,
        port_flows: Vec::new(),
        derived: Default::default(),
        fixed_priority,
    };
    net.index_port_flows();
    check_port_schedulers(&net, cx.diags);
    check_port_dependency_cycles(&net, cx.diags);
    if cx.diags.has_errors() {
        return None;
    }
    net.build_indices();
    Some(net)
}

/// Longest name, in characters.
pub const MAX_NAME_CHARS: usize = 256;

/// The rule of a name: 1 to 256 characters, no tab or line break, no space at either end.
/// (Other control characters are refused as the text is read: no output format carries them.)
pub fn name_rule(name: &str) -> Result<(), String> {
    let shown = || name.escape_debug().to_string();
    if name.is_empty() {
        Err("must not be empty".into())
    } else if name.chars().count() > MAX_NAME_CHARS {
        Err(format!("must be at most {MAX_NAME_CHARS} characters, got {}", name.chars().count()))
    } else if name.contains(['\t', '\n', '\r']) {
        Err(format!("must not hold tabs or line breaks, got '{}'", shown()))
    } else if name.trim() != name {
        Err(format!("must not begin or end with a space, got '{}'", shown()))
    } else {
        Ok(())
    }
}

/// Every name the description gives to something (references to them are checked where they
/// are resolved).
fn check_names(spec: &NetworkSpec, origins: &Origins, diags: &mut Diagnostics) {
    // A name that could not be read (missing, not text) is reported already.
    let name_unread = diags.0.iter().any(|d| d.place == "name");
    let mut check = |place: String, name: &str| {
        if let Err(rule) = name_rule(name) {
            diags.error(place, rule);
        }
    };
    if !name_unread {
        check("name".into(), &spec.name);
    }
    if let Some(r) = &spec.redundancy {
        for (i, p) in r.planes.iter().enumerate() {
            check(format!("redundancy.planes[{i}]"), p);
        }
    }
    for name in spec.schedulers.keys() {
        check(format!("schedulers.{name}"), name);
    }
    let lists: [(&str, Vec<&str>); 11] = [
        ("classes", spec.classes.iter().map(|c| c.name.as_str()).collect()),
        ("end_systems", spec.end_systems.iter().map(|e| e.name.as_str()).collect()),
        ("switches", spec.switches.iter().map(|e| e.name.as_str()).collect()),
        ("flows", spec.flows.iter().map(|e| e.name.as_str()).collect()),
        ("processors", spec.processors.iter().map(|e| e.name.as_str()).collect()),
        ("buses", spec.buses.iter().map(|e| e.name.as_str()).collect()),
        ("tasks", spec.tasks.iter().map(|e| e.name.as_str()).collect()),
        ("messages", spec.messages.iter().map(|e| e.name.as_str()).collect()),
        ("servers", spec.servers.iter().map(|e| e.name.as_str()).collect()),
        ("chains", spec.chains.iter().map(|e| e.name.as_str()).collect()),
        ("links", spec.links.iter().map(|l| l.name.as_deref().unwrap_or("link")).collect()),
    ];
    for (key, names) in lists {
        for (i, name) in names.into_iter().enumerate() {
            check(format!("{}.name", origins.place(key, i)), name);
        }
    }
    for (i, sw) in spec.switches.iter().enumerate() {
        for port in sw.ports.keys() {
            check(format!("{}.ports.{port}", origins.place("switches", i)), port);
        }
    }
    for (i, l) in spec.links.iter().enumerate() {
        for (key, port) in [("from_port", &l.from_port), ("to_port", &l.to_port)] {
            if let Some(p) = port {
                check(format!("{}.{key}", origins.place("links", i)), p);
            }
        }
    }
}

fn check_unique<'a>(
    names: impl Iterator<Item = &'a str>,
    place: impl Fn(usize) -> String,
    what: &str,
    diags: &mut Diagnostics,
) {
    let mut seen = HashSet::new();
    for (i, n) in names.enumerate() {
        if !seen.insert(n) {
            diags.error(place(i), format!("{what} '{n}' is defined twice"));
        }
    }
}

fn check_buffer(buffer: Option<crate::units::DataSize>, place: &str, diags: &mut Diagnostics) {
    if let Some(b) = buffer {
        if b.bits() <= 0.0 {
            diags.error(place, format!("must be positive, got {b}"));
        }
    }
}

fn check_scheduler_ref(
    name: Option<&str>,
    place: &str,
    scheduler_of: &dyn Fn(&str) -> Option<crate::schedulers::Resolved>,
    cx: &mut Ctx,
) {
    if let Some(n) = name {
        if scheduler_of(n).is_none() && !cx.broken.contains(n) {
            cx.diags.error(
                place,
                format!(
                    "unknown scheduler '{n}': use fifo, static_priority or a name defined under schedulers"
                ),
            );
        }
    }
}

fn check_scheduler(name: &str, cfg: &SchedulerConfig, spec: &NetworkSpec, cx: &mut Ctx) {
    use crate::schedulers::{ConfigProblem, Registered};
    let place = format!("schedulers.{name}");
    if crate::schedulers::BUILT_IN.contains(&name) {
        cx.diags.error(
            place.clone(),
            format!(
                "'{name}' is the name of a built-in scheduler and cannot be redefined; choose another name"
            ),
        );
    }
    let known = |c: &str| spec.classes.iter().any(|k| k.name == c);
    let (problems, with_classes) = match crate::schedulers::registered(cfg) {
        Registered::Discipline(d) => (d.check(&place, &known), d.check_classes(&place, &spec.classes)),
        Registered::Shaper(s) => {
            if let Some(i) = s.inner {
                match crate::schedulers::resolve(i, &spec.schedulers) {
                    Some(r)
                        if crate::schedulers::discipline(&r.discipline)
                            .is_some_and(|d| d.shapes_at_link_rate()) =>
                    {
                        cx.diags.error(
                            format!("{place}.inner"),
                            "a token-bucket shaper cannot wrap a credit-based or time-aware shaper, which \
                             work at the link's rate",
                        )
                    }
                    Some(r) if r.shaper.is_none() => {}
                    Some(_) => cx
                        .diags
                        .error(format!("{place}.inner"), "a token-bucket shaper cannot wrap another shaper"),
                    None => cx.unknown(format!("{place}.inner"), "scheduler", i),
                }
            }
            (s.check(&place), Vec::new())
        }
    };
    for p in with_classes.into_iter().chain(problems) {
        match p {
            ConfigProblem::Error { place, message } => cx.diags.error(place, message),
            ConfigProblem::UnknownClass { place, class } => cx.unknown(place, "class", &class),
        }
    }
}

/// The scheduler name and buffer of one port: port settings, then node, then defaults.
fn port_settings(spec: &NetworkSpec, node: &Node, port: &str) -> (String, Option<crate::units::DataSize>) {
    let d = &spec.defaults;
    match node.kind {
        NodeKind::EndSystem => {
            let es = spec.end_systems.iter().find(|e| e.name == node.name);
            let s = es.and_then(|e| e.scheduler.clone()).unwrap_or_else(|| d.scheduler.clone());
            (s, es.and_then(|e| e.buffer).or(d.buffer))
        }
        NodeKind::Switch => {
            let sw = spec.switches.iter().find(|s| s.name == node.name);
            let pc = sw.and_then(|s| s.ports.get(port));
            let s = pc
                .and_then(|p| p.scheduler.clone())
                .or_else(|| sw.and_then(|s| s.scheduler.clone()))
                .unwrap_or_else(|| d.scheduler.clone());
            let b = pc.and_then(|p| p.buffer).or_else(|| sw.and_then(|s| s.buffer)).or(d.buffer);
            (s, b)
        }
        NodeKind::Server => unreachable!("server graphs are resolved in model::server_graph"),
    }
}

fn link_plane(
    link: &Link,
    a: NodeId,
    b: NodeId,
    nodes: &[Node],
    planes: &[String],
    place: &str,
    cx: &mut Ctx,
) -> PlaneId {
    let sw_planes: Vec<PlaneId> = [a, b].iter().filter_map(|&n| nodes[n].plane).collect();
    if sw_planes.len() == 2 && sw_planes[0] != sw_planes[1] {
        cx.diags.error(
            place.to_string(),
            format!(
                "joins switches of planes {} and {}; planes must stay independent",
                planes[sw_planes[0]], planes[sw_planes[1]]
            ),
        );
    }
    match &link.plane {
        None => sw_planes.first().copied().unwrap_or(0),
        Some(p) => match planes.iter().position(|x| x == p) {
            None => {
                cx.diags.error(format!("{place}.plane"), format!("unknown plane '{p}'"));
                0
            }
            Some(id) => {
                if let Some(&s) = sw_planes.first() {
                    if s != id {
                        cx.diags.error(
                            format!("{place}.plane"),
                            format!("is {p} but its switch is on plane {}", planes[s]),
                        );
                    }
                }
                id
            }
        },
    }
}

/// Checks a flow's traffic model; returns (largest wire frame, smallest wire frame, burst, rate)
/// in bits and bits per second at the source port (meaningless when an error was reported).
fn check_traffic(
    t: &Traffic,
    place: &str,
    ifg: f64,
    vl_ids: &mut HashMap<u32, String>,
    diags: &mut Diagnostics,
) -> (f64, f64, f64, f64) {
    let frame_ok = |field: &str, size: crate::units::DataSize, diags: &mut Diagnostics| {
        let b = size.bytes();
        if !(ETHERNET_MIN_FRAME..=ETHERNET_MAX_FRAME).contains(&b) {
            diags.error(
                format!("{place}.{field}"),
                format!("must be an Ethernet frame size between 64B and 1518B, got {size}"),
            );
        }
    };
    let out = match t {
        Traffic::VirtualLink { id, bag, lmin, lmax, release_jitter, skew_max, messages } => {
            for (k, m) in messages.iter().enumerate() {
                if m.payload.bytes() < 1.0 || m.payload.bytes().fract() != 0.0 {
                    diags.error(
                        format!("{place}.messages[{k}].payload"),
                        format!("must be a whole number of bytes, at least 1B, got {}", m.payload),
                    );
                }
                if m.period.secs() <= 0.0 {
                    diags.error(
                        format!("{place}.messages[{k}].period"),
                        format!("must be positive, got {}", m.period),
                    );
                }
            }
            let ms = bag.ms();
            let k = ms.log2().round();
            if !((0.0..=7.0).contains(&k) && (ms - 2f64.powf(k)).abs() < 1e-9) {
                diags.error(
                    format!("{place}.bag"),
                    format!("must be a power of two between 1ms and 128ms, got {bag}"),
                );
            }
            frame_ok("lmin", *lmin, diags);
            frame_ok("lmax", *lmax, diags);
            if lmin.bits() > lmax.bits() {
                diags.error(format!("{place}.lmin"), format!("must not exceed lmax ({lmax}), got {lmin}"));
            }
            if let Some(id) = id {
                if *id > 0xFFFF {
                    diags.error(format!("{place}.id"), format!("a VL id has 16 bits, got {id}"));
                } else if let Some(prev) = vl_ids.insert(*id, place.to_string()) {
                    diags.error(format!("{place}.id"), format!("VL id {id} is already used by {prev}"));
                }
            }
            if let Some(s) = skew_max {
                if s.secs() <= 0.0 {
                    diags.error(format!("{place}.skew_max"), "must be positive");
                }
            }
            let max_w = lmax.bits() + ifg;
            let rate = max_w / bag.secs().max(f64::MIN_POSITIVE);
            (max_w, lmin.bits() + ifg, max_w + rate * release_jitter.secs(), rate)
        }
        Traffic::Periodic { period, size, min_size, jitter, .. } => {
            if period.secs() <= 0.0 {
                diags.error(format!("{place}.period"), format!("must be positive, got {period}"));
            }
            frame_ok("size", *size, diags);
            if let Some(m) = min_size {
                frame_ok("min_size", *m, diags);
                if m.bits() > size.bits() {
                    diags.error(
                        format!("{place}.min_size"),
                        format!("must not exceed size ({size}), got {m}"),
                    );
                }
            }
            let w = size.bits() + ifg;
            let rate = w / period.secs().max(f64::MIN_POSITIVE);
            (w, min_size.map_or(w, |m| m.bits() + ifg), w + rate * jitter.secs(), rate)
        }
        Traffic::TokenBucket { burst, rate, min_packet, max_packet } => {
            if rate.bps() <= 0.0 {
                diags.error(format!("{place}.rate"), format!("must be positive, got {rate}"));
            }
            frame_ok("min_packet", *min_packet, diags);
            frame_ok("max_packet", *max_packet, diags);
            if min_packet.bits() > max_packet.bits() {
                diags.error(
                    format!("{place}.min_packet"),
                    format!("must not exceed max_packet ({max_packet}), got {min_packet}"),
                );
            }
            if burst.bits() < max_packet.bits() {
                diags.error(
                    format!("{place}.burst"),
                    format!("must hold at least one largest packet ({burst} < {max_packet})"),
                );
            }
            // Each packet of at least min_packet bits costs `ifg` more on the wire.
            let scale = (min_packet.bits() + ifg) / min_packet.bits().max(1.0);
            (max_packet.bits() + ifg, min_packet.bits() + ifg, burst.bits() * scale, rate.bps() * scale)
        }
    };
    out
}

#[allow(clippy::too_many_arguments)]
fn route_flow(
    f: &Flow,
    place: &str,
    flow_planes: &[PlaneId],
    planes: &[String],
    nodes: &[Node],
    node_index: &HashMap<String, NodeId>,
    ports: &[EgressPort],
    trees: &mut RouteTrees,
    cx: &mut Ctx,
) -> Vec<Route> {
    let mut routes = Vec::new();
    let source = match node_index.get(&f.source) {
        None => {
            cx.unknown(format!("{place}.source"), "node", &f.source);
            return routes;
        }
        Some(&s) if nodes[s].kind != NodeKind::EndSystem => {
            cx.diags.error(
                format!("{place}.source"),
                format!("must be an end system (flows start at end systems), got the switch '{}'", f.source),
            );
            return routes;
        }
        Some(&s) => s,
    };
    if f.destinations.is_empty() {
        cx.diags.error(format!("{place}.destinations"), "must name at least one end system");
    }
    let mut seen = HashSet::new();
    for (j, d) in f.destinations.iter().enumerate() {
        let dplace = format!("{place}.destinations[{j}]");
        let name = d.node();
        let Some(&dest) = node_index.get(name) else {
            cx.unknown(dplace, "node", name);
            continue;
        };
        if nodes[dest].kind != NodeKind::EndSystem {
            cx.diags.error(
                dplace,
                format!("must be an end system (flows end at end systems), got the switch '{name}'"),
            );
            continue;
        }
        if dest == source {
            cx.diags.error(dplace, format!("must not be the flow's own source, got '{name}'"));
            continue;
        }
        if !seen.insert(dest) {
            cx.diags.error(dplace, format!("must not repeat a destination, got '{name}' a second time"));
            continue;
        }
        let explicit = |plane: PlaneId| -> Option<(&Vec<String>, String)> {
            match d {
                Destination::Name(_) => None,
                Destination::Routed(r) => {
                    if let Some(ps) = &r.paths {
                        ps.get(&planes[plane]).map(|p| (p, format!("{dplace}.paths.{}", planes[plane])))
                    } else {
                        r.path.as_ref().map(|p| (p, format!("{dplace}.path")))
                    }
                }
            }
        };
        if let Destination::Routed(RoutedDestination { paths: Some(ps), .. }) = d {
            for key in ps.keys() {
                match planes.iter().position(|p| p == key) {
                    Some(id) if flow_planes.contains(&id) => {}
                    _ => cx.diags.error(
                        format!("{dplace}.paths.{key}"),
                        format!("'{key}' is not a plane this flow is sent on"),
                    ),
                }
            }
        }
        // Planes where fewest-hop routing had to break a tie: (plane, paths, hops).
        let mut tied: Vec<(PlaneId, u64, usize)> = Vec::new();
        for &plane in flow_planes {
            let ports_on_path = match explicit(plane) {
                Some((path, pplace)) => {
                    check_path(path, &pplace, source, dest, plane, nodes, node_index, ports, cx)
                }
                None => match trees.path(source, dest, plane, nodes, ports) {
                    Some(route) => {
                        if route.ties > 1 {
                            tied.push((plane, route.ties, route.ports.len()));
                        }
                        Some(route.ports)
                    }
                    None => {
                        if !cx.links_incomplete {
                            cx.diags.error(
                                dplace.clone(),
                                format!("no path from '{}' to '{name}' on plane {}", f.source, planes[plane]),
                            );
                        }
                        None
                    }
                },
            };
            if let Some(ps) = ports_on_path {
                routes.push(Route { destination: dest, plane, ports: ps });
            }
        }
        // One warning per destination: a tie is usually a redundant mesh the user meant to route
        // by hand, and which path is taken changes every bound that crosses it.
        if let Some(&(_, paths, hops)) = tied.first() {
            let on = if planes.len() > 1 {
                let names: Vec<&str> = tied.iter().map(|t| planes[t.0].as_str()).collect();
                format!(" on plane {}", names.join(", "))
            } else {
                String::new()
            };
            let more = if tied.iter().any(|t| (t.1, t.2) != (paths, hops)) { " (on the first)" } else { "" };
            cx.diags.warning(
                dplace.clone(),
                format!(
                    "{} paths of {hops} hops lead there{on}{more}; the one through the link listed first is \
                     taken (give a path to choose)",
                    if paths == u64::MAX { "many".to_string() } else { paths.to_string() },
                ),
            );
        }
    }
    // A multicast VL is a tree: on each plane, a frame enters each node through one port only.
    let mut entered: HashMap<(NodeId, PlaneId), PortId> = HashMap::new();
    for r in &routes {
        for &p in &r.ports {
            let node = ports[p].peer;
            if let Some(&prev) = entered.get(&(node, r.plane)) {
                if prev != p {
                    cx.diags.error(
                        format!("{place}.destinations"),
                        format!(
                            "the paths must form a tree, got '{}' reached from both '{}' and '{}'",
                            nodes[node].name, nodes[ports[prev].node].name, nodes[ports[p].node].name
                        ),
                    );
                    return routes;
                }
            }
            entered.insert((node, r.plane), p);
        }
    }
    routes
}

/// The egress port of `from` towards `to` on `plane`, if a link joins them there.
fn port_towards(
    from: NodeId,
    to: NodeId,
    plane: PlaneId,
    nodes: &[Node],
    ports: &[EgressPort],
) -> Option<PortId> {
    nodes[from].ports.iter().copied().find(|&p| ports[p].peer == to && ports[p].plane == plane)
}

#[allow(clippy::too_many_arguments)]
fn check_path(
    path: &[String],
    place: &str,
    source: NodeId,
    dest: NodeId,
    plane: PlaneId,
    nodes: &[Node],
    node_index: &HashMap<String, NodeId>,
    ports: &[EgressPort],
    cx: &mut Ctx,
) -> Option<Vec<PortId>> {
    let mut ids = Vec::with_capacity(path.len());
    for (k, n) in path.iter().enumerate() {
        match node_index.get(n) {
            Some(&id) => ids.push(id),
            None => {
                cx.unknown(format!("{place}[{k}]"), "node", n);
                return None;
            }
        }
    }
    if ids.first() != Some(&source) {
        cx.diags.error(place.to_string(), format!("must start at the source '{}'", nodes[source].name));
        return None;
    }
    if ids.last() != Some(&dest) {
        cx.diags.error(place.to_string(), format!("must end at the destination '{}'", nodes[dest].name));
        return None;
    }
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (k, &id) in ids.iter().enumerate() {
        if !seen.insert(id) {
            cx.diags.error(
                format!("{place}[{k}]"),
                format!("'{}' appears twice: paths must be loop-free", nodes[id].name),
            );
            return None;
        }
        if k > 0 && k + 1 < ids.len() && nodes[id].kind != NodeKind::Switch {
            cx.diags.error(
                format!("{place}[{k}]"),
                format!("'{}' is an end system; only switches forward", nodes[id].name),
            );
            return None;
        }
        if k + 1 < ids.len() {
            match port_towards(id, ids[k + 1], plane, nodes, ports) {
                Some(p) => out.push(p),
                None => {
                    cx.diags.error(
                        format!("{place}[{}]", k + 1),
                        format!(
                            "no link from '{}' to '{}' on this plane",
                            nodes[id].name,
                            nodes[ids[k + 1]].name
                        ),
                    );
                    return None;
                }
            }
        }
    }
    Some(out)
}

/// Fewest-hop routes, forwarding only through switches, computed before the flows are checked:
/// one breadth-first tree per (source, plane) serves every flow from that source, and only the
/// paths asked for are kept. Ties go to the link listed first, so routing is deterministic.
#[derive(Default)]
struct RouteTrees(HashMap<(NodeId, NodeId, PlaneId), Option<FewestHops>>);

/// The path a destination given by name is routed on, and how many paths of as few hops there
/// were (more than one: the link listed first decided, which the user may not have meant).
#[derive(Clone)]
struct FewestHops {
    ports: Vec<PortId>,
    ties: u64,
}

impl RouteTrees {
    /// The routes by name the flows of `spec` ask for (the others are made when asked).
    fn for_flows(
        spec: &NetworkSpec,
        planes: &[String],
        node_index: &HashMap<String, NodeId>,
        nodes: &[Node],
        ports: &[EgressPort],
    ) -> Self {
        let mut wanted: HashMap<(NodeId, PlaneId), Vec<NodeId>> = HashMap::new();
        for f in &spec.flows {
            let Some(&source) = node_index.get(&f.source) else { continue };
            let flow_planes: Vec<PlaneId> = match &f.planes {
                None => (0..planes.len()).collect(),
                Some(ps) => ps.iter().filter_map(|p| planes.iter().position(|q| q == p)).collect(),
            };
            for d in &f.destinations {
                if let (Destination::Name(_), Some(&dest)) = (d, node_index.get(d.node())) {
                    for &plane in &flow_planes {
                        wanted.entry((source, plane)).or_default().push(dest);
                    }
                }
            }
        }
        let mut out = RouteTrees::default();
        for ((source, plane), dests) in wanted {
            let tree = BreadthFirstTree::new(source, plane, nodes, ports);
            for dest in dests {
                out.0.entry((source, dest, plane)).or_insert_with(|| tree.path(dest, ports));
            }
        }
        out
    }

    /// The fewest-hop path from `source` to `dest` on `plane`, if `dest` can be reached.
    fn path(
        &mut self,
        source: NodeId,
        dest: NodeId,
        plane: PlaneId,
        nodes: &[Node],
        ports: &[EgressPort],
    ) -> Option<FewestHops> {
        self.0
            .entry((source, dest, plane))
            .or_insert_with(|| BreadthFirstTree::new(source, plane, nodes, ports).path(dest, ports))
            .clone()
    }
}

/// Breadth-first search from one source on one plane, forwarding through switches only.
struct BreadthFirstTree {
    /// For every node reached, the port it is entered by on a fewest-hop path (ports in the order
    /// of the links, so the link listed first wins a tie); [`NO_PORT`] elsewhere.
    via: Vec<u32>,
    /// For every node reached, how many fewest-hop paths reach it (parallel links counted apart;
    /// saturating: only "more than one" matters).
    paths: Vec<u64>,
}

impl BreadthFirstTree {
    fn new(source: NodeId, plane: PlaneId, nodes: &[Node], ports: &[EgressPort]) -> Self {
        let mut via = vec![NO_PORT; nodes.len()];
        let mut paths = vec![0u64; nodes.len()];
        let mut hops = vec![u32::MAX; nodes.len()];
        hops[source] = 0;
        paths[source] = 1;
        // FIFO order: every node of depth d has all its paths counted before any is expanded.
        let mut queue = VecDeque::from([source]);
        while let Some(n) = queue.pop_front() {
            if n != source && nodes[n].kind != NodeKind::Switch {
                continue;
            }
            for &p in &nodes[n].ports {
                let peer = ports[p].peer;
                if ports[p].plane != plane {
                    continue;
                }
                if hops[peer] == u32::MAX {
                    hops[peer] = hops[n] + 1;
                    via[peer] = p as u32;
                    queue.push_back(peer);
                }
                if hops[peer] == hops[n] + 1 {
                    paths[peer] = paths[peer].saturating_add(paths[n]);
                }
            }
        }
        BreadthFirstTree { via, paths }
    }

    /// The path to `dest` along the tree, if the tree reaches it.
    fn path(&self, dest: NodeId, ports: &[EgressPort]) -> Option<FewestHops> {
        if self.via[dest] == NO_PORT {
            return None;
        }
        let mut out = Vec::new();
        let mut n = dest;
        while self.via[n] != NO_PORT {
            let p = self.via[n] as PortId;
            out.push(p);
            n = ports[p].node;
        }
        out.reverse();
        Some(FewestHops { ports: out, ties: self.paths[dest] })
    }
}

/// No port: the source itself, or a node not reached.
const NO_PORT: u32 = u32::MAX;

/// The rules that hold between flows, at the ports they share (per-class shares, time-aware
/// windows, credit-based slopes): for a network whose flows were validated in groups, one group
/// on the topology alone at a time (the incremental admission of `crate::cloud::live`).
pub fn check_flows_together(net: &Network, diags: &mut Diagnostics) {
    check_port_schedulers(net, diags);
}

/// Class-based schedulers need every crossing flow to carry a class they give something to;
/// a share that is legal but slow for a class's frames (a DRR quantum or a DTable entry below a
/// frame) is a warning, once per scheduler and class.
fn check_port_schedulers(net: &Network, diags: &mut Diagnostics) {
    let per_port = net.flows_per_port();
    let mut warned: HashSet<(String, String)> = HashSet::new();
    let mut unclassed: BTreeMap<usize, String> = BTreeMap::new();
    let mut over_subscribed: HashSet<String> = HashSet::new();
    // Credit-based ports that no shaped flow crosses, checked after those that one does so that
    // an error names a port whose shaped traffic the slopes reserve for.
    let mut unshaped_credit_ports: Vec<usize> = Vec::new();
    for (p, flows) in per_port.iter().enumerate() {
        let port = &net.ports[p];
        let discipline =
            crate::schedulers::discipline(&port.discipline).expect("a port's discipline is no shaper");
        let shares = match discipline.service() {
            crate::schedulers::Service::Fifo => continue,
            crate::schedulers::Service::StaticPriority | crate::schedulers::Service::Asynchronous(_) => None,
            crate::schedulers::Service::PerClass(shares) => Some(shares),
            crate::schedulers::Service::TimeAware(tas) => {
                if !over_subscribed.contains(&port.scheduler_name)
                    && check_time_aware(net, p, flows, tas, "entries", diags)
                {
                    over_subscribed.insert(port.scheduler_name.clone());
                }
                None
            }
            crate::schedulers::Service::CreditBased(cbs) => {
                let shaped = flows.iter().find(|&&f| {
                    net.flows[f].class.is_some_and(|k| cbs.idle_slopes.contains_key(&net.classes[k].name))
                });
                if shaped.is_none() {
                    unshaped_credit_ports.push(p);
                }
                // Once per scheduler: the first port it does not fit.
                if !over_subscribed.contains(&port.scheduler_name)
                    && (shaped.is_some_and(|&f| check_credit_based(net, p, Some(f), cbs, diags))
                        || cbs
                            .gates
                            .as_ref()
                            .is_some_and(|g| check_time_aware(net, p, flows, g, "gates.entries", diags)))
                {
                    over_subscribed.insert(port.scheduler_name.clone());
                }
                None
            }
        };
        for &f in flows {
            let flow = &net.flows[f];
            let Some(class) = flow.class else {
                unclassed.entry(f).or_insert_with(|| {
                    format!(
                        "has no class but crosses {} whose {} scheduler serves classes",
                        net.port_label(p),
                        discipline.kind()
                    )
                });
                continue;
            };
            let Some(shares) = shares else { continue };
            let cname = &net.classes[class].name;
            if shares.share(cname).is_none() {
                diags.error(
                    format!("schedulers.{}", port.scheduler_name),
                    format!(
                        "gives nothing to class '{cname}', whose flow '{}' crosses {}",
                        flow.name,
                        net.port_label(p)
                    ),
                );
                continue;
            }
            let lmax = flow.max_frame_wire - net.spec.defaults.interframe_overhead.bits();
            if let Some(w) = shares.frame_warning(cname, lmax, &flow.name) {
                if warned.insert((port.scheduler_name.clone(), cname.clone())) {
                    diags.warning(format!("schedulers.{}", port.scheduler_name), w);
                }
            }
        }
    }
    for p in unshaped_credit_ports {
        let port = &net.ports[p];
        let discipline =
            crate::schedulers::discipline(&port.discipline).expect("a port's discipline is no shaper");
        if let crate::schedulers::Service::CreditBased(cbs) = discipline.service() {
            if !over_subscribed.contains(&port.scheduler_name) && check_credit_based(net, p, None, cbs, diags)
            {
                over_subscribed.insert(port.scheduler_name.clone());
            }
        }
    }
    for (f, msg) in unclassed {
        diags.error(format!("flows[{f}].class"), msg);
    }
}

/// A time-aware shaper at one port: every class crossing it has a gate window long enough for
/// its largest frame (else that frame would wait for ever). Whether it reported a problem.
fn check_time_aware(
    net: &Network,
    p: usize,
    flows: &[usize],
    tas: &crate::schedulers::tas::TasDiscipline<'_>,
    field: &str,
    diags: &mut Diagnostics,
) -> bool {
    let port = &net.ports[p];
    for &f in flows {
        let Some(k) = net.flows[f].class else { continue };
        let class = &net.classes[k];
        let names: Vec<&str> =
            net.classes.iter().filter(|c| c.priority == class.priority).map(|c| c.name.as_str()).collect();
        let longest =
            tas.windows(&names).map_or(f64::INFINITY, |w| w.iter().map(|(a, b)| b - a).fold(0.0, f64::max));
        let needed = net.flows[f].max_frame_wire / port.rate;
        // Windows are whole ns turned into seconds: a window exactly one frame long (what
        // `configure tsn` writes) may come out a few ulps short; 1 fs is far below a ns.
        if longest + 1e-15 < needed {
            diags.error(
                format!("schedulers.{}.{field}", port.scheduler_name),
                format!(
                    "the gate of class '{}' is never open for {}, the time flow '{}''s largest frame takes on port {}",
                    class.name,
                    crate::units::Duration::from_secs(needed),
                    net.flows[f].name,
                    net.port_label(p)
                ),
            );
            return true;
        }
    }
    false
}

/// A credit-based shaper's slopes at one port: their sum within the port's rate (802.1Q reserves
/// at most the link); behind a gate control list, the sum of the slopes of the classes one entry
/// opens together (a class's credit grows only while its gate is open, so classes never open
/// together share no time). `shaped`: a flow of a shaped class crossing the port, named in the
/// error. Whether it reported a problem.
fn check_credit_based(
    net: &Network,
    p: usize,
    shaped: Option<usize>,
    cbs: &crate::schedulers::cbs::CbsDiscipline<'_>,
    diags: &mut Diagnostics,
) -> bool {
    let port = &net.ports[p];
    let slopes = cbs.idle_slopes;
    let place = format!("schedulers.{}.idle_slopes", port.scheduler_name);
    let sum = |open: &dyn Fn(&str) -> bool| -> f64 {
        slopes.iter().filter(|(c, _)| open(c)).map(|(_, r)| r.bps()).sum()
    };
    let (total, together) = match &cbs.gates {
        None => (sum(&|_| true), String::new()),
        Some(g) => g
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                (sum(&|c| e.open.iter().any(|o| o == c)), format!(" of the classes entry {i} opens"))
            })
            .fold((0.0, String::new()), |best, x| if x.0 > best.0 { x } else { best }),
    };
    if total > port.rate {
        let crossing = shaped.map_or(String::new(), |f| {
            let class = net.flows[f].class.map_or("", |k| net.classes[k].name.as_str());
            format!(", where flow '{}' of shaped class '{class}' leaves", net.flows[f].name)
        });
        let rule = if cbs.gates.is_some() {
            "the idle slopes of classes whose gates are open together must sum to at most the rate of \
             every port the scheduler runs"
        } else {
            "the idle slopes must sum to at most the rate of every port the scheduler runs"
        };
        diags.error(
            place,
            format!(
                "idle slopes{together} sum to {}, more than the rate {} of port {}{crossing}; {rule}",
                crate::units::DataRate(total),
                crate::units::DataRate(port.rate),
                net.port_label(p)
            ),
        );
        return true;
    }
    false
}

/// Reports a cycle in the graph whose edges are consecutive ports of some flow's route: feed-
/// forward analysis does not apply there and needs a fixed point.
fn check_port_dependency_cycles(net: &Network, diags: &mut Diagnostics) {
    if let Some(cycle) = find_cycle(&super::indices::port_successors(net)) {
        let names: Vec<String> = cycle.iter().map(|&p| net.port_label(p)).collect();
        diags.warning(
            "flows",
            format!(
                "routes make a cyclic port dependency ({} -> {}); analyses need a fixed point there",
                names.join(" -> "),
                names[0]
            ),
        );
    }
}

/// One cycle of a directed graph, if any (iterative depth-first search).
pub fn find_cycle(next: &[Vec<usize>]) -> Option<Vec<usize>> {
    let n = next.len();
    let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
    let mut parent = vec![usize::MAX; n];
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        state[start] = 1;
        while let Some(&mut (v, ref mut i)) = stack.last_mut() {
            if *i < next[v].len() {
                let w = next[v][*i];
                *i += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        parent[w] = v;
                        stack.push((w, 0));
                    }
                    1 => {
                        let mut cycle = vec![v];
                        let mut u = v;
                        while u != w {
                            u = parent[u];
                            cycle.push(u);
                        }
                        cycle.reverse();
                        return Some(cycle);
                    }
                    _ => {}
                }
            } else {
                state[v] = 2;
                stack.pop();
            }
        }
    }
    None
}
