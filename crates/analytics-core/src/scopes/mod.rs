//! Companies, organizations and folders, the scopes calls live in: creating and replacing them, starting
//! their deletion (`changes`), and reading them back with a deletion's progress (`records`). A scope being
//! deleted takes no change, nor does anything below it (docs/analytics-api.md, Configuration).

pub mod changes;
pub mod records;

use analytics_store::STATUS_OK;
use common::search::Scope;

use crate::error::AnalyticsError;

/// The scope of a whole company.
pub fn company_scope(company: &str) -> Scope {
    Scope {
        company: company.into(),
        organization: None,
        folder: None,
    }
}

/// The scope of an organization.
pub fn organization_scope(company: &str, organization: &str) -> Scope {
    Scope {
        organization: Some(organization.into()),
        ..company_scope(company)
    }
}

/// The scope of one folder.
pub fn folder_scope(company: &str, organization: &str, folder: &str) -> Scope {
    Scope {
        folder: Some(folder.into()),
        ..organization_scope(company, organization)
    }
}

/// Refuses a change in or below `what` unless its `status` is `ok` (it is not being deleted).
pub fn usable(status: &str, what: &str) -> Result<(), AnalyticsError> {
    if status == STATUS_OK {
        Ok(())
    } else {
        Err(AnalyticsError::Conflict(format!(
            "{what} is being deleted; nothing can be added to it or changed in it"
        )))
    }
}
