//! The rows of the analytics tables, as both databases return them.

/// Whether a company, organization or folder is usable or being deleted.
pub const STATUS_OK: &str = "OK";
pub const STATUS_DELETING: &str = "deleting";

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct CompanyRow {
    pub company: String,
    pub name: String,
    pub created: String,
    pub status: String,
    pub delete_total: i64,
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct OrganizationRow {
    pub company: String,
    pub organization: String,
    pub timezone: String,
    pub created: String,
    pub status: String,
    pub delete_total: i64,
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct FolderRow {
    pub company: String,
    pub organization: String,
    pub folder: String,
    /// The folder's settings as JSON (`model::FolderSettings`).
    pub settings: String,
    pub created: String,
    pub status: String,
    pub delete_total: i64,
}

impl FolderRow {
    /// The folder's settings, provided it can take changes (it is not being deleted).
    pub fn usable_settings(
        &self,
    ) -> Result<crate::model::FolderSettings, crate::error::AnalyticsError> {
        use crate::error::AnalyticsError;
        if self.status != STATUS_OK {
            return Err(AnalyticsError::Conflict(format!(
                "folder {} is being deleted",
                self.folder
            )));
        }
        serde_json::from_str(&self.settings).map_err(AnalyticsError::internal)
    }
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct CallRow {
    pub id: String,
    pub company: String,
    pub organization: String,
    pub folder: String,
    pub request_id: String,
    pub datetime: String,
    pub last_modified: String,
    pub filename: String,
    pub agent_id: String,
    pub audio_seconds: f64,
}

impl CallRow {
    /// Where the call's transcript is kept in the object store.
    pub fn transcript_key(&self) -> String {
        format!("{}transcript.json", self.object_prefix())
    }

    /// The prefix of every object of the call (its transcript, its audio).
    pub fn object_prefix(&self) -> String {
        format!(
            "{}/{}/{}/{}/",
            self.company, self.organization, self.folder, self.id
        )
    }
}
