// A Rust target with a known hot path: main -> worker -> hot_loop.
#[inline(never)]
fn hot_loop(n: u64) -> u64 {
    let mut s: u64 = 0;
    for i in 0..n {
        s = s.wrapping_add(i.wrapping_mul(i) ^ (s >> 3));
    }
    s
}

#[inline(never)]
fn worker() -> u64 {
    std::hint::black_box(hot_loop(std::hint::black_box(50_000_000))) + 1
}

fn main() {
    let mut x: u64 = 0;
    loop {
        x = x.wrapping_add(worker());
        std::hint::black_box(x);
    }
}
