//! Output mapping: a finished run becomes a `CallToolResult` (MCP 2026-07-28 server/tools). Success is text or
//! JSON (`structuredContent`, checked against `outputSchema`, plus its text); an exit code
//! outside `ok_exit_codes` or a signal is a tool error with the code and the tail of stderr.

use std::os::unix::process::ExitStatusExt as _;

use mcp_adapter_api::AdapterError;
use mcp_adapter_api::protocol::{CallToolResult, ContentBlock};
use serde_json::Value;

use crate::config::OutputFormat;
use crate::process::Finished;

/// How one tool's runs become results.
#[derive(Debug)]
pub struct OutputMapping {
    /// Text or JSON.
    pub format: OutputFormat,
    /// The compiled `output_schema`, for JSON output.
    pub validator: Option<jsonschema::Validator>,
    /// Exit codes that mean success.
    pub ok_exit_codes: Vec<i32>,
    /// The stdout cap (for the truncation notice).
    pub max_output_bytes: usize,
}

impl OutputMapping {
    /// The result of `run`. Output that breaks the tool's own contract (not JSON, not
    /// matching `output_schema`) is a backend failure, which the runtime reports as a tool error.
    pub fn result(&self, run: &Finished) -> Result<CallToolResult, AdapterError> {
        if !run.status.code().is_some_and(|c| self.ok_exit_codes.contains(&c)) {
            return Ok(self.failure(run));
        }
        match self.format {
            OutputFormat::Text => {
                let mut result = CallToolResult::text(utf8_head(&run.stdout));
                if run.truncated() {
                    result.content.push(ContentBlock::text(self.truncation_notice(run)));
                }
                Ok(result)
            }
            OutputFormat::Json => {
                if run.truncated() {
                    return Err(AdapterError::Backend(format!(
                        "{} so it cannot be parsed as JSON",
                        self.truncation_notice(run).trim_matches(['[', ']'])
                    )));
                }
                let value: Value = serde_json::from_slice(&run.stdout)
                    .map_err(|e| AdapterError::Backend(format!("the program's output is not JSON: {e}")))?;
                if let Some(validator) = &self.validator
                    && let Err(e) = validator.validate(&value)
                {
                    return Err(AdapterError::Backend(format!(
                        "the program's output does not match the tool's output schema at '{}': {e}",
                        e.instance_path()
                    )));
                }
                Ok(CallToolResult::structured(value))
            }
        }
    }

    fn failure(&self, run: &Finished) -> CallToolResult {
        let how = match (run.status.code(), run.status.signal()) {
            (Some(code), _) => format!("The command failed with exit code {code}."),
            (None, Some(signal)) => format!("The command was killed by {}.", signal_name(signal)),
            (None, None) => "The command failed.".to_owned(),
        };
        let stderr = utf8_tail(&run.stderr_tail);
        let summary = if stderr.trim().is_empty() {
            format!("{how} It wrote nothing to stderr.")
        } else {
            format!("{how} The end of its stderr:\n{stderr}")
        };
        let mut result = CallToolResult::error(summary);
        if !run.stdout.is_empty() {
            result.content.push(ContentBlock::text(format!("Its stdout:\n{}", utf8_head(&run.stdout))));
            if run.truncated() {
                result.content.push(ContentBlock::text(self.truncation_notice(run)));
            }
        }
        result
    }

    fn truncation_notice(&self, run: &Finished) -> String {
        format!(
            "[output truncated: the program wrote {} bytes; only the first {} are shown (max_output_bytes)]",
            run.stdout_total, self.max_output_bytes
        )
    }
}

/// Text of the first bytes of an output, without a character cut in half at the end.
fn utf8_head(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(e) if e.error_len().is_none() => String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// Text of the last bytes of an output, without a character cut in half at the start.
fn utf8_tail(bytes: &[u8]) -> String {
    let start = bytes.iter().take(3).take_while(|b| (**b & 0b1100_0000) == 0b1000_0000).count();
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

/// The supervisor's report that the program itself did not start (see
/// [`crate::supervise::SPAWN_FAILED`]), from a run that ended with 127.
pub fn spawn_failure(finished: &Finished) -> Option<String> {
    if finished.status.code() != Some(127) {
        return None;
    }
    let stderr = String::from_utf8_lossy(&finished.stderr_tail);
    stderr.lines().find_map(|l| l.strip_prefix(crate::supervise::SPAWN_FAILED)).map(str::to_owned)
}

/// A program that could not be started: its path and the reason go to the operator's log,
/// the caller learns which tool failed and where to look.
pub fn not_started(tool: &str, program: &std::path::Path, why: &str) -> AdapterError {
    tracing::error!(tool, program = %program.display(), error = why, "cannot start the tool's program");
    AdapterError::Backend(format!("the program of tool '{tool}' could not be started (the server's log says why)"))
}

/// `SIGSEGV (signal 11)`: the name people search for, and the number.
pub fn signal_name(signal: i32) -> String {
    const NAMES: [(i32, &str); 20] = [
        (1, "SIGHUP"),
        (2, "SIGINT"),
        (3, "SIGQUIT"),
        (4, "SIGILL"),
        (5, "SIGTRAP"),
        (6, "SIGABRT"),
        (7, "SIGBUS"),
        (8, "SIGFPE"),
        (9, "SIGKILL"),
        (10, "SIGUSR1"),
        (11, "SIGSEGV"),
        (12, "SIGUSR2"),
        (13, "SIGPIPE"),
        (14, "SIGALRM"),
        (15, "SIGTERM"),
        (24, "SIGXCPU"),
        (25, "SIGXFSZ"),
        (26, "SIGVTALRM"),
        (27, "SIGPROF"),
        (31, "SIGSYS"),
    ];
    match NAMES.iter().find(|(n, _)| *n == signal) {
        Some((_, name)) => format!("{name} (signal {signal})"),
        None => format!("signal {signal}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::process::ExitStatus;

    fn finished(code: i32, stdout: &[u8], total: u64, stderr: &[u8]) -> Finished {
        Finished {
            status: ExitStatus::from_raw(code << 8),
            stdout: stdout.to_vec(),
            stdout_total: total,
            stderr_tail: stderr.to_vec(),
        }
    }

    fn mapping(format: OutputFormat, schema: Option<Value>) -> OutputMapping {
        OutputMapping {
            format,
            validator: schema.map(|s| jsonschema::validator_for(&s).unwrap()),
            ok_exit_codes: vec![0, 1],
            max_output_bytes: 4,
        }
    }

    fn texts(r: &CallToolResult) -> Vec<String> {
        serde_json::to_value(&r.content).unwrap().as_array().unwrap().iter().map(|b| b["text"].to_string()).collect()
    }

    #[test]
    fn text_output_with_truncation_notice() {
        let m = mapping(OutputFormat::Text, None);
        let r = m.result(&finished(1, b"abcd", 4, b"")).unwrap();
        assert_eq!(r, CallToolResult::text("abcd"));
        let r = m.result(&finished(0, b"abcd", 10, b"")).unwrap();
        assert!(!r.is_error);
        assert!(texts(&r)[1].contains("wrote 10 bytes; only the first 4"), "{:?}", texts(&r));
        // A character cut by the cap is dropped, not shown as garbage.
        assert_eq!(m.result(&finished(0, "aé".as_bytes()[..2].as_ref(), 9, b"")).unwrap().content[0], {
            ContentBlock::text("a")
        });
    }

    #[test]
    fn failures_carry_the_code_and_the_stderr_tail() {
        let m = mapping(OutputFormat::Text, None);
        let r = m.result(&finished(2, b"partial", 7, "\u{80}rror: no such file\n".as_bytes())).unwrap();
        assert!(r.is_error);
        let t = texts(&r);
        assert!(t[0].contains("exit code 2") && t[0].contains("rror: no such file"), "{t:?}");
        assert!(t[1].contains("partial"));
        let killed = Finished { status: ExitStatus::from_raw(9), ..finished(0, b"", 0, b"") };
        assert!(texts(&m.result(&killed).unwrap())[0].contains("killed by SIGKILL (signal 9)"));
        let segv = Finished { status: ExitStatus::from_raw(11), ..finished(0, b"", 0, b"") };
        assert!(texts(&m.result(&segv).unwrap())[0].contains("killed by SIGSEGV (signal 11)"));
    }

    #[test]
    fn json_output_is_parsed_and_checked() {
        let schema = json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}});
        let m = OutputMapping { max_output_bytes: 100, ..mapping(OutputFormat::Json, Some(schema)) };
        let r = m.result(&finished(0, br#"{"n": 3}"#, 8, b"")).unwrap();
        assert_eq!(r, CallToolResult::structured(json!({"n": 3})));
        let e = m.result(&finished(0, br#"{"n": "x"}"#, 10, b"")).unwrap_err().to_string();
        assert!(e.contains("output schema at '/n'"), "{e}");
        assert!(m.result(&finished(0, b"not json", 8, b"")).unwrap_err().to_string().contains("not JSON"));
        assert!(m.result(&finished(0, b"{", 500, b"")).unwrap_err().to_string().contains("cannot be parsed"));
    }
}
