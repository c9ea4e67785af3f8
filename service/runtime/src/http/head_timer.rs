//! hyper's HTTP/1 `header_read_timeout` on one timer per connection, instead of one per
//! request.
//!
//! hyper starts the head timer each time it waits for a request head, and drops it when the
//! head is in: with `hyper_util`'s `TokioTimer`, each request of a kept-alive connection
//! registers a timer with the runtime and removes it again (a lock on the runtime's timer
//! wheel each way), for a timeout that almost never fires. [`HeadTimer`] gives hyper the same
//! deadlines, cut at the same instant, from one runtime timer the connection keeps: a head
//! deadline later than the one that timer is armed for (the usual case: each request's comes
//! after the last one's) leaves the timer as it is. When it fires for an earlier head that
//! has since arrived, the head being waited for re-arms it for its own deadline, once per
//! `header_read_timeout` at most; a fire with no head being waited for wakes the connection's
//! task once for nothing.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::rt::{Sleep, Timer};

/// One connection's head timer (see the module doc). Only that connection's task polls it.
#[derive(Clone)]
pub struct HeadTimer(Arc<Mutex<Pin<Box<tokio::time::Sleep>>>>);

/// Not armed until hyper first waits for a head.
impl Default for HeadTimer {
    fn default() -> Self {
        // A deadline later than any head's, so the first head re-arms it.
        let unarmed = tokio::time::Instant::now() + Duration::from_secs(100 * 365 * 86_400);
        Self(Arc::new(Mutex::new(Box::pin(tokio::time::sleep_until(unarmed)))))
    }
}

impl Timer for HeadTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        self.sleep_until(Instant::now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        Box::pin(HeadDeadline { deadline: deadline.into(), timer: self.clone() })
    }
}

/// One head's deadline, on its connection's timer.
struct HeadDeadline {
    deadline: tokio::time::Instant,
    timer: HeadTimer,
}

impl Sleep for HeadDeadline {}

impl Future for HeadDeadline {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut timer = self.timer.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // Armed later than this deadline (the first head, or a deadline moved earlier).
        if timer.deadline() > self.deadline {
            timer.as_mut().reset(self.deadline);
        }
        loop {
            match timer.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(()) if timer.deadline() >= self.deadline => return Poll::Ready(()),
                // It fired for an earlier head, which has arrived since: this head's turn.
                Poll::Ready(()) => timer.as_mut().reset(self.deadline),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Polls `sleep` once.
    fn ready(sleep: &mut Pin<Box<dyn Sleep>>) -> bool {
        let waker = std::task::Waker::noop();
        sleep.as_mut().poll(&mut Context::from_waker(waker)).is_ready()
    }

    #[tokio::test(start_paused = true)]
    async fn each_head_is_cut_at_its_own_deadline_on_one_timer() {
        let timer = HeadTimer::default();
        // The paused clock: hyper reads `Timer::now`, which the runtime clock stands in for.
        let t0 = tokio::time::Instant::now().into_std();
        // The first head: cut at its deadline, not before.
        let mut first = timer.sleep_until(t0 + Duration::from_secs(10));
        assert!(!ready(&mut first));
        tokio::time::advance(Duration::from_secs(3)).await;
        assert!(!ready(&mut first));
        // It arrived; the next head's deadline is later than the timer's.
        drop(first);
        let mut second = timer.sleep_until(t0 + Duration::from_secs(13));
        assert!(!ready(&mut second));
        // The timer fires for the first head at 10 s: the second waits on until 13 s.
        tokio::time::advance(Duration::from_secs(8)).await;
        assert!(!ready(&mut second), "cut at the first head's deadline");
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(ready(&mut second), "not cut at its own deadline");
        // A deadline earlier than the one the timer is armed for re-arms it.
        let mut late = timer.sleep_until(t0 + Duration::from_secs(100));
        assert!(!ready(&mut late));
        let mut early = timer.sleep_until(t0 + Duration::from_secs(20));
        tokio::time::advance(Duration::from_secs(7)).await;
        assert!(ready(&mut early));
        assert!(!ready(&mut late));
    }
}
