//! A record's per-request text (the request id, the client's `name/version`) held in the
//! record itself rather than behind a pointer into the request's memory.
//!
//! Why: the record is copied onto its thread's queue while the request path still has that
//! text in cache, and the writer then reads it from the queue's contiguous memory. Through a
//! pointer (the request id's `HeaderValue`, the envelope's `Arc<str>`), each record cost the
//! writer a cache miss on memory the request wrote milliseconds before (measured with `perf`:
//! two fifths of the samples in the writer's loop were the load of the request id's bytes),
//! and its drop a free into the request thread's heap.

/// Up to this many bytes are held inline (a UUID request id is 36, `claude-code/2.1.0` 17);
/// longer text is boxed.
const INLINE: usize = 38;

/// A short string, inline when it fits.
#[derive(Clone)]
pub enum Text {
    /// `len` bytes of UTF-8 at the start of the array.
    Inline(u8, [u8; INLINE]),
    /// Longer text.
    Boxed(Box<str>),
}

impl Text {
    /// `text`, inline when it fits.
    pub fn new(text: &str) -> Self {
        match u8::try_from(text.len()) {
            Ok(len) if text.len() <= INLINE => {
                let mut bytes = [0; INLINE];
                bytes[..text.len()].copy_from_slice(text.as_bytes());
                Self::Inline(len, bytes)
            }
            _ => Self::Boxed(text.into()),
        }
    }

    /// The text's bytes, without the UTF-8 check [`Self::as_str`] makes (the writer copies
    /// plain ASCII as it is: `telemetry/line.rs`).
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Self::Inline(len, bytes) => &bytes[..usize::from(*len)],
            Self::Boxed(text) => text.as_bytes(),
        }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        match self {
            // Copied from a `str` whole, so always UTF-8 (the check is a fast ASCII pass).
            Self::Inline(len, bytes) => std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default(),
            Self::Boxed(text) => text,
        }
    }
}

impl std::ops::Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_str().fmt(f)
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Self::new(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_inline_and_long_text_boxed_and_both_read_back() {
        let id = "0b7a2d5e-6f1c-4b8e-9d3a-2c4f6e8a0b1d";
        assert!(matches!(Text::new(id), Text::Inline(36, _)));
        assert_eq!(&*Text::new(id), id);
        assert_eq!(Text::new(id).as_bytes(), id.as_bytes());
        let exact = "é".repeat(INLINE / 2);
        assert!(matches!(Text::new(&exact), Text::Inline(_, _)));
        assert_eq!(&*Text::new(&exact), exact);
        let long = "x".repeat(INLINE + 1);
        assert!(matches!(Text::new(&long), Text::Boxed(_)));
        assert_eq!(&*Text::new(&long), long);
        assert_eq!(&*Text::new(""), "");
    }
}
