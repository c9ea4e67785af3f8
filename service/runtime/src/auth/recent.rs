//! The tokens a worker thread verified or found last, so that a client reusing its token on
//! a keep-alive connection is recognised by comparing bytes: no hash of the whole token (the
//! shared cache's SipHash of a ~700-byte JWT, with its bookkeeping, was 4 k instructions per
//! call), no lock, no await. Entries belong to one [`super::Authenticator`] (a configuration
//! load); the caller checks the verdict's `exp` on every hit.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::Verified;

/// Tokens each thread remembers (a thread serves many connections, mostly of few clients).
const SLOTS: usize = 4;

/// Numbers each authenticator, so a thread's entries never outlive their configuration.
static LOADS: AtomicU64 = AtomicU64::new(1);

/// `(load, token, verdict)`.
type Entry = (u64, Box<str>, Arc<Verified>);

thread_local! {
    /// The most recent first.
    static RECENT: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
}

/// A number no other authenticator of this process has.
pub(super) fn next_load() -> u64 {
    LOADS.fetch_add(1, Ordering::Relaxed)
}

/// What `read` takes from the verdict this thread remembers for `token` under `load`
/// (read in place: no count of the verdict taken and given back).
pub(super) fn find<T>(load: u64, token: &[u8], read: impl FnOnce(&Verified) -> T) -> Option<T> {
    RECENT.with_borrow(|r| r.iter().find(|(l, t, _)| *l == load && t.as_bytes() == token).map(|(_, _, v)| read(v)))
}

/// Remembers `verdict` for `token`, forgetting the oldest entry when full.
pub(super) fn remember(load: u64, token: &str, verdict: &Arc<Verified>) {
    RECENT.with_borrow_mut(|r| {
        r.retain(|(l, t, _)| !(*l == load && **t == *token));
        r.truncate(SLOTS - 1);
        r.insert(0, (load, token.into(), Arc::clone(verdict)));
    });
}

/// Forgets `token` (its verdict expired).
pub(super) fn forget(load: u64, token: &[u8]) {
    RECENT.with_borrow_mut(|r| r.retain(|(l, t, _)| !(*l == load && t.as_bytes() == token)));
}

#[cfg(test)]
mod tests {
    use mcp_adapter_api::Identity;

    use super::*;

    fn verdict() -> Arc<Verified> {
        Arc::new(Verified::new(Identity::new("ada"), u64::MAX, 0))
    }

    #[test]
    fn a_thread_finds_its_last_tokens_of_the_same_load_only() {
        let (load, reloaded) = (next_load(), next_load());
        remember(load, "t1", &verdict());
        let found = |load, token: &[u8]| find(load, token, |_| ()).is_some();
        assert!(found(load, b"t1"));
        assert!(!found(reloaded, b"t1"), "a reload starts afresh");
        assert!(!found(load, b"t2"));
        std::thread::spawn(move || assert!(find(load, b"t1", |_| ()).is_none(), "each thread its own")).join().unwrap();
        for i in 0..SLOTS {
            remember(load, &format!("x{i}"), &verdict());
        }
        assert!(!found(load, b"t1"), "the oldest goes first");
        forget(load, b"x0");
        assert!(!found(load, b"x0"));
        assert!(found(load, b"x1"));
    }
}
