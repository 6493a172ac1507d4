//! An upload as the call batches take it (`batch`): the checked call, and whether it was stored. The
//! state holds the batches by these types alone.

use std::collections::BTreeMap;

use crate::error::AnalyticsError;
use crate::group_commit::GroupCommit;
use analytics_store::CallRow;

/// Calls committed in one transaction at most.
pub const MOST: usize = 256;

/// A checked call whose transcript is stored: its row and every metadata field of the transcript.
pub struct Upload {
    pub row: CallRow,
    pub metadata: BTreeMap<String, String>,
}

/// Whether the call was stored, or why not.
pub type Outcome = Result<(), AnalyticsError>;

/// Uploads waiting for a batch, in shards by folder.
pub type CallBatches = GroupCommit<Upload, Outcome>;
