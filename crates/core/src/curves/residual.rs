//! Left-over (residual) service curves: what a server still guarantees to one flow or class once
//! the competing traffic is served.

use super::{Curve, Unbounded};

fn require_service(residual: Curve, what: &str, beta: &Curve, cross: &Curve) -> Result<Curve, Unbounded> {
    if residual.tail_slope() > 0.0 {
        Ok(residual)
    } else {
        Err(Unbounded::new(format!(
            "{what}: competing rate {} >= service rate {}",
            cross.tail_slope(),
            beta.tail_slope()
        )))
    }
}

/// Blind (arbitrary-multiplexing) left-over service `[β − α_cross]^+`, made non-decreasing:
/// the service left to a flow that may get the lowest priority at every instant
/// (Le Boudec–Thiran Theorem 6.2.1).
///
/// [`Unbounded`] if nothing is left in the long run (cross rate >= service rate).
pub fn arbitrary_residual(beta: &Curve, alpha_cross: &Curve) -> Result<Curve, Unbounded> {
    let r = beta.sub(alpha_cross).positive_part().non_decreasing_closure();
    require_service(r, "blind multiplexing", beta, alpha_cross)
}

/// FIFO left-over service for one member of the θ-family,
/// `β_θ(t) = [β(t) − α_cross(t − θ)]^+ 1_{t > θ}`, made non-decreasing; every `θ >= 0` gives a
/// valid service curve (Le Boudec–Thiran Proposition 6.4.1).
pub fn fifo_residual_theta(beta: &Curve, alpha_cross: &Curve, theta: f64) -> Result<Curve, Unbounded> {
    let r =
        beta.sub(&alpha_cross.shift_right(theta)).positive_part().zero_until(theta).non_decreasing_closure();
    require_service(r, "FIFO multiplexing", beta, alpha_cross)
}

/// The θ that DNC (`LeftOverService.fifoMux`) uses: the time the service curve needs to serve
/// the cross traffic's burst, `θ = sup { t : β(t) <= α_cross(0+) }`. For `β_{R,T}` and a token
/// bucket `(b, r)` it gives `β_{R−r, T + b/R}` (Le Boudec–Thiran Corollary 6.2.3). It does not
/// depend on the flow of interest; the oracle numbers of DNC's functional tests are reproduced
/// only with this choice.
pub fn fifo_theta(beta: &Curve, alpha_cross: &Curve) -> Option<f64> {
    beta.upper_inverse(alpha_cross.burst())
}

/// FIFO left-over service with DNC's choice of θ ([`fifo_theta`]).
pub fn fifo_residual(beta: &Curve, alpha_cross: &Curve) -> Result<Curve, Unbounded> {
    let theta = fifo_theta(beta, alpha_cross)
        .ok_or_else(|| Unbounded::new("FIFO multiplexing: the service never serves the cross burst"))?;
    fifo_residual_theta(beta, alpha_cross, theta)
}

/// Non-preemptive static priority: service left to one priority class,
/// `[β(t) − α_higher(t) − l_max]^+`, made non-decreasing, where `α_higher` is the aggregate
/// arrival curve of all higher-priority classes and `l_max` the largest frame of any lower
/// class, which may be in transmission when a frame of this class arrives
/// (Le Boudec–Thiran §6.2, non-preemptive priority node; Schmitt, Zdarsky, Fidler 2008).
pub fn static_priority_residual(
    beta: &Curve,
    alpha_higher: &Curve,
    l_max_lower: f64,
) -> Result<Curve, Unbounded> {
    let blocking = Curve::token_bucket(0.0, l_max_lower);
    let r = beta.sub(alpha_higher).sub(&blocking).positive_part().non_decreasing_closure();
    require_service(r, "static priority", beta, alpha_higher)
}

/// Latency-rate server (Stiliadis & Varma 1998): a scheduler with latency `θ` and allocated rate
/// `ρ` offers the rate-latency service curve `β_{ρ,θ}` to its flow (Le Boudec–Thiran §2.1.3).
/// WFQ, SCFQ, WF²Q, DRR and similar schedulers are modelled this way.
pub fn latency_rate_server(rate: f64, latency: f64) -> Curve {
    Curve::rate_latency(rate, latency)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approx(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
    }

    fn assert_rate_latency(c: &Curve, rate: f64, latency: f64) {
        assert!(approx(c.tail_slope(), rate), "rate {} != {rate}", c.tail_slope());
        let l = c.upper_inverse(0.0).unwrap();
        assert!(approx(l, latency), "latency {l} != {latency}");
        assert!(approx(c.value(latency + 2.0), 2.0 * rate));
    }

    #[test]
    fn blind_residual_of_rate_latency() {
        // β_{4,2} − γ_{1,1}: 3 (t − 3)^+ (NCBounds toy network, flow 0 at server 0).
        let r = arbitrary_residual(&Curve::rate_latency(4.0, 2.0), &Curve::token_bucket(1.0, 1.0)).unwrap();
        assert_rate_latency(&r, 3.0, 3.0);
        // β_{5,3} − γ_{3,2}: 2 (t − 8.5)^+.
        let r = arbitrary_residual(&Curve::rate_latency(5.0, 3.0), &Curve::token_bucket(3.0, 2.0)).unwrap();
        assert_rate_latency(&r, 2.0, 8.5);
    }

    #[test]
    fn blind_residual_overload() {
        let e = arbitrary_residual(&Curve::rate_latency(10.0, 10.0), &Curve::token_bucket(10.0, 25.0));
        assert!(e.unwrap_err().reason.contains("competing rate 10"));
    }

    #[test]
    fn fifo_residual_default_theta() {
        // β_{10,10}, cross γ_{5,25}: θ = 12.5, left-over β_{5,12.5} (DNC S_1SC_2F_2AC: flow 0
        // then sees 12.5 + 10/5 = 14.5).
        let b = Curve::rate_latency(10.0, 10.0);
        let x = Curve::token_bucket(5.0, 25.0);
        assert!(approx(fifo_theta(&b, &x).unwrap(), 12.5));
        let r = fifo_residual(&b, &x).unwrap();
        assert_rate_latency(&r, 5.0, 12.5);
    }

    #[test]
    fn fifo_residual_other_theta() {
        // θ = 20 > 12.5: [10(t − 10) − 25 − 5(t − 20)]^+ 1_{t>20} = (5t − 25)·1_{t>20}, i.e. a jump
        // to 75 at t = 20 then slope 5.
        let b = Curve::rate_latency(10.0, 10.0);
        let x = Curve::token_bucket(5.0, 25.0);
        let r = fifo_residual_theta(&b, &x, 20.0).unwrap();
        assert!(approx(r.left_limit(20.0), 0.0));
        assert!(approx(r.value(19.0), 0.0));
        assert!(approx(r.right_limit(20.0), 75.0));
        assert!(approx(r.value(22.0), 85.0));
        // θ = 0 gives the blind curve.
        let r0 = fifo_residual_theta(&b, &x, 0.0).unwrap();
        assert_rate_latency(&r0, 5.0, 25.0);
    }

    #[test]
    fn static_priority_low_and_high() {
        // Link β_{10,0}; high class γ_{2,4}; low class frames up to 3.
        let b = Curve::rate_latency(10.0, 0.0);
        // High: blocked by one low frame: [10t − 3]^+ = β_{10,0.3}.
        let high = static_priority_residual(&b, &Curve::zero(), 3.0).unwrap();
        assert_rate_latency(&high, 10.0, 0.3);
        // Low (lowest class, no blocking): [10t − 4 − 2t]^+ = β_{8,0.5}.
        let low = static_priority_residual(&b, &Curve::token_bucket(2.0, 4.0), 0.0).unwrap();
        assert_rate_latency(&low, 8.0, 0.5);
    }

    #[test]
    fn latency_rate_server_is_rate_latency() {
        assert_eq!(latency_rate_server(3.0, 2.0), Curve::rate_latency(3.0, 2.0));
    }
}
