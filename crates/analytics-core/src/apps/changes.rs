//! Storing and removing a company's applications. Each change commits in one transaction with the
//! rescore job of the folders using the application, so they are rescored exactly when it commits;
//! storing the definition already stored changes nothing and publishes nothing. The company's row is
//! read, and locked, in the transaction first: a company being deleted takes no change, and the changes
//! of one company's applications take turns.

use analytics_store::{self as store, AppRow, STATUS_OK};
use common::db::Tx;

use crate::error::AnalyticsError;
use crate::outbox;
use crate::state::AnalyticsState;

/// Stores `definition` (normalized, of `revision`) as the company's application `name`; the
/// application as stored.
pub async fn save(
    state: &AnalyticsState,
    company: &str,
    name: &str,
    definition: String,
    revision: String,
) -> Result<AppRow, AnalyticsError> {
    let mut tx = state.db.begin().await?;
    usable_company(&mut tx, company).await?;
    if let Some(stored) = store::get_app(&mut tx, company, name).await? {
        if stored.definition == definition {
            return Ok(stored);
        }
    }
    let row = AppRow {
        company: company.to_string(),
        name: name.to_string(),
        definition,
        revision,
        updated: common::time::now_rfc3339(),
    };
    store::put_app(&mut tx, &row).await?;
    outbox::rescore_app(state, &mut tx, company, name).await?;
    tx.commit().await?;
    Ok(row)
}

/// Removes the company's application `name`; the application as it was, or `None` when there is none.
pub async fn remove(
    state: &AnalyticsState,
    company: &str,
    name: &str,
) -> Result<Option<AppRow>, AnalyticsError> {
    let mut tx = state.db.begin().await?;
    store::get_company(&mut tx, company)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(company))?;
    let Some(row) = store::get_app(&mut tx, company, name).await? else {
        return Ok(None);
    };
    store::delete_app(&mut tx, company, name).await?;
    outbox::rescore_app(state, &mut tx, company, name).await?;
    tx.commit().await?;
    Ok(Some(row))
}

/// The company must exist and not be being deleted.
async fn usable_company(tx: &mut Tx, company: &str) -> Result<(), AnalyticsError> {
    let parent = store::get_company(&mut *tx, company)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(company))?;
    if parent.status != STATUS_OK {
        return Err(AnalyticsError::Conflict(format!(
            "company {company} is being deleted; nothing can be added to it or changed in it"
        )));
    }
    Ok(())
}
