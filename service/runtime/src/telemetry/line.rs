//! Lines written by hand into a byte buffer, for the call-records writer: the per-call log
//! line (text as `tracing-subscriber` formats it, or its JSON) and the audit trail's JSON
//! Lines. One buffer per batch, one `write` per batch: formatting through `tracing` cost a
//! formatter, a filter pass and a `write` syscall per call.

use std::io::Write as _;

use super::records::{CallRecord, Text};
use crate::config::LogFormat;

/// A JSON object being written into `out`: fields in the order they are added.
pub struct Object<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> Object<'a> {
    /// Opens `{`.
    pub fn open(out: &'a mut Vec<u8>) -> Self {
        out.push(b'{');
        Self { out, first: true }
    }

    /// Goes on with an object whose opening and first fields are already in `out` (a
    /// prefix written once and copied).
    pub fn resume(out: &'a mut Vec<u8>) -> Self {
        Self { out, first: false }
    }

    /// `"key":` of a name this code chose: printable ASCII, written as it is (an audit line
    /// has some twenty keys; checking each one for escapes was most of the check's cost).
    /// Inlined into each call, where the key is a literal: its bytes are stored as constants
    /// instead of copied by a `memcpy` call of a length known only at run time.
    #[inline(always)]
    fn key(&mut self, key: &'static str) -> &mut Vec<u8> {
        debug_assert!(plain(key.as_bytes()), "{key:?} needs escaping: write it with `entry`");
        self.comma();
        self.out.push(b'"');
        self.out.extend_from_slice(key.as_bytes());
        self.out.extend_from_slice(b"\":");
        self.out
    }

    /// `"key":` of a name from the data (an argument's), escaped; the value is the caller's
    /// to write.
    pub fn entry(&mut self, key: &str) -> &mut Vec<u8> {
        self.comma();
        string(self.out, key.as_bytes());
        self.out.push(b':');
        self.out
    }

    fn comma(&mut self) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
    }

    /// `"key":"value"`, escaped.
    pub fn str(&mut self, key: &'static str, value: &str) -> &mut Self {
        string(self.key(key), value.as_bytes());
        self
    }

    /// `"key":"value"`, or nothing without a value (as `tracing`'s JSON leaves out a field
    /// it did not record; an audit line is then shorter to hash and write).
    pub fn opt_str(&mut self, key: &'static str, value: Option<&str>) -> &mut Self {
        match value {
            Some(v) => self.str(key, v),
            None => self,
        }
    }

    /// `"key":"value"` of a record's [`Text`], or nothing without one.
    pub fn opt_text(&mut self, key: &'static str, value: Option<&Text>) -> &mut Self {
        if let Some(v) = value {
            string(self.key(key), v.as_bytes());
        }
        self
    }

    /// `"key":123`.
    pub fn u64(&mut self, key: &'static str, value: u64) -> &mut Self {
        number(self.key(key), value);
        self
    }

    /// `"key":1.5`: microseconds as milliseconds.
    pub fn millis(&mut self, key: &'static str, micros: u64) -> &mut Self {
        let out = self.key(key);
        number(out, micros / 1000);
        out.push(b'.');
        crate::clock::digits(out, micros % 1000, 3);
        self
    }

    /// `"key":"sha256:<hex>"`, or nothing without a digest.
    pub fn digest(&mut self, key: &'static str, value: Option<&[u8; 32]>) -> &mut Self {
        if let Some(d) = value {
            digest_value(self.key(key), d);
        }
        self
    }

    /// `"key":` and the value `write` writes.
    pub fn with(&mut self, key: &'static str, write: impl FnOnce(&mut Vec<u8>)) -> &mut Self {
        write(self.key(key));
        self
    }

    /// Closes `}`.
    pub fn close(self) {
        self.out.push(b'}');
    }
}

/// `"sha256:<hex>"`.
pub fn digest_value(out: &mut Vec<u8>, digest: &[u8; 32]) {
    out.extend_from_slice(b"\"sha256:");
    hex_into(out, digest);
    out.push(b'"');
}

/// `value` (UTF-8) as a JSON string.
fn string(out: &mut Vec<u8>, value: &[u8]) {
    if plain(value) {
        // Printable ASCII without `"` or `\` (names, ids, URLs): nothing to escape.
        out.reserve(value.len() + 2);
        out.push(b'"');
        out.extend_from_slice(value);
        out.push(b'"');
    } else {
        // serde_json's escaping, without building a value (the text is UTF-8 already).
        let _ = serde_json::to_writer(&mut *out, &String::from_utf8_lossy(value));
    }
}

/// `n` in decimal.
pub fn number(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// Lower-case hex of `bytes`, appended.
pub fn hex_into(out: &mut Vec<u8>, bytes: &[u8]) {
    // A digest at a time through a stack array (one copy instead of a push per digit), four
    // bytes at a time in a word (a lookup per digit was ~400 instructions a digest, and an
    // audit line has three).
    for chunk in bytes.chunks(32) {
        let mut hex = [0u8; 64];
        for (digits, four) in hex.chunks_exact_mut(8).zip(chunk.chunks(4)) {
            let mut word = [0u8; 4];
            word[..four.len()].copy_from_slice(four);
            digits.copy_from_slice(&hex_word(u32::from_le_bytes(word)).to_le_bytes());
        }
        out.extend_from_slice(&hex[..chunk.len() * 2]);
    }
}

/// The eight hex digits of four bytes (`bytes` little-endian: its first byte's two digits
/// come first), as eight ASCII bytes, little-endian.
fn hex_word(bytes: u32) -> u64 {
    const NIBBLES: u64 = 0x0F0F_0F0F_0F0F_0F0F;
    const ONES: u64 = 0x0101_0101_0101_0101;
    // Byte i into the low byte of 16-bit lane i ...
    let v = u64::from(bytes);
    let v = (v | (v << 16)) & 0x0000_FFFF_0000_FFFF;
    let v = (v | (v << 8)) & 0x00FF_00FF_00FF_00FF;
    // ... its high nibble into byte 2i, its low nibble into byte 2i + 1 ...
    let nibbles = ((v >> 4) | (v << 8)) & NIBBLES;
    // ... and each nibble n to '0' + n, plus 'a' - '0' - 10 where n > 9 (n + 6 carries into
    // bit 4; no byte carries into the next).
    let letters = ((nibbles + ONES * 6) >> 4) & ONES;
    nibbles + ONES * u64::from(b'0') + letters * u64::from(b'a' - b'0' - 10)
}

/// ` key="value"`, quoted and escaped as the log layer prints a string field (Rust's `Debug`;
/// printable ASCII without quotes or backslashes, the usual case, is copied as it is).
/// Inlined, as [`Object::key`] is: out of line, a field cost ~180 instructions, most of the
/// writer's work per call line.
#[inline(always)]
fn text_field(out: &mut Vec<u8>, key: &'static str, value: &[u8]) {
    out.push(b' ');
    out.extend_from_slice(key.as_bytes());
    out.push(b'=');
    if plain(value) {
        out.push(b'"');
        out.extend_from_slice(value);
        out.push(b'"');
    } else {
        let _ = write!(out, "{:?}", String::from_utf8_lossy(value));
    }
}

/// True when `Debug` would print `value` as it is: printable ASCII without `"` or `\`.
/// Eight bytes at a time, branch-free: the writer asks it of every value of every line, most
/// of them shorter than a vector (measured: a short-circuiting `all` was a third of the
/// writer's instructions per call; a byte-wise fold, over keys and values, still a sixth of
/// the audit line's).
fn plain(value: &[u8]) -> bool {
    let mut chunks = value.chunks_exact(8);
    let mut bad = 0;
    for chunk in &mut chunks {
        bad |= unprintable(u64::from_le_bytes(chunk.try_into().expect("chunks of eight")));
    }
    // The tail, padded with a byte that passes.
    let mut last = [b'a'; 8];
    last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    bad |= unprintable(u64::from_le_bytes(last));
    bad == 0
}

/// Non-zero when a byte of `w` is below `' '`, above `'~'`, `"` or `\`: the byte-wise tests
/// of "Bit Twiddling Hacks" (S. E. Anderson, "Determine if a word has a byte less than n",
/// "... greater than n", "... a zero byte"). A borrow or carry can only start at a byte that
/// fails, so the answer is exact.
fn unprintable(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |v: u64| v.wrapping_sub(ONES) & !v;
    let below_space = w.wrapping_sub(ONES * u64::from(b' ')) & !w;
    let above_tilde = w.wrapping_add(ONES * u64::from(0x7f - b'~')) | w;
    let quote = zero_byte(w ^ (ONES * u64::from(b'"')));
    let backslash = zero_byte(w ^ (ONES * u64::from(b'\\')));
    (below_space | above_tilde | quote | backslash) & HIGH
}

/// The per-call log line, as the log layer would print an INFO event of target
/// [`CALL_LOG`](super::records::CALL_LOG) outside any span, with its newline.
pub fn call(out: &mut Vec<u8>, r: &CallRecord, format: LogFormat) {
    let request_id = r.request_id.as_ref().map_or(&b"-"[..], Text::as_bytes);
    match format {
        LogFormat::Text => {
            crate::clock::write_rfc3339(out, r.at_ms);
            out.extend_from_slice(b"  INFO mcp_runtime::call: call");
            text_field(out, "method", r.method.as_bytes());
            text_field(out, "name", r.name.as_bytes());
            if let Some(e) = &r.endpoint {
                text_field(out, "endpoint", e.as_bytes());
            }
            text_field(out, "caller", r.caller.as_deref().unwrap_or("-").as_bytes());
            if let Some(c) = &r.client {
                text_field(out, "client", c.as_bytes());
            }
            text_field(out, "outcome", r.outcome.as_bytes());
            out.extend_from_slice(b" duration_ms=");
            number(out, r.duration_us / 1000);
            out.push(b'.');
            crate::clock::digits(out, r.duration_us % 1000 / 100, 1);
            text_field(out, "request_id", request_id);
            if let Some(t) = &r.trace_id {
                text_field(out, "trace_id", t.as_bytes());
            }
            if let Some(a) = &r.adapter {
                text_field(out, "adapter", a.as_bytes());
            }
            if let Some(u) = &r.upstream {
                text_field(out, "upstream", u.as_bytes());
            }
            out.extend_from_slice(b" round=");
            number(out, u64::from(r.round));
            if let Some(e) = &r.error {
                text_field(out, "error", e.as_bytes());
            }
        }
        LogFormat::Json => {
            let mut line = Object::open(out);
            line.with("timestamp", |out| {
                out.push(b'"');
                crate::clock::write_rfc3339(out, r.at_ms);
                out.push(b'"');
            })
            .str("level", "INFO")
            .with("fields", |out| {
                let mut f = Object::open(out);
                f.str("message", "call").str("method", r.method).str("name", &r.name);
                if let Some(e) = &r.endpoint {
                    f.str("endpoint", e);
                }
                f.str("caller", r.caller.as_deref().unwrap_or("-"))
                    .opt_text("client", r.client.as_ref())
                    .str("outcome", r.outcome)
                    .millis("duration_ms", r.duration_us)
                    .with("request_id", |out| string(out, request_id));
                if let Some(t) = &r.trace_id {
                    f.str("trace_id", t);
                }
                f.opt_str("adapter", r.adapter.as_deref()).opt_str("upstream", r.upstream.as_deref());
                f.u64("round", u64::from(r.round));
                if let Some(e) = &r.error {
                    f.str("error", e);
                }
                f.close();
            })
            .str("target", super::records::CALL_LOG);
            line.close();
        }
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    fn record() -> CallRecord {
        CallRecord {
            at_ms: 1_796_299_838_268,
            finished: std::time::Instant::now(),
            method: "tools/call",
            name: "say \"hi\"".into(),
            endpoint: None,
            caller: None,
            client: Some("claude-code/2.1.0".into()),
            outcome: "tool_error",
            error: Some(Cow::Borrowed("upstream said 500")),
            duration_us: 12_345,
            adapter: Some("demo".into()),
            upstream: Some("http://127.0.0.1:8080".into()),
            request_id: Some("r-1".into()),
            trace_id: None,
            round: 1,
            arguments_digest: None,
            result_digest: None,
            arguments: None,
        }
    }

    #[test]
    fn text_line_reads_like_the_log_layers() {
        let mut out = Vec::new();
        call(&mut out, &record(), LogFormat::Text);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "2026-12-03T12:10:38.268Z  INFO mcp_runtime::call: call method=\"tools/call\" name=\"say \\\"hi\\\"\" caller=\"-\" client=\"claude-code/2.1.0\" outcome=\"tool_error\" duration_ms=12.3 request_id=\"r-1\" adapter=\"demo\" upstream=\"http://127.0.0.1:8080\" round=1 error=\"upstream said 500\"\n"
        );
    }

    #[test]
    fn json_line_parses_with_its_fields() {
        let mut out = Vec::new();
        call(&mut out, &record(), LogFormat::Json);
        assert_eq!(out.last(), Some(&b'\n'));
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["level"], "INFO");
        assert_eq!(v["target"], "mcp_runtime::call");
        assert_eq!(v["timestamp"], "2026-12-03T12:10:38.268Z");
        assert_eq!(v["fields"]["name"], "say \"hi\"");
        assert_eq!(v["fields"]["duration_ms"], 12.345);
        assert_eq!(v["fields"]["round"], 1);
        assert_eq!(v["fields"]["client"], "claude-code/2.1.0");
        assert_eq!(v["fields"]["upstream"], "http://127.0.0.1:8080");
        assert!(v["fields"].get("trace_id").is_none());
    }

    #[test]
    fn hex_is_lower_case() {
        let mut out = Vec::new();
        hex_into(&mut out, &[0x00, 0xab, 0x7f]);
        assert_eq!(out, b"00ab7f");
        // Longer than one stack chunk.
        let bytes: Vec<u8> = (0..=70).collect();
        let mut out = Vec::new();
        hex_into(&mut out, &bytes);
        assert_eq!(out, bytes.iter().map(|b| format!("{b:02x}")).collect::<String>().into_bytes());
        // Every byte value at every position of a word.
        for b in 0..=255u8 {
            for at in 0..4 {
                let mut word = [0x5a; 4];
                word[at] = b;
                let mut out = Vec::new();
                hex_into(&mut out, &word);
                assert_eq!(out, word.iter().map(|b| format!("{b:02x}")).collect::<String>().into_bytes());
            }
        }
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        for value in
            ["echo", "", "a/b?c=d&e", "say \"hi\"", "back\\slash", "tab\there", "\u{7f}del", "héllo", "日本", "\u{1}"]
        {
            let mut out = Vec::new();
            string(&mut out, value.as_bytes());
            assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(value).unwrap(), "{value:?}");
        }
    }

    #[test]
    fn plain_is_printable_ascii_without_quote_or_backslash_at_every_position() {
        let naive = |v: &[u8]| v.iter().all(|&b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\');
        for len in 0..20 {
            assert!(plain(&vec![b'x'; len]));
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut v = vec![b'~'; len];
                    v[at] = b;
                    assert_eq!(plain(&v), naive(&v), "byte {b:#04x} at {at} of {len}");
                }
            }
        }
    }
}
