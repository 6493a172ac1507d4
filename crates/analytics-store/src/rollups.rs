//! The daily rollups of the statistics (docs/scoring.md, Rollups): changes to them are summed per key in
//! memory by the caller, then applied here in key order, so that two transactions changing the same rows
//! take their locks in the same order and never deadlock.

use std::collections::BTreeMap;

use scoring::model::{CallFacts, CategoryScore, Emotion};

/// A row of `analytics_daily_agents`: folder, local day (YYYY-MM-DD) and agent.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AgentDayKey {
    pub company: String,
    pub organization: String,
    pub folder: String,
    pub day: String,
    pub agent_id: String,
}

/// What is added to (or, negative, taken from) an agent's day.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentDayDelta {
    pub calls: i64,
    pub duration: f64,
    pub silence: f64,
    pub words: i64,
    pub agent_talk: f64,
    pub client_talk: f64,
    /// Calls per emotion: the agent's positive, negative, improving, worsening, then the client's.
    pub emotions: [i64; 8],
}

impl AgentDayDelta {
    /// One call's figures, counted `sign` times (1 to add the call, -1 to take it away).
    pub fn of(facts: &CallFacts, sign: i64) -> AgentDayDelta {
        let mut emotions = [0; 8];
        for (offset, emotion) in [(0, facts.agent_emotion), (4, facts.client_emotion)] {
            if let Some(e) = emotion {
                let i = Emotion::ALL.iter().position(|x| *x == e).unwrap_or(0);
                emotions[offset + i] = sign;
            }
        }
        AgentDayDelta {
            calls: sign,
            duration: sign as f64 * facts.duration,
            silence: sign as f64 * facts.silence,
            words: sign * facts.words,
            agent_talk: sign as f64 * facts.agent_talk,
            client_talk: sign as f64 * facts.client_talk,
            emotions,
        }
    }

    pub fn add(&mut self, other: &AgentDayDelta) {
        self.calls += other.calls;
        self.duration += other.duration;
        self.silence += other.silence;
        self.words += other.words;
        self.agent_talk += other.agent_talk;
        self.client_talk += other.client_talk;
        for (a, b) in self.emotions.iter_mut().zip(other.emotions) {
            *a += b;
        }
    }
}

/// A row of `analytics_daily_categories`: folder, application, local day, agent and category ('' for the
/// application as a whole).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, sqlx::FromRow)]
pub struct CategoryDayKey {
    pub company: String,
    pub organization: String,
    pub folder: String,
    pub app: String,
    pub day: String,
    pub agent_id: String,
    pub category: String,
}

#[derive(Debug, Clone, Default, PartialEq, sqlx::FromRow)]
pub struct CategoryDayDelta {
    pub calls: i64,
    pub hits: i64,
    pub coverage: f64,
    pub score: i64,
    pub duration: f64,
    pub silence: f64,
}

impl CategoryDayDelta {
    /// One call's score in one category, counted `sign` times.
    pub fn of(score: &CategoryScore, facts: &CallFacts, sign: i64) -> CategoryDayDelta {
        CategoryDayDelta {
            calls: sign,
            hits: sign * i64::from(score.hit),
            coverage: sign as f64 * score.coverage,
            score: sign * i64::from(score.score),
            duration: sign as f64 * facts.duration,
            silence: sign as f64 * facts.silence,
        }
    }

    pub fn add(&mut self, other: &CategoryDayDelta) {
        self.calls += other.calls;
        self.hits += other.hits;
        self.coverage += other.coverage;
        self.score += other.score;
        self.duration += other.duration;
        self.silence += other.silence;
    }
}

/// The rollup changes of one transaction, summed per row; `BTreeMap` keeps them in key order.
#[derive(Debug, Default)]
pub struct RollupChanges {
    pub agents: BTreeMap<AgentDayKey, AgentDayDelta>,
    pub categories: BTreeMap<CategoryDayKey, CategoryDayDelta>,
}

impl RollupChanges {
    pub fn agent(&mut self, key: AgentDayKey, delta: &AgentDayDelta) {
        self.agents.entry(key).or_default().add(delta);
    }

    pub fn category(&mut self, key: CategoryDayKey, delta: &CategoryDayDelta) {
        self.categories.entry(key).or_default().add(delta);
    }

    pub fn is_empty(&self) -> bool {
        self.agents.is_empty() && self.categories.is_empty()
    }
}

/// A company's calls, words, and per (application, category) calls, hits and scores: summed from the
/// rollups or from the per-call rows (`store::rollup_totals`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RollupTotals {
    pub calls: i64,
    pub words: i64,
    pub categories: BTreeMap<(String, String), (i64, i64, i64)>,
}
