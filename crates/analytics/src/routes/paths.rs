//! The paths of the API's resources, by the names of their segments (`/config/{company}/{organization}`
//! is an `OrganizationPath`). Names are taken as sent: a read of a name that breaks the rules finds
//! nothing (404), a write checks it (`scoring::names`) once the caller is known.

use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct OrganizationPath {
    pub company: String,
    pub organization: String,
}

#[derive(Debug, Deserialize)]
pub struct FolderPath {
    pub company: String,
    pub organization: String,
    pub folder: String,
}

/// A call of an organization, by its id (`tId`).
#[derive(Debug, Deserialize)]
pub struct CallPath {
    pub company: String,
    pub organization: String,
    pub call: String,
}

/// An application of a company.
#[derive(Debug, Deserialize)]
pub struct AppPath {
    pub company: String,
    pub app: String,
}

/// An application's figures over an organization.
#[derive(Debug, Deserialize)]
pub struct OrganizationAppPath {
    pub company: String,
    pub organization: String,
    pub app: String,
}

/// An application's figures over one folder.
#[derive(Debug, Deserialize)]
pub struct FolderAppPath {
    pub company: String,
    pub organization: String,
    pub app: String,
    pub folder: String,
}
