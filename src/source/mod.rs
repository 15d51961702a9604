//! Sources, the first stage: what comes in. Fed buffers wait in the bounded feed queue (`feed`); a live
//! video's chunks arrive through a [`LiveVideo`](crate::LiveVideo) (`live`); a video pulled by URL carries its
//! options and reconnect policy (`url`); a [`FileList`](crate::FileList) shuffles and shards paths for training
//! loops (`files`); a remote object (S3, GCS, Azure, HTTP(S)) is read by byte ranges (`remote`: the cache and
//! read-ahead; `ranges`: the range planner; `store`: the object store client, over `store_http`; `index_cache`). Hands on queued videos (`feed::Source`) to the demux stage, which opens them (`demux::open`).

pub(crate) mod feed;
pub(crate) mod files;
pub(crate) mod index_cache;
pub(crate) mod live;
pub(crate) mod ranges;
pub(crate) mod remote;
pub(crate) mod store;
mod store_http;
pub(crate) mod url;
