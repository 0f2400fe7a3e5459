//! Keys seen lately, by hash: a direct-mapped table, so that something is
//! kept only when it comes again while its slot still holds it. The
//! answer memo and the walk memo keep what they are asked for a second
//! time: most request lines of a site's long tail come once, and keeping
//! them would only cost.

/// Slots of one table: four for each answer the memo keeps, so that a
/// request line of a site's few thousand often-asked ones still finds its
/// slot when it comes again (128 KiB a table).
const SLOTS: usize = 4 * crate::answer_memo::ENTRIES_PER_THREAD;

pub(crate) struct Sightings(Box<[u64; SLOTS]>);

impl Default for Sightings {
    fn default() -> Self {
        Sightings(Box::new([0; SLOTS]))
    }
}

impl Sightings {
    /// Note `hash`; whether its slot already held it.
    pub(crate) fn replace(&mut self, hash: u64) -> bool {
        let slot = &mut self.0[(hash as usize) % SLOTS];
        std::mem::replace(slot, hash) == hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_is_seen_again_until_another_takes_its_slot() {
        let mut s = Sightings::default();
        assert!(!s.replace(7));
        assert!(s.replace(7));
        assert!(!s.replace(7 + SLOTS as u64));
        assert!(!s.replace(7));
    }
}
