//! The score of one leaf of an application for one call, from the hits of a scan: per turn, the include
//! phrases matching it minus the exclude phrases matching it, never below zero, counted only when some
//! include phrase matches; and every match of each of the leaf's phrases, for showing where they matched.

use std::collections::BTreeMap;

use crate::scan::Hit;

/// A leaf's score for one call and the matches of its phrases.
#[derive(Debug, Clone, PartialEq)]
pub struct LeafScore {
    pub score: u32,
    /// The leaf's include phrases in the order given, then its exclude phrases, each listed once, with all
    /// their matches (none when they matched nowhere). Exclude phrases are listed with their matches even
    /// where those changed nothing.
    pub phrases: Vec<PhraseMatches>,
}

/// The matches of one phrase of a leaf in one call.
#[derive(Debug, Clone, PartialEq)]
pub struct PhraseMatches {
    pub phrase: u32,
    pub exclude: bool,
    /// By turn.
    pub matches: Vec<TurnMatch>,
}

/// Where a phrase matched: the turn's index and the earliest start and latest end of the words that
/// satisfied it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TurnMatch {
    pub turn: usize,
    pub start: f64,
    pub end: f64,
}

/// Scores a leaf whose include phrases have the ids `include` and exclude phrases the ids `exclude`, from
/// the hits of a scan (hits of other phrases are ignored). Each turn adds `max(inc - exc, 0)` when `inc`,
/// the number of include phrases matching it, is above zero, `exc` being the number of exclude phrases
/// matching it; a turn matched only by exclude phrases adds nothing. An id in both lists counts on both
/// sides.
pub fn score_leaf(hits: &[Hit], include: &[u32], exclude: &[u32]) -> LeafScore {
    let mut phrases: Vec<PhraseMatches> = Vec::new();
    for (ids, is_exclude) in [(include, false), (exclude, true)] {
        for &id in ids {
            if !phrases
                .iter()
                .any(|p| p.phrase == id && p.exclude == is_exclude)
            {
                phrases.push(PhraseMatches {
                    phrase: id,
                    exclude: is_exclude,
                    matches: Vec::new(),
                });
            }
        }
    }
    let mut listed_at: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, listed) in phrases.iter().enumerate() {
        listed_at.entry(listed.phrase).or_default().push(i);
    }
    // Per turn: (include matches, exclude matches).
    let mut turns: BTreeMap<usize, (u32, u32)> = BTreeMap::new();
    for hit in hits {
        for &i in listed_at.get(&hit.phrase).map_or(&[][..], Vec::as_slice) {
            let listed = &mut phrases[i];
            let counts = turns.entry(hit.turn).or_default();
            if listed.exclude {
                counts.1 += 1;
            } else {
                counts.0 += 1;
            }
            listed.matches.push(TurnMatch {
                turn: hit.turn,
                start: hit.start,
                end: hit.end,
            });
        }
    }
    for listed in &mut phrases {
        listed.matches.sort_by_key(|m| m.turn);
    }
    let score = turns
        .values()
        .filter(|(inc, _)| *inc > 0)
        .fold(0u32, |score, (inc, exc)| {
            score.saturating_add(inc.saturating_sub(*exc))
        });
    LeafScore { score, phrases }
}
