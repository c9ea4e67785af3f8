//! `progress_pattern`: stderr lines that match become `notifications/progress` (MCP 2026-07-28 basic/patterns/progress § request-scoped notifications),
//! throttled, since the spec asks servers to rate-limit them.

use std::time::Duration;

use regex::Regex;
use tokio::time::Instant;

/// At most one notification per interval; a burst sends its latest value when the interval
/// is over or the stream ends.
const MIN_INTERVAL: Duration = Duration::from_millis(50);

/// Named groups the pattern may use.
const GROUPS: [&str; 3] = ["progress", "total", "message"];

/// A compiled `progress_pattern`.
#[derive(Debug, Clone)]
pub struct ProgressPattern {
    regex: Regex,
}

impl ProgressPattern {
    /// Compiles `pattern`; named groups other than `progress`, `total` and `message` are
    /// refused so that a misspelt group does not silently do nothing.
    pub fn parse(pattern: &str) -> Result<Self, String> {
        let regex = Regex::new(pattern).map_err(|e| format!("not a valid regular expression: {e}"))?;
        if let Some(other) = regex.capture_names().flatten().find(|n| !GROUPS.contains(n)) {
            return Err(format!("unknown group '(?P<{other}>...)'; the groups used are progress, total and message"));
        }
        Ok(Self { regex })
    }
}

/// One notification's values.
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    /// `progress`: the `progress` group, or the number of matching lines so far.
    pub progress: f64,
    /// `total`: the `total` group.
    pub total: Option<f64>,
    /// `message`: the `message` group, or the whole line.
    pub message: Option<String>,
}

/// Progress of one run.
#[derive(Debug)]
pub struct Progress<'a> {
    pattern: &'a ProgressPattern,
    matched: u64,
    last_sent: Option<Instant>,
    pending: Option<Update>,
}

impl<'a> Progress<'a> {
    /// Starts counting.
    pub fn new(pattern: &'a ProgressPattern) -> Self {
        Self { pattern, matched: 0, last_sent: None, pending: None }
    }

    /// Reads one stderr line; returns what to send now, if anything.
    pub fn line(&mut self, line: &str, now: Instant) -> Option<Update> {
        let caps = self.pattern.regex.captures(line)?;
        self.matched += 1;
        let number = |group| caps.name(group).and_then(|m| m.as_str().trim().parse::<f64>().ok());
        let progress = match caps.name("progress") {
            Some(_) => number("progress")?,
            None => self.matched as f64,
        };
        let message = caps.name("message").map_or(line.trim(), |m| m.as_str()).to_owned();
        let update = Update { progress, total: number("total"), message: Some(message).filter(|m| !m.is_empty()) };
        if self.last_sent.is_some_and(|t| now.duration_since(t) < MIN_INTERVAL) {
            self.pending = Some(update);
            return None;
        }
        self.last_sent = Some(now);
        self.pending = None;
        Some(update)
    }

    /// The last value held back by the throttle, once stderr ended.
    pub fn finish(&mut self) -> Option<Update> {
        self.pending.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn groups_counts_and_throttle() {
        let p = ProgressPattern::parse(r"^step (?P<progress>\d+)/(?P<total>\d+)(?: (?P<message>.*))?$").unwrap();
        let mut run = Progress::new(&p);
        let t0 = Instant::now();
        assert_eq!(
            run.line("step 1/4 fetching", t0),
            Some(Update { progress: 1.0, total: Some(4.0), message: Some("fetching".into()) })
        );
        assert_eq!(run.line("noise", t0), None);
        // Too soon: held back, then replaced by the next one.
        assert_eq!(run.line("step 2/4", t0 + Duration::from_millis(10)), None);
        assert_eq!(run.line("step 3/4", t0 + Duration::from_millis(20)), None);
        assert_eq!(run.finish().map(|u| u.progress), Some(3.0));
        assert_eq!(run.line("step 4/4", t0 + Duration::from_millis(80)).map(|u| u.progress), Some(4.0));
        assert_eq!(run.finish(), None);

        let counting = ProgressPattern::parse("^processed ").unwrap();
        let mut run = Progress::new(&counting);
        let u = run.line("processed a.txt", t0).unwrap();
        assert_eq!((u.progress, u.total, u.message.as_deref()), (1.0, None, Some("processed a.txt")));
        assert_eq!(run.line("processed b.txt", t0 + MIN_INTERVAL).unwrap().progress, 2.0);
    }

    #[test]
    fn refuses_bad_patterns() {
        assert!(ProgressPattern::parse("(").is_err());
        assert!(ProgressPattern::parse("(?P<percent>\\d+)").unwrap_err().contains("percent"));
    }
}
