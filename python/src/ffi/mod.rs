//! The binding's only `unsafe` code: DLPack capsules over batch memory ([`dlpack`]), read-only Python buffers
//! borrowed by address ([`buffer`]), and (feature `cuda`) a consumer's raw CUDA stream ([`cuda`]). Everything
//! above is safe Rust over PyO3 and framefeed.
#![allow(unsafe_code)]

pub(crate) mod buffer;
#[cfg(feature = "cuda")]
pub(crate) mod cuda;
pub(crate) mod dlpack;
