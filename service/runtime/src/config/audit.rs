//! `[audit]`: the audit trail of calls, raw and validated. Off by default; when on, every call
//! becomes one line of an append-only, hash-chained JSON Lines trail (docs/observability.md §
//! Audit trail).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::ConfigError;

/// `[audit]` as written.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RawAudit {
    /// Write the audit trail (default `false`).
    pub enabled: bool,
    /// Where: `file` (the file `file` names, rotated), `stdout` (for the cluster's log
    /// shipper) or `otlp` (OTLP logs to the collector `[telemetry] otlp_endpoint` names).
    pub sink: String,
    /// The trail's file with `sink = "file"` (relative: to this config file's folder).
    pub file: Option<String>,
    /// Rotate the file at this size (bytes; 0: never). The chain goes on in the next file.
    pub max_bytes: u64,
    /// Rotate the file after this long (seconds; 0: never).
    pub max_age_seconds: u64,
    /// A checkpoint record after this many call records...
    pub checkpoint_every: u64,
    /// ...or this long (seconds), whichever comes first.
    pub checkpoint_seconds: u64,
    /// `[audit.tools.<tool>]`: which arguments of a tool are written as they are (every other
    /// one as its SHA-256). Without an entry, a call's arguments appear as one digest.
    pub tools: BTreeMap<String, RawAuditTool>,
}

impl Default for RawAudit {
    fn default() -> Self {
        Self {
            enabled: false,
            sink: "file".to_owned(),
            file: None,
            max_bytes: 100 * 1024 * 1024,
            max_age_seconds: 24 * 3600,
            checkpoint_every: 1000,
            checkpoint_seconds: 60,
            tools: BTreeMap::new(),
        }
    }
}

/// `[audit.tools.<tool>]`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawAuditTool {
    /// Top-level arguments written as they are (never put a secret here).
    pub keep: Vec<String>,
}

/// Where the trail goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditSink {
    /// A file, rotated by size and age.
    File {
        /// The current file; rotated ones are `<file>.<UTC time>`.
        path: PathBuf,
        /// Rotate at this size (0: never).
        max_bytes: u64,
        /// Rotate after this long (`None`: never).
        max_age: Option<Duration>,
    },
    /// Standard output, one line per record.
    Stdout,
    /// OTLP logs to the configured collector (`<otlp_endpoint>/v1/logs`), each line the body
    /// of one log record.
    Otlp,
}

/// `[audit]`, validated and enabled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditConfig {
    /// The sink.
    pub sink: AuditSink,
    /// Records between checkpoints.
    pub checkpoint_every: u64,
    /// Longest time between checkpoints.
    pub checkpoint_interval: Duration,
    /// Kept arguments per tool.
    pub keep: BTreeMap<String, Vec<String>>,
}

/// Validates `[audit]` (`None` when off); a relative `file` starts at the config file's folder.
pub(super) fn audit(raw: &RawAudit, env: &mcp_adapter_api::Environment) -> Result<Option<AuditConfig>, ConfigError> {
    if !raw.enabled {
        return Ok(None);
    }
    let sink = match raw.sink.as_str() {
        "file" => AuditSink::File {
            path: env.path(
                raw.file
                    .as_deref()
                    .filter(|f| !f.is_empty())
                    .ok_or_else(|| ConfigError::invalid("audit.file", "name the trail's file (sink = \"file\")"))?,
            ),
            max_bytes: raw.max_bytes,
            max_age: (raw.max_age_seconds > 0).then(|| Duration::from_secs(raw.max_age_seconds)),
        },
        "stdout" => AuditSink::Stdout,
        "otlp" => AuditSink::Otlp,
        other => {
            return Err(ConfigError::invalid(
                "audit.sink",
                format!("'{other}' is not one of \"file\", \"stdout\", \"otlp\""),
            ));
        }
    };
    if raw.checkpoint_every == 0 || raw.checkpoint_seconds == 0 {
        return Err(ConfigError::invalid("audit", "checkpoint_every and checkpoint_seconds must be at least 1"));
    }
    Ok(Some(AuditConfig {
        sink,
        checkpoint_every: raw.checkpoint_every,
        checkpoint_interval: Duration::from_secs(raw.checkpoint_seconds),
        keep: raw.tools.iter().map(|(tool, t)| (tool.clone(), t.keep.clone())).collect(),
    }))
}
