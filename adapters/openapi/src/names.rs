//! Tool names: `operationId` when usable, else method + path; always `^[A-Za-z0-9_-]{1,64}$`
//! (what the big model providers accept), unique, and stable across reloads: a name that is
//! too long, or that several operations would share, gets a short hash of the operation's
//! method and path, which does not depend on the order of the document.

use std::collections::HashMap;

/// Longest name.
pub const MAX_LEN: usize = 64;

/// The name an operation asks for, before uniqueness.
pub fn candidate(operation_id: Option<&str>, method: &str, path: &str) -> String {
    let raw = match operation_id.map(sanitize).filter(|s| !s.is_empty()) {
        Some(id) => return id,
        None => format!("{method}_{path}"),
    };
    sanitize(&raw)
}

/// Letters, digits, `_` and `-`; runs of anything else become one `_`, trimmed at both ends.
fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_owned()
}

/// FNV-1a 64 of the operation's identity, 8 hex digits: stable across runs and platforms.
fn hash(method: &str, path: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in method.bytes().chain([b' ']).chain(path.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{:08x}", h >> 32)
}

fn with_hash(base: &str, method: &str, path: &str) -> String {
    let keep = base.char_indices().nth(MAX_LEN - 9).map_or(base.len(), |(i, _)| i);
    format!("{}_{}", &base[..keep], hash(method, path))
}

/// Final names for `(candidate, method, path)` in order: unique and valid.
pub fn assign(wanted: &[(String, String, String)]) -> Vec<String> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for (name, _, _) in wanted {
        *count.entry(name.as_str()).or_default() += 1;
    }
    let mut taken: HashMap<String, ()> = HashMap::new();
    let mut out = Vec::with_capacity(wanted.len());
    for (name, method, path) in wanted {
        let mut n =
            if count[name.as_str()] > 1 || name.len() > MAX_LEN { with_hash(name, method, path) } else { name.clone() };
        // Two hashes that collide as well (one in four billion): number the later one.
        let mut i = 2;
        while taken.contains_key(&n) {
            n = with_hash(&format!("{name}{i}"), method, path);
            i += 1;
        }
        taken.insert(n.clone(), ());
        out.push(n);
    }
    out
}

/// `^[A-Za-z0-9_-]{1,64}$`.
pub fn is_valid(name: &str) -> bool {
    (1..=MAX_LEN).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_valid_unique_and_stable() {
        assert_eq!(candidate(Some("listPets"), "get", "/pets"), "listPets");
        assert_eq!(candidate(Some("pets.list (v2)"), "get", "/pets"), "pets_list_v2");
        assert_eq!(candidate(None, "get", "/pets/{petId}/toys"), "get_pets_petId_toys");
        assert_eq!(candidate(Some("../"), "delete", "/x"), "delete_x");
        let long = "a".repeat(100);
        let wanted = vec![
            (long, "get".to_owned(), "/a".to_owned()),
            ("dup".to_owned(), "get".to_owned(), "/b".to_owned()),
            ("dup".to_owned(), "post".to_owned(), "/b".to_owned()),
            ("plain".to_owned(), "get".to_owned(), "/c".to_owned()),
        ];
        let names = assign(&wanted);
        assert!(names.iter().all(|n| is_valid(n)), "{names:?}");
        assert_eq!(names[0].len(), MAX_LEN);
        assert_ne!(names[1], names[2]);
        assert_eq!(names[3], "plain");
        // The order of the document does not change a name.
        let mut reversed = wanted;
        reversed.reverse();
        let again = assign(&reversed);
        assert_eq!(again[3], names[0]);
        assert_eq!(again[1], names[2]);
    }
}
