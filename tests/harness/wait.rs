//! Waiting for what happens asynchronously (a log line, a span, a task status, a process
//! exit), with a deadline and a message that shows the state when it runs out.

use std::future::Future;
use std::time::{Duration, Instant};

/// How often [`eventually`] looks again.
const POLL: Duration = Duration::from_millis(50);

/// Polls `probe` until it yields `Some`, for at most `within`, and returns the value. When the
/// time runs out it panics with `what()`, built only then so that it can show the last state.
pub async fn eventually<T, F>(within: Duration, what: impl FnOnce() -> String, mut probe: impl FnMut() -> F) -> T
where
    F: Future<Output = Option<T>>,
{
    let end = Instant::now() + within;
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        assert!(Instant::now() < end, "{}", what());
        tokio::time::sleep(POLL).await;
    }
}

/// [`eventually`] for a plain condition.
pub async fn until(within: Duration, what: impl FnOnce() -> String, mut cond: impl FnMut() -> bool) {
    eventually(within, what, || std::future::ready(cond().then_some(()))).await;
}
