//! The bus topics the analytics workers take, as a type: configuration (`worker_topics`) is read into
//! `Topic`s when it loads (`WorkerTopics`), the workers are started per topic, and the operator commands
//! name topics by their short names (`reindex`) or whole ones (`analytics.reindex`).

use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A topic of the analytics workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    Reindex,
    Metadata,
    Delete,
    Score,
    Rescore,
    Transcribe,
    Callback,
}

impl Topic {
    pub const ALL: [Topic; 7] = [
        Topic::Reindex,
        Topic::Metadata,
        Topic::Delete,
        Topic::Score,
        Topic::Rescore,
        Topic::Transcribe,
        Topic::Callback,
    ];

    /// The short name of `worker_topics` and of the operator commands.
    pub fn short(self) -> &'static str {
        match self {
            Topic::Reindex => "reindex",
            Topic::Metadata => "metadata",
            Topic::Delete => "delete",
            Topic::Score => "score",
            Topic::Rescore => "rescore",
            Topic::Transcribe => "transcribe",
            Topic::Callback => "callback",
        }
    }

    /// The topic's name on the bus.
    pub fn name(self) -> &'static str {
        use messages::topics;
        match self {
            Topic::Reindex => topics::REINDEX,
            Topic::Metadata => topics::METADATA,
            Topic::Delete => topics::DELETE,
            Topic::Score => topics::SCORE,
            Topic::Rescore => topics::RESCORE,
            Topic::Transcribe => topics::TRANSCRIBE,
            Topic::Callback => topics::CALLBACK,
        }
    }

    /// The topic a short name (`reindex`) or a whole one (`analytics.reindex`) means.
    pub fn parse(name: &str) -> Result<Topic, String> {
        Topic::ALL
            .into_iter()
            .find(|t| t.short() == name || t.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Topic::ALL.iter().map(|t| t.short()).collect();
                format!("unknown topic {name:?}: one of {}", names.join(", "))
            })
    }

    /// The topics of a comma-separated list of short or whole names; an empty list is every topic.
    pub fn list(names: &str) -> Result<Vec<Topic>, String> {
        let topics = names
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(Topic::parse)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(if topics.is_empty() {
            Topic::ALL.to_vec()
        } else {
            topics
        })
    }
}

/// The topics a process's workers take, read once when the configuration loads: a comma-separated list
/// of short or whole names, empty for every topic; an unknown name stops the start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerTopics(Vec<Topic>);

impl WorkerTopics {
    pub fn topics(&self) -> &[Topic] {
        &self.0
    }
}

impl Default for WorkerTopics {
    fn default() -> Self {
        WorkerTopics(Topic::ALL.to_vec())
    }
}

impl FromStr for WorkerTopics {
    type Err = String;

    fn from_str(names: &str) -> Result<Self, String> {
        Topic::list(names).map(WorkerTopics)
    }
}

impl Serialize for WorkerTopics {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let names: Vec<&str> = self.0.iter().map(|t| t.short()).collect();
        serializer.serialize_str(&names.join(","))
    }
}

impl<'de> Deserialize<'de> for WorkerTopics {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let names = String::deserialize(deserializer)?;
        names
            .parse()
            .map_err(|e| serde::de::Error::custom(format!("worker_topics: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_are_named_short_or_whole() {
        assert_eq!(Topic::parse("reindex"), Ok(Topic::Reindex));
        assert_eq!(Topic::parse(messages::topics::SCORE), Ok(Topic::Score));
        assert!(Topic::parse("nothing").unwrap_err().contains("reindex"));
        assert_eq!(
            Topic::list(" score, callback ").unwrap(),
            [Topic::Score, Topic::Callback]
        );
        assert_eq!(Topic::list("").unwrap(), Topic::ALL);
        assert!(Topic::list("score,nope").is_err());
    }
}
