//! One application's part of an `/appmatches` answer (docs/analytics-api.md, Application matches): its
//! categories by name, each with its score, a leaf with the matches of each of its phrases
//! (`match_data`), a parent with its `subcategories`. Match data is given for every leaf, or only for the
//! leaves at or below the categories the caller asked for; the other categories keep their scores.

use phrases::Turn;
use serde_json::{json, Map, Value};

use super::compiled::{CompiledApp, Evaluation, NodeKind};
use super::definition::speaker_name;

/// Which leaves carry their match data.
#[derive(Debug, Clone, PartialEq)]
pub enum Selection {
    All,
    /// Category paths (levels joined by '.'): those categories and everything below them.
    Paths(Vec<String>),
}

impl Selection {
    fn covers(&self, path: &str) -> bool {
        match self {
            Selection::All => true,
            Selection::Paths(paths) => paths.iter().any(|p| {
                path == p
                    || path
                        .strip_prefix(p.as_str())
                        .is_some_and(|rest| rest.starts_with('.'))
            }),
        }
    }
}

/// The application object of the answer: `{category: {"score", "match_data" | "subcategories"}}`.
pub fn scorecard(
    app: &CompiledApp,
    evaluation: &Evaluation,
    turns: &[Turn],
    selection: &Selection,
) -> Value {
    category_objects(app, evaluation, turns, selection, 0)
}

fn category_objects(
    app: &CompiledApp,
    evaluation: &Evaluation,
    turns: &[Turn],
    selection: &Selection,
    parent: usize,
) -> Value {
    let nodes = app.nodes();
    let NodeKind::Parent { children } = &nodes[parent].kind else {
        return Value::Object(Map::new());
    };
    let mut object = Map::new();
    for &index in children {
        let node = &nodes[index];
        let name = node.path.rsplit('.').next().unwrap_or_default();
        let mut body = Map::new();
        body.insert(
            "score".into(),
            json!(evaluation.scores.categories[index].score),
        );
        match &node.kind {
            NodeKind::Leaf { .. } => {
                if selection.covers(&node.path) {
                    let leaf = &evaluation.leaves[&index];
                    let data = leaf
                        .phrases
                        .iter()
                        .map(|p| {
                            let matches: Vec<Value> = p
                                .matches
                                .iter()
                                .map(|m| {
                                    let turn = &turns[m.turn];
                                    json!([m.start, m.end, speaker_name(turn.speaker), turn.text])
                                })
                                .collect();
                            json!({"phrase": app.phrase(p.phrase).text, "matches": matches})
                        })
                        .collect();
                    body.insert("match_data".into(), Value::Array(data));
                }
            }
            NodeKind::Parent { .. } => {
                body.insert(
                    "subcategories".into(),
                    category_objects(app, evaluation, turns, selection, index),
                );
            }
        }
        object.insert(name.to_string(), Value::Object(body));
    }
    Value::Object(object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apps::definition::Definition;
    use phrases::{Speaker, TimedWord};

    fn compiled() -> CompiledApp {
        let definition = Definition::parse(&json!({"categories": {
            "Greeting": {"phrases": [{"text": "thank* for calling", "speaker": "agent"}]},
            "Sales": {"subcategories": {
                "Upsell": {"phrases": ["premium", "-no premium"]},
                "Refund": {"subcategories": {"Asked": {"phrases": ["refund"]}}}
            }}
        }}))
        .unwrap();
        CompiledApp::compile(
            "billing",
            &definition.revision(),
            &definition,
            crate::apps::ScanBudget::new(usize::MAX),
        )
        .unwrap()
    }

    fn turns() -> Vec<Turn> {
        let mut greeting = Turn::new(Speaker::Agent, 0.5, 3.0, "Thanks for calling!");
        greeting.words = Some(vec![
            TimedWord {
                text: "Thanks".into(),
                start: 0.5,
                end: 1.0,
            },
            TimedWord {
                text: "for".into(),
                start: 1.25,
                end: 1.5,
            },
            TimedWord {
                text: "calling!".into(),
                start: 1.75,
                end: 3.0,
            },
        ]);
        vec![
            greeting,
            Turn::new(Speaker::Client, 3.0, 8.0, "A refund, and no premium"),
        ]
    }

    #[test]
    fn every_leaf_has_its_match_data_without_a_selection() {
        let app = compiled();
        let turns = turns();
        let evaluation = app.evaluate(&turns, 8.0).unwrap();
        let card = scorecard(&app, &evaluation, &turns, &Selection::All);
        // Turn 1: "premium" and "-no premium" both match: max(1 - 1, 0) = 0; the exclude is listed anyway.
        assert_eq!(
            card,
            json!({
                "Greeting": {"score": 1, "match_data": [
                    {"phrase": "thank* for calling", "matches": [[0.5, 3.0, "agent", "Thanks for calling!"]]}
                ]},
                "Sales": {"score": 1, "subcategories": {
                    "Refund": {"score": 1, "subcategories": {
                        "Asked": {"score": 1, "match_data": [
                            {"phrase": "refund", "matches": [[3.0, 8.0, "client", "A refund, and no premium"]]}
                        ]}
                    }},
                    "Upsell": {"score": 0, "match_data": [
                        {"phrase": "premium", "matches": [[3.0, 8.0, "client", "A refund, and no premium"]]},
                        {"phrase": "-no premium", "matches": [[3.0, 8.0, "client", "A refund, and no premium"]]}
                    ]}
                }}
            })
        );
    }

    #[test]
    fn a_selection_keeps_match_data_at_and_below_its_paths_only() {
        let app = compiled();
        let turns = turns();
        let evaluation = app.evaluate(&turns, 8.0).unwrap();
        let card = scorecard(
            &app,
            &evaluation,
            &turns,
            &Selection::Paths(vec!["Sales.Refund".into()]),
        );
        assert_eq!(card["Greeting"], json!({"score": 1}));
        assert_eq!(
            card["Sales"]["subcategories"]["Upsell"],
            json!({"score": 0})
        );
        assert_eq!(
            card["Sales"]["subcategories"]["Refund"]["subcategories"]["Asked"]["match_data"][0]
                ["phrase"],
            "refund"
        );
        let leaf_only = scorecard(
            &app,
            &evaluation,
            &turns,
            &Selection::Paths(vec!["Greeting".into()]),
        );
        assert!(leaf_only["Greeting"]["match_data"].is_array());
        assert_eq!(
            leaf_only["Sales"]["subcategories"]["Refund"]["subcategories"]["Asked"],
            json!({"score": 1})
        );
        // A path is a whole level: "Sales.Up" is not a prefix of "Sales.Upsell".
        assert!(!Selection::Paths(vec!["Sales.Up".into()]).covers("Sales.Upsell"));
        assert!(Selection::Paths(vec!["Sales".into()]).covers("Sales.Refund.Asked"));
    }
}
