//! `--blind` means the order of frames inside a queue is unknown: its bounds must hold whatever
//! order the ports really serve. On random networks analysed as FIFO networks with `best
//! --blind`, the same networks are simulated with ports that do not serve in arrival order, each
//! flow a class of its own: static priority with a tagged flow lowest (and, in turn, each flow),
//! and deficit round robin between the flows. Every simulated delay stays within its blind bound.
//! The FIFO bounds, by contrast, are not meant to hold there, and the test shows that they are
//! sometimes passed, so that the blind property is not vacuous.

use rtnetlab_core::analysis::{run, Request};
use rtnetlab_core::generate::{random_small, RandomSchedulers};
use rtnetlab_core::model::{validate_spec, NetworkSpec, SchedulerConfig, TrafficClass};
use rtnetlab_core::sim::{simulate, FrameSizes, Release, SimConfig};
use rtnetlab_core::units::DataSize;

/// The network with every port serving its flows in an order other than FIFO: each flow its own
/// class, `tagged` lowest under static priority, or all of them round robin.
fn reordered(mut spec: NetworkSpec, tagged: usize, round_robin: bool) -> NetworkSpec {
    let n = spec.flows.len();
    spec.classes = (0..n)
        .map(|i| TrafficClass {
            name: format!("flow{i}"),
            // Lower is served first: the tagged flow last, the others in their order.
            priority: if i == tagged { n as u32 } else { i as u32 },
            description: None,
        })
        .collect();
    for (i, f) in spec.flows.iter_mut().enumerate() {
        f.class = Some(format!("flow{i}"));
    }
    for sw in spec.switches.iter_mut() {
        sw.scheduler = None;
    }
    if round_robin {
        let quanta = (0..n)
            .map(|i| (format!("flow{i}"), DataSize::from_bytes(200.0 + 300.0 * (i % 5) as f64)))
            .collect();
        spec.schedulers.insert("rr".into(), SchedulerConfig::Drr { quanta });
        spec.defaults.scheduler = "rr".into();
    } else {
        spec.defaults.scheduler = "static_priority".into();
    }
    spec
}

#[test]
fn blind_bounds_hold_whatever_the_order() {
    let (mut checked, mut fifo_passed) = (0u64, 0usize);
    for seed in 0..60u64 {
        let spec = random_small(2000 + seed, RandomSchedulers::Fifo);
        let fifo_net = validate_spec(spec.clone()).0.expect("random networks validate");
        let blind = run(
            &fifo_net,
            &Request {
                method: rtnetlab_core::analysis::Method::Best,
                grouping: false,
                blind: true,
                ..Default::default()
            },
        )
        .unwrap();
        // SFA iterated on its own and TFA's output bounds, blind.
        let iter = run(
            &fifo_net,
            &Request {
                method: rtnetlab_core::analysis::Method::SfaIter,
                grouping: false,
                blind: true,
                ..Default::default()
            },
        )
        .unwrap();
        let fifo =
            run(&fifo_net, &Request { method: rtnetlab_core::analysis::Method::Best, ..Default::default() })
                .unwrap();
        let n = spec.flows.len();
        for variant in 0..2 {
            let round_robin = variant == 1;
            let tagged = (seed as usize) % n;
            let net = validate_spec(reordered(spec.clone(), tagged, round_robin))
                .0
                .unwrap_or_else(|| panic!("seed {seed}: reordered network does not validate"));
            let release = if seed % 2 == 0 { Release::Synchronized } else { Release::Random };
            let cfg = SimConfig {
                duration_ns: 150_000_000,
                seed,
                release,
                frame_sizes: FrameSizes::Max,
                ..Default::default()
            };
            let sim = simulate(&net, &cfg).unwrap();
            for (((s, b), f), i) in sim.flows.iter().zip(&blind.flows).zip(&fifo.flows).zip(&iter.flows) {
                assert_eq!((&*s.flow, &*s.destination, &*s.plane), blind.flows.names_of(b));
                assert!(
                    s.latency.max_us <= b.delay_us,
                    "seed {seed} ({}): {} -> {} ({}): simulated {} us > blind bound {} us ({})",
                    if round_robin { "round robin" } else { "static priority" },
                    s.flow,
                    s.destination,
                    s.plane,
                    s.latency.max_us,
                    b.delay_us,
                    b.method
                );
                assert!(
                    s.latency.max_us <= i.delay_us,
                    "seed {seed}: {} -> {}: simulated {} us > sfa-iter-blind bound {} us",
                    s.flow,
                    s.destination,
                    s.latency.max_us,
                    i.delay_us
                );
                fifo_passed += (s.latency.max_us > f.delay_us) as usize;
                checked += s.latency.count;
            }
        }
    }
    assert!(checked > 10_000, "only {checked} frames checked");
    // The FIFO bounds do not hold there: the blind ones are needed, and the test can tell.
    assert!(fifo_passed > 0, "no FIFO bound passed: the reordering changed nothing");
}
