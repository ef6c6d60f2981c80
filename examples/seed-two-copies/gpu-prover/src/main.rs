//! Stand-in for the prover binary of the founding story: it times one "proof" made by the native library.
use std::time::Instant;

fn main() {
    let n: u32 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1 << 20);
    let start = Instant::now();
    let digest = prover_sys::prove(n);
    println!("proof digest {digest:016x} for n={n} in {:?}", start.elapsed());
}
