//! The operator, the last stage: the handle an application holds ([`VideoInput`](crate::VideoInput), made in
//! `handle`, fed in `feeding`, polled in `polling`, awaited in `futures`) and its decoding thread (`worker`), which drives one video at a
//! time through the stages below: source → demux → decode → transform → assembly.

pub(crate) mod epoch_feed;
pub(crate) mod feeding;
pub(crate) mod futures;
pub(crate) mod handle;
pub(crate) mod polling;
mod sampled;
pub(crate) mod sound;
pub(crate) mod worker;
