//! Tests of the TFA/SFA tables and the caches.

use super::*;

mod table_tests {
    use super::*;
    use crate::model::load_network;
    use serde_json::json;

    /// ES1 (class hi: 500 B every 1 ms) and ES2 (class lo: a 20 kB burst, frames 64..1500 B) to
    /// ES3 through SW, whose port to ES3 runs `table`; 100 Mb/s, no latencies.
    fn network(table: serde_json::Value) -> Network {
        let doc = json!({
            "name": "table",
            "defaults": {"link_rate": "100Mbps", "technological_latency": "0us", "propagation_delay": "0us"},
            "classes": [{"name": "hi"}, {"name": "lo"}],
            "schedulers": {"t": table},
            "end_systems": [{"name": "ES1"}, {"name": "ES2"}, {"name": "ES3"}],
            "switches": [{"name": "SW", "scheduler": "t"}],
            "links": [{"from": "ES1", "to": "SW"}, {"from": "ES2", "to": "SW"}, {"from": "SW", "to": "ES3"}],
            "flows": [
                {"name": "H", "type": "virtual_link", "bag": "1ms", "lmin": "64B", "lmax": "500B",
                 "class": "hi", "source": "ES1", "destinations": ["ES3"]},
                {"name": "L", "type": "token_bucket", "burst": "20000B", "rate": "10Mbps",
                 "min_packet": "64B", "max_packet": "1500B", "class": "lo", "source": "ES2",
                 "destinations": ["ES3"]}
            ]
        });
        let (n, d) = load_network(&doc.to_string());
        n.unwrap_or_else(|| panic!("{:?}", d.0))
    }

    /// Every table kind is analysed by tfa, sfa and best, with finite bounds.
    #[test]
    fn table_ports_are_analysed() {
        for kind in ["as_basic", "iba_weighted", "dtable"] {
            let net = network(json!({"kind": "table", "table_kind": kind, "entries": [
                {"class": "hi", "weight": "600B"}, {"class": "lo", "weight": "1600B"},
                {"class": "hi", "weight": "600B"}, {"class": "lo", "weight": "1600B"}]}));
            assert!(applies(&net).is_ok(), "{kind}");
            for report in [
                analyze(
                    &net,
                    &Options { method: Candidate::Tfa, grouping: false, multiplexing: Multiplexing::Fifo },
                ),
                analyze(
                    &net,
                    &Options { method: Candidate::Sfa, grouping: true, multiplexing: Multiplexing::Fifo },
                ),
                best(&net, Multiplexing::Fifo),
                best(&net, Multiplexing::Blind),
            ] {
                assert!(report.flows.iter().all(|f| f.delay_us.is_finite() && f.reason.is_none()), "{kind}");
            }
        }
    }

    /// The DTable class bound by hand (docs/ANALYSIS.md, "Table schedulers"). Class hi: entries
    /// 0 and 2 of 600 B, lo's entries 1 and 3 of 1600 B. Wire bits: L_hi = 4160, s'_hi = 520/500;
    /// lo's smallest frame 84/64 B, s_lo = 1.3125, L_lo = 12000 frame bits. X per lo entry
    /// = 1.3125·12800 = 16800, X = 33600; A = 1.04·4800 = 4992, P = 9984, r = X/P = 3.3654;
    /// K = 1.3125·12000 = 15750; D = 4160; U ≡ 0 (the layout is regular), so
    /// C·Θ = 4160 + 15750 + max(16800, 4160·r + 16800) = 50710 bits: Θ = 507.1 µs,
    /// ρ = P·C/(P + X) = 22.9075 Mb/s. H's burst at SW: alone at ES1's port (delay 41.6 µs), its
    /// frames of 84..520 B on the wire spend 6.72..41.6 µs there, so it leaves within
    /// 4160 + 4.16 Mb/s × (41.6 − 6.72) µs = 4305.1008 bits (the left-over bound, 4160 + 4.16 Mb/s
    /// × 41.6 µs for the frame in transmission, is looser), and SW adds Θ + b/ρ: H's bound is
    /// 41.6 + 507.1 + 187.934 µs (lo's 20 kB burst makes the blind residual looser).
    #[test]
    fn dtable_bound_by_hand() {
        let net = network(json!({"kind": "table", "table_kind": "dtable", "entries": [
            {"class": "hi", "weight": "600B"}, {"class": "lo", "weight": "1600B"},
            {"class": "hi", "weight": "600B"}, {"class": "lo", "weight": "1600B"}]}));
        let r = analyze(
            &net,
            &Options { method: Candidate::Tfa, grouping: false, multiplexing: Multiplexing::Fifo },
        );
        let h = r.flows.iter().find(|f| r.flows.names_of(f).0 == "H").unwrap();
        let rho = 9984.0 / 43584.0 * 100e6;
        let want = 41.6 + 507.1 + 4305.1008 / rho * 1e6;
        assert!((h.delay_us - want).abs() < 1e-6, "{} vs {want}", h.delay_us);
    }
}

mod cache_tests {
    use super::*;
    use crate::model::load_network;
    use serde_json::json;

    /// What [`OtherGroups::of`] caches, computed afresh: the groups of queue `q` but `k`, their
    /// curves added one by one in group order from the zero curve.
    fn others_afresh(st: &TfaState, q: usize, k: usize) -> Option<Curve> {
        let mut curves =
            (0..st.groups[q].len()).filter(|&i| i != k).filter_map(|i| st.group_curve(q, i)).peekable();
        curves.peek().is_some().then(|| sum_curves(curves))
    }

    /// Every cached sum, asked in SFA's order (crossing by crossing), is the fresh one, bit for bit
    /// (`{:?}` tells -0.0 from 0.0).
    fn check(net: &Network, grouping: bool) -> (Layout, TfaState) {
        let lay = layout(net);
        let opt = Options { method: Candidate::Tfa, grouping, multiplexing: Multiplexing::Fifo };
        let (st, _) = tfa(net, &lay, &opt);
        let mut others = OtherGroups::new(&st);
        for c in &lay.crossings {
            let q = c.queue;
            for k in 0..st.groups[q].len() {
                let cached = others.of(&st, q, k).cloned();
                assert_eq!(
                    format!("{cached:?}"),
                    format!("{:?}", others_afresh(&st, q, k)),
                    "queue {q} group {k}"
                );
            }
        }
        (lay, st)
    }

    /// Two switch ports whose queues differ only in one flow's burst (V3 and W3, 400 and 800 B
    /// frames, same BAG, from ES2; V1, V2 and W1, W2 alike from ES1): the sum of the other groups
    /// seen by V1 and by W1 differs, and a cache that answered one with the other (or with the sum
    /// of another group) fails here. Random networks then check every queue and group.
    #[test]
    fn other_groups_are_never_stale() {
        let vl = |name: &str, lmax: &str, src: &str, dst: &str| {
            json!({"name": name, "type": "virtual_link", "bag": "1ms", "lmin": "64B", "lmax": lmax,
                   "source": src, "destinations": [dst]})
        };
        let doc = json!({
            "name": "two-queues",
            "end_systems": [{"name": "ES1"}, {"name": "ES2"}, {"name": "ES3"}, {"name": "ES4"}],
            "switches": [{"name": "SW"}],
            "links": [{"from": "ES1", "to": "SW"}, {"from": "ES2", "to": "SW"},
                      {"from": "SW", "to": "ES3"}, {"from": "SW", "to": "ES4"}],
            "flows": [vl("V1", "500B", "ES1", "ES3"), vl("V2", "300B", "ES1", "ES3"), vl("V3", "400B", "ES2", "ES3"),
                      vl("W1", "500B", "ES1", "ES4"), vl("W2", "300B", "ES1", "ES4"), vl("W3", "800B", "ES2", "ES4")]
        });
        let (net, d) = load_network(&doc.to_string());
        let net = net.unwrap_or_else(|| panic!("{:?}", d.0));
        for grouping in [false, true] {
            let (lay, st) = check(&net, grouping);
            // V1 (flow 0) and W1 (flow 3) at the switch: their crossing with an upstream one.
            let at_switch = |f: usize| {
                let c = lay.flow_crossings[f]
                    .iter()
                    .map(|&(_, c)| c)
                    .find(|&c| lay.crossings[c].upstream.is_some());
                c.expect("V1 and W1 cross the switch")
            };
            let (v1, w1) = (at_switch(0), at_switch(3));
            let mut others = OtherGroups::new(&st);
            let seen_by = |others: &mut OtherGroups, c: usize| {
                format!("{:?}", others.of(&st, lay.crossings[c].queue, st.group_of[c]).cloned())
            };
            let (v, w) = (seen_by(&mut others, v1), seen_by(&mut others, w1));
            assert_ne!(v, w, "grouping {grouping}: V3 and W3 differ in burst, so must what V1 and W1 see");
            assert_eq!(w, format!("{:?}", others_afresh(&st, lay.crossings[w1].queue, st.group_of[w1])));
        }
        for seed in 0..40 {
            let kind = if seed % 2 == 0 {
                crate::generate::RandomSchedulers::Mixed
            } else {
                crate::generate::RandomSchedulers::Any
            };
            let (net, _) = crate::model::validate_spec(crate::generate::random_small(seed, kind));
            let net = net.expect("random networks validate");
            check(&net, false);
            check(&net, true);
        }
    }
}
