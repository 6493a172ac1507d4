//! Turns between the shares of a topic. A message names whose work it is (its share: a company), and
//! whoever hands messages out — the embedded queue's consumers, the RabbitMQ adapter's relay — takes
//! them share by share rather than in the order they came: the share served least recently goes first,
//! and a batch is split evenly between the shares that have messages ready, the rest going to those
//! with more. So one company's backlog of thousands of messages delays another's first message by one
//! turn, not by the backlog.
//!
//! `Turns` remembers, per process, when each share of a topic was last served; `Take` plans one batch
//! over the shares that have messages, asking for each share's part and handing what a share could not
//! fill to the others.

use std::collections::HashMap;

use parking_lot::Mutex;

/// The most shares of a topic one batch looks at; more wait for a later one.
pub(crate) const MAX_SHARES: i64 = 1000;

/// Entries kept before the shares of a topic that had nothing ready are forgotten.
const REMEMBERED: usize = 10_000;

/// When each share of each topic was last served, as a count of turns.
#[derive(Default)]
pub(crate) struct Turns {
    served: Mutex<Served>,
}

/// The turns counted so far, and the turn each (topic, share) was last served in.
#[derive(Default)]
struct Served {
    clock: u64,
    last: HashMap<(String, String), u64>,
}

impl Turns {
    /// `shares` (which have messages ready) in the order they should be served: never served first, in
    /// the order given, then the least recently served.
    pub(crate) fn order(&self, topic: &str, mut shares: Vec<String>) -> Vec<String> {
        let mut served = self.served.lock();
        let last = &mut served.last;
        if last.len() > REMEMBERED {
            last.retain(|(t, s), _| t != topic || shares.contains(s));
        }
        // A stable sort keeps the given order among shares never served (turn 0).
        shares.sort_by_key(|share| {
            last.get(&(topic.to_string(), share.clone()))
                .copied()
                .unwrap_or(0)
        });
        shares
    }

    /// Records that `shares` were served now, the first of them last: among shares served together,
    /// the one that went first goes last next time.
    pub(crate) fn served(&self, topic: &str, shares: &[String]) {
        let mut served = self.served.lock();
        for share in shares.iter().rev() {
            served.clock += 1;
            let turn = served.clock;
            served.last.insert((topic.to_string(), share.clone()), turn);
        }
    }
}

/// The plan of one batch of up to `want` messages over shares in turn order. `next` says which share to
/// ask for how many; `got` says how many it gave. A share that gave all it was asked for may have more
/// and is asked again for what the others could not give.
pub(crate) struct Take {
    round: Vec<String>,
    at: usize,
    parts: Vec<usize>,
    again: Vec<String>,
    want: usize,
    asked: usize,
    served: Vec<String>,
}

impl Take {
    pub(crate) fn new(shares: Vec<String>, want: usize) -> Take {
        let parts = parts(shares.len(), want);
        Take {
            round: shares,
            at: 0,
            parts,
            again: Vec::new(),
            want,
            asked: 0,
            served: Vec::new(),
        }
    }

    /// The next share to ask and how many messages to ask it for; `None` when the batch is complete
    /// or no share has more.
    pub(crate) fn next(&mut self) -> Option<(String, usize)> {
        loop {
            if self.want == 0 {
                return None;
            }
            if self.at == self.round.len() {
                if self.again.is_empty() {
                    return None;
                }
                self.round = std::mem::take(&mut self.again);
                self.parts = parts(self.round.len(), self.want);
                self.at = 0;
            }
            let share = self.round[self.at].clone();
            let part = self.parts[self.at];
            self.at += 1;
            if part == 0 {
                // Its part of this round went to the shares before it; it may get one next round.
                self.again.push(share);
                continue;
            }
            self.asked = part;
            return Some((share, part));
        }
    }

    /// The share `next` named gave `count` messages.
    pub(crate) fn got(&mut self, count: usize) {
        let share = &self.round[self.at - 1];
        if count > 0 && !self.served.contains(share) {
            self.served.push(share.clone());
        }
        if count >= self.asked {
            self.again.push(share.clone());
        }
        self.want = self.want.saturating_sub(count);
    }

    /// The shares that gave at least one message, in the order they were first served.
    pub(crate) fn served(&self) -> &[String] {
        &self.served
    }
}

/// `want` split between `n` shares: equal parts, the first shares one more while the remainder lasts.
fn parts(n: usize, want: usize) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    (0..n)
        .map(|i| want / n + usize::from(i < want % n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a plan against shares holding `ready` messages each.
    fn take(ready: &[(&str, usize)], want: usize) -> Vec<(String, usize)> {
        let mut left: HashMap<String, usize> =
            ready.iter().map(|(s, n)| (s.to_string(), *n)).collect();
        let shares = ready.iter().map(|(s, _)| s.to_string()).collect();
        let mut plan = Take::new(shares, want);
        let mut taken: Vec<(String, usize)> = Vec::new();
        while let Some((share, n)) = plan.next() {
            let have = left.get_mut(&share).unwrap();
            let given = n.min(*have);
            *have -= given;
            plan.got(given);
            match taken.iter_mut().find(|(s, _)| *s == share) {
                Some((_, total)) => *total += given,
                None => taken.push((share, given)),
            }
        }
        taken
    }

    #[test]
    fn a_batch_is_split_evenly_and_what_one_share_lacks_goes_to_the_others() {
        assert_eq!(
            take(&[("evil", 1000), ("acme", 2)], 10),
            vec![("evil".into(), 8), ("acme".into(), 2)]
        );
        assert_eq!(
            take(&[("a", 5), ("b", 5), ("c", 5)], 10),
            vec![("a".into(), 4), ("b".into(), 3), ("c".into(), 3)]
        );
        assert_eq!(
            take(&[("a", 1), ("b", 0), ("c", 100)], 50),
            vec![("a".into(), 1), ("b".into(), 0), ("c".into(), 49)]
        );
    }

    #[test]
    fn one_message_goes_to_the_first_share_and_a_short_batch_ends() {
        assert_eq!(take(&[("a", 3), ("b", 3)], 1), vec![("a".into(), 1)]);
        assert_eq!(
            take(&[("a", 2), ("b", 1)], 100),
            vec![("a".into(), 2), ("b".into(), 1)]
        );
        assert_eq!(take(&[], 5), vec![]);
    }

    #[test]
    fn the_share_served_least_recently_goes_first() {
        let turns = Turns::default();
        let shares = || vec!["evil".to_string(), "acme".to_string(), "new".to_string()];
        assert_eq!(turns.order("t", shares()), shares(), "none served yet");
        turns.served("t", &["evil".into()]);
        assert_eq!(turns.order("t", shares()), ["acme", "new", "evil"]);
        turns.served("t", &["acme".into(), "new".into()]);
        assert_eq!(
            turns.order("t", shares()),
            ["evil", "new", "acme"],
            "of two served together, the first goes last"
        );
        assert_eq!(
            turns.order("other", shares()),
            shares(),
            "turns are per topic"
        );
    }
}
