//! Rate limits per caller × tool and per tool (GCRA): cluster-wide through one atomic Redis
//! script when Redis is configured and reachable, per replica otherwise (during an outage each
//! replica allows the full budget, so the cluster allows at most replicas × budget).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use super::redis::Redis;
use crate::config::{Limit, ToolLimits};
use crate::telemetry::metrics::Metrics;

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

/// Checks both limits at once and only spends budget when both allow (one round trip).
const SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local news = {}
for i = 1, #KEYS do
  local emission = tonumber(ARGV[2 * i - 1])
  local tolerance = tonumber(ARGV[2 * i])
  local tat = tonumber(redis.call('GET', KEYS[i]) or now)
  if tat < now then tat = now end
  local new = tat + emission
  if new - now > tolerance then
    return {i, new - now - tolerance}
  end
  news[i] = new
end
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], news[i], 'PX', math.ceil((news[i] - now) / 1000) + 1)
end
return {0, 0}
";

/// `{tool}` with the tool's own braces escaped: both keys of a tool carry this hash tag, so
/// the one script touches one slot of a Redis Cluster (a key's hash tag is the text between
/// its first `{` and the next `}`). Escaping keeps distinct tools distinct.
fn hash_tag(tool: &str) -> String {
    let escaped = tool.replace('%', "%25").replace('{', "%7B").replace('}', "%7D");
    format!("{{{escaped}}}")
}

/// The limiter of one replica.
#[derive(Debug)]
pub struct RateLimiter {
    redis: Option<Arc<Redis>>,
    script: redis::Script,
    local: Mutex<HashMap<String, u64>>,
    refused_per_caller: Option<metrics::Counter>,
    refused_global: Option<metrics::Counter>,
}

impl RateLimiter {
    /// Cluster-wide through `redis` when given; refusals counted in `metrics`
    /// (`mcp_rate_limited_total{scope}`) when given.
    pub fn new(redis: Option<Arc<Redis>>, metrics: Option<&Metrics>) -> Self {
        Self {
            redis,
            script: redis::Script::new(SCRIPT),
            local: Mutex::default(),
            refused_per_caller: metrics.map(|m| m.rate_limited("per_caller")),
            refused_global: metrics.map(|m| m.rate_limited("global")),
        }
    }

    /// Spends one call of `tool` by `caller` (`None`: anonymous) or says when to retry.
    pub async fn check(&self, tool: &str, caller: Option<&str>, limits: ToolLimits) -> Result<(), Limited> {
        let outcome = self.decide(tool, caller, limits).await;
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

    async fn decide(&self, tool: &str, caller: Option<&str>, limits: ToolLimits) -> Result<(), Limited> {
        let caller = caller.unwrap_or("anonymous");
        let tag = hash_tag(tool);
        let mut checks: Vec<(String, Limit, Scope)> = Vec::with_capacity(2);
        if let Some(l) = limits.per_caller {
            checks.push((format!("rl:{tag}:{caller}"), l, Scope::PerCaller));
        }
        if let Some(l) = limits.global {
            checks.push((format!("rl:{tag}"), l, Scope::Global));
        }
        if checks.is_empty() {
            return Ok(());
        }
        if let Some(redis) = &self.redis {
            let mut invocation = self.script.prepare_invoke();
            for (key, limit, _) in &checks {
                invocation.key(redis.key(key)).arg(limit.emission_us()).arg(limit.tolerance_us());
            }
            let answer =
                redis.call(|mut con| async move { invocation.invoke_async::<(u64, u64)>(&mut con).await }).await;
            if let Ok((which, wait_us)) = answer {
                return match which {
                    0 => Ok(()),
                    i => Err(Limited {
                        scope: checks[usize::try_from(i - 1).unwrap_or(0)].2,
                        retry_after: Duration::from_micros(wait_us),
                    }),
                };
            }
        }
        self.check_local(&checks, now_us())
    }

    fn check_local(&self, checks: &[(String, Limit, Scope)], now: u64) -> Result<(), Limited> {
        let mut local = self.local.lock().expect("rate limit lock");
        if local.len() > 100_000 {
            local.retain(|_, tat| *tat > now);
        }
        let mut news = [0u64; 2];
        for (i, (key, limit, scope)) in checks.iter().enumerate() {
            let tat = local.get(key).copied().unwrap_or(now).max(now);
            let new = tat + limit.emission_us();
            if new - now > limit.tolerance_us() {
                return Err(Limited {
                    scope: *scope,
                    retry_after: Duration::from_micros(new - now - limit.tolerance_us()),
                });
            }
            news[i] = new;
        }
        for (i, (key, _, _)) in checks.iter().enumerate() {
            local.insert(key.clone(), news[i]);
        }
        Ok(())
    }
}

fn now_us() -> u64 {
    crate::clock::now_ms() * 1000
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slot part of a key: what Redis Cluster hashes.
    fn slot_part(key: &str) -> &str {
        let Some(open) = key.find('{') else { return key };
        match key[open + 1..].find('}') {
            Some(0) | None => key,
            Some(len) => &key[open + 1..open + 1 + len],
        }
    }

    #[test]
    fn both_keys_of_a_tool_hash_to_one_slot_and_tools_stay_apart() {
        for tool in ["echo", "a}b", "}x", "{", "a%7Db", "weird{}{name}"] {
            let tag = hash_tag(tool);
            let (caller, global) = (format!("p:rl:{tag}:{{ann}}"), format!("p:rl:{tag}"));
            assert_eq!(slot_part(&caller), slot_part(&global), "{tool}");
            assert_ne!(slot_part(&caller), caller, "{tool}: no hash tag");
        }
        assert_ne!(hash_tag("a}b"), hash_tag("a%7Db"));
    }

    fn checks(per_caller: Limit) -> Vec<(String, Limit, Scope)> {
        vec![("k".into(), per_caller, Scope::PerCaller)]
    }

    #[test]
    fn gcra_allows_a_burst_then_the_rate() {
        let r = RateLimiter::new(None, None);
        let l = Limit { rate: 10, per: Duration::from_secs(1), burst: 3 };
        let t0 = 1_000_000_000;
        for _ in 0..3 {
            assert!(r.check_local(&checks(l), t0).is_ok());
        }
        let refused = r.check_local(&checks(l), t0).unwrap_err();
        assert_eq!(refused.retry_after, Duration::from_millis(100));
        // After one emission interval, one more call fits.
        assert!(r.check_local(&checks(l), t0 + 100_000).is_ok());
        assert!(r.check_local(&checks(l), t0 + 100_000).is_err());
    }

    #[test]
    fn a_refusal_spends_no_budget_of_the_other_limit() {
        let r = RateLimiter::new(None, None);
        let tight = Limit { rate: 1, per: Duration::from_secs(60), burst: 1 };
        let loose = Limit { rate: 100, per: Duration::from_secs(1), burst: 100 };
        let both = vec![("g".to_owned(), loose, Scope::Global), ("c".to_owned(), tight, Scope::PerCaller)];
        assert!(r.check_local(&both, 1_000).is_ok());
        assert_eq!(r.check_local(&both, 1_000).unwrap_err().scope, Scope::PerCaller);
        let g = r.local.lock().unwrap()["g"];
        assert_eq!(g, 1_000 + loose.emission_us(), "the refused call did not spend the global budget");
    }
}
