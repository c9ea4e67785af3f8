//! Rate limits per caller × tool and per tool (GCRA): cluster-wide when Redis is configured and
//! reachable, per replica otherwise (during an outage each replica allows the full budget, so
//! the cluster allows at most replicas × budget). Cluster-wide, a replica leases budget ahead of
//! use (`rate_limits.lease_ms`, the default) and spends it locally, so most calls cost no Redis
//! round trip; with `lease_ms = 0` every call is one atomic script.

use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::redis::Redis;
use crate::config::{Limit, ToolLimits};
use crate::telemetry::metrics::Metrics;
use keyed::Keyed;

impl Limit {
    /// Microseconds between calls at the sustained rate.
    fn emission_us(self) -> u64 {
        (u64::try_from(self.per.as_micros()).unwrap_or(u64::MAX) / u64::from(self.rate.max(1))).max(1)
    }

    /// How far ahead of now the theoretical arrival time may run.
    fn tolerance_us(self) -> u64 {
        self.emission_us() * u64::from(self.burst.max(1))
    }
}

/// Which limit refused a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The caller's budget for this tool.
    PerCaller,
    /// The tool's budget across all callers.
    Global,
}

/// A refused call: which limit, and when to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limited {
    /// The limit that refused.
    pub scope: Scope,
    /// Wait at least this long.
    pub retry_after: Duration,
}

/// Takes budget for up to two limits at once and only spends when both allow (one round
/// trip): for each key, `want` calls' worth of GCRA time or as many as fit (at least one),
/// answering `{0, granted...}`, or `{i, wait_us}` when key `i` has no room for one call.
/// With `want = 1` this is the plain GCRA check of one call.
const SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local grants, news = {}, {}
for i = 1, #KEYS do
  local emission = tonumber(ARGV[3 * i - 2])
  local tolerance = tonumber(ARGV[3 * i - 1])
  local want = tonumber(ARGV[3 * i])
  local tat = tonumber(redis.call('GET', KEYS[i]) or now)
  if tat < now then tat = now end
  local room = math.floor((now + tolerance - tat) / emission)
  if room < 1 then
    return {i, tat + emission - now - tolerance}
  end
  grants[i] = math.min(want, room)
  news[i] = tat + grants[i] * emission
end
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], news[i], 'PX', math.ceil((news[i] - now) / 1000) + 1)
end
return {0, unpack(grants)}
";

/// Budget of one key taken from Redis ahead of use. Every granted call was spent in Redis
/// when granted and is used within `lease` of that or dropped, so over any window the
/// cluster runs at most `rate × lease` calls more than the limit allows (see docs/scaling.md).
#[derive(Debug, Clone, Copy)]
struct Lease {
    /// Calls left to spend locally.
    left: u32,
    /// How many were granted.
    granted: u32,
    /// When (the limiter's µs), and when the unspent ones are dropped.
    at: u64,
    expires: u64,
    /// When the request for the next lease left, while it is on its way.
    refill: Option<u64>,
}

impl Lease {
    /// The size of the next lease for `limit`: what this replica spent per `lease` lately
    /// (from the last lease: calls used over the time they took), at least 1, at most a
    /// quarter of the burst (other replicas need room too) and never more than the limit
    /// grants in one lease time.
    fn next_size(l: &Lease, limit: Limit, lease_us: u64, now: u64) -> u32 {
        if l.granted == 0 {
            return 1;
        }
        let used = u64::from(l.granted - l.left);
        let elapsed = now.saturating_sub(l.at).max(1_000);
        let recent = (used * lease_us).div_ceil(elapsed);
        let cap = (u64::from(limit.burst) / 4).min(lease_us.div_ceil(limit.emission_us())).max(1);
        u32::try_from(recent.clamp(1, cap)).unwrap_or(1)
    }

    /// A request for the next lease is on its way (one that has not come back within a lease
    /// time was abandoned: its call was cancelled, say).
    fn refilling(&self, now: u64, lease_us: u64) -> bool {
        self.refill.is_some_and(|sent| now.saturating_sub(sent) < lease_us)
    }
}

/// One key's request to Redis on a call: `want` calls' worth, and whether that is the next
/// lease (`refill`) or this call alone.
#[derive(Debug, Clone, Copy)]
struct Need {
    check: usize,
    want: u32,
    refill: bool,
}

/// `rl:{tool}` (`rl:{tool}:caller` per caller) with the tool's own braces escaped: both keys
/// of a tool carry this hash tag, so the one script touches one slot of a Redis Cluster (a
/// key's hash tag is the text between its first `{` and the next `}`). Escaping keeps distinct
/// tools distinct. Built only for a round trip to Redis.
fn limit_key(tool: &str, caller: Option<&str>) -> String {
    let mut key = String::with_capacity(tool.len() + caller.map_or(0, |c| c.len() + 1) + 5);
    key.push_str("rl:{");
    for c in tool.chars() {
        match c {
            '%' => key.push_str("%25"),
            '{' => key.push_str("%7B"),
            '}' => key.push_str("%7D"),
            c => key.push(c),
        }
    }
    key.push('}');
    if let Some(caller) = caller {
        key.push(':');
        key.push_str(caller);
    }
    key
}

/// One limit a call is checked against.
#[derive(Debug, Clone, Copy)]
struct Check<'a> {
    tool: &'a str,
    /// The caller, for a per-caller limit; `None` for the tool's global one.
    caller: Option<&'a str>,
    limit: Limit,
    scope: Scope,
}

/// The limits of one call at fixed slots, the caller's then the tool's (`Need::check` and
/// the `taken` flags index them): no allocation per call.
type Checks<'a> = [Option<Check<'a>>; 2];

/// The checks that are set, with their slots.
fn each<'c, 'a>(checks: &'c Checks<'a>) -> impl Iterator<Item = (usize, &'c Check<'a>)> {
    checks.iter().enumerate().filter_map(|(i, c)| Some((i, c.as_ref()?)))
}

/// Entries a limiter keeps before it drops those no longer in use.
const MAX_ENTRIES: usize = 100_000;

/// The limiter of one replica.
#[derive(Debug)]
pub struct RateLimiter {
    redis: Option<Arc<Redis>>,
    script: redis::Script,
    local: Mutex<Keyed<u64>>,
    /// `rate_limits.lease_ms` in µs (0: every call asks Redis).
    lease_us: u64,
    leases: Mutex<Keyed<Lease>>,
    refused_per_caller: Option<metrics::Counter>,
    refused_global: Option<metrics::Counter>,
    /// Where its clock starts: its times are microseconds since then on the monotonic clock
    /// (a step of the wall clock neither refills nor drains a budget), from the reading the
    /// caller gives it (the call then starts from that reading too).
    epoch: Instant,
}

impl RateLimiter {
    /// Cluster-wide through `redis` when given; refusals counted in `metrics`
    /// (`mcp_rate_limited_total{scope}`) when given.
    pub fn new(redis: Option<Arc<Redis>>, metrics: Option<&Metrics>) -> Self {
        Self {
            redis,
            script: redis::Script::new(SCRIPT),
            local: Mutex::default(),
            lease_us: 0,
            leases: Mutex::default(),
            refused_per_caller: metrics.map(|m| m.rate_limited("per_caller")),
            refused_global: metrics.map(|m| m.rate_limited("global")),
            epoch: Instant::now(),
        }
    }

    /// Takes cluster-wide budget in leases of up to `lease` (`rate_limits.lease_ms`; zero:
    /// every call is one Redis round trip).
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease_us = u64::try_from(lease.as_micros()).unwrap_or(u64::MAX);
        self
    }

    /// Spends one call of `tool` by `caller` (`None`: anonymous) or says when to retry.
    /// `now`: the call's clock read.
    pub async fn check(
        &self,
        tool: &str,
        caller: Option<&str>,
        limits: ToolLimits,
        now: Instant,
    ) -> Result<(), Limited> {
        let outcome = self.decide(tool, caller, limits, self.micros(now)).await;
        if let Err(l) = &outcome {
            let counter = match l.scope {
                Scope::PerCaller => &self.refused_per_caller,
                Scope::Global => &self.refused_global,
            };
            if let Some(c) = counter {
                c.increment(1);
            }
        }
        outcome
    }

    /// `at` in the limiter's microseconds.
    fn micros(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.epoch).as_micros()).unwrap_or(u64::MAX)
    }

    async fn decide(&self, tool: &str, caller: Option<&str>, limits: ToolLimits, now: u64) -> Result<(), Limited> {
        let caller = Some(caller.unwrap_or("anonymous"));
        let checks: Checks<'_> = [
            limits.per_caller.map(|limit| Check { tool, caller, limit, scope: Scope::PerCaller }),
            limits.global.map(|limit| Check { tool, caller: None, limit, scope: Scope::Global }),
        ];
        if checks.iter().all(Option::is_none) {
            return Ok(());
        }
        if let Some(redis) = &self.redis {
            let (taken, need) = self.spend_leases(&checks, now);
            if need.is_empty() {
                return Ok(());
            }
            let mut invocation = self.script.prepare_invoke();
            for n in &need {
                let Some(check) = &checks[n.check] else { continue };
                invocation
                    .key(redis.key(&limit_key(check.tool, check.caller)))
                    .arg(check.limit.emission_us())
                    .arg(check.limit.tolerance_us())
                    .arg(n.want);
            }
            let answer =
                redis.call(|mut con| async move { invocation.invoke_async::<Vec<u64>>(&mut con).await }).await.ok();
            if let Some(outcome) = self.settle(&checks, taken, &need, answer.as_deref(), now) {
                return outcome;
            }
        }
        // Redis did not answer (or there is none): this replica's share, as of now (a round
        // trip may have passed).
        let now = if self.redis.is_some() { self.micros(Instant::now()) } else { now };
        self.check_local(&checks, now)
    }

    /// Spends one call from this replica's leases where they have budget; the keys whose
    /// lease is spent or expired, with what to ask Redis for. One call at a time asks for a
    /// key's next lease: the calls that come while it is on its way ask for themselves only.
    /// (Each asking for a lease, concurrent calls took many, each replacing the last and
    /// dropping its budget, until the limit had no room left and leases shrank to a call or
    /// two: a Redis round trip for every few calls under load.)
    fn spend_leases(&self, checks: &Checks<'_>, now: u64) -> ([bool; 2], Vec<Need>) {
        let mut taken = [false; 2];
        // Allocates only when a lease is due, not on the common call.
        let mut need = Vec::new();
        let mut leases = self.leases.lock().expect("lease lock");
        let lease_us = self.lease_us;
        leases.prune(MAX_ENTRIES, |l| l.expires > now || l.refilling(now, lease_us));
        for (check, c) in each(checks) {
            let lease = leases.get_or_insert_with(c.tool, c.caller, || Lease {
                left: 0,
                granted: 0,
                at: now,
                expires: 0,
                refill: None,
            });
            if lease.left > 0 && lease.expires > now {
                lease.left -= 1;
                taken[check] = true;
            } else if lease.refilling(now, self.lease_us) {
                need.push(Need { check, want: 1, refill: false });
            } else {
                let want = Lease::next_size(lease, c.limit, self.lease_us, now);
                lease.refill = Some(now);
                need.push(Need { check, want, refill: true });
            }
        }
        (taken, need)
    }

    /// Records Redis's answer to a lease request: new leases (this call spends one of each),
    /// or a refusal (the calls `taken` from leases are given back). `None`: Redis failed.
    fn settle(
        &self,
        checks: &Checks<'_>,
        taken: [bool; 2],
        need: &[Need],
        answer: Option<&[u64]>,
        now: u64,
    ) -> Option<Result<(), Limited>> {
        let mut leases = self.leases.lock().expect("lease lock");
        if let Some([0, grants @ ..]) = answer
            && grants.len() == need.len()
        {
            for (n, &granted) in need.iter().zip(grants) {
                let granted = u32::try_from(granted).unwrap_or(1).max(1);
                // A new lease replaces what is left of the old one (dropped, never carried
                // past its time: that keeps the overshoot bound).
                if let (true, Some(l)) =
                    (n.refill, checks[n.check].as_ref().and_then(|c| leases.get_mut(c.tool, c.caller)))
                {
                    *l = Lease { left: granted - 1, granted, at: now, expires: now + self.lease_us, refill: None };
                }
            }
            return Some(Ok(()));
        }
        for (i, c) in each(checks) {
            if let Some(l) = leases.get_mut(c.tool, c.caller) {
                if taken[i] {
                    l.left += 1;
                }
                // No lease came: the next call asks again.
                if need.iter().any(|n| n.refill && n.check == i) {
                    l.refill = None;
                }
            }
        }
        let &[which, wait_us] = answer? else { return None };
        let check = checks.get(need.get(usize::try_from(which).ok()?.checked_sub(1)?)?.check)?.as_ref()?;
        Some(Err(Limited { scope: check.scope, retry_after: Duration::from_micros(wait_us) }))
    }

    fn check_local(&self, checks: &Checks<'_>, now: u64) -> Result<(), Limited> {
        let mut local = self.local.lock().expect("rate limit lock");
        local.prune(MAX_ENTRIES, |tat| *tat > now);
        let mut news = [0u64; 2];
        for (i, c) in each(checks) {
            let tat = local.get_mut(c.tool, c.caller).map_or(now, |t| *t).max(now);
            let new = tat + c.limit.emission_us();
            if new - now > c.limit.tolerance_us() {
                return Err(Limited {
                    scope: c.scope,
                    retry_after: Duration::from_micros(new - now - c.limit.tolerance_us()),
                });
            }
            news[i] = new;
        }
        for (i, c) in each(checks) {
            *local.get_or_insert_with(c.tool, c.caller, || now) = news[i];
        }
        Ok(())
    }
}

mod keyed;
#[cfg(test)]
mod tests;
