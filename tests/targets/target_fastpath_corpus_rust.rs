// The fast path's safety corpus, Rust part (issue 35,
// tests/integration/test_fastpath_corpus.cpp): panics unwinding through
// traced frames in threads, caught by catch_unwind, in a program that
// waits to be attached. It reads a line from stdin (the test attaches
// atrace meanwhile), runs 4 threads of ROUNDS rounds, prints what it
// counted, reads another line (the test ends atrace), then exits.
//
//   target_fastpath_corpus_rust ROUNDS
//     each round: catcher() calls middle(3), which recurses to panicker(),
//     which panics on 3 rounds of 4; each middle() frame holds a value
//     whose Drop runs during the unwind. Built without optimisation, so
//     every call is a real call.
use std::io::Read;
use std::panic;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

static DROPPED: AtomicU64 = AtomicU64::new(0);

struct Guard;
impl Drop for Guard {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}

#[inline(never)]
#[no_mangle]
pub fn panicker(round: u64) -> u64 {
    if round % 4 == 3 {
        return round;
    }
    panic!("round {}", round);
}

#[inline(never)]
#[no_mangle]
pub fn middle(depth: u64, round: u64) -> u64 {
    let _g = Guard;
    let r = if depth == 0 { panicker(round) } else { middle(depth - 1, round) };
    r + 1
}

#[inline(never)]
#[no_mangle]
pub fn catcher(round: u64) -> Option<u64> {
    panic::catch_unwind(|| middle(3, round)).ok()
}

fn wait_line() {
    let mut byte = [0u8; 1];
    let mut stdin = std::io::stdin();
    while let Ok(1) = stdin.read(&mut byte) {
        if byte[0] == b'\n' {
            break;
        }
    }
}

fn main() {
    let rounds: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100);
    // Quiet panics: the default hook's message would race between threads.
    panic::set_hook(Box::new(|_| {}));
    wait_line();
    let caught = Arc::new(AtomicU64::new(0));
    let mut sum = 0;
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let caught = caught.clone();
            thread::spawn(move || {
                let mut s = 0;
                for i in 0..rounds {
                    match catcher(i) {
                        Some(v) => s += v,
                        None => {
                            caught.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                s
            })
        })
        .collect();
    for w in workers {
        sum += w.join().unwrap();
    }
    println!(
        "sum={} caught={} dropped={}",
        sum,
        caught.load(Ordering::Relaxed),
        DROPPED.load(Ordering::Relaxed)
    );
    wait_line();
}
