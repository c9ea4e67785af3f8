//! `mcp-runtime audit verify FILE...`: checks the chains of an audit trail. Every line must
//! name, as `prev`, the SHA-256 of the line before it in its chain and carry the next `seq`;
//! a chain begins with a `start` line whose `prev` is all zeros. The files are read in the
//! order given (rotated files oldest first, then the current one: `audit.jsonl.* audit.jsonl`);
//! the lines of several replicas' chains may be in separate files or interleaved.

use std::collections::HashMap;

use serde_json::Value;

use super::{GENESIS, hex};
use crate::telemetry::records::digest;

/// What a trail holds when every chain checks.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Verified {
    /// Chains seen.
    pub chains: usize,
    /// Call lines.
    pub calls: u64,
    /// Checkpoint lines.
    pub checkpoints: u64,
}

/// The first line that breaks a chain: where, and what is wrong with it.
#[derive(Debug, PartialEq, Eq)]
pub struct Broken {
    /// `FILE:LINE`.
    pub at: String,
    /// What is wrong, and what it means.
    pub why: String,
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.at, self.why)
    }
}

/// Checks `files` (name, text) in order.
pub fn verify(files: &[(String, String)]) -> Result<Verified, Broken> {
    // chain id → (digest of its last line, its next seq)
    let mut chains: HashMap<String, ([u8; 32], u64)> = HashMap::new();
    let mut out = Verified::default();
    for (name, text) in files {
        for (i, line) in text.lines().enumerate() {
            let at = format!("{name}:{}", i + 1);
            let broken = |why: String| Broken { at: at.clone(), why };
            if line.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(line)
                .map_err(|e| broken(format!("not a JSON object ({e}): the line was edited or cut")))?;
            let field = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
            let (Some(kind), Some(chain), Some(prev), Some(seq)) =
                (field("type"), field("chain"), field("prev"), v.get("seq").and_then(Value::as_u64))
            else {
                return Err(broken("lacks type, chain, seq or prev: not a line of an audit trail".into()));
            };
            let this = digest(line.as_bytes());
            match chains.get(&chain) {
                None if kind == "start" && prev == GENESIS && seq == 0 => {
                    out.chains += 1;
                }
                None => {
                    return Err(broken(format!(
                        "seq {seq} of chain {chain} comes before that chain's start line: the lines before it were removed, or the files are out of order (give rotated files oldest first)"
                    )));
                }
                Some((last, next)) => {
                    if seq != *next {
                        return Err(broken(format!(
                            "seq {seq} of chain {chain} where {next} comes next: a line was removed, added or moved"
                        )));
                    }
                    if prev != hex(last) {
                        return Err(broken(format!(
                            "seq {seq} of chain {chain}: prev does not match the line before it: that line (or this one's prev) was edited, or a line was replaced"
                        )));
                    }
                }
            }
            match kind.as_str() {
                "call" => out.calls += 1,
                "checkpoint" => out.checkpoints += 1,
                _ => {}
            }
            chains.insert(chain, (this, seq + 1));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{AuditConfig, AuditSink};
    use crate::telemetry::audit::Audit;
    use crate::telemetry::records::CallRecord;

    fn record(n: u64) -> CallRecord {
        CallRecord {
            at_ms: n,
            finished: std::time::Instant::now(),
            method: "tools/call",
            name: "echo".into(),
            endpoint: None,
            caller: Some("ada".into()),
            client: None,
            outcome: "ok",
            error: None,
            duration_us: 1500,
            adapter: Some("demo".into()),
            upstream: None,
            request_id: Some("req-1".into()),
            trace_id: None,
            round: 0,
            arguments_digest: Some([7; 32]),
            result_digest: None,
            arguments: Some(serde_json::json!({"text": "secret", "lang": "en", "say \"hi\"\n": 1})),
        }
    }

    fn trail(calls: u64) -> Vec<String> {
        trail_of("r1", calls)
    }

    /// `calls` call records written by replica `replica`.
    fn trail_of(replica: &str, calls: u64) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let config = AuditConfig {
            sink: AuditSink::File { path: path.clone(), max_bytes: 0, max_age: None },
            checkpoint_every: 3,
            checkpoint_interval: std::time::Duration::from_secs(3600),
            keep: [("echo".to_owned(), vec!["lang".to_owned()])].into_iter().collect(),
        };
        let mut audit = Audit::open(&config, replica).unwrap();
        let batch: Vec<CallRecord> = (0..calls).map(record).collect();
        audit.write(&batch);
        audit.close();
        std::fs::read_to_string(&path).unwrap().lines().map(str::to_owned).collect()
    }

    fn check(lines: &[String]) -> Result<Verified, Broken> {
        verify(&[("audit.jsonl".to_owned(), lines.join("\n"))])
    }

    #[test]
    fn a_whole_trail_verifies_and_keeps_only_the_named_arguments() {
        let lines = trail(7);
        let v = check(&lines).unwrap();
        assert_eq!(v, Verified { chains: 1, calls: 7, checkpoints: 3 });
        let call: Value = serde_json::from_str(&lines[1]).unwrap();
        assert_eq!(call["arguments"]["lang"], "en");
        assert!(call["arguments"]["text"].as_str().unwrap().starts_with("sha256:"), "{call}");
        // An argument's name is escaped as JSON wants it; the record's text read back.
        assert!(call["arguments"]["say \"hi\"\n"].as_str().unwrap().starts_with("sha256:"), "{call}");
        assert_eq!(call["request_id"], "req-1");
        // What the record lacks is left out, not written as null.
        for absent in ["client", "error", "upstream", "trace_id", "result_digest"] {
            assert!(call.get(absent).is_none(), "{absent}: {call}");
        }
        assert!(!lines[1].contains("secret"));
    }

    #[test]
    #[cfg(unix)]
    fn a_trail_into_a_pipe_is_written_as_it_is_and_never_rotated() {
        use std::os::unix::fs::FileTypeExt as _;
        // A FIFO of its own, never a device: a rotation would move what it renames.
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("trail.fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        let config = AuditConfig {
            sink: AuditSink::File { path: fifo.clone(), max_bytes: 1, max_age: None },
            checkpoint_every: 1000,
            checkpoint_interval: std::time::Duration::from_secs(3600),
            keep: Default::default(),
        };
        let mut audit = Audit::open(&config, "r1").unwrap();
        let batch: Vec<CallRecord> = (0..5).map(record).collect();
        audit.write(&batch);
        audit.write(&batch);
        audit.close();
        drop(audit);
        let lines: Vec<String> = reader.join().unwrap().lines().map(str::to_owned).collect();
        assert_eq!(check(&lines).unwrap(), Verified { chains: 1, calls: 10, checkpoints: 1 });
        assert!(fifo.metadata().unwrap().file_type().is_fifo(), "the pipe stays where it was");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["trail.fifo"], "nothing was renamed");
    }

    #[test]
    fn a_call_lines_digest_from_its_cached_start_is_the_lines_digest() {
        // A Kubernetes pod's name: the call lines' common start is more than a block long.
        let replica = "mcp-runtime-7d9f8c6b5-x2x7q";
        let lines = trail_of(replica, 7);
        assert!(lines[1].find(",\"seq\":").unwrap() > 64, "{}", lines[1]);
        assert_eq!(check(&lines).unwrap(), Verified { chains: 1, calls: 7, checkpoints: 3 });
        let call: Value = serde_json::from_str(&lines[1]).unwrap();
        assert_eq!(call["replica"], replica);
    }

    #[test]
    fn an_edited_removed_or_reordered_line_is_named() {
        let lines = trail(5);
        let mut edited = lines.clone();
        edited[2] = edited[2].replace("\"outcome\":\"ok\"", "\"outcome\":\"denied\"");
        assert_eq!(check(&edited).unwrap_err().at, "audit.jsonl:4", "the line after the edited one");
        let mut removed = lines.clone();
        removed.remove(2);
        let e = check(&removed).unwrap_err();
        assert_eq!(e.at, "audit.jsonl:3");
        assert!(e.why.contains("a line was removed"), "{e}");
        let mut swapped = lines.clone();
        swapped.swap(2, 3);
        assert_eq!(check(&swapped).unwrap_err().at, "audit.jsonl:3");
        let mut headless = lines;
        headless.remove(0);
        assert!(check(&headless).unwrap_err().why.contains("before that chain's start line"));
    }
}
