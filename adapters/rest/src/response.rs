//! Output mapping: an upstream reply becomes a `CallToolResult`.
//!
//! - status ≥ 400 → `isError: true` with the status and the start of the body;
//! - an unfollowed redirect (3xx) → `isError: true` naming where it pointed;
//! - JSON → `structuredContent` plus the same JSON as a text block (MCP 2026-07-28 server/tools);
//! - text (and XML, YAML, JavaScript, forms) → a text block;
//! - `image/*` / `audio/*` → an image / audio block (base64);
//! - other binary → a short text note (bytes a model cannot read are not worth shipping);
//! - a body cut at `max_response_bytes` carries a notice (and is never parsed as JSON or shown
//!   as an image, since it is incomplete).

use base64::Engine as _;
use mcp_adapter_api::protocol::{CallToolResult, ContentBlock};

use crate::execute::Reply;

/// How much of an error body the model sees.
const ERROR_BODY_CHARS: usize = 2_000;

/// Maps `reply`; `cap` is the configured `max_response_bytes` (for the notice).
pub fn to_result(reply: &Reply, cap: usize) -> CallToolResult {
    let status = reply.status;
    let status_line = match status.canonical_reason() {
        Some(reason) => format!("HTTP {} {reason}", status.as_u16()),
        None => format!("HTTP {}", status.as_u16()),
    };
    if status.is_client_error() || status.is_server_error() {
        let body = trimmed(&String::from_utf8_lossy(&reply.body), ERROR_BODY_CHARS);
        let mut text = if body.is_empty() { status_line } else { format!("{status_line}: {body}") };
        if let Some(after) = reply.retry_after {
            text.push_str(&format!(" (Retry-After: {} s)", after.as_secs()));
        }
        return CallToolResult::error(text);
    }
    if status.is_redirection() {
        let target = reply.location.as_deref().unwrap_or("nowhere");
        return CallToolResult::error(format!(
            "{status_line}: the upstream redirected to {target}; redirects to another host are not followed"
        ));
    }
    if reply.body.is_empty() {
        return CallToolResult::text(format!("{status_line} (empty body)"));
    }
    let mime = reply.content_type.as_deref().map(essence).unwrap_or_default();
    let notice = || {
        format!(
            "\n\n[truncated: the response is longer than max_response_bytes ({cap} bytes); only the start is shown]"
        )
    };
    let kind = Kind::of(&mime, &reply.body);
    if reply.truncated && matches!(kind, Kind::Image | Kind::Audio | Kind::Binary) {
        return CallToolResult::text(format!(
            "{status_line}: {mime} response longer than max_response_bytes ({cap} bytes), not shown"
        ));
    }
    match kind {
        Kind::Json if !reply.truncated => match serde_json::from_slice(&reply.body) {
            Ok(value) => CallToolResult::structured(value),
            Err(_) => CallToolResult::text(String::from_utf8_lossy(&reply.body)),
        },
        Kind::Json | Kind::Text => {
            let mut text = String::from_utf8_lossy(&reply.body).into_owned();
            if reply.truncated {
                // A cut can split a UTF-8 sequence: drop the replacement character it leaves.
                if text.ends_with('\u{FFFD}') {
                    text.pop();
                }
                text.push_str(&notice());
            }
            CallToolResult::text(text)
        }
        Kind::Image => result(ContentBlock::image(base64(&reply.body), mime)),
        Kind::Audio => result(ContentBlock::audio(base64(&reply.body), mime)),
        Kind::Binary => CallToolResult::text(format!(
            "{status_line}: binary response, {} bytes of {}, not shown",
            reply.body.len(),
            if mime.is_empty() { "unknown type" } else { &mime }
        )),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Json,
    Text,
    Image,
    Audio,
    Binary,
}

impl Kind {
    fn of(mime: &str, body: &[u8]) -> Self {
        let (top, sub) = mime.split_once('/').unwrap_or((mime, ""));
        match (top, sub) {
            ("application", "json") => Self::Json,
            (_, s) if s.ends_with("+json") => Self::Json,
            ("text", _) => Self::Text,
            ("application", "xml" | "javascript" | "yaml" | "x-yaml" | "x-www-form-urlencoded" | "graphql") => {
                Self::Text
            }
            (_, s) if s.ends_with("+xml") => Self::Text,
            ("image", _) => Self::Image,
            ("audio", _) => Self::Audio,
            // No type at all: readable text is shown, anything else is not.
            ("", _) if std::str::from_utf8(body).is_ok() => Self::Text,
            _ => Self::Binary,
        }
    }
}

fn result(block: ContentBlock) -> CallToolResult {
    CallToolResult { content: vec![block], ..CallToolResult::default() }
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// `type/subtype` in lower case, without parameters.
fn essence(content_type: &str) -> String {
    content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase()
}

/// At most `max` characters, whitespace trimmed, with an ellipsis when cut.
fn trimmed(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bytes::Bytes;
    use reqwest::StatusCode;
    use serde_json::json;

    use super::*;

    fn reply(status: u16, content_type: Option<&str>, body: &[u8]) -> Reply {
        Reply {
            status: StatusCode::from_u16(status).unwrap(),
            content_type: content_type.map(str::to_owned),
            location: None,
            retry_after: None,
            body: Bytes::copy_from_slice(body),
            truncated: false,
        }
    }

    fn text(r: &CallToolResult) -> &str {
        match &r.content[0] {
            ContentBlock::Text { text, .. } => text,
            other => panic!("not text: {other:?}"),
        }
    }

    #[test]
    fn json_becomes_structured_content_plus_text() {
        let r = to_result(&reply(200, Some("application/json; charset=utf-8"), br#"{"a":[1,2]}"#), 100);
        assert_eq!(r.structured_content, Some(json!({"a": [1, 2]})));
        assert_eq!(text(&r), r#"{"a":[1,2]}"#);
        assert!(!r.is_error);
        let r = to_result(&reply(200, Some("application/problem+json"), b"[1]"), 100);
        assert_eq!(r.structured_content, Some(json!([1])));
    }

    #[test]
    fn errors_carry_status_and_a_trimmed_body() {
        let long = "x".repeat(5_000);
        let r = to_result(&reply(404, Some("text/plain"), format!("  {long}\n").as_bytes()), 10_000);
        assert!(r.is_error);
        let t = text(&r);
        assert!(t.starts_with("HTTP 404 Not Found: xxx"), "{t}");
        assert!(t.chars().count() < 2_100 && t.ends_with('…'));
        let mut limited = reply(429, None, b"");
        limited.retry_after = Some(Duration::from_secs(30));
        assert_eq!(text(&to_result(&limited, 1)), "HTTP 429 Too Many Requests (Retry-After: 30 s)");
        let mut moved = reply(302, None, b"");
        moved.location = Some("http://elsewhere.example/x".to_owned());
        let r = to_result(&moved, 1);
        assert!(r.is_error && text(&r).contains("elsewhere.example"));
    }

    #[test]
    fn images_text_and_binary() {
        let r = to_result(&reply(200, Some("image/png"), &[0x89, b'P', b'N', b'G']), 100);
        assert_eq!(r.content[0], ContentBlock::image("iVBORw==", "image/png"));
        let r = to_result(&reply(200, Some("text/html"), b"<p>hi</p>"), 100);
        assert_eq!(text(&r), "<p>hi</p>");
        let r = to_result(&reply(200, Some("application/octet-stream"), &[0, 1, 2]), 100);
        assert!(text(&r).contains("binary response, 3 bytes of application/octet-stream"));
        let r = to_result(&reply(200, None, b"plain"), 100);
        assert_eq!(text(&r), "plain");
        let r = to_result(&reply(204, None, b""), 100);
        assert_eq!(text(&r), "HTTP 204 No Content (empty body)");
    }

    #[test]
    fn truncated_bodies_say_so_and_are_not_parsed() {
        let mut r = reply(200, Some("application/json"), "{\"a\":\"é".as_bytes());
        r.body = r.body.slice(..r.body.len() - 1);
        r.truncated = true;
        let out = to_result(&r, 7);
        assert!(out.structured_content.is_none());
        assert!(text(&out).starts_with("{\"a\":\"\n\n[truncated: "), "{}", text(&out));
        let mut img = reply(200, Some("image/png"), b"abc");
        img.truncated = true;
        assert!(text(&to_result(&img, 3)).contains("not shown"));
    }
}
