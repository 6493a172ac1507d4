//! An application ready to score calls (docs/scoring.md, Scores of one call): every phrase of every leaf
//! compiled into one matcher, so a call's turns are scanned once per application, and the category tree
//! flattened in path order to add the leaf scores up bottom-up.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;
use phrases::{
    score_leaf, Hit, LeafScore, Matcher, MatcherBuilder, OverBudget, Speaker, TooLarge, Turn,
};

use super::definition::{Category, Definition};
use super::kept::{KeptStates, ScanBudget};
use crate::model::{AppScores, CategoryScore};

/// One category of the tree, or the application itself (node 0, path '').
#[derive(Debug, Clone)]
pub struct Node {
    /// Levels joined by '.'; '' for the application.
    pub path: String,
    pub kind: NodeKind,
}

#[derive(Debug, Clone)]
pub enum NodeKind {
    /// The ids of its include and exclude phrases, in the order written.
    Leaf {
        include: Vec<u32>,
        exclude: Vec<u32>,
    },
    /// Its children's node indexes, in name order.
    Parent { children: Vec<usize> },
}

/// A phrase of the application as written, with its speaker restriction.
#[derive(Debug, Clone)]
pub struct PhraseText {
    pub text: String,
    pub speaker: Option<Speaker>,
}

/// After how many turns scanned an application's matcher is retuned, once, to the patterns its scanners
/// met: a few hundred calls show which words are frequent in the company's calls.
const RETUNE_AFTER_TURNS: usize = 20_000;

/// The most wildcard matching one call may take to learn its new words, per application, in steps of
/// one character of a word against one of a pattern: about 50 ms of one core. Calls of real speech take
/// a small part of it; past it the call is not scored by that application (docs/scoring.md, Limits).
pub const SCAN_BUDGET: u64 = 50_000_000;

/// A compiled application.
pub struct CompiledApp {
    pub app: String,
    pub revision: String,
    /// The matcher as built, then retuned ([`phrases::Matcher::retuned`]) once `retune_after` turns have
    /// been scanned: the same hits, its phrases triggered by the patterns least frequent in those turns.
    matcher: RwLock<Arc<Matcher>>,
    scanned_turns: AtomicUsize,
    retune_after: usize,
    retuned: AtomicBool,
    /// The wildcard matching a call may take to learn its new words.
    scan_steps: u64,
    /// The states of scanners of `matcher` that have scanned calls, for the next calls: a scanner learns
    /// each word's patterns the first time it meets it, and most words of a call were met in the calls
    /// before (docs/phrases.md, How matching is fast).
    scanners: KeptStates,
    /// Node 0 is the application; every parent comes before its children (depth first, names in order).
    nodes: Vec<Node>,
    /// By phrase id.
    phrases: Vec<PhraseText>,
}

/// The scores of one call and, for every leaf (by node index), its leaf score with the matches of its
/// phrases.
pub struct Evaluation {
    pub scores: AppScores,
    pub leaves: HashMap<usize, LeafScore>,
}

impl Evaluation {
    /// Whether any phrase of the application matched the call, whatever the scores came to (an exclude
    /// phrase in the same turn as its include scores 0, and both matches are still shown).
    pub fn matched(&self) -> bool {
        self.leaves
            .values()
            .any(|leaf| leaf.phrases.iter().any(|p| !p.matches.is_empty()))
    }
}

impl CompiledApp {
    /// Compiles the checked definition of application `app` at `revision`, its kept scanner states
    /// counted against `budget`. A definition within the limits of `limits` always compiles.
    pub fn compile(
        app: &str,
        revision: &str,
        definition: &Definition,
        budget: Arc<ScanBudget>,
    ) -> Result<CompiledApp, TooLarge> {
        let mut compiled = CompiledApp {
            app: app.to_string(),
            revision: revision.to_string(),
            matcher: RwLock::new(Arc::new(Matcher::default())),
            scanned_turns: AtomicUsize::new(0),
            retune_after: RETUNE_AFTER_TURNS,
            retuned: AtomicBool::new(false),
            scan_steps: SCAN_BUDGET,
            scanners: KeptStates::new(budget),
            nodes: vec![Node {
                path: String::new(),
                kind: NodeKind::Parent {
                    children: Vec::new(),
                },
            }],
            phrases: Vec::new(),
        };
        let mut builder = MatcherBuilder::new();
        let children = compiled.add_children("", &definition.categories, &mut builder);
        compiled.nodes[0].kind = NodeKind::Parent { children };
        compiled.matcher = RwLock::new(Arc::new(builder.build()?));
        Ok(compiled)
    }

    fn add_children(
        &mut self,
        parent: &str,
        categories: &std::collections::BTreeMap<String, Category>,
        builder: &mut MatcherBuilder,
    ) -> Vec<usize> {
        let mut indexes = Vec::with_capacity(categories.len());
        for (name, category) in categories {
            let path = if parent.is_empty() {
                name.clone()
            } else {
                format!("{parent}.{name}")
            };
            let index = self.nodes.len();
            indexes.push(index);
            self.nodes.push(Node {
                path: path.clone(),
                kind: NodeKind::Leaf {
                    include: Vec::new(),
                    exclude: Vec::new(),
                },
            });
            self.nodes[index].kind = match category {
                Category::Leaf(specs) => {
                    let (mut include, mut exclude) = (Vec::new(), Vec::new());
                    for spec in specs {
                        let id = u32::try_from(self.phrases.len()).expect("phrases are bounded");
                        builder.add(id, spec.phrase.clone(), spec.speaker);
                        self.phrases.push(PhraseText {
                            text: spec.text.clone(),
                            speaker: spec.speaker,
                        });
                        if spec.phrase.is_exclude() {
                            exclude.push(id);
                        } else {
                            include.push(id);
                        }
                    }
                    NodeKind::Leaf { include, exclude }
                }
                Category::Parent(children) => NodeKind::Parent {
                    children: self.add_children(&path, children, builder),
                },
            };
        }
        indexes
    }

    /// The matcher of all the application's phrases: as built, or retuned once enough turns were
    /// scanned.
    pub fn matcher(&self) -> Arc<Matcher> {
        self.matcher.read().clone()
    }

    /// The hits of the application's phrases in a call, by a scanner that goes on from a kept state
    /// when one is free, and whose state is kept afterwards when there is room and it is not too large.
    /// The call that brings the turns scanned to `retune_after` retunes the matcher to what its scanner
    /// met; the states of the matcher as built are then dropped as they come back (a state serves only
    /// its own matcher).
    ///
    /// A call whose new words would take more than its budget ([`SCAN_BUDGET`] unless set) of wildcard
    /// matching is given up with [`OverBudget`]: an application's words that start and end with a
    /// wildcard are tried on every new word of a call, and a call of long made-up words could otherwise
    /// hold a matching thread for seconds.
    fn scan(&self, turns: &[Turn], duration: f64) -> Result<Vec<Hit>, OverBudget> {
        let matcher = self.matcher();
        let mut scanner = match self.scanners.take() {
            Some(state) => matcher.scanner_from(state),
            None => matcher.scanner(),
        };
        let hits = match scanner.scan_within(turns, duration, self.scan_steps) {
            Ok(hits) => hits,
            Err(over) => {
                // The scanner forgot what it learned of the call: its state is as sound as before.
                self.scanners.keep(scanner.into_state());
                return Err(over);
            }
        };
        let scanned = self.scanned_turns.fetch_add(turns.len(), Ordering::Relaxed) + turns.len();
        if scanned >= self.retune_after && !self.retuned.swap(true, Ordering::Relaxed) {
            let retuned = matcher.retuned(&scanner.observed());
            *self.matcher.write() = Arc::new(retuned);
            return Ok(hits);
        }
        self.scanners.keep(scanner.into_state());
        Ok(hits)
    }

    /// Gives each call `steps` of wildcard matching to learn its new words, in place of [`SCAN_BUDGET`].
    pub fn with_scan_steps(mut self, steps: u64) -> CompiledApp {
        self.scan_steps = steps;
        self
    }

    /// How many scanners' states it keeps.
    pub fn kept_scanners(&self) -> usize {
        self.scanners.len()
    }

    /// The application's nodes: node 0 is the application, then every category, parents first.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The phrase of an id as written.
    pub fn phrase(&self, id: u32) -> &PhraseText {
        &self.phrases[id as usize]
    }

    /// The node of a category path ('' for the application).
    pub fn find(&self, path: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.path == path)
    }

    /// The call's score in every category at every level, and '' for the application; none for a call
    /// over its scan budget.
    pub fn score(&self, turns: &[Turn], duration: f64) -> Result<AppScores, OverBudget> {
        Ok(self.score_hits(&self.scan(turns, duration)?))
    }

    /// [`score`](Self::score) from the hits of a scan by this application's matcher.
    pub fn score_hits(&self, hits: &[Hit]) -> AppScores {
        self.evaluate_hits(hits).scores
    }

    /// The scores with every leaf's phrase matches (for `/appmatches`); none for a call over its scan
    /// budget.
    pub fn evaluate(&self, turns: &[Turn], duration: f64) -> Result<Evaluation, OverBudget> {
        Ok(self.evaluate_hits(&self.scan(turns, duration)?))
    }

    fn evaluate_hits(&self, hits: &[Hit]) -> Evaluation {
        let mut leaves = HashMap::new();
        // (score, hit) per node, filled children first: nodes come parents first, so walk backwards.
        let mut results = vec![(0u32, false, 0.0f64); self.nodes.len()];
        for (index, node) in self.nodes.iter().enumerate().rev() {
            results[index] = match &node.kind {
                NodeKind::Leaf { include, exclude } => {
                    let leaf = score_leaf(hits, include, exclude);
                    let hit = leaf.score > 0;
                    let score = leaf.score;
                    leaves.insert(index, leaf);
                    (score, hit, if hit { 1.0 } else { 0.0 })
                }
                NodeKind::Parent { children } => {
                    let score = children
                        .iter()
                        .fold(0u32, |sum, &c| sum.saturating_add(results[c].0));
                    let hits = children.iter().filter(|&&c| results[c].1).count();
                    let coverage = if children.is_empty() {
                        0.0
                    } else {
                        hits as f64 / children.len() as f64
                    };
                    (score, hits > 0, coverage)
                }
            };
        }
        let categories = self
            .nodes
            .iter()
            .zip(results)
            .map(|(node, (score, hit, coverage))| CategoryScore {
                category: node.path.clone(),
                score,
                hit,
                coverage,
            })
            .collect();
        Evaluation {
            scores: AppScores {
                app: self.app.clone(),
                revision: self.revision.clone(),
                categories,
            },
            leaves,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn app(body: serde_json::Value) -> CompiledApp {
        let definition = Definition::parse(&body).unwrap();
        CompiledApp::compile(
            "billing",
            &definition.revision(),
            &definition,
            crate::apps::ScanBudget::new(usize::MAX),
        )
        .unwrap()
    }

    fn score_of(scores: &AppScores, path: &str) -> (u32, bool, f64) {
        let c = scores
            .categories
            .iter()
            .find(|c| c.category == path)
            .unwrap_or_else(|| panic!("no category {path:?}"));
        (c.score, c.hit, c.coverage)
    }

    fn call() -> Vec<Turn> {
        vec![
            Turn::new(Speaker::Agent, 0.0, 3.0, "Thank you for calling, hello"),
            Turn::new(
                Speaker::Client,
                3.0,
                8.0,
                "I want a refund, the premium plan is too expensive",
            ),
            Turn::new(
                Speaker::Agent,
                8.0,
                12.0,
                "I can offer no premium but a refund",
            ),
            Turn::new(Speaker::Client, 12.0, 15.0, "Hello? Refund please"),
        ]
    }

    #[test]
    fn calls_scored_at_once_share_a_few_kept_scanners_and_score_alike() {
        let compiled = std::sync::Arc::new(app(json!({"categories": {
            "Greeting": {"phrases": ["thank* for calling", {"text": "hello", "speaker": "agent"}]},
            "Refund": {"phrases": [{"text": "refund", "speaker": "client"}, "-no premium"]}
        }})));
        assert_eq!(compiled.kept_scanners(), 0);
        let expected = compiled.score(&call(), 15.0).unwrap();
        assert_eq!(compiled.kept_scanners(), 1);
        assert_eq!(score_of(&expected, "Refund"), (2, true, 1.0));
        // Eight threads scoring at once, each call by a kept scanner or a new one: the same scores, and
        // no more states kept than the limit.
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let compiled = compiled.clone();
                std::thread::spawn(move || {
                    (0..50)
                        .map(|_| compiled.score(&call(), 15.0).unwrap().categories)
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for thread in threads {
            for categories in thread.join().unwrap() {
                assert_eq!(categories, expected.categories);
            }
        }
        assert!((1..=crate::apps::kept::KEPT_SCANNERS).contains(&compiled.kept_scanners()));
        // The scorecard's evaluation goes through the same scanners.
        let evaluation = compiled.evaluate(&call(), 15.0).unwrap();
        assert_eq!(evaluation.scores.categories, expected.categories);
    }

    #[test]
    fn the_matcher_is_retuned_once_after_enough_turns_and_scores_alike() {
        let mut compiled = app(json!({"categories": {
            "Greeting": {"phrases": ["thank* for calling", {"text": "hello", "speaker": "agent"}]},
            "Refund": {"phrases": [{"text": "refund", "speaker": "client"}, "-no premium"]}
        }}));
        // Three calls of four turns: the third brings the turns to 12.
        compiled.retune_after = 10;
        let built = compiled.matcher();
        let expected = compiled.score(&call(), 15.0).unwrap();
        assert_eq!(compiled.score(&call(), 15.0).unwrap(), expected);
        assert!(Arc::ptr_eq(&built, &compiled.matcher()));
        assert_eq!(compiled.score(&call(), 15.0).unwrap(), expected);
        let retuned = compiled.matcher();
        assert!(!Arc::ptr_eq(&built, &retuned));
        assert_eq!(retuned.len(), built.len());
        // The retuning call's state, of the matcher as built, is not kept; the next call starts a new
        // state of the retuned matcher, which is kept.
        assert_eq!(compiled.kept_scanners(), 0);
        for _ in 0..3 {
            assert_eq!(compiled.score(&call(), 15.0).unwrap(), expected);
        }
        assert_eq!(compiled.kept_scanners(), 1);
        // Once only.
        assert!(Arc::ptr_eq(&retuned, &compiled.matcher()));
        assert_eq!(compiled.evaluate(&call(), 15.0).unwrap().scores, expected);
    }

    #[test]
    fn scores_add_up_from_the_leaves() {
        let compiled = app(json!({"categories": {
            "Greeting": {"phrases": ["thank* for calling", {"text": "hello", "speaker": "agent"}]},
            "Sales": {"subcategories": {
                "Upsell": {"phrases": ["premium", "-no premium"]},
                "Refund": {"subcategories": {
                    "Asked": {"phrases": [{"text": "refund", "speaker": "client"}]},
                    "Offered": {"phrases": [{"text": "refund", "speaker": "agent"}, "discount"]},
                    "Escalated": {"phrases": ["manager"]}
                }}
            }}
        }}));
        let scores = compiled.score(&call(), 15.0).unwrap();
        assert_eq!(
            (scores.app.as_str(), scores.revision.len()),
            ("billing", 16)
        );
        // Greeting: turn 0 has "hello" (the agent's) but not "thank* for calling" ("you" comes between):
        // 1; "hello" in turn 3 is the client's: nothing.
        assert_eq!(score_of(&scores, "Greeting"), (1, true, 1.0));
        // Upsell: turn 1 "premium" 1; turn 2 "premium" and "-no premium": max(1 - 1, 0) = 0.
        assert_eq!(score_of(&scores, "Sales.Upsell"), (1, true, 1.0));
        // Asked: client turns 1 and 3 say refund: 2. Offered: agent turn 2: 1. Escalated: 0.
        assert_eq!(score_of(&scores, "Sales.Refund.Asked"), (2, true, 1.0));
        assert_eq!(score_of(&scores, "Sales.Refund.Offered"), (1, true, 1.0));
        assert_eq!(score_of(&scores, "Sales.Refund.Escalated"), (0, false, 0.0));
        // Refund: 2 + 1 + 0, two of three children hit.
        assert_eq!(score_of(&scores, "Sales.Refund"), (3, true, 2.0 / 3.0));
        assert_eq!(score_of(&scores, "Sales"), (4, true, 1.0));
        assert_eq!(score_of(&scores, ""), (5, true, 1.0));
        let paths: Vec<&str> = scores
            .categories
            .iter()
            .map(|c| c.category.as_str())
            .collect();
        assert_eq!(
            paths,
            [
                "",
                "Greeting",
                "Sales",
                "Sales.Refund",
                "Sales.Refund.Asked",
                "Sales.Refund.Escalated",
                "Sales.Refund.Offered",
                "Sales.Upsell"
            ]
        );
    }

    #[test]
    fn misses_count_in_coverage_and_nothing_hits_an_empty_call() {
        let compiled = app(json!({"categories": {
            "A": {"phrases": ["refund"]},
            "B": {"subcategories": {"B1": {"phrases": ["manager"]}, "B2": {"phrases": ["^hello"]}}},
            "C": {"phrases": ["-refund"]}
        }}));
        let scores = compiled.score(&call(), 15.0).unwrap();
        // A: turns 1, 2, 3 = 3. B2: "^hello" only where hello starts the turn: turn 3 (client). C has only an
        // exclude phrase: never above 0.
        assert_eq!(score_of(&scores, "A"), (3, true, 1.0));
        assert_eq!(score_of(&scores, "B.B1"), (0, false, 0.0));
        assert_eq!(score_of(&scores, "B.B2"), (1, true, 1.0));
        assert_eq!(score_of(&scores, "B"), (1, true, 0.5));
        assert_eq!(score_of(&scores, "C"), (0, false, 0.0));
        assert_eq!(score_of(&scores, ""), (4, true, 2.0 / 3.0));

        let silent = compiled.score(&[], 0.0).unwrap();
        assert!(silent
            .categories
            .iter()
            .all(|c| c.score == 0 && !c.hit && c.coverage == 0.0));
        assert_eq!(silent.categories.len(), 6);
    }

    #[test]
    fn evaluation_lists_every_phrase_of_every_leaf_with_its_matches() {
        let compiled = app(json!({"categories": {
            "Upsell": {"phrases": ["premium", "-no premium", {"text": "plan", "speaker": "agent"}]}
        }}));
        let evaluation = compiled.evaluate(&call(), 15.0).unwrap();
        let leaf = &evaluation.leaves[&compiled.find("Upsell").unwrap()];
        assert_eq!(leaf.score, 1);
        let listed: Vec<(&str, bool, Vec<usize>)> = leaf
            .phrases
            .iter()
            .map(|p| {
                (
                    compiled.phrase(p.phrase).text.as_str(),
                    p.exclude,
                    p.matches.iter().map(|m| m.turn).collect(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                ("premium", false, vec![1, 2]),
                ("plan", false, vec![]),
                ("-no premium", true, vec![2]),
            ]
        );
        assert_eq!(compiled.phrase(2).speaker, Some(Speaker::Agent));
        assert_eq!(compiled.find("Nope"), None);
        assert_eq!(compiled.find(""), Some(0));
    }
}
