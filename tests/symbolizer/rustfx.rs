// Symbolizer fixture: Rust with generics, closures and inlining.
use std::collections::HashMap;

#[inline(always)]
fn mix(a: u64, b: u64) -> u64 {
    a.wrapping_mul(31) ^ (b >> 2) // LINE mix
}

#[inline(never)]
fn fold_all<F: Fn(u64) -> u64>(v: &[u64], f: F) -> u64 {
    v.iter().fold(0, |acc, &x| mix(acc, f(x)))
}

#[inline(never)]
pub fn rust_work(n: u64) -> u64 { // LINE rust_work
    let v: Vec<u64> = (0..n).collect();
    let mut m: HashMap<u64, String> = HashMap::new();
    for i in 0..n % 16 {
        m.insert(i, format!("{}", i * 3));
    }
    fold_all(&v, |x| x + m.len() as u64)
}

fn main() {
    let n = std::env::args().count() as u64 * 100;
    println!("{}", rust_work(n));
}
