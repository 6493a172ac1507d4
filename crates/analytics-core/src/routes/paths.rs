//! The paths of the API's resources, by the names of their segments (`/config/{company}/{organization}`
//! is an `OrganizationPath`), each name of its own type (`scoring::names::FolderName`, ...). Names are
//! taken as sent: a read of a name that breaks the rules finds nothing (404), a write checks it once the
//! caller is known (400).

use scoring::names::{AppName, CallId, CompanyName, FolderName, OrgName};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct OrganizationPath {
    pub company: CompanyName,
    pub organization: OrgName,
}

#[derive(Debug, Deserialize)]
pub struct FolderPath {
    pub company: CompanyName,
    pub organization: OrgName,
    pub folder: FolderName,
}

/// A call of an organization, by its id (`tId`).
#[derive(Debug, Deserialize)]
pub struct CallPath {
    pub company: CompanyName,
    pub organization: OrgName,
    pub call: CallId,
}

/// An application of a company.
#[derive(Debug, Deserialize)]
pub struct AppPath {
    pub company: CompanyName,
    pub app: AppName,
}

/// An application's figures over an organization.
#[derive(Debug, Deserialize)]
pub struct OrganizationAppPath {
    pub company: CompanyName,
    pub organization: OrgName,
    pub app: AppName,
}

/// An application's figures over one folder.
#[derive(Debug, Deserialize)]
pub struct FolderAppPath {
    pub company: CompanyName,
    pub organization: OrgName,
    pub app: AppName,
    pub folder: FolderName,
}
