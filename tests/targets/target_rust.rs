// target_rust: Rust functions with known call counts, traced by
// tests/integration/test_names.cpp to check that both Rust manglings
// (legacy, and v0 with -C symbol-mangling-version=v0) are demangled, shown
// short and selected by their demangled names.
//
//   target_rust [N]   (default 10)
//
//   r::shop::Widget::compute    N  an inherent method ("<r::shop::Widget>::compute" in v0)
//   r::shop::generic::<u8>      3  one instance of a generic function ...
//   r::shop::generic::<&str>    1  ... and another
//
// Prints "compute=N", "generic_u8=3", "generic_str=1". Built without
// optimisation, so every call is a real call.
mod shop {
    pub struct Widget {
        pub v: u64,
    }
    impl Widget {
        #[inline(never)]
        pub fn compute(&self, x: u64) -> u64 {
            self.v * x + 1
        }
    }
    #[inline(never)]
    pub fn generic<T: std::fmt::Debug>(t: T) -> usize {
        format!("{:?}", t).len()
    }
}

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10);
    let w = shop::Widget { v: 3 };
    let mut sum = 0;
    for i in 0..n {
        sum += w.compute(i);
    }
    let mut len = 0;
    for _ in 0..3 {
        len += shop::generic(5u8);
    }
    len += shop::generic("x");
    println!("compute={}", n);
    println!("generic_u8=3");
    println!("generic_str=1");
    println!("sum={} len={}", sum, len);
}
