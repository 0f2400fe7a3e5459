//! A map of bounded size that drops entries by the clock (second chance):
//! the hand passes the entries in the order they took their places and
//! drops the first not used since it last passed, sparing the others once.
//!
//! The per-thread caches of the request path (the open-file cache, the
//! answer memo) keep a few hundred or thousand entries out of a site's
//! tens of thousands of files. Under a site's skewed traffic the entries
//! asked for often must stay: dropping whichever entry the hash table
//! lists first kept a quarter of bench group R's requests answered from
//! memory, the clock more than half. Each cache keeps its own bounds (how
//! many entries, how many descriptors or bytes they hold); this type only
//! decides which entry goes.

use foldhash::HashMap;
use std::hash::BuildHasher;
use std::sync::Arc;

/// Entries keyed by string, each with its place on the clock.
pub(crate) struct ClockMap<V> {
    map: HashMap<Arc<str>, Held<V>>,
    /// The keys in their places; `None` for a free place.
    ring: Vec<Option<Arc<str>>>,
    free: Vec<usize>,
    hand: usize,
}

struct Held<V> {
    value: V,
    at: usize,
    used: bool,
}

impl<V> Default for ClockMap<V> {
    fn default() -> Self {
        ClockMap {
            map: HashMap::default(),
            ring: Vec::new(),
            free: Vec::new(),
            hand: 0,
        }
    }
}

impl<V> ClockMap<V> {
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    pub(crate) fn contains(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    /// The map's seeded hash of `key` (for callers that keep other tables
    /// keyed alike).
    pub(crate) fn hash(&self, key: &str) -> u64 {
        self.map.hasher().hash_one(key)
    }

    /// The value for `key`, marked as used.
    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        let held = self.map.get_mut(key)?;
        held.used = true;
        Some(&mut held.value)
    }

    /// Take `key` out.
    pub(crate) fn remove(&mut self, key: &str) -> Option<V> {
        let old = self.map.remove(key)?;
        self.ring[old.at] = None;
        self.free.push(old.at);
        Some(old.value)
    }

    /// Insert or replace (a replaced value keeps its place and its mark):
    /// the value replaced, if any. The caller makes room first.
    pub(crate) fn insert(&mut self, key: &str, value: V) -> Option<V> {
        if let Some(held) = self.map.get_mut(key) {
            return Some(std::mem::replace(&mut held.value, value));
        }
        let key: Arc<str> = Arc::from(key);
        let at = match self.free.pop() {
            Some(at) => at,
            None => {
                self.ring.push(None);
                self.ring.len() - 1
            }
        };
        self.ring[at] = Some(Arc::clone(&key));
        self.map.insert(
            key,
            Held {
                value,
                at,
                used: false,
            },
        );
        None
    }

    /// Drop one entry: the first the hand finds unused since it last
    /// passed. The value dropped, if the map held any.
    pub(crate) fn evict_one(&mut self) -> Option<V> {
        let n = self.ring.len();
        for _ in 0..2 * n {
            self.hand = (self.hand + 1) % n;
            let Some(key) = self.ring[self.hand].clone() else {
                continue;
            };
            match self.map.get_mut(&key) {
                Some(held) if held.used => held.used = false,
                _ => return self.remove(&key),
            }
        }
        None
    }

    /// Drop every entry whose value `keep` refuses: the values dropped.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&V) -> bool) -> Vec<V> {
        let gone: Vec<Arc<str>> = self
            .map
            .iter()
            .filter(|(_, h)| !keep(&h.value))
            .map(|(k, _)| Arc::clone(k))
            .collect();
        gone.iter().filter_map(|k| self.remove(k)).collect()
    }

    #[cfg(test)]
    pub(crate) fn clear(&mut self) {
        *self = ClockMap::default();
    }
}

#[cfg(test)]
mod tests {
    use super::ClockMap;

    #[test]
    fn the_hand_spares_an_entry_used_since_it_passed() {
        let mut m = ClockMap::default();
        for k in ["a", "b", "c"] {
            m.insert(k, k.to_string());
        }
        m.get_mut("b");
        m.get_mut("c");
        // The hand starts past the first place: "b" and "c" are spared
        // once, "a" (never used) goes.
        assert_eq!(m.evict_one().as_deref(), Some("a"));
        assert_eq!(m.len(), 2);
        // Both were spared (their marks cleared): the next goes in order.
        assert_eq!(m.evict_one().as_deref(), Some("b"));
        assert!(m.get_mut("c").is_some());
    }

    #[test]
    fn places_are_reused_and_replacing_keeps_the_place() {
        let mut m = ClockMap::default();
        m.insert("a", 1);
        m.insert("b", 2);
        assert_eq!(m.remove("a"), Some(1));
        m.insert("c", 3);
        assert_eq!(m.ring.len(), 2);
        assert_eq!(m.insert("c", 4), Some(3));
        assert_eq!(m.get_mut("c"), Some(&mut 4));
        assert_eq!(m.retain(|v| *v > 2), vec![2]);
        assert_eq!(m.len(), 1);
        m.clear();
        assert_eq!(m.evict_one(), None);
    }
}
