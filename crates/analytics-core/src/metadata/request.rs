//! A metadata request as the batches take it (`batch`): the call, the change, and the answer it waits
//! for. The state holds the batches by these types alone.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::AnalyticsError;
use crate::group_commit::GroupCommit;

/// Requests committed in one transaction at most.
pub const MOST: usize = 256;

/// What a request does to a call's metadata.
#[derive(Debug)]
pub enum Change {
    Set(BTreeMap<String, String>),
    Remove(Vec<String>),
}

/// A checked metadata request: the call as the path names it, and the change.
#[derive(Debug)]
pub struct Request {
    pub company: String,
    pub organization: String,
    pub call: String,
    pub change: Change,
}

/// The call's whole metadata after the change, as the API answers it.
pub type Answer = Result<Map<String, Value>, AnalyticsError>;

/// The requests waiting for a batch, in shards by call.
pub type MetadataBatches = GroupCommit<Request, Answer>;
