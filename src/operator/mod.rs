//! The operator, the last stage: the handle an application holds ([`VideoInput`](crate::VideoInput), in
//! `handle`: feeding, polling and async output) and its decoding thread (`worker`), which drives one video at a
//! time through the stages below: source → demux → decode → transform → assembly.

pub(crate) mod epoch_feed;
pub(crate) mod handle;
pub(crate) mod worker;
