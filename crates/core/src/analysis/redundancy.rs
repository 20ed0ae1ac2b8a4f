//! Redundancy management (ARINC 664 part 7): each frame of a VL goes out on every plane, the
//! copies at most `sending_skew` apart (0.5 ms), and the receiver keeps the first valid copy,
//! waiting at most SkewMax for the other.
//!
//! From per-plane bounds D_p (each measured from its copy's own emission) and best-case delays
//! b_p, for one (VL, destination):
//!
//! * both planes healthy, first copy wins: max over which copy leaves first of
//!   min(D_first, skew + D_second);
//! * one plane failed (what redundancy is for): max_p D_p + skew, the surviving copy having been
//!   the late one;
//! * arrival skew between the copies: skew + max_{p≠q}(D_p − b_q). Above SkewMax the receiver may
//!   take the late copy for a new frame, so it is checked.
//!
//! Seed 000's Corollary 7 is kept as `paper_cor7_us`, literally: D_VL1 + SkewMax when 0.5 ms >
//! SkewMax, else D_VL2, with VL1/VL2 the first and second plane (catalogue I-000-10: the split
//! compares the sending skew with SkewMax instead of the real arrival skew).

use super::results::{FlowBound, NamedRedundantBound, NamedRow, Names, RedundantBound, Rows};
use crate::model::{Network, Traffic};

impl NamedRow for RedundantBound {
    type Named<'a> = NamedRedundantBound<'a>;
    fn named<'a>(&'a self, names: &'a Names) -> NamedRedundantBound<'a> {
        NamedRedundantBound {
            flow: &names.flows[self.flow],
            destination: &names.nodes[self.destination],
            bound: self,
        }
    }
}

/// Combines the per-plane bounds of `flows` (any method, rows in route order) for every flow sent
/// on several planes.
pub fn combine(net: &Network, flows: &[FlowBound]) -> Rows<RedundantBound> {
    let skew = net.sending_skew * 1e6;
    let same =
        |a: usize, b: usize| flows[a].flow == flows[b].flow && flows[a].destination == flows[b].destination;
    let mut out = Vec::new();
    let mut i = 0;
    while i < flows.len() {
        // Rows of one (flow, destination) are consecutive: routes are listed destination by plane.
        let mut j = i + 1;
        while j < flows.len() && same(i, j) {
            j += 1;
        }
        if j - i > 1 {
            // One row per plane: delay bound D_p and best case b_p.
            let planes = &flows[i..j];
            let mut both: f64 = 0.0;
            let mut arrival_skew: f64 = 0.0;
            for (p, first) in planes.iter().enumerate() {
                for (q, second) in planes.iter().enumerate() {
                    if p != q {
                        both = both.max(first.delay_us.min(skew + second.delay_us));
                        arrival_skew = arrival_skew.max(skew + first.delay_us - second.best_case_us);
                    }
                }
            }
            let single = planes.iter().map(|r| r.delay_us).fold(0.0, f64::max) + skew;
            let skew_max_us = skew_max_of(net, &net.flows[flows[i].flow]) * 1e6;
            let paper =
                if skew > skew_max_us { planes[0].delay_us + skew_max_us } else { planes[1].delay_us };
            out.push(RedundantBound {
                flow: flows[i].flow,
                destination: flows[i].destination,
                delay_us: both,
                single_plane_delay_us: single,
                arrival_skew_us: arrival_skew,
                skew_max_us,
                skew_ok: arrival_skew <= skew_max_us,
                paper_cor7_us: paper,
            });
        }
        i = j;
    }
    Rows::new(net.names(), out)
}

fn skew_max_of(net: &Network, flow: &crate::model::FlowModel) -> f64 {
    match &flow.traffic {
        Traffic::VirtualLink { skew_max: Some(s), .. } => s.secs(),
        _ => net.skew_max,
    }
}
