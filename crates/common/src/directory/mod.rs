//! The directory: companies (tenants), users, roles and OAuth clients. The admin service writes profiles,
//! roles and clients; the token service reads them and writes login facts (DESIGN.md section 3).

mod model;
mod provision;
mod store;

pub use model::*;
pub use provision::{new_client, new_company, new_role, ClientSpec};
pub use store::{open_directory, DirectoryStore, RoleFilter, UserFilter};
