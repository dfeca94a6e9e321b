//! One event's terms counted without sorting them: each term number remembers the
//! event it was last counted for and where its count is, so a token costs one array
//! access instead of a place in a sorted list (a build counts every token once).

/// The distinct terms of the event being counted, with tf and field flags.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Per term number: the event it was last counted for, and its place in `counts`.
    seen: Vec<(u32, u32)>,
    /// The event being counted (0: none yet).
    event: u32,
    /// The event's distinct terms, in first-seen order: number, tf, field flags.
    counts: Vec<(u32, u32, u32)>,
    tokens: u32,
}

impl Tally {
    /// Start counting the next event.
    pub(crate) fn start(&mut self) {
        self.counts.clear();
        self.tokens = 0;
        self.event = self.event.wrapping_add(1);
        if self.event == 0 {
            // Four billion events later: forget every mark rather than mistake one.
            self.seen.iter_mut().for_each(|cell| *cell = (0, 0));
            self.event = 1;
        }
    }

    /// Count one token of term `term` with field flag `flag`.
    pub(crate) fn add(&mut self, term: u32, flag: u32) {
        self.tokens = self.tokens.saturating_add(1);
        let at = term as usize;
        if at >= self.seen.len() {
            self.seen.resize(at + 1, (0, 0));
        }
        let Some(cell) = self.seen.get_mut(at) else { return };
        if cell.0 == self.event
            && let Some(count) = self.counts.get_mut(cell.1 as usize)
        {
            count.1 = count.1.saturating_add(1);
            count.2 |= flag;
        } else {
            *cell = (self.event, u32::try_from(self.counts.len()).unwrap_or(u32::MAX));
            self.counts.push((term, 1, flag));
        }
    }

    /// The distinct terms counted since [`Tally::start`]: number, tf, flags.
    pub(crate) fn counts(&self) -> &[(u32, u32, u32)] {
        &self.counts
    }

    /// How many tokens were counted since [`Tally::start`].
    pub(crate) fn tokens(&self) -> u32 {
        self.tokens
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_event_counts_its_own_terms() {
        let mut tally = Tally::default();
        tally.start();
        for (term, flag) in [(5, 1), (2, 0), (5, 4), (900, 0), (2, 0)] {
            tally.add(term, flag);
        }
        assert_eq!(tally.counts(), [(5, 2, 5), (2, 2, 0), (900, 1, 0)]);
        assert_eq!(tally.tokens(), 5);
        tally.start();
        tally.add(2, 8);
        assert_eq!(tally.counts(), [(2, 1, 8)]);
        assert_eq!(tally.tokens(), 1);
        // Past the wrap of the event counter, old marks are not mistaken for new ones.
        tally.event = u32::MAX;
        tally.seen[2] = (0, 0);
        tally.start();
        tally.add(5, 0);
        assert_eq!(tally.counts(), [(5, 1, 0)]);
    }
}
