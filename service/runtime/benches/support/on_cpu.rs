//! The benchmark thread's on-CPU time, which stays meaningful when other processes compete
//! for the cores (included by the benches that report it: `#[path] mod on_cpu;`).

use std::time::Duration;

/// Time this thread has spent running on a CPU (Linux: `/proc/thread-self/schedstat`).
pub fn on_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").expect("schedstat (Linux)");
    Duration::from_nanos(stat.split_whitespace().next().and_then(|n| n.parse().ok()).expect("schedstat format"))
}
