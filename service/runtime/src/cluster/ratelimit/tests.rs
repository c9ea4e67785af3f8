//! The limiter's GCRA, lease sizing and lease requests, without Redis (the e2e tests run
//! them against a real redis-server).

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
        // As Redis sees them: behind the configured prefix.
        let caller = format!("p:{}", limit_key(tool, Some("{ann}")));
        let global = format!("p:{}", limit_key(tool, None));
        assert_eq!(slot_part(&caller), slot_part(&global), "{tool}");
        assert_ne!(slot_part(&caller), caller, "{tool}: no hash tag");
    }
    assert_eq!(limit_key("echo", Some("alice")), "rl:{echo}:alice");
    assert_ne!(limit_key("a}b", None), limit_key("a%7Db", None));
}

fn checks(per_caller: Limit) -> Checks<'static> {
    [Some(Check { tool: "t", caller: Some("k"), limit: per_caller, scope: Scope::PerCaller }), None]
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
    let global = Check { tool: "t", caller: None, limit: loose, scope: Scope::Global };
    let both = [Some(Check { tool: "t", caller: Some("c"), limit: tight, scope: Scope::PerCaller }), Some(global)];
    assert!(r.check_local(&both, 1_000).is_ok());
    assert_eq!(r.check_local(&both, 1_000).unwrap_err().scope, Scope::PerCaller);
    let g = *r.local.lock().unwrap().get_mut("t", None).unwrap();
    assert_eq!(g, 1_000 + loose.emission_us(), "the refused call did not spend the global budget");
}

#[test]
fn one_call_at_a_time_asks_for_the_next_lease() {
    let r = RateLimiter::new(None, None).with_lease(Duration::from_millis(100));
    let l = Limit { rate: 10_000, per: Duration::from_secs(1), burst: 4_000 };
    let c = checks(l);
    let want = |need: &[Need]| need.iter().map(|n| (n.want, n.refill)).collect::<Vec<_>>();
    // The first call asks for a lease; the calls while it is on its way, for themselves.
    let (_, first) = r.spend_leases(&c, 1_000);
    assert_eq!(want(&first), [(1, true)]);
    for _ in 0..3 {
        assert_eq!(want(&r.spend_leases(&c, 1_100).1), [(1, false)]);
    }
    // Their answers leave the lease alone; the lease's answer sets it.
    let alone = [Need { check: 0, want: 1, refill: false }];
    assert_eq!(r.settle(&c, [false; 2], &alone, Some(&[0, 1]), 1_100), Some(Ok(())));
    assert_eq!(r.settle(&c, [false; 2], &first, Some(&[0, 1]), 1_000), Some(Ok(())));
    // Spent at once (1 of 1): the next lease grows with the rate (one call in 1 ms: 100 per lease).
    let (_, next) = r.spend_leases(&c, 2_000);
    assert_eq!(want(&next), [(100, true)]);
    r.settle(&c, [false; 2], &next, Some(&[0, 100]), 2_000);
    let (taken, need) = r.spend_leases(&c, 2_100);
    assert!(taken[0] && need.is_empty(), "spent from the lease, no round trip");
    // A lease request that never came back (its call was cancelled) is made again a lease time later.
    r.leases.lock().unwrap().get_mut("t", Some("k")).unwrap().left = 0;
    assert!(r.spend_leases(&c, 3_000).1[0].refill);
    assert!(!r.spend_leases(&c, 50_000).1[0].refill);
    assert!(r.spend_leases(&c, 103_001).1[0].refill);
    // A failed request lets the next call ask again at once.
    assert!(!r.spend_leases(&c, 103_500).1[0].refill, "the one of 103,001 is on its way");
    r.settle(&c, [false; 2], &[Need { check: 0, want: 100, refill: true }], None, 103_600);
    assert!(r.spend_leases(&c, 103_700).1[0].refill);
}

#[test]
fn leases_grow_with_the_recent_rate_within_their_caps() {
    let l = Limit { rate: 10_000, per: Duration::from_secs(1), burst: 4_000 };
    let lease_us = 100_000;
    let new = Lease { left: 0, granted: 0, at: 0, expires: 0, refill: None };
    assert_eq!(Lease::next_size(&new, l, lease_us, 0), 1, "a new key starts with one call");
    // 10 calls used in 1 ms: 1,000 per 100 ms lease, under both caps.
    let last = Lease { left: 0, granted: 10, at: 0, expires: lease_us, refill: None };
    assert_eq!(Lease::next_size(&last, l, lease_us, 1_000), 1_000);
    // Faster still: capped by a quarter of the burst.
    let last = Lease { left: 0, granted: 1_000, at: 0, expires: lease_us, refill: None };
    assert_eq!(Lease::next_size(&last, l, lease_us, 1_000), 1_000);
    let small = Limit { rate: 100, per: Duration::from_secs(1), burst: 100 };
    // ... and by what the limit grants in one lease time (100/s × 100 ms = 10).
    assert_eq!(Lease::next_size(&last, small, lease_us, 1_000), 10);
    // A tiny burst keeps every call exact.
    let tiny = Limit { rate: 1_000, per: Duration::from_secs(1), burst: 3 };
    assert_eq!(Lease::next_size(&last, tiny, lease_us, 1_000), 1);
}
