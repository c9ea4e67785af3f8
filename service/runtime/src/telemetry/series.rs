//! Per-tool rate, error rate and latency quantiles over the last minutes, for the operator
//! console's charts. Fed from the runtime's own counters: every few seconds the console
//! reads the Prometheus text [`super::metrics::Metrics::render`] produces, and each point is
//! the difference to the previous reading, so the request path does no extra work.

use std::collections::{BTreeMap, VecDeque};

use serde::Serialize;

/// Outcomes counted as errors in the error rate.
const ERRORS: [&str; 3] = ["error", "tool_error", "cancelled"];

/// One interval of one tool.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Point {
    /// End of the interval (Unix milliseconds).
    pub at_ms: u64,
    /// Calls per second.
    pub rate: f64,
    /// Calls in the interval (to rank tools by their calls in the window).
    #[serde(skip)]
    pub calls: f64,
    /// Share of calls that failed (0..1).
    pub error_rate: f64,
    /// Median latency (milliseconds), `None` without calls.
    pub p50_ms: Option<f64>,
    /// 99th percentile latency (milliseconds), `None` without calls.
    pub p99_ms: Option<f64>,
}

/// Cumulative figures of one tool at one reading.
#[derive(Debug, Clone, Default, PartialEq)]
struct Reading {
    calls: f64,
    errors: f64,
    /// `(le, cumulative count)`, ascending `le`, `+Inf` last.
    buckets: Vec<(f64, f64)>,
}

/// The series of every tool seen, `capacity` points each.
#[derive(Debug)]
pub struct Series {
    capacity: usize,
    last: Option<(u64, BTreeMap<String, Reading>)>,
    points: BTreeMap<String, VecDeque<Point>>,
}

impl Series {
    /// Keeps `capacity` points per tool (15 min at one point per 5 s: 180).
    pub fn new(capacity: usize) -> Self {
        Self { capacity: capacity.max(1), last: None, points: BTreeMap::new() }
    }

    /// Adds one point per tool from a reading of the Prometheus text taken at `at_ms`.
    pub fn sample(&mut self, at_ms: u64, prometheus: &str) {
        let now = readings(prometheus);
        if let Some((then, before)) = &self.last {
            let secs = (at_ms.saturating_sub(*then) as f64 / 1000.0).max(0.001);
            for (tool, r) in &now {
                let zero = Reading::default();
                let b = before.get(tool).unwrap_or(&zero);
                let calls = (r.calls - b.calls).max(0.0);
                let errors = (r.errors - b.errors).max(0.0);
                let delta: Vec<(f64, f64)> = r
                    .buckets
                    .iter()
                    .map(|(le, n)| {
                        let was = b.buckets.iter().find(|(l, _)| l == le).map_or(0.0, |(_, c)| *c);
                        (*le, (n - was).max(0.0))
                    })
                    .collect();
                let point = Point {
                    at_ms,
                    rate: calls / secs,
                    calls,
                    error_rate: if calls > 0.0 { errors / calls } else { 0.0 },
                    p50_ms: quantile(&delta, 0.5).map(|s| s * 1000.0),
                    p99_ms: quantile(&delta, 0.99).map(|s| s * 1000.0),
                };
                let ring = self.points.entry(tool.clone()).or_default();
                if ring.len() == self.capacity {
                    ring.pop_front();
                }
                ring.push_back(point);
            }
        }
        self.last = Some((at_ms, now));
    }

    /// Every tool's points, oldest first.
    pub fn snapshot(&self) -> BTreeMap<String, Vec<Point>> {
        self.points.iter().map(|(t, p)| (t.clone(), p.iter().copied().collect())).collect()
    }

    /// How many tools have a series (were called since start or since their first call).
    pub fn tools(&self) -> usize {
        self.points.len()
    }

    /// The `n` tools with the most calls in the window among those whose name contains
    /// `filter` (ignoring case; empty matches all), busiest first, then by name; and how
    /// many matched. Bounded so that a catalog of thousands of tools, all called, still
    /// charts a page's worth (and sends no more over the live feed).
    pub fn busiest(&self, filter: &str, n: usize) -> (Vec<Busiest>, usize) {
        let filter = filter.trim().to_lowercase();
        let mut ranked: Vec<(&String, f64)> = self
            .points
            .iter()
            .filter(|(tool, _)| filter.is_empty() || tool.to_lowercase().contains(&filter))
            .map(|(tool, points)| (tool, points.iter().map(|p| p.calls).sum()))
            .collect();
        let matched = ranked.len();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        let top = ranked
            .into_iter()
            .take(n)
            .map(|(tool, calls)| Busiest {
                tool: tool.clone(),
                calls: calls.round() as u64,
                points: self.points[tool].iter().copied().collect(),
            })
            .collect();
        (top, matched)
    }
}

/// One charted tool: its calls in the window and its points, oldest first.
#[derive(Debug, Clone, Serialize)]
pub struct Busiest {
    /// The tool's name.
    pub tool: String,
    /// Calls in the window.
    pub calls: u64,
    /// Its points.
    pub points: Vec<Point>,
}

/// The `q` quantile (seconds) of cumulative bucket counts, linear inside the bucket (as
/// Prometheus' `histogram_quantile` does); the last finite bound when it falls in `+Inf`.
fn quantile(buckets: &[(f64, f64)], q: f64) -> Option<f64> {
    let total = buckets.last()?.1;
    if total <= 0.0 {
        return None;
    }
    let rank = q * total;
    let (mut lower, mut below) = (0.0, 0.0);
    for &(le, count) in buckets {
        if count >= rank {
            if le.is_infinite() {
                return Some(lower);
            }
            let inside = count - below;
            let share = if inside > 0.0 { (rank - below) / inside } else { 1.0 };
            return Some(lower + (le - lower) * share);
        }
        (lower, below) = (le, count);
    }
    Some(lower)
}

/// Per-tool cumulative calls, errors and latency buckets of `tools/call` in the text.
fn readings(text: &str) -> BTreeMap<String, Reading> {
    let mut out: BTreeMap<String, Reading> = BTreeMap::new();
    // Buckets summed over outcomes: `(tool, le) -> count`.
    let mut buckets: BTreeMap<(String, u64), (f64, f64)> = BTreeMap::new();
    for line in text.lines() {
        let Some((name, labels, value)) = parse(line) else { continue };
        if label(labels, "method") != Some("tools/call") {
            continue;
        }
        let Some(tool) = label(labels, "tool").filter(|t| !t.is_empty()) else { continue };
        match name {
            "mcp_server_requests_total" => {
                let r = out.entry(tool.to_owned()).or_default();
                r.calls += value;
                if label(labels, "outcome").is_some_and(|o| ERRORS.contains(&o)) {
                    r.errors += value;
                }
            }
            "mcp_server_request_duration_seconds_bucket" => {
                let le = match label(labels, "le") {
                    Some("+Inf") => f64::INFINITY,
                    Some(v) => match v.parse() {
                        Ok(v) => v,
                        Err(_) => continue,
                    },
                    None => continue,
                };
                let slot = buckets.entry((tool.to_owned(), le.to_bits())).or_insert((le, 0.0));
                slot.1 += value;
            }
            _ => {}
        }
    }
    for ((tool, _), (le, count)) in buckets {
        out.entry(tool).or_default().buckets.push((le, count));
    }
    for r in out.values_mut() {
        r.buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// `name{labels} value` of one exposition line.
fn parse(line: &str) -> Option<(&str, &str, f64)> {
    let open = line.find('{')?;
    let close = line.rfind('}')?;
    let value = line[close + 1..].split_whitespace().next()?.parse().ok()?;
    Some((&line[..open], &line[open + 1..close], value))
}

/// The value of `key` in `a="x",b="y"` (values here never hold quotes: method and tool
/// names, outcomes and bounds).
fn label<'a>(labels: &'a str, key: &str) -> Option<&'a str> {
    labels.split("\",").find_map(|pair| {
        let (k, v) = pair.split_once("=\"")?;
        (k.trim_start_matches(',') == key).then(|| v.trim_end_matches('"'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: &str = r#"mcp_server_requests_total{method="tools/call",tool="echo",outcome="ok"} 10
mcp_server_request_duration_seconds_bucket{method="tools/call",tool="echo",outcome="ok",le="0.001"} 10
mcp_server_request_duration_seconds_bucket{method="tools/call",tool="echo",outcome="ok",le="0.01"} 10
mcp_server_request_duration_seconds_bucket{method="tools/call",tool="echo",outcome="ok",le="+Inf"} 10
"#;
    const T1: &str = r#"mcp_server_requests_total{method="tools/call",tool="echo",outcome="ok"} 28
mcp_server_requests_total{method="tools/call",tool="echo",outcome="tool_error"} 2
mcp_server_requests_total{method="tools/list",tool="",outcome="ok"} 99
mcp_server_request_duration_seconds_bucket{method="tools/call",tool="echo",outcome="ok",le="0.001"} 10
mcp_server_request_duration_seconds_bucket{method="tools/call",tool="echo",outcome="ok",le="0.01"} 28
mcp_server_request_duration_seconds_bucket{method="tools/call",tool="echo",outcome="ok",le="+Inf"} 28
mcp_server_request_duration_seconds_bucket{method="tools/call",tool="echo",outcome="tool_error",le="0.001"} 0
mcp_server_request_duration_seconds_bucket{method="tools/call",tool="echo",outcome="tool_error",le="0.01"} 0
mcp_server_request_duration_seconds_bucket{method="tools/call",tool="echo",outcome="tool_error",le="+Inf"} 2
"#;

    #[test]
    fn points_are_the_differences_between_readings() {
        let mut s = Series::new(3);
        s.sample(1_000, T0);
        assert!(s.snapshot().is_empty(), "one reading is no interval yet");
        s.sample(11_000, T1);
        let echo = &s.snapshot()["echo"];
        assert_eq!(echo.len(), 1);
        let p = echo[0];
        assert_eq!(p.rate, 2.0, "20 calls in 10 s");
        assert_eq!(p.error_rate, 0.1);
        // 18 of the 20 new calls took 1-10 ms, 2 landed in +Inf.
        let p50 = p.p50_ms.unwrap();
        assert!(p50 > 1.0 && p50 < 10.0, "{p50}");
        assert_eq!(p.p99_ms, Some(10.0), "in +Inf: the last finite bound");
        assert!(!s.snapshot().contains_key(""), "non-tool methods are not series");
    }

    #[test]
    fn rings_keep_their_capacity() {
        let mut s = Series::new(2);
        for i in 0..5 {
            s.sample(i * 1000, T0);
        }
        assert_eq!(s.snapshot()["echo"].len(), 2);
        assert_eq!(s.snapshot()["echo"][1].rate, 0.0);
    }

    #[test]
    fn the_busiest_tools_come_first_and_the_list_is_bounded() {
        let line = |tool: &str, n: u32| {
            format!("mcp_server_requests_total{{method=\"tools/call\",tool=\"{tool}\",outcome=\"ok\"}} {n}\n")
        };
        let mut s = Series::new(10);
        s.sample(0, &(line("a", 0) + &line("b", 0) + &line("c", 0)));
        s.sample(5_000, &(line("a", 3) + &line("b", 30) + &line("c", 3)));
        s.sample(10_000, &(line("a", 4) + &line("b", 31) + &line("c", 9)));
        let (top, matched) = s.busiest("", 2);
        assert_eq!(matched, 3);
        let names: Vec<(&str, u64)> = top.iter().map(|b| (b.tool.as_str(), b.calls)).collect();
        assert_eq!(names, [("b", 31), ("c", 9)]);
        assert_eq!(top[0].points.len(), 2);
        let (top, matched) = s.busiest(" A ", 2);
        assert_eq!((top.len(), matched, top[0].tool.as_str()), (1, 1, "a"), "the filter ignores case and blanks");
    }
}
