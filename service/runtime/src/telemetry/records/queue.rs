//! The records waiting for the writer: one bounded queue per thread that finishes calls, so
//! a push takes only that queue's lock (the writer's, for a swap, is the only other taker)
//! and writes memory the thread wrote a moment ago.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::CallRecord;

/// A queue's buffer as the writer hands it back: room for this many records, so a thread's
/// first calls do not grow it; past 16 times this (after a burst or a stall), it shrinks back.
const BUFFER: usize = 1024;

static NEXT_ID: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's queue in each [`Queues`] (one, but for tests that start several).
    static MINE: RefCell<Vec<(usize, Arc<Queue>)>> = const { RefCell::new(Vec::new()) };
}

/// One thread's records waiting for the writer.
#[derive(Debug, Default)]
struct Queue(Mutex<Vec<CallRecord>>);

/// Every thread's queue.
#[derive(Debug)]
pub struct Queues {
    /// Which [`MINE`] entry is this instance's.
    id: usize,
    all: Mutex<Vec<Arc<Queue>>>,
}

impl Default for Queues {
    fn default() -> Self {
        Self { id: NEXT_ID.fetch_add(1, Ordering::Relaxed), all: Mutex::default() }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Queues {
    /// Pushes `record` onto this thread's queue (made on the thread's first call); false when
    /// the queue holds `capacity` records already, or the thread is being torn down (its
    /// thread-locals gone). Never waits but for the writer's swap of the queue's buffer.
    pub fn push(&self, record: CallRecord, capacity: usize) -> bool {
        MINE.try_with(|mine| {
            let mut mine = mine.borrow_mut();
            let queue = match mine.iter().position(|(id, _)| *id == self.id) {
                Some(i) => &mine[i].1,
                None => {
                    let queue = Arc::new(Queue::default());
                    lock(&self.all).push(Arc::clone(&queue));
                    mine.push((self.id, queue));
                    &mine[mine.len() - 1].1
                }
            };
            let mut records = lock(&queue.0);
            let room = records.len() < capacity;
            if room {
                records.push(record);
            }
            room
        })
        .unwrap_or(false)
    }

    /// Takes every thread's records into `batch` (empty; the buffer the writer emptied): the
    /// first queue's buffer by a swap (one thread served them all, the usual case on one
    /// CPU), the others appended, then ordered by when they finished. Forgets the queues of
    /// threads that ended.
    pub fn take(&self, batch: &mut Vec<CallRecord>) {
        if batch.capacity() > 16 * BUFFER {
            batch.shrink_to(BUFFER);
        }
        let queues = {
            let mut all = lock(&self.all);
            all.retain(|q| Arc::strong_count(q) > 1 || !lock(&q.0).is_empty());
            all.clone()
        };
        let mut merged = 0;
        for queue in &queues {
            let mut records = lock(&queue.0);
            if records.is_empty() {
                continue;
            }
            if batch.is_empty() {
                // The buffer handed back has room for what this thread wrote last time.
                let room = records.len().max(BUFFER);
                std::mem::swap(&mut *records, batch);
                records.reserve(room);
            } else {
                batch.append(&mut records);
            }
            merged += 1;
        }
        if merged > 1 {
            // Each queue is in order already: a stable sort merges the runs.
            batch.sort_by_key(|r| r.finished);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::recent::tests::call;

    #[test]
    fn a_drain_orders_the_threads_records_by_when_they_finished() {
        let queues = Queues::default();
        for odd in [false, true] {
            let queue = Arc::new(Queue::default());
            lock(&queue.0).extend((0..6).filter(|n| (n % 2 == 1) == odd).map(call));
            lock(&queues.all).push(queue);
        }
        let mut batch = Vec::new();
        queues.take(&mut batch);
        assert_eq!(batch.iter().map(|r| r.at_ms).collect::<Vec<_>>(), [0, 1, 2, 3, 4, 5]);
        // The queues of ended threads (nobody else holds them) are forgotten once empty.
        queues.take(&mut batch);
        assert!(lock(&queues.all).is_empty());
    }

    #[test]
    fn records_of_the_same_millisecond_keep_the_order_they_finished_in() {
        // Two calls in one millisecond, the later one on the thread whose queue comes first.
        let queues = Queues::default();
        let (first, second) = (call(1), call(2));
        for record in [second, first] {
            let queue = Arc::new(Queue::default());
            lock(&queue.0).push(CallRecord { at_ms: 7, ..record });
            lock(&queues.all).push(queue);
        }
        let mut batch = Vec::new();
        queues.take(&mut batch);
        assert!(batch[0].finished < batch[1].finished);
    }

    #[test]
    fn a_full_queue_refuses() {
        let queues = Queues::default();
        assert!(queues.push(call(0), 2));
        assert!(queues.push(call(1), 2));
        assert!(!queues.push(call(2), 2));
        let mut batch = Vec::new();
        queues.take(&mut batch);
        assert_eq!(batch.len(), 2);
        assert!(queues.push(call(3), 2), "a drained queue takes records again");
    }
}
