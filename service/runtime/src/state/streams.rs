//! Open long-lived streams of one replica (`subscriptions/listen` and 2025-era GET streams),
//! capped per replica (`server.max_listen_streams`) and per authenticated caller
//! (`server.max_listen_streams_per_caller`). A stream holds a [`StreamSlot`] for its life;
//! dropping it gives the slot back. Anonymous streams count against the replica cap only:
//! there is no identity to tell anonymous clients apart (behind a balancer every peer
//! address is the balancer's).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Which cap refused a stream, how many streams it counted, and its setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamRefused {
    /// The setting to raise: `server.max_listen_streams` or `server.max_listen_streams_per_caller`.
    pub setting: &'static str,
    /// Streams open under that cap.
    pub open: usize,
    /// The cap.
    pub max: usize,
}

impl StreamRefused {
    /// Whether the caller's own cap refused (as opposed to the replica's).
    pub fn per_caller(&self) -> bool {
        self.setting == PER_CALLER
    }
}

const PER_REPLICA: &str = "server.max_listen_streams";
const PER_CALLER: &str = "server.max_listen_streams_per_caller";

/// The stream counts of one replica.
#[derive(Debug)]
pub struct Streams {
    max: usize,
    max_per_caller: usize,
    open: AtomicUsize,
    by_caller: Mutex<HashMap<Arc<str>, usize>>,
}

/// One open stream's place under the caps, given back on drop.
#[derive(Debug)]
pub struct StreamSlot {
    streams: Arc<Streams>,
    caller: Option<Arc<str>>,
}

impl Streams {
    /// Caps of `max` streams per replica and `max_per_caller` per authenticated caller.
    pub fn new(max: usize, max_per_caller: usize) -> Arc<Self> {
        Arc::new(Self { max, max_per_caller, open: AtomicUsize::new(0), by_caller: Mutex::default() })
    }

    /// Streams open now.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    /// A slot for one more stream of `caller` (`None`: anonymous), or which cap is full.
    pub fn acquire(self: &Arc<Self>, caller: Option<&str>) -> Result<StreamSlot, StreamRefused> {
        let open = self.open.fetch_add(1, Ordering::Relaxed);
        if open >= self.max {
            self.open.fetch_sub(1, Ordering::Relaxed);
            return Err(StreamRefused { setting: PER_REPLICA, open, max: self.max });
        }
        let caller = match caller {
            None => None,
            Some(c) => {
                let mut by_caller = self.by_caller.lock().expect("stream counts lock");
                let (key, n) = match by_caller.get_key_value(c) {
                    Some((k, n)) => (Arc::clone(k), *n),
                    None => (Arc::from(c), 0),
                };
                if n >= self.max_per_caller {
                    drop(by_caller);
                    self.open.fetch_sub(1, Ordering::Relaxed);
                    return Err(StreamRefused { setting: PER_CALLER, open: n, max: self.max_per_caller });
                }
                by_caller.insert(Arc::clone(&key), n + 1);
                Some(key)
            }
        };
        Ok(StreamSlot { streams: Arc::clone(self), caller })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        if let Some(c) = &self.caller {
            let mut by_caller = self.streams.by_caller.lock().expect("stream counts lock");
            // The caller's entry goes with its last stream: the map holds open streams only.
            match by_caller.get_mut(c) {
                Some(n) if *n > 1 => *n -= 1,
                _ => {
                    by_caller.remove(c);
                }
            }
        }
        self.streams.open.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_per_replica_and_per_caller_and_slots_come_back() {
        let s = Streams::new(3, 2);
        let a1 = s.acquire(Some("alice")).unwrap();
        let _a2 = s.acquire(Some("alice")).unwrap();
        let refused = s.acquire(Some("alice")).unwrap_err();
        assert_eq!(refused, StreamRefused { setting: PER_CALLER, open: 2, max: 2 });
        assert!(refused.per_caller());
        let _anon = s.acquire(None).unwrap();
        let full = s.acquire(Some("bob")).unwrap_err();
        assert_eq!(full, StreamRefused { setting: PER_REPLICA, open: 3, max: 3 });
        assert_eq!(s.open(), 3, "refusals hold nothing");
        drop(a1);
        let bob = s.acquire(Some("bob")).expect("alice's slot came back on drop");
        assert_eq!(s.open(), 3);
        drop(bob);
        assert_eq!(s.open(), 2);
        assert!(!s.by_caller.lock().unwrap().contains_key("bob"), "a caller without streams has no entry");
    }
}
