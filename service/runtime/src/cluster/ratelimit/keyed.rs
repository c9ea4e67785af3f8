//! The limiter's per-limit state (GCRA times, leases), keyed by tool, then caller.

use hashbrown::hash_map::EntryRef;

/// hashbrown's default hasher, foldhash: seeded at random per map, and several times faster
/// than std's SipHash on short keys.
type Map<T> = hashbrown::HashMap<String, T>;

/// State per limit, found by tool, then caller, borrowing their names: a call allocates
/// nothing to find its entries; only a new entry copies the names (hashbrown's `entry_ref`).
#[derive(Debug)]
pub struct Keyed<T> {
    tools: Map<PerTool<T>>,
    /// Entries held (callers' and tools' own).
    len: usize,
    /// Twice what the last prune kept: no prune before that (see `prune`).
    kept: usize,
}

#[derive(Debug)]
struct PerTool<T> {
    global: Option<T>,
    callers: Map<T>,
}

impl<T> Default for Keyed<T> {
    fn default() -> Self {
        Self { tools: Map::default(), len: 0, kept: 0 }
    }
}

impl<T> Keyed<T> {
    /// The entry of `tool`'s limit for `caller` (`None`: the tool's global one), if any.
    pub fn get_mut(&mut self, tool: &str, caller: Option<&str>) -> Option<&mut T> {
        let tool = self.tools.get_mut(tool)?;
        match caller {
            None => tool.global.as_mut(),
            Some(caller) => tool.callers.get_mut(caller),
        }
    }

    /// That entry, made with `new` when there is none.
    pub fn get_or_insert_with(&mut self, tool: &str, caller: Option<&str>, new: impl FnOnce() -> T) -> &mut T {
        let tool = self.tools.entry_ref(tool).or_insert_with(|| PerTool { global: None, callers: Map::default() });
        let slot = match caller {
            None => &mut tool.global,
            Some(caller) => match tool.callers.entry_ref(caller) {
                EntryRef::Occupied(e) => return e.into_mut(),
                EntryRef::Vacant(e) => {
                    self.len += 1;
                    return e.insert(new());
                }
            },
        };
        if slot.is_none() {
            self.len += 1;
        }
        slot.get_or_insert_with(new)
    }

    /// Past `max` entries, keeps only those `keep` says are still in use: a replica that has
    /// seen many callers does not keep an entry for each of them. When more than `max` are in
    /// use, the next prune waits until the entries have doubled, so calls do not walk them all
    /// one after another.
    pub fn prune(&mut self, max: usize, mut keep: impl FnMut(&T) -> bool) {
        if self.len <= max.max(self.kept) {
            return;
        }
        let mut len = 0;
        self.tools.retain(|_, tool| {
            tool.global = tool.global.take().filter(&mut keep);
            tool.callers.retain(|_, v| keep(v));
            len += tool.callers.len() + usize::from(tool.global.is_some());
            tool.global.is_some() || !tool.callers.is_empty()
        });
        self.len = len;
        self.kept = len * 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_no_longer_in_use_are_dropped_past_the_cap() {
        let mut keyed = Keyed::<u64>::default();
        for i in 0..10 {
            *keyed.get_or_insert_with("t", Some(&format!("c{i}")), || 0) = i;
        }
        *keyed.get_or_insert_with("t", None, || 0) = 100;
        *keyed.get_or_insert_with("u", Some("c0"), || 0) = 7;
        assert_eq!(*keyed.get_or_insert_with("t", Some("c3"), || 0), 3, "an entry is made once");
        assert_eq!(keyed.len, 12, "one entry per tool and caller, one for the tool");
        keyed.prune(20, |_| false);
        assert_eq!(keyed.len, 12, "under the cap nothing is dropped");
        keyed.prune(5, |v| *v >= 5);
        assert_eq!(keyed.len, 7, "c5..c9 of t, t's own and c0 of u");
        assert_eq!(keyed.get_mut("t", Some("c4")), None);
        assert_eq!(keyed.get_mut("t", None), Some(&mut 100));
        assert_eq!(keyed.get_mut("u", Some("c0")), Some(&mut 7));
        keyed.get_or_insert_with("v", None, || 0);
        keyed.prune(0, |_| false);
        assert_eq!(keyed.len, 8, "no prune until the entries have doubled since the last (to 14)");
        for i in 0..6 {
            keyed.get_or_insert_with("v", Some(&i.to_string()), || 0);
        }
        keyed.prune(0, |_| false);
        assert_eq!(keyed.len, 14);
        keyed.get_or_insert_with("v", Some("6"), || 0);
        keyed.prune(0, |_| false);
        assert!(keyed.tools.is_empty() && keyed.len == 0);
    }
}
