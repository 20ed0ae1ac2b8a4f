//! Times reading and validating a description: `cargo run --release --example load_timing FILE`.
use rtnetlab_core::model::{self, parse, Limits};
use std::time::Instant;
fn main() {
    let path = std::env::args().nth(1).expect("a description file");
    let reps: usize = std::env::args().nth(2).map_or(5, |r| r.parse().expect("repetitions"));
    let text = std::fs::read_to_string(&path).expect("readable");
    let format = parse::Format::from_extension(path.rsplit('.').next().unwrap_or("")).expect("yaml or json");
    let l = Limits::default();
    for _ in 0..reps {
        let t = Instant::now();
        let v = parse::parse(&text, format, &l).expect("parses");
        let t_parse = t.elapsed();
        let t = Instant::now();
        let mut diags = model::Diagnostics::default();
        let net = model::load_value_within(v, &l, &mut diags);
        let t_load = t.elapsed();
        assert!(net.is_some(), "{:?}", diags.0);
        println!("parse {t_parse:?} validate {t_load:?}");
    }
}
