//! Every SQL statement the console runs lives under this module.

pub mod connect;
pub mod schema;
