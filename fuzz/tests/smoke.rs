//! The bounded fuzz smoke the test command runs on the stable toolchain: every target over
//! its committed seed corpus, then over random mutations of the seeds (byte flips, inserts
//! of tokens that matter to the parsers, deletions, splices) for `FUZZ_SMOKE_SECS` seconds
//! per target (default 8). Not coverage-guided: `fuzz/run.sh` runs the same targets under
//! libFuzzer for the long runs. A failing input is written to `target/fuzz-smoke/`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mcp_fuzz::TARGETS;

/// Fragments the parsers give a meaning to.
const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b":",
    b",",
    b"\\u0000",
    b"\\ud800",
    b"1e999",
    b"-1",
    b"+cmd",
    b"--",
    b"-",
    b"..",
    b"/",
    b"%2F",
    b"%",
    b"?",
    b"#",
    b"{{",
    b"}}",
    b"\n",
    b"\0",
    b"null",
    b"true",
    b"\"_meta\"",
    b"\"$serde_json::private::RawValue\"",
    b"=",
    b"[[",
    b"]]",
    b"'''",
    b"\"\"\"",
];

fn corpus(name: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus").join(name);
    let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the seed corpus {} is missing: {e}", dir.display()))
        .map(|e| std::fs::read(e.expect("corpus entry").path()).expect("read a seed"))
        .collect();
    assert!(!seeds.is_empty(), "no seeds in {}", dir.display());
    seeds.sort();
    seeds
}

fn mutate(rng: &mut fastrand::Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut data = seeds[rng.usize(..seeds.len())].clone();
    for _ in 0..rng.usize(1..5) {
        let at = rng.usize(..=data.len());
        match rng.u8(..6) {
            0 if !data.is_empty() => {
                let i = rng.usize(..data.len());
                data[i] ^= 1 << rng.u8(..8);
            }
            1 => data.splice(at..at, TOKENS[rng.usize(..TOKENS.len())].iter().copied()).for_each(drop),
            2 if !data.is_empty() => {
                let end = (at + rng.usize(1..16)).min(data.len());
                data.drain(at.min(end)..end);
            }
            3 => {
                let other = &seeds[rng.usize(..seeds.len())];
                let from = rng.usize(..=other.len());
                data.splice(at..at, other[from..].iter().copied()).for_each(drop);
            }
            4 if at < data.len() => data[at] = rng.u8(..),
            _ => data.insert(at, rng.u8(..)),
        }
    }
    data
}

fn save(name: &str, data: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/fuzz-smoke");
    std::fs::create_dir_all(&dir).expect("create target/fuzz-smoke");
    let path = dir.join(format!("crash-{name}"));
    std::fs::write(&path, data).expect("write the failing input");
    path
}

#[test]
fn every_target_survives_its_seeds_and_their_mutations() {
    let secs: u64 = std::env::var("FUZZ_SMOKE_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(8);
    let seed = std::env::var("FUZZ_SMOKE_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| fastrand::u64(..));
    eprintln!("fuzz smoke: {secs} s per target, FUZZ_SMOKE_SEED={seed}");
    let mut failures = Vec::new();
    for (name, target) in TARGETS {
        let seeds = corpus(name);
        let mut rng = fastrand::Rng::with_seed(seed);
        let end = Instant::now() + Duration::from_secs(secs);
        let mut runs = 0u64;
        let mut run = |data: &[u8]| {
            runs += 1;
            catch_unwind(AssertUnwindSafe(|| target(data))).is_ok()
        };
        let mut failed = seeds.iter().find(|s| !run(s)).cloned();
        while failed.is_none() && Instant::now() < end {
            let data = mutate(&mut rng, &seeds);
            if !run(&data) {
                failed = Some(data);
            }
        }
        eprintln!("fuzz smoke: {name}: {runs} executions");
        if let Some(data) = failed {
            failures.push(format!("{name}: input saved to {}", save(name, &data).display()));
        }
    }
    assert!(failures.is_empty(), "fuzz targets failed:\n{}", failures.join("\n"));
}
