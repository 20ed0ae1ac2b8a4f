//! The piecewise-linear curve type and its pointwise operations.
//!
//! One representation serves arrival curves (concave, staircase) and service curves (convex): a
//! value at the origin plus a polyline on `[0, ∞)`. Keeping `f(0)` apart from `f(0+)` is what lets a
//! token bucket be 0 at the origin and `b` right after it, as network calculus requires. A jump at
//! `x > 0` is written as two vertices with the same abscissa (left limit, then right limit), which
//! is all a staircase needs.

/// Relative tolerance used to merge vertices and to drop collinear ones.
const EPS: f64 = 1e-12;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= EPS * (1.0 + a.abs().max(b.abs()))
}

/// A vertex of a curve's polyline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Abscissa (time).
    pub x: f64,
    /// Ordinate (data).
    pub y: f64,
}

/// A piecewise-linear function on `[0, ∞)` with finite values.
///
/// `f(0)` is stored apart; the polyline starts at `(0, f(0+))`, is linear between consecutive
/// vertices, and continues after the last vertex with `tail_slope`. Unbounded results (an
/// unstable server) are never encoded in a curve: the operations that can produce them return
/// [`crate::curves::Unbounded`] instead, so an infinite bound always carries its reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    at_zero: f64,
    points: Vec<Point>,
    tail_slope: f64,
}

/// The pointwise operations [`Curve::pointwise`] knows.
#[derive(Debug, Clone, Copy)]
enum Op {
    Add,
    Sub,
    Min,
    Max,
}

impl Op {
    fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            Op::Add => a + b,
            // A difference of nearly equal values is cancellation noise: snap it to 0, or a
            // left-over curve that should be 0 up to its latency would look positive there.
            Op::Sub => {
                let d = a - b;
                if d.abs() <= EPS * a.abs().max(b.abs()) {
                    0.0
                } else {
                    d
                }
            }
            Op::Min => a.min(b),
            Op::Max => a.max(b),
        }
    }
}

impl Curve {
    /// Builds a curve from `f(0)`, the vertices (first at `x = 0`, holding `f(0+)`; abscissae
    /// non-decreasing, a repeated abscissa being a jump) and the slope after the last vertex.
    ///
    /// # Panics
    /// If the vertices are empty, do not start at 0, decrease in `x`, or hold a non-finite value:
    /// these are programming errors, not data errors.
    pub fn new(at_zero: f64, points: Vec<(f64, f64)>, tail_slope: f64) -> Curve {
        Curve::from_points(at_zero, points.into_iter().map(|(x, y)| Point { x, y }).collect(), tail_slope)
    }

    /// [`Curve::new`] from vertices already in place (the operations build them so: no copy).
    fn from_points(at_zero: f64, points: Vec<Point>, tail_slope: f64) -> Curve {
        assert!(!points.is_empty(), "a curve needs at least its vertex at 0");
        assert!(points[0].x == 0.0, "the first vertex must be at x = 0");
        assert!(at_zero.is_finite() && tail_slope.is_finite(), "curve values must be finite");
        for w in points.windows(2) {
            assert!(w[0].x <= w[1].x, "vertex abscissae must be non-decreasing");
        }
        for p in &points {
            assert!(p.x.is_finite() && p.y.is_finite(), "curve vertices must be finite");
        }
        let mut c = Curve { at_zero, points, tail_slope };
        c.normalize();
        c
    }

    /// `(burst, rate)` when the curve is a token bucket γ_{r,b} (the closed forms of the
    /// analyses apply then).
    pub fn as_token_bucket(&self) -> Option<(f64, f64)> {
        (self.at_zero == 0.0 && self.points.len() == 1 && self.points[0].x == 0.0)
            .then(|| (self.points[0].y, self.tail_slope))
    }

    /// `(rate, latency)` when the curve is a rate-latency curve β_{R,T}.
    pub fn as_rate_latency(&self) -> Option<(f64, f64)> {
        match self.points[..] {
            [Point { x, y }] if self.at_zero == 0.0 && x == 0.0 && y == 0.0 => Some((self.tail_slope, 0.0)),
            [Point { x: 0.0, y: 0.0 }, Point { x, y: 0.0 }] if self.at_zero == 0.0 => {
                Some((self.tail_slope, x))
            }
            _ => None,
        }
    }

    /// The zero curve (no arrivals, or no service).
    pub fn zero() -> Curve {
        // What `new` gives: one vertex is already normal.
        Curve { at_zero: 0.0, points: vec![Point { x: 0.0, y: 0.0 }], tail_slope: 0.0 }
    }

    /// Token bucket γ_{r,b}: 0 at the origin, `b + r t` for `t > 0` (Le Boudec–Thiran §1.2.2).
    pub fn token_bucket(rate: f64, burst: f64) -> Curve {
        Curve::new(0.0, vec![(0.0, burst)], rate)
    }

    /// Rate-latency service curve β_{R,T}(t) = R [t − T]^+ (Le Boudec–Thiran §1.3.1).
    pub fn rate_latency(rate: f64, latency: f64) -> Curve {
        if latency > 0.0 {
            Curve::new(0.0, vec![(0.0, 0.0), (latency, 0.0)], rate)
        } else {
            Curve::new(0.0, vec![(0.0, 0.0)], rate)
        }
    }

    /// Concave piecewise-linear arrival curve: the minimum of token buckets `(rate, burst)`
    /// (Le Boudec–Thiran §1.2.2; e.g. a flow shaped by its own bucket and by its link, `C t + L`).
    ///
    /// # Panics
    /// If `buckets` is empty.
    pub fn min_of_token_buckets(buckets: &[(f64, f64)]) -> Curve {
        let mut it = buckets.iter();
        let &(r, b) = it.next().expect("at least one token bucket");
        it.fold(Curve::token_bucket(r, b), |acc, &(r, b)| acc.min(&Curve::token_bucket(r, b)))
    }

    /// Convex piecewise-linear service curve: the maximum of rate-latency curves
    /// `(rate, latency)` (Le Boudec–Thiran §3.1.6, convex piecewise-linear functions).
    ///
    /// # Panics
    /// If `pieces` is empty.
    pub fn max_of_rate_latencies(pieces: &[(f64, f64)]) -> Curve {
        let mut it = pieces.iter();
        let &(r, t) = it.next().expect("at least one rate-latency piece");
        it.fold(Curve::rate_latency(r, t), |acc, &(r, t)| acc.max(&Curve::rate_latency(r, t)))
    }

    /// Staircase arrival curve `size · ⌈(t + tau) / period⌉` for `t > 0` (the GCRA(period, tau)
    /// constraint, Le Boudec–Thiran §1.2.2, function v_{T,τ}).
    ///
    /// The staircase is written out exactly over `steps` steps; after that it continues with its
    /// affine envelope `size (1 + (t + tau)/period)`, which touches the staircase at the corner of
    /// every step. The curve is therefore always a valid arrival curve, and bounds computed with it
    /// are exact whenever the busy period ends before the last written step.
    ///
    /// # Panics
    /// If `period <= 0`, `tau < 0` or `steps == 0`.
    pub fn staircase(period: f64, tau: f64, size: f64, steps: usize) -> Curve {
        assert!(period > 0.0 && tau >= 0.0 && steps > 0, "invalid staircase parameters");
        // Jumps happen where (t + tau)/period crosses an integer, i.e. at t = k period − tau.
        let first_jump_k = (tau / period).floor() as i64 + 1;
        let level0 = first_jump_k as f64; // ⌈(0+ + tau)/period⌉
        let mut pts = vec![(0.0, size * level0)];
        for i in 0..steps as i64 {
            let k = first_jump_k + i;
            let x = k as f64 * period - tau;
            let lvl = (k - first_jump_k) as f64 + level0;
            pts.push((x, size * lvl));
            pts.push((x, size * (lvl + 1.0)));
        }
        Curve::new(0.0, pts, size / period)
    }

    /// `f(0)`.
    pub fn at_zero(&self) -> f64 {
        self.at_zero
    }

    /// `f(0+)`: the burst of an arrival curve.
    pub fn burst(&self) -> f64 {
        self.points[0].y
    }

    /// The slope after the last vertex: the long-term rate.
    pub fn tail_slope(&self) -> f64 {
        self.tail_slope
    }

    /// The polyline vertices (first at `x = 0`, holding `f(0+)`).
    pub fn points(&self) -> &[Point] {
        &self.points
    }

    fn last(&self) -> Point {
        *self.points.last().expect("non-empty")
    }

    /// `f(t)`; at a jump `x > 0` this is the right limit.
    pub fn value(&self, t: f64) -> f64 {
        if t <= 0.0 {
            self.at_zero
        } else {
            self.right_limit(t)
        }
    }

    /// `f(t+)` for `t >= 0`.
    pub fn right_limit(&self, t: f64) -> f64 {
        // Last vertex with x <= t.
        let i = self.points.partition_point(|p| p.x <= t);
        let i = i.max(1) - 1;
        self.extend_from(i, t)
    }

    /// `f(t−)` for `t > 0`.
    pub fn left_limit(&self, t: f64) -> f64 {
        // First vertex with x >= t.
        self.left_limit_from(self.points.partition_point(|p| p.x < t), t)
    }

    /// `f(t−)` given `j`, the first vertex with `x >= t`.
    fn left_limit_from(&self, j: usize, t: f64) -> f64 {
        if j == self.points.len() {
            let p = self.last();
            return p.y + self.tail_slope * (t - p.x);
        }
        if self.points[j].x == t || j == 0 {
            return self.points[j].y;
        }
        interpolate(self.points[j - 1], self.points[j], t)
    }

    /// Value on the piece that starts at vertex `i`.
    fn extend_from(&self, i: usize, t: f64) -> f64 {
        let p = self.points[i];
        match self.points.get(i + 1) {
            Some(&q) if q.x > p.x => interpolate(p, q, t),
            Some(_) => p.y,
            None => p.y + self.tail_slope * (t - p.x),
        }
    }

    /// Whether the curve is non-decreasing (including `f(0) <= f(0+)`).
    pub fn is_non_decreasing(&self) -> bool {
        self.at_zero <= self.burst() + EPS
            && self.points.windows(2).all(|w| w[1].y >= w[0].y - EPS * (1.0 + w[0].y.abs()))
            && self.tail_slope >= 0.0
    }

    /// Whether the slopes of the polyline never decrease and it has no jump (a convex service
    /// curve in the sense of Le Boudec–Thiran §3.1.6, with `f(0) = f(0+)`).
    pub fn is_convex(&self) -> bool {
        if !close(self.at_zero, self.burst()) {
            return false;
        }
        let mut prev = f64::NEG_INFINITY;
        for s in self.slopes() {
            match s {
                None => return false,
                Some(s) if s < prev - EPS * (1.0 + prev.abs()) => return false,
                Some(s) => prev = s,
            }
        }
        self.tail_slope >= prev - EPS * (1.0 + prev.abs())
    }

    /// The largest convex curve below this one, through `(0, f(0))`: the lower convex hull of its
    /// vertices, ending with the curve's own tail slope. A lower bound of a service curve is a
    /// service curve, so this lets convex-only operations (the tandem convolution) take a
    /// non-convex service, such as a left-over one, at the cost of some tightness.
    pub fn convex_minorant(&self) -> Curve {
        let mut hull: Vec<(f64, f64)> = Vec::with_capacity(self.points.len() + 1);
        let vertices = std::iter::once((0.0, self.at_zero)).chain(self.points.iter().map(|p| (p.x, p.y)));
        for (x, y) in vertices {
            // Of the two sides of a jump, the lower one.
            if let Some(&(lx, ly)) = hull.last() {
                if x == lx {
                    if y >= ly {
                        continue;
                    }
                    hull.pop();
                }
            }
            // Drop the last vertex while it lies on or above the chord from the one before to (x, y).
            while let [.., (x1, y1), (x2, y2)] = hull[..] {
                if (y2 - y1) * (x - x1) >= (y - y1) * (x2 - x1) {
                    hull.pop();
                } else {
                    break;
                }
            }
            hull.push((x, y));
        }
        // The tail goes on for ever: a last piece steeper than it lies above the tail drawn from
        // the vertex before.
        while let [.., (x1, y1), (x2, y2)] = hull[..] {
            if y2 - y1 > self.tail_slope * (x2 - x1) {
                hull.pop();
            } else {
                break;
            }
        }
        Curve::new(hull[0].1, hull, self.tail_slope)
    }

    /// Whether the curve is concave on `(0, ∞)` (a jump is allowed only at the origin).
    pub fn is_concave(&self) -> bool {
        let mut prev = f64::INFINITY;
        for s in self.slopes() {
            match s {
                None => return false,
                Some(s) if s > prev + EPS * (1.0 + prev.abs()) => return false,
                Some(s) => prev = s,
            }
        }
        self.tail_slope <= prev + EPS * (1.0 + prev.abs())
    }

    /// Slope of each polyline piece; `None` for a jump.
    fn slopes(&self) -> impl Iterator<Item = Option<f64>> + '_ {
        self.points.windows(2).map(|w| {
            if w[1].x > w[0].x {
                Some((w[1].y - w[0].y) / (w[1].x - w[0].x))
            } else {
                None
            }
        })
    }

    /// Pointwise sum (aggregate of arrival curves; Le Boudec–Thiran §1.2).
    pub fn add(&self, other: &Curve) -> Curve {
        self.pointwise(other, Op::Add)
    }

    /// Pointwise difference.
    pub fn sub(&self, other: &Curve) -> Curve {
        self.pointwise(other, Op::Sub)
    }

    /// Pointwise minimum (also the min-plus convolution of two concave curves that are 0 at 0).
    pub fn min(&self, other: &Curve) -> Curve {
        self.pointwise(other, Op::Min)
    }

    /// Pointwise maximum.
    pub fn max(&self, other: &Curve) -> Curve {
        self.pointwise(other, Op::Max)
    }

    /// `[f]^+`, the positive part.
    pub fn positive_part(&self) -> Curve {
        self.max(&Curve::zero())
    }

    /// `k · f`.
    pub fn scale(&self, k: f64) -> Curve {
        let pts = self.points.iter().map(|p| Point { x: p.x, y: k * p.y }).collect();
        Curve::from_points(k * self.at_zero, pts, k * self.tail_slope)
    }

    /// `f + c` on `(0, ∞)`, `f(0)` kept.
    pub fn offset(&self, c: f64) -> Curve {
        let pts = self.points.iter().map(|p| Point { x: p.x, y: p.y + c }).collect();
        Curve::from_points(self.at_zero, pts, self.tail_slope)
    }

    /// `t ↦ f(t − d)` for `t > d` and `f(0)` on `[0, d]`: the curve delayed by `d`.
    pub fn shift_right(&self, d: f64) -> Curve {
        if d <= 0.0 {
            return self.clone();
        }
        let mut pts = Vec::with_capacity(self.points.len() + 2);
        pts.extend([Point { x: 0.0, y: self.at_zero }, Point { x: d, y: self.at_zero }]);
        pts.extend(self.points.iter().map(|p| Point { x: p.x + d, y: p.y }));
        Curve::from_points(self.at_zero, pts, self.tail_slope)
    }

    /// `t ↦ f(t + d)`: the curve advanced by `d`, its value at 0 being `f(d+)`.
    pub fn shift_left(&self, d: f64) -> Curve {
        if d <= 0.0 {
            return self.clone();
        }
        let start = self.right_limit(d);
        let mut pts = Vec::with_capacity(self.points.len() + 1);
        pts.push(Point { x: 0.0, y: start });
        pts.extend(self.points.iter().filter(|p| p.x > d).map(|p| Point { x: p.x - d, y: p.y }));
        Curve::from_points(start, pts, self.tail_slope)
    }

    /// The curve forced to 0 on `[0, theta]` (multiplication by `1_{t > theta}`).
    pub fn zero_until(&self, theta: f64) -> Curve {
        if theta <= 0.0 {
            let mut c = self.clone();
            c.at_zero = 0.0;
            return c;
        }
        let mut pts = Vec::with_capacity(self.points.len() + 3);
        pts.extend([
            Point { x: 0.0, y: 0.0 },
            Point { x: theta, y: 0.0 },
            Point { x: theta, y: self.right_limit(theta) },
        ]);
        pts.extend(self.points.iter().filter(|p| p.x > theta).copied());
        Curve::from_points(0.0, pts, self.tail_slope)
    }

    /// The curve with `f(0)` replaced (arrival curves are 0 at the origin by convention).
    pub fn with_at_zero(&self, v: f64) -> Curve {
        let mut c = self.clone();
        c.at_zero = v;
        c
    }

    /// The non-decreasing closure `t ↦ sup_{s <= t} f(s)`.
    ///
    /// A left-over service curve `[β − α]^+` need not be non-decreasing; its closure still is a
    /// service curve (Le Boudec–Thiran §6.2, Theorem 6.2.1 and the remark that follows) and is
    /// what the deviations expect.
    pub fn non_decreasing_closure(&self) -> Curve {
        let first = self.points[0];
        let mut m = self.at_zero.max(first.y);
        let mut out = Vec::with_capacity(self.points.len() + 2);
        out.push(Point { x: 0.0, y: m });
        for w in self.points.windows(2) {
            let (a, b) = (w[0], w[1]);
            if b.x == a.x {
                m = m.max(b.y);
                out.push(Point { x: b.x, y: m });
            } else if b.y > m {
                if a.y < m {
                    let xc = a.x + (m - a.y) / (b.y - a.y) * (b.x - a.x);
                    out.push(Point { x: xc, y: m });
                }
                out.push(b);
                m = b.y;
            } else {
                out.push(Point { x: b.x, y: m });
            }
        }
        let last = self.last();
        let mut tail = 0.0;
        if self.tail_slope > 0.0 {
            if last.y < m {
                out.push(Point { x: last.x + (m - last.y) / self.tail_slope, y: m });
            }
            tail = self.tail_slope;
        }
        Curve::from_points(self.at_zero, out, tail)
    }

    /// Lower pseudo-inverse `inf { t >= 0 : f(t) >= y }` of a non-decreasing curve, `None` if `f`
    /// never reaches `y` (Le Boudec–Thiran §3.1.7).
    pub fn lower_inverse(&self, y: f64) -> Option<f64> {
        if self.at_zero >= y {
            return Some(0.0);
        }
        let first = self.points[0];
        if first.y >= y {
            return Some(0.0);
        }
        for w in self.points.windows(2) {
            let (a, b) = (w[0], w[1]);
            if b.y >= y {
                return Some(if b.x == a.x { b.x } else { a.x + (y - a.y) / (b.y - a.y) * (b.x - a.x) });
            }
        }
        let last = self.last();
        (self.tail_slope > 0.0).then(|| last.x + (y - last.y) / self.tail_slope)
    }

    /// Upper pseudo-inverse `sup { t >= 0 : f(t) <= y }` of a non-decreasing curve, `None` if `f`
    /// stays at or below `y` for ever. Returns 0 when `f(0+) > y`.
    pub fn upper_inverse(&self, y: f64) -> Option<f64> {
        let first = self.points[0];
        if first.y > y {
            return Some(0.0);
        }
        for w in self.points.windows(2) {
            let (a, b) = (w[0], w[1]);
            if b.y > y {
                return Some(if b.x == a.x { b.x } else { a.x + (y - a.y) / (b.y - a.y) * (b.x - a.x) });
            }
        }
        let last = self.last();
        (self.tail_slope > 0.0).then(|| last.x + (y - last.y) / self.tail_slope)
    }

    /// Combines two curves pointwise. Both are linear between the union of their vertices, so
    /// evaluating both limits at every vertex is exact for `+` and `−`; `min` and `max`
    /// additionally need the crossings inside each interval and in the tail.
    ///
    /// The abscissae of both are merged in one walk (sorted, repeats dropped, this curve's first
    /// among equal ones) and each curve's limits are read with a cursor that moves forward only:
    /// the same vertices and the same arithmetic as searching each limit afresh.
    fn pointwise(&self, other: &Curve, op: Op) -> Curve {
        let crosses = matches!(op, Op::Min | Op::Max);
        let (a, b) = (&self.points[..], &other.points[..]);
        let mut pts: Vec<Point> = Vec::with_capacity(2 * (a.len() + b.len()) + 2);
        let (mut f, mut g) = (Limits::new(self), Limits::new(other));
        let mut prev_right: Option<(f64, f64, f64)> = None; // (x, f(x+), g(x+))
        let (mut i, mut j) = (0, 0);
        loop {
            if let Some((last, _, _)) = prev_right {
                while i < a.len() && a[i].x == last {
                    i += 1;
                }
                while j < b.len() && b[j].x == last {
                    j += 1;
                }
            }
            let x = match (a.get(i), b.get(j)) {
                (None, None) => break,
                (Some(p), None) => p.x,
                (None, Some(q)) => q.x,
                (Some(p), Some(q)) => {
                    if p.x <= q.x {
                        p.x
                    } else {
                        q.x
                    }
                }
            };
            let (fr, gr) = (f.right(x), g.right(x));
            if x > 0.0 {
                let (fl, gl) = (f.left(x), g.left(x));
                if let (true, Some((x0, f0, g0))) = (crosses, prev_right) {
                    push_crossing(&mut pts, x0, x, (f0, fl), (g0, gl));
                }
                pts.push(Point { x, y: op.apply(fl, gl) });
            }
            pts.push(Point { x, y: op.apply(fr, gr) });
            prev_right = Some((x, fr, gr));
        }
        let (x_last, f_last, g_last) = prev_right.expect("curves have a vertex at 0");
        let (sf, sg) = (self.tail_slope, other.tail_slope);
        let tail = match op {
            Op::Add => sf + sg,
            Op::Sub => sf - sg,
            Op::Min | Op::Max => {
                let d = f_last - g_last;
                let ds = sf - sg;
                // A crossing in the tail: the difference changes sign after x_last.
                if d != 0.0 && ds != 0.0 && d.signum() != ds.signum() {
                    let xc = x_last - d / ds;
                    let y = nearer_zero(f_last + sf * (xc - x_last), g_last + sg * (xc - x_last));
                    pts.push(Point { x: xc, y });
                }
                let eventually_f_above = ds > 0.0 || (ds == 0.0 && d >= 0.0);
                match (op, eventually_f_above) {
                    (Op::Min, true) | (Op::Max, false) => sg,
                    _ => sf,
                }
            }
        };
        Curve::from_points(op.apply(self.at_zero, other.at_zero), pts, tail)
    }

    /// Removes repeated vertices and vertices collinear with their neighbours, so that curves
    /// stay small through long chains of operations.
    fn normalize(&mut self) {
        // In place: the kept vertices are written over the first `w` (w never passes the vertex
        // being read).
        let out = &mut self.points;
        let mut w = 0;
        for i in 0..out.len() {
            let p = out[i];
            if w > 0 {
                let q = out[w - 1];
                if close(p.x, q.x) && close(p.y, q.y) {
                    continue;
                }
            }
            // Three vertices at one abscissa: keep only the outer two.
            if w >= 2 {
                let (a, b) = (out[w - 2], out[w - 1]);
                if a.x == b.x && b.x == p.x {
                    w -= 1;
                }
            }
            // Drop the middle of three collinear vertices with distinct abscissae.
            if w >= 2 {
                let (a, b) = (out[w - 2], out[w - 1]);
                if a.x < b.x && b.x < p.x && collinear(a, b, p) {
                    w -= 1;
                }
            }
            out[w] = p;
            w += 1;
        }
        out.truncate(w);
        // Snap abscissae that differ by rounding only, keeping the order.
        for i in 1..out.len() {
            if close(out[i].x, out[i - 1].x) {
                out[i].x = out[i - 1].x;
            }
        }
        // The last vertex is redundant when the piece before it has the tail's slope.
        while out.len() >= 2 {
            let (a, b) = (out[out.len() - 2], out[out.len() - 1]);
            if a.x < b.x && close((b.y - a.y) / (b.x - a.x), self.tail_slope) {
                out.pop();
            } else {
                break;
            }
        }
    }
}

/// A curve's one-sided limits at increasing abscissae: the vertex searches of
/// [`Curve::right_limit`] and [`Curve::left_limit`], resumed where the last one stopped.
struct Limits<'a> {
    curve: &'a Curve,
    /// Vertices with `x <= t` and with `x < t`, for the last `t` asked.
    at_or_before: usize,
    before: usize,
}

impl<'a> Limits<'a> {
    fn new(curve: &'a Curve) -> Limits<'a> {
        Limits { curve, at_or_before: 0, before: 0 }
    }

    /// `f(t+)`; `t` no smaller than at the last call.
    fn right(&mut self, t: f64) -> f64 {
        let pts = &self.curve.points;
        while self.at_or_before < pts.len() && pts[self.at_or_before].x <= t {
            self.at_or_before += 1;
        }
        self.curve.extend_from(self.at_or_before.max(1) - 1, t)
    }

    /// `f(t−)`; `t` no smaller than at the last call.
    fn left(&mut self, t: f64) -> f64 {
        let pts = &self.curve.points;
        while self.before < pts.len() && pts[self.before].x < t {
            self.before += 1;
        }
        self.curve.left_limit_from(self.before, t)
    }
}

fn interpolate(p: Point, q: Point, t: f64) -> f64 {
    if q.x == p.x {
        return q.y;
    }
    p.y + (q.y - p.y) * (t - p.x) / (q.x - p.x)
}

fn collinear(a: Point, b: Point, c: Point) -> bool {
    let s1 = (b.y - a.y) / (b.x - a.x);
    let s2 = (c.y - b.y) / (c.x - b.x);
    close(s1, s2)
}

/// Adds the point where `f − g` changes sign strictly inside `(x0, x1)`.
/// Adds the crossing of f and g between x0 and x1, if any. At the crossing both have the same
/// value; the one nearer zero is kept, so that `max(f, 0)` crosses at exactly 0.
fn push_crossing(pts: &mut Vec<Point>, x0: f64, x1: f64, (f0, f1): (f64, f64), (g0, g1): (f64, f64)) {
    let (d0, d1) = (f0 - g0, f1 - g1);
    if d0 != 0.0 && d1 != 0.0 && d0.signum() != d1.signum() {
        let u = d0 / (d0 - d1);
        let x = x0 + u * (x1 - x0);
        if x > x0 && x < x1 {
            pts.push(Point { x, y: nearer_zero(f0 + u * (f1 - f0), g0 + u * (g1 - g0)) });
        }
    }
}

fn nearer_zero(a: f64, b: f64) -> f64 {
    if a.abs() <= b.abs() {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approx(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
    }

    #[test]
    fn token_bucket_jumps_at_origin() {
        let a = Curve::token_bucket(2.0, 5.0);
        assert_eq!(a.value(0.0), 0.0);
        assert!(approx(a.value(1e-9), 5.0));
        assert!(approx(a.value(3.0), 11.0));
        assert!(a.is_concave());
    }

    /// A staircase service (0 until 2, then 4 until 4, then 8 ... at rate 2 from x = 4) has as its
    /// convex minorant the chords under the steps: (0,0) -> (2,0) -> (4,4), then slope 2. By hand:
    /// the corner (2,4) of the first step lies above the chord (2,0)-(4,4), the right limit (4,8)
    /// above its left limit (4,4); the last chord's slope 2 equals the tail's, so nothing is cut.
    #[test]
    fn convex_minorant_of_a_staircase() {
        let s = Curve::new(0.0, vec![(0.0, 0.0), (2.0, 0.0), (2.0, 4.0), (4.0, 4.0), (4.0, 8.0)], 2.0);
        assert!(!s.is_convex());
        let m = s.convex_minorant();
        assert!(m.is_convex());
        for (x, y) in [(0.0, 0.0), (1.0, 0.0), (2.0, 0.0), (3.0, 2.0), (4.0, 4.0), (6.0, 8.0)] {
            assert!(approx(m.value(x), y), "at {x}: {} != {y}", m.value(x));
        }
        // Below the curve everywhere, and convex curves are their own minorant.
        for i in 0..100 {
            let x = i as f64 * 0.1;
            assert!(m.value(x) <= s.value(x) + 1e-12);
        }
        let b = Curve::rate_latency(4.0, 2.0);
        assert_eq!(b.convex_minorant(), b);
        // A last piece steeper than the tail is replaced by the tail from the vertex before.
        let steep = Curve::new(0.0, vec![(0.0, 0.0), (1.0, 0.0), (2.0, 10.0)], 1.0);
        let m = steep.convex_minorant();
        assert!(approx(m.value(2.0), 1.0) && approx(m.value(12.0), 11.0));
    }

    #[test]
    fn rate_latency_values() {
        let b = Curve::rate_latency(4.0, 2.0);
        assert_eq!(b.value(1.0), 0.0);
        assert!(approx(b.value(5.0), 12.0));
        assert!(b.is_convex());
        assert_eq!(b.upper_inverse(0.0), Some(2.0));
        assert_eq!(b.lower_inverse(0.0), Some(0.0));
        assert_eq!(b.lower_inverse(8.0), Some(4.0));
    }

    #[test]
    fn min_of_buckets_is_concave_with_the_expected_kink() {
        // min(5 + t, 1 + 3t): kink at t = 2, value 7.
        let a = Curve::min_of_token_buckets(&[(1.0, 5.0), (3.0, 1.0)]);
        assert!(a.is_concave());
        assert!(approx(a.value(2.0), 7.0));
        assert!(approx(a.value(1.0), 4.0));
        assert!(approx(a.value(4.0), 9.0));
        assert!(approx(a.burst(), 1.0));
        assert_eq!(a.tail_slope(), 1.0);
    }

    #[test]
    fn max_of_rate_latencies_is_convex() {
        // max(2 (t − 1), 5 (t − 3)): kink at t = 13/3.
        let b = Curve::max_of_rate_latencies(&[(2.0, 1.0), (5.0, 3.0)]);
        assert!(b.is_convex());
        assert!(approx(b.value(13.0 / 3.0), 20.0 / 3.0));
        assert!(approx(b.value(6.0), 15.0));
        assert!(approx(b.value(2.0), 2.0));
    }

    #[test]
    fn sum_and_difference() {
        let a = Curve::token_bucket(1.0, 2.0).add(&Curve::token_bucket(3.0, 4.0));
        assert!(approx(a.value(2.0), 14.0));
        assert_eq!(a.value(0.0), 0.0);
        let d = Curve::rate_latency(5.0, 1.0).sub(&Curve::token_bucket(1.0, 2.0));
        assert!(approx(d.value(3.0), 10.0 - 5.0));
        assert!(approx(d.value(0.5), -2.5));
    }

    #[test]
    fn max_inserts_the_crossing() {
        let d = Curve::rate_latency(5.0, 1.0).sub(&Curve::token_bucket(1.0, 2.0)).positive_part();
        // 5(t − 1) − 2 − t = 4t − 7, zero at 7/4.
        assert!(approx(d.value(7.0 / 4.0), 0.0));
        assert!(approx(d.value(1.0), 0.0));
        assert!(approx(d.value(3.0), 5.0));
        assert_eq!(d.upper_inverse(0.0), Some(1.75));
    }

    #[test]
    fn shifts_and_zeroing() {
        let a = Curve::token_bucket(2.0, 3.0);
        let s = a.shift_right(4.0);
        assert_eq!(s.value(3.9), 0.0);
        assert_eq!(s.left_limit(4.0), 0.0);
        assert!(approx(s.right_limit(4.0), 3.0));
        assert!(approx(s.value(5.0), 5.0));
        let l = Curve::rate_latency(2.0, 3.0).shift_left(5.0);
        assert!(approx(l.value(0.0), 4.0));
        assert!(approx(l.value(1.0), 6.0));
        let z = Curve::token_bucket(1.0, 1.0).zero_until(2.0);
        assert_eq!(z.left_limit(2.0), 0.0);
        assert!(approx(z.right_limit(2.0), 3.0));
        assert!(approx(z.value(3.0), 4.0));
    }

    #[test]
    fn closure_flattens_dips() {
        // Up to 4 at t = 2, down to 0 at t = 4, then slope 1: closure stays at 4 until t = 8.
        let c = Curve::new(0.0, vec![(0.0, 0.0), (2.0, 4.0), (4.0, 0.0)], 1.0);
        let m = c.non_decreasing_closure();
        assert!(approx(m.value(3.0), 4.0));
        assert!(approx(m.value(8.0), 4.0));
        assert!(approx(m.value(10.0), 6.0));
        assert!(m.is_non_decreasing());
    }

    #[test]
    fn staircase_matches_gcra_function() {
        // v_{25,4}(t) = ceil((t + 4)/25) for t > 0.
        let s = Curve::staircase(25.0, 4.0, 1.0, 4);
        assert_eq!(s.value(0.0), 0.0);
        assert!(approx(s.value(0.5), 1.0));
        assert!(approx(s.left_limit(21.0), 1.0));
        assert!(approx(s.right_limit(21.0), 2.0));
        assert!(approx(s.value(30.0), 2.0));
        assert!(approx(s.value(50.0), 3.0));
        // Past the written steps: the affine envelope 1 + (t + 4)/25.
        assert!(approx(s.value(96.0), 5.0));
        assert!(approx(s.value(200.0), 1.0 + 204.0 / 25.0));
    }
}
