use super::*;
use crate::analysis::{run, run_with, Request};
use crate::model::load_network;
use serde_json::json;

// The integration tests' solver (microlp, plain Rust), shared rather than copied.
#[path = "../../../tests/common/lp.rs"]
mod lp;

const UNFOLD: usize = model::UNFOLD_DATES;

fn graph(servers: &[(f64, f64)], flows: &[(f64, f64, &[usize])]) -> Network {
    let servers: Vec<_> = servers
        .iter()
        .enumerate()
        .map(|(i, &(rate, latency))| json!({"name": format!("s{i}"), "rate": rate, "latency": latency}))
        .collect();
    let flows: Vec<_> = flows
        .iter()
        .enumerate()
        .map(|(i, &(burst, rate, path))| {
            let path: Vec<String> = path.iter().map(|s| format!("s{s}")).collect();
            json!({"name": format!("f{i}"), "burst": burst, "rate": rate, "path": path})
        })
        .collect();
    let doc = json!({"name": "g", "server_graph": {"servers": servers, "flows": flows}});
    let (n, d) = load_network(&doc.to_string());
    n.unwrap_or_else(|| panic!("{:?}", d.0))
}

/// DEBORAH's source16-50: servers of rates 128 − 8k (k = 0..15), latency 1; flow 0 over all,
/// flow k over the first k servers; every flow (5, 4).
fn source16() -> Network {
    let servers: Vec<(f64, f64)> = (0..16).map(|k| (128.0 - 8.0 * k as f64, 1.0)).collect();
    let paths: Vec<Vec<usize>> =
        std::iter::once((0..16).collect()).chain((1..16).map(|k| (0..k).collect())).collect();
    let flows: Vec<(f64, f64, &[usize])> = paths.iter().map(|p| (5.0, 4.0, p.as_slice())).collect();
    graph(&servers, &flows)
}

/// Every burst at once (all ℓ = 0), each flow's at the slowest server it crosses: a feasible
/// point of the program, worth 16 + Σ_g 5/R_{k_g} = 16 + (5/8)·H_16 = 18.11296 (H_16 the 16th
/// harmonic number): the program's optimum is at least that, so no solver can give less.
#[test]
fn source16_program_reaches_every_burst_at_once() {
    let net = source16();
    let m = Model::new(&net);
    let (lp, time, latency) = source_program(&m, 0, 15).unwrap().expect("a source tree");
    assert_eq!(latency, 16.0);
    // Columns: 16 intervals, then per flow (in network order) one per server it crosses.
    let mut x = vec![0.0; lp.objective.len()];
    let mut col = 16;
    for k in std::iter::once(16).chain(1..16) {
        x[col + k - 1] = 1.0; // the burst (scaled to 1) at its last, slowest server
        col += k;
    }
    assert_eq!(col, lp.objective.len());
    let value = lp.value_at(&x, 1e-12).expect("feasible") * time;
    let h16: f64 = (1..=16).map(|m| 1.0 / m as f64).sum();
    assert!((latency + value - (16.0 + 0.625 * h16)).abs() < 1e-12, "{}", latency + value);
    // The same bursts once more at the first server break a token bucket.
    x[16] = 1.0;
    assert!(lp.value_at(&x, 1e-12).is_none());
}

#[test]
fn rules_are_named_in_one_line() {
    let net = source16();
    assert!(applies(&net, false).is_ok());
    assert!(applies(&net, true).unwrap_err().contains("FIFO"));
    // f1 joins f0 at its second server: a general feed-forward network, covered.
    let joined = graph(&[(10.0, 1.0), (10.0, 1.0)], &[(1.0, 1.0, &[0, 1]), (1.0, 1.0, &[1])]);
    assert!(applies(&joined, false).is_ok());
    // f0 goes s0 -> s1, f1 s1 -> s0: cyclic, covered through cuts (below, cyclic_networks_are_cut).
    let cyclic = graph(&[(10.0, 1.0), (10.0, 1.0)], &[(1.0, 1.0, &[0, 1]), (1.0, 1.0, &[1, 0])]);
    assert!(applies(&cyclic, false).is_ok());
    let req = Request { method: crate::analysis::Method::FifoLp, ..Default::default() };
    // Without a solver: refused, and best does without it.
    assert_eq!(run(&net, &req).unwrap_err(), crate::analysis::AnalysisError::NoSolver);
    assert!(run(&net, &req).unwrap_err().to_string().contains("highspy"));
    let best = run(&net, &Request { method: crate::analysis::Method::Best, ..Default::default() }).unwrap();
    assert!(best.flows.iter().all(|r| r.method != NAME));
}

/// In `best`, every flow of a feed-forward graph is asked. Every program is worth 0 here, so
/// the period splitting ([`refine`]) never gains and goes, largest (the last of equals)
/// first, down one branch until nothing is left to decide. f0 over s0, s1 (joined at s1 by
/// f2, which starts there): its tree program, and s0's two output dates decided: 1 + 2. f1
/// over s0 (with f0, which entered there too): its tree program (one output date, nothing
/// to decide) and the source-tree one, 2. f2 over s1, s2: its tree takes s0 (f0 goes s0 →
/// s1), so f0 enters with its own burst and no bound upstream is needed: its tree program,
/// s1's two output dates (2), then, under s1's "later period" case, s0's four (3 decisions,
/// 6): 9. 3 + 2 + 9 = 14 (the path alone, without s0, would cut f0 and ask for its bound
/// over s0). Before those, `best` asks each route's one-period programs (its screen: f0's tree
/// program, f1's tree and source-tree programs, f2's tree program): 4 more, 18.
#[test]
fn best_asks_for_every_flow() {
    let net = graph(
        &[(10.0, 1.0), (10.0, 1.0), (10.0, 1.0)],
        &[(1.0, 1.0, &[0, 1]), (1.0, 1.0, &[0]), (1.0, 1.0, &[1, 2])],
    );
    assert!(applies(&net, false).is_ok());
    let asked = std::sync::atomic::AtomicUsize::new(0);
    let count = |_: &Program| -> Result<f64, String> {
        asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(0.0)
    };
    let req = Request { method: crate::analysis::Method::Best, ..Default::default() };
    let r = run_with(&net, &req, Some(&count)).unwrap();
    assert_eq!(asked.into_inner(), 18);
    assert!(r.flows.iter().all(|f| f.method == NAME));
}

/// f0 over s2 → s3; f1 s0 → s2 → s3; f2 s1 → s3; f3 s0 → s1. f0's sink tree: its path (s2,
/// s3), then nearest the root first: s1 (f2 goes s1 → s3), then under s2 the s0 that feeds it
/// (f1), and under s1 the s0 that feeds it (f3): the network unfolded backwards, s0 twice, so
/// that no flow is cut. f1 runs s0 → s2 → s3 in the first copy, and is in the second copy's
/// queue too (s0's FIFO holds it), where its run ends; f3 likewise the other way round.
#[test]
fn the_sink_tree_takes_every_upstream_server() {
    let net = graph(
        &[(10.0, 0.0), (10.0, 0.0), (10.0, 0.0), (10.0, 0.0)],
        &[(1.0, 1.0, &[2, 3]), (1.0, 1.0, &[0, 2, 3]), (1.0, 1.0, &[1, 3]), (1.0, 1.0, &[0, 1])],
    );
    let m = Model::new(&net);
    let tree = model::Tree::of(&m, 0, 3);
    let names: Vec<&str> =
        tree.queues.iter().map(|&q| net.nodes[net.ports[m.servers[q].port].node].name.as_str()).collect();
    assert_eq!(names, ["s2", "s3", "s1", "s0", "s0"]);
    assert_eq!(tree.next, [Some(1), None, Some(1), Some(0), Some(2)]);
    let piece = |first, last| Piece { sigma: 1.0, rho: 1.0, first, last };
    let entry = |flow, port| model::Entry { flow, port, from: None, fresh: true };
    assert_eq!(
        model::pieces(&m, 0, &tree),
        [
            (entry(0, 2), piece(0, 1)),
            (entry(1, 0), piece(3, 1)),
            (entry(1, 0), piece(4, 4)),
            (entry(2, 1), piece(2, 1)),
            (entry(3, 0), piece(3, 3)),
            (entry(3, 0), piece(4, 2))
        ]
    );
    // Variables: dates (depths 2, 1, 2, 3, 3: 3 + 2 + 3 + 4 + 4, and the exit) 17, the pieces'
    // traffic at their entry level's dates 3 + 4 + 4 + 3 + 4 + 4 = 22.
    assert_eq!(model::variables(&m, 0, 3, usize::MAX, UNFOLD), 39);
    // Without copies (no room to unfold), f3 is cut at s1: it enters there with the burst of its
    // bound over s0.
    let cut = model::Tree::unfolded(&m, 0, 3, usize::MAX, 0);
    assert_eq!(cut.next, [Some(1), None, Some(1), Some(0)]);
    let last = model::pieces(&m, 0, &cut).pop().unwrap();
    assert_eq!(last, (model::Entry { flow: 3, port: 1, from: Some(0), fresh: false }, piece(2, 2)));
    // With room for 11 dates only (the trunk's 5, s1's 3, one s0's 4 would pass it): the trunk
    // and s1, f1 cut at s2 and f3 at s1.
    let capped = model::Tree::unfolded(&m, 0, 3, 11, UNFOLD);
    assert_eq!(capped.next, [Some(1), None, Some(1)]);
    let cuts: Vec<_> = model::pieces(&m, 0, &capped).into_iter().filter(|(e, _)| !e.fresh).collect();
    assert_eq!(cuts.len(), 2);
}

/// `best`'s work budget: source16-50's programs are solved route by route (each route's
/// one-period program first); once the variables solved pass the budget, the routes left keep
/// the other methods' bounds, with a note. Flow t's program over the 16-server path, the tree
/// being the path: dates Σ_{j=0..15} (17 − j) + 1 = 153, 16 flows entering at depth 16: 16·17 =
/// 272, 425 in all.
#[test]
fn best_stops_at_its_work_budget() {
    let net = source16();
    let m = Model::new(&net);
    assert_eq!(model::variables(&m, 0, 15, usize::MAX, UNFOLD), 425);
    let opt = Options { method: Candidate::Sfa, grouping: false, multiplexing: Multiplexing::Fifo };
    let zero = |_: &Program| -> Result<f64, String> { Ok(0.0) };
    let mut report = network_bounds::analyze(&net, &opt);
    // The routes are solved in two parts (rows 0, 2, ... and 1, 3, ...), each within half the
    // budget: each part's first route is screened (its one-period program bounds it); past 1
    // variable, every other route is left, and the first two routes' second pass too.
    assert_eq!(PARTS, 2);
    tighten_within(&net, &mut report, Effort::DEFAULT, &zero, 2);
    let methods: Vec<_> = report.flows.iter().map(|r| r.method).collect();
    assert_eq!(methods[..2], [NAME, NAME]);
    assert!(methods[2..].iter().all(|&m| m != NAME), "{methods:?}");
    let note = report.notes.iter().find(|n| n.contains("fifo-lp cut short")).expect("a note");
    assert!(note.contains("on 16 routes") && note.contains("--method fifo-lp"), "{note}");
    let mut report = network_bounds::analyze(&net, &opt);
    tighten_within(&net, &mut report, Effort::DEFAULT, &zero, usize::MAX);
    assert!(report.flows.iter().all(|r| r.method == NAME));
    assert!(report.notes.iter().all(|n| !n.contains("fifo-lp cut short")));
}

/// f0 (1, 1) over s0, s1, both (10, 1); f1 (1, 1) joins at s1. A reachable trajectory: f0's
/// burst at 0 leaves s0 during [1, 1.1] (s0 lazy until its latency is over); s1's backlog
/// starts at 1; f1 sends its burst at 1 and 0.1 more by 1.1, ahead of f0's last bit (the
/// tagged bit, in at 1.1): 2.1 ahead of it, which lazy s1 serves from 2 at rate 10: the
/// tagged bit leaves at 2.21. That point must be feasible in the program (else the program
/// would cut off a real trajectory: unsound), and no exit later than 2.21 with it.
#[test]
fn tandem_program_holds_a_reachable_trajectory() {
    let pieces = [
        Piece { sigma: 1.0, rho: 1.0, first: 0, last: 1 },
        Piece { sigma: 1.0, rho: 1.0, first: 1, last: 1 },
    ];
    let inf = f64::INFINITY;
    let (lp, time) = tandem_program(&[10.0, 10.0], &[1.0, 1.0], &[inf, inf], &pieces);
    assert!((time - 0.1).abs() < 1e-15, "{time}");
    // Columns: dates t(0,0..2), t(1,0..1), t(2,0), then f0's F(0..2), f1's F(0..1); scaled
    // by the time unit 0.1 and the bit unit 1.
    let mut x = vec![0.0, 0.0, 0.0, 11.0, 10.0, 22.1, 1.0, 0.0, 0.0, 1.1, 0.0];
    assert_eq!(x.len(), lp.objective.len());
    let value = lp.value_at(&x, 1e-9).expect("the trajectory is feasible") * time;
    assert!((value - 2.21).abs() < 1e-9, "{value}");
    x[5] = 22.2; // s1 cannot hold the tagged bit longer with that backlog
    assert!(lp.value_at(&x, 1e-9).is_none());
}

/// An overloaded server: an infinite bound with the reason, the solver never asked.
#[test]
fn overload_is_unbounded_with_its_reason() {
    let net = graph(&[(10.0, 1.0)], &[(1.0, 6.0, &[0]), (1.0, 6.0, &[0])]);
    let never = |_: &Program| -> Result<f64, String> { panic!("no program for an overloaded server") };
    let req = Request { method: crate::analysis::Method::FifoLp, ..Default::default() };
    let r = run_with(&net, &req, Some(&never)).unwrap();
    assert!(r
        .flows
        .iter()
        .all(|f| f.delay_us.is_infinite() && f.reason.as_deref().unwrap().contains("overloaded")));
}

/// The solver's optimum becomes the bound, raised by its tolerance: the tandem program's
/// optimum × the time unit (its objective holds the latencies), the source-tree program's
/// Σ latencies + optimum × the time unit; the smaller of the two; `best` takes it where it
/// is smaller than the other methods'.
#[test]
fn the_optimum_becomes_the_bound() {
    // Two flows (25, 5) over two servers (10, 10): the aggregate's end-to-end service is
    // (10, 20), so the exact worst case is 20 + 50/10 = 25; in the programs' units (burst
    // 25, time 2.5) that is an optimum of 10 for the tandem program (45 from the other).
    let net = graph(&[(10.0, 10.0), (10.0, 10.0)], &[(25.0, 5.0, &[0, 1]), (25.0, 5.0, &[0, 1])]);
    let ten = |_: &Program| -> Result<f64, String> { Ok(10.0) };
    let req = Request { method: crate::analysis::Method::Best, ..Default::default() };
    let r = run_with(&net, &req, Some(&ten)).unwrap();
    for f in r.flows.iter() {
        assert_eq!(f.method, NAME);
        assert!(f.delay_us / 1e6 >= 25.0 && f.delay_us / 1e6 < 25.0 + 1e-4, "{}", f.delay_us);
    }
}

/// Flows ending at one server whose trees have the same shape share one program, solved once
/// per objective: each one's bound is the one its own program gives, and fewer programs are
/// built than bounds.
#[test]
fn flows_of_one_tree_share_its_program() {
    // s0 and s1 feed s2; f0 and f3 take the same path, f1 the other branch, f2 only s2; each
    // flow's tree up to s2 is s2 with s0 and s1 under it.
    let net = graph(
        &[(10.0, 1.0), (12.0, 2.0), (20.0, 1.0)],
        &[(1.0, 1.0, &[0, 2]), (2.0, 1.5, &[1, 2]), (1.5, 2.0, &[2]), (1.0, 1.0, &[0, 2])],
    );
    let effort = Effort { max_variables: 0, ..Effort::DEFAULT };
    let end = net.flows[0].routes[0].ports[1];
    let m = Model::new(&net);
    let tree = model::Tree::of(&m, 0, end);
    let entries = model::pieces(&m, 0, &tree);
    let servers = model::servers(&m, &tree).unwrap();
    let pieces: Vec<Piece> = entries.iter().map(|e| e.1).collect();
    let (lp, _) = tree_program(&servers, &pieces, &model::lines(&m, &tree, &entries));
    // The program's own objective, found again from its first piece's server.
    assert_eq!(program::objective_from(&servers, lp.objective.len(), pieces[0].first), lp.objective);
    // Counts the programs built (one call, whatever its objectives).
    let calls = std::sync::atomic::AtomicUsize::new(0);
    struct Counting<'c>(&'c std::sync::atomic::AtomicUsize);
    impl LpSolver for Counting<'_> {
        fn maximise(&self, p: &Program) -> Result<f64, String> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            lp::maximise(p)
        }
        fn maximise_each(&self, p: &Program, objectives: &[Vec<f64>]) -> Vec<Result<f64, String>> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let each = |c: &Vec<f64>| lp::maximise(&Program { objective: c.clone(), rows: p.rows.clone() });
            objectives.iter().map(each).collect()
        }
    }
    let counting = Counting(&calls);
    let mut shared = Bounds::new(&net, effort);
    let together: Vec<f64> =
        (0..4).map(|f| shared.route_bound(f, &net.flows[f].routes[0], &counting).unwrap()).collect();
    // One tree program for the four flows (no source program applies: f1 joins f0 at s2).
    assert_eq!(calls.swap(0, std::sync::atomic::Ordering::Relaxed), 1);
    assert!(shared.trees.is_empty(), "every sibling's bound taken");
    for (f, &d) in together.iter().enumerate() {
        // Alone: its own program, from a fresh memo.
        let alone = Bounds::new(&net, effort).route_bound(f, &net.flows[f].routes[0], &counting).unwrap();
        assert!((d - alone).abs() <= 1e-9 * alone, "f{f}: {d} together, {alone} alone");
    }
    assert_eq!(calls.into_inner(), 4);
}

/// A part that panics while it holds a claim releases it: the other part, waiting for that
/// bound, goes on (and the panic reaches the caller) instead of waiting for ever.
#[test]
fn a_part_that_panics_releases_its_claims() {
    let net = graph(&[(10.0, 1.0)], &[(1.0, 1.0, &[0])]);
    let shared = Shared::default();
    let key = (0, 0);
    std::thread::scope(|s| {
        let holder = s.spawn(|| {
            let mut bounds = Bounds::sharing(&net, Effort::DEFAULT, &shared);
            shared.claim(key);
            bounds.held.push(key);
            panic!("an analysis defect while the claim is held");
        });
        assert!(holder.join().is_err(), "the part panicked");
        // Waits only if the claim were still held: this returns at once.
        shared.claim(key);
        shared.release([key]);
    });
}
