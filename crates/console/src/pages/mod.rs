//! The console's pages as HTML, one file per page, sharing the frame in `layout` and the charts in
//! `charts`. They take what the API answered and lay it out; no figure is computed here.

pub mod apps;
pub mod call;
pub mod charts;
pub mod dashboard;
pub mod folders;
pub mod jobs;
pub mod layout;
pub mod search;
pub mod start;
pub mod transcript;
