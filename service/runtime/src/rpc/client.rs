//! The client a request names (`clientInfo`: MCP 2026-07-28 basic § Request metadata
//! (_meta); `initialize` params for 2025-era clients) as the call records show it:
//! `name/version`, shared. A replica hears from few distinct clients, and a connection's
//! requests all name the same one, so each worker thread keeps the last few labels it made
//! and a request costs a comparison and a reference-count increment, not an allocation.

use std::cell::RefCell;
use std::sync::Arc;

/// The longest name or version kept (bytes, cut at a character boundary): the client's to
/// bloat, the log's to carry.
const MAX_PART: usize = 64;

/// Labels each thread remembers.
const REMEMBERED: usize = 8;

/// `(name, version, label)`.
type Label = (Box<str>, Box<str>, Arc<str>);

thread_local! {
    /// The most recently made or found first.
    static LABELS: RefCell<Vec<Label>> = const { RefCell::new(Vec::new()) };
}

/// `name/version`, each cut to [`MAX_PART`] bytes.
pub fn label(name: &str, version: &str) -> Arc<str> {
    let (name, version) = (cut(name), cut(version));
    LABELS.with_borrow_mut(|labels| {
        if let Some(i) = labels.iter().position(|(n, v, _)| **n == *name && **v == *version) {
            if i > 0 {
                labels[..=i].rotate_right(1);
            }
            return Arc::clone(&labels[0].2);
        }
        let made: Arc<str> = Arc::from(format!("{name}/{version}"));
        labels.truncate(REMEMBERED - 1);
        labels.insert(0, (name.into(), version.into(), Arc::clone(&made)));
        made
    })
}

/// The label of a `clientInfo` object, when its `name` and `version` are strings.
pub fn of_value(info: &serde_json::Value) -> Option<Arc<str>> {
    Some(label(info.get("name")?.as_str()?, info.get("version")?.as_str()?))
}

fn cut(s: &str) -> &str {
    if s.len() <= MAX_PART {
        return s;
    }
    let mut end = MAX_PART;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_client_shares_one_label_and_long_parts_are_cut_at_a_character() {
        let a = label("claude-code", "2.1.0");
        assert_eq!(&*a, "claude-code/2.1.0");
        assert!(Arc::ptr_eq(&a, &label("claude-code", "2.1.0")));
        for i in 0..REMEMBERED * 2 {
            label("other", &i.to_string());
        }
        assert_eq!(&*label("claude-code", "2.1.0"), "claude-code/2.1.0");
        // 2-byte characters: 64 bytes end on a boundary, 63 would not.
        assert_eq!(label(&"é".repeat(40), "1").len(), 64 + 2);
        assert_eq!(label(&format!("a{}", "é".repeat(40)), "1").len(), 63 + 2);
        assert_eq!(of_value(&serde_json::json!({"name": "x", "version": 1})), None);
    }
}
