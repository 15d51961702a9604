//! Settings, a leaf every stage may use: the operator's [`Config`](config::Config) and its choices (`config`),
//! the transforms a user asks for (`transforms`), the cross-camera batcher's (`mux`), a URL source's (`url`),
//! and what a number of seconds is (`seconds`); where frames are decoded is `crate::device_kind`, a leaf the
//! errors share too. Plain values with their defaults, allowed ranges and validation; no stage's code. The front
//! ends (the CLI, the service, Python) parse settings through the same `FromStr`/`Display` of these types, so a
//! setting has one name and one message everywhere.

pub(crate) mod audio;
#[macro_use]
pub(crate) mod choice;
pub(crate) mod config;
pub(crate) mod mux;
pub(crate) mod remote;
pub(crate) mod sampling;
pub(crate) mod seconds;
pub(crate) mod transforms;
pub(crate) mod url;
