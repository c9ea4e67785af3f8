//! Freed memory goes back to the system once a worker thread is idle.
//!
//! The allocator (mimalloc, see `alloc.rs`) keeps the pages a thread freed in that thread's
//! heap and returns them to its arenas, which give them back to the system after a delay,
//! only when that thread next allocates or frees. A replica that goes quiet after a burst
//! (5,000 streams closed, a large catalog parsed) would keep the burst's pages for as long as
//! it stays quiet. So a ticker advances an epoch once a second, and a worker that parks
//! (has nothing to do) past a new epoch collects its heap: at most once a second per thread,
//! never while it has work, and one relaxed load per park otherwise.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

static EPOCH: AtomicU32 = AtomicU32::new(0);

thread_local! {
    static SEEN: Cell<u32> = const { Cell::new(0) };
}

/// Hands this thread's free pages back to the allocator, which purges what stayed free
/// past its delay (mimalloc's `purge_delay`, 1 s), or at once when `now`.
#[allow(unsafe_code)]
pub fn collect(now: bool) {
    // SAFETY: `mi_collect` takes no pointer and has no precondition; it walks the calling
    // thread's own heap, which is initialised on first use.
    unsafe { libmimalloc_sys::mi_collect(now) }
}

/// The runtime's `on_thread_park`: collects when a new epoch has begun since this thread's
/// last collection.
pub fn on_park() {
    let epoch = EPOCH.load(Ordering::Relaxed);
    SEEN.with(|seen| {
        if seen.get() != epoch {
            seen.set(epoch);
            collect(false);
        }
    });
}

/// Advances the epoch once a second, for the life of the runtime.
pub async fn tick() {
    let mut every = tokio::time::interval(Duration::from_secs(1));
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        EPOCH.fetch_add(1, Ordering::Relaxed);
    }
}
