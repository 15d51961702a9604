//! Who a video is: the id the operator gives it, the label its feeder gives it, and the two together as they
//! travel with its batches and errors. A leaf module: the feed queue, live input, batches and errors all use it.

use std::fmt;
use std::sync::Arc;

/// The id [`VideoInput::feed`](crate::VideoInput::feed) gives a video: 0, 1, 2... in feeding order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VideoId(pub u64);

impl fmt::Display for VideoId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A caller-chosen label that travels with a video to its batches and errors (the reference's `data_id`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Label {
    /// A text label, e.g. a file name.
    Text(String),
    /// A numeric label, e.g. a row id.
    Number(u64),
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Label::Text(s) => f.write_str(s),
            Label::Number(n) => write!(f, "{n}"),
        }
    }
}

impl From<String> for Label {
    fn from(s: String) -> Self {
        Label::Text(s)
    }
}

impl From<&str> for Label {
    fn from(s: &str) -> Self {
        Label::Text(s.to_owned())
    }
}

impl From<u64> for Label {
    fn from(n: u64) -> Self {
        Label::Number(n)
    }
}

/// Which video an error is about: its id and, when the caller gave one, its label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VideoRef {
    /// The id [`VideoInput::feed`](crate::VideoInput::feed) returned.
    pub id: VideoId,
    /// The caller's label, if any.
    pub label: Option<Label>,
}

impl fmt::Display for VideoRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.label {
            Some(label) => write!(f, "video {} ({label})", self.id),
            None => write!(f, "video {}", self.id),
        }
    }
}

/// Where a whole video sits in its dataset: its position in its file list (else its feeding id) and the
/// epoch (with the seed, they decide the video's random clips), and the segment of it to decode, if only one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct ClipKey {
    pub(crate) position: Option<u64>,
    pub(crate) epoch: u64,
    pub(crate) segment: Option<(u64, u64)>,
}

impl ClipKey {
    /// The random stream of this video's clips (a mix of position and epoch; the seed picks the generator).
    pub(crate) fn stream(self) -> u64 {
        let mut x = self.position.unwrap_or(0) ^ self.epoch.rotate_left(32) ^ 0x9e37_79b9_7f4a_7c15;
        // splitmix64's finaliser: nearby positions and epochs give unrelated streams.
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }
}

/// The bytes of a whole encoded video: a buffer in memory, or a file on disk that the demuxer reads as it
/// needs (never held in memory whole: what a long video's seeking and a file list's memory rely on).
#[derive(Debug, Clone)]
pub(crate) enum Whole {
    /// In memory (shared, never copied).
    Memory(bytes::Bytes),
    /// A file opened when fed, read at the offsets the demuxer asks for.
    File(Arc<WholeFile>),
}

/// A source of a whole video's bytes that can be read at any offset, for [`Encoded::reader`]: what the demuxer
/// reads as it needs (the index, then the packets of the GOPs it decodes), never the whole of it at once. The
/// Python package reads file objects (fsspec's, `open()`'s) through one; any store that serves byte ranges can
/// be one.
///
/// Reads may come from any thread, one at a time for a video; a read may block (it runs on the decoder's
/// thread, never on the consumer's).
pub trait ReadAt: Send + Sync + std::fmt::Debug {
    /// Reads bytes from `offset` into `buf`, returning how many it read (fewer than `buf.len()` is allowed;
    /// 0 only at the end). An error fails the video as an I/O error (its message is logged as a warning).
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize>;

    /// A hint: the byte ranges the demuxer will read next, in the order it will read them (the packets of the
    /// GOPs a sampling plan or a reader call decodes). A source that fetches over a network fetches them
    /// ahead, in parallel; replaces the hint before. By default ignored.
    fn will_need(&self, ranges: &[std::ops::Range<u64>]) {
        let _ = ranges;
    }

    /// Told once the video is open and indexed (what was read so far is what opening it takes: an index
    /// cache keeps it). By default ignored.
    fn opened(&self) {}

    /// Called when the operator reading this source is dropped: a read blocked on the network should return
    /// an error soon, and later ones at once. By default nothing (a read that cannot block needs nothing).
    fn cancel(&self) {}

    /// Why the source failed, when a read failed because of the source itself (a remote object that could not
    /// be fetched after its retries, or that changed during the read): the video then fails with
    /// `source_unavailable` naming it, rather than as a demuxer's I/O error. By default `None`.
    fn failure(&self) -> Option<SourceFailure> {
        None
    }
}

/// How a [`ReadAt`] source failed (see [`ReadAt::failure`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFailure {
    /// What the source is, as it may be shown (a URL without its credentials or query).
    pub source: String,
    /// What went wrong, and at which bytes.
    pub reason: String,
}

impl ReadAt for std::fs::File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, offset)
    }
}

/// What a [`WholeFile`] reads from: a file on disk, or another [`ReadAt`].
#[derive(Debug)]
pub(crate) enum Reader {
    Disk(std::fs::File),
    Other(Box<dyn ReadAt>),
}

impl Reader {
    /// Reads at `offset` (see [`ReadAt::read_at`]).
    pub(crate) fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        match self {
            Reader::Disk(file) => ReadAt::read_at(file, buf, offset),
            Reader::Other(source) => source.read_at(buf, offset),
        }
    }

    /// The source's own hint, notice and failure ([`ReadAt`]); a file on disk needs none.
    pub(crate) fn source(&self) -> Option<&dyn ReadAt> {
        match self {
            Reader::Disk(_) => None,
            Reader::Other(source) => Some(&**source),
        }
    }
}

/// A video file opened for reading (or another source read at offsets), with its length when it was opened (a
/// file that shrinks later reads short, as a truncated video).
#[derive(Debug)]
pub(crate) struct WholeFile {
    pub(crate) file: Reader,
    pub(crate) len: u64,
    /// Where the video's packet index, once read through, is kept for its next opening (a remote video's
    /// index cache); `None` for most sources.
    pub(crate) kept_index: Option<Arc<dyn KeepIndex>>,
    /// Whether a Matroska or WebM video's frames are numbered by time from its Cues rather than read through to
    /// index them (a remote video read with the approximate seek mode: `settings::remote::SeekMode`).
    pub(crate) approximate_index: bool,
}

/// A place that keeps a whole video's packet index between openings: what indexing a video without a container
/// index framefeed lists (a Matroska file, an MPEG-TS) read through once, kept so that the next opening of the
/// same object lists it instead (`sample::index`, which writes and checks the bytes; the remote index cache
/// stores them, keyed by the object's URL, length and version).
pub(crate) trait KeepIndex: Send + Sync + std::fmt::Debug {
    /// The bytes kept, if any.
    fn load(&self) -> Option<bytes::Bytes>;
    /// Keeps `index` (a failure to is logged, never the video's).
    fn store(&self, index: &[u8]);
}

/// Who a file is, as far as an index of it goes: its device and inode, its length and its modification time
/// (a file rewritten in place or replaced under its name is another file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileIdentity {
    device: u64,
    inode: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl WholeFile {
    /// Who the file is now; `None` where its metadata cannot be read, and for a source that is no file.
    pub(crate) fn identity(&self) -> Option<FileIdentity> {
        use std::os::unix::fs::MetadataExt;
        let Reader::Disk(file) = &self.file else {
            return None;
        };
        let meta = file.metadata().ok()?;
        Some(FileIdentity {
            device: meta.dev(),
            inode: meta.ino(),
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }
}

impl Whole {
    /// The [`ReadAt`] source it reads from, when it is neither in memory nor a file on disk.
    pub(crate) fn source(&self) -> Option<&dyn ReadAt> {
        match self {
            Whole::File(file) => file.file.source(),
            Whole::Memory(_) => None,
        }
    }

    /// Who it is, when it is a file (bytes in memory have no identity that outlives them).
    pub(crate) fn file_identity(&self) -> Option<FileIdentity> {
        match self {
            Whole::File(file) => file.identity(),
            Whole::Memory(_) => None,
        }
    }

    /// Reads at `offset` when the bytes are local (in memory or a file on disk); `None` for other sources
    /// (a remote object is read only where the frames need it).
    pub(crate) fn read_local(&self, offset: u64, buf: &mut [u8]) -> Option<std::io::Result<usize>> {
        match self {
            Whole::Memory(data) => {
                let at = usize::try_from(offset)
                    .unwrap_or(usize::MAX)
                    .min(data.len());
                let n = buf.len().min(data.len() - at);
                buf[..n].copy_from_slice(&data[at..at + n]);
                Some(Ok(n))
            }
            Whole::File(file) => match &file.file {
                Reader::Disk(_) => Some(file.file.read_at(buf, offset)),
                Reader::Other(_) => None,
            },
        }
    }

    /// Its length in bytes.
    pub(crate) fn len(&self) -> u64 {
        match self {
            Whole::Memory(data) => data.len() as u64,
            Whole::File(file) => file.len,
        }
    }

    /// Whether it has no bytes.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes it holds in memory (a file holds none).
    pub(crate) fn memory_bytes(&self) -> usize {
        match self {
            Whole::Memory(data) => data.len(),
            Whole::File(_) => 0,
        }
    }
}

impl From<bytes::Bytes> for Whole {
    fn from(data: bytes::Bytes) -> Self {
        Whole::Memory(data)
    }
}

/// A whole encoded video to feed, with an optional label: what [`VideoInput::feed`](crate::VideoInput::feed),
/// [`try_feed`](crate::VideoInput::try_feed) and [`feed_async`](crate::VideoInput::feed_async) take. Bytes
/// convert into it without copying (`Bytes`, `Vec<u8>`, `&'static [u8]`, `String`...), and so does a
/// `(bytes, label)` pair. [`Encoded::file`] feeds a file from disk without reading it into memory.
///
/// ```
/// use framefeed::{Config, Encoded, VideoInput};
/// let input = VideoInput::new(Config::new(16, 2))?;
/// input.feed(framefeed::SAMPLE_MP4)?; // no label
/// input.feed(Encoded::new(framefeed::SAMPLE_MP4).label("sample.mp4"))?;
/// input.feed((framefeed::SAMPLE_MP4, 7u64))?; // the same, as a pair
/// # Ok::<(), framefeed::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Encoded {
    pub(crate) data: Whole,
    pub(crate) label: Option<Label>,
    pub(crate) key: ClipKey,
}

impl Encoded {
    /// The video's bytes, unlabelled.
    pub fn new(data: impl Into<bytes::Bytes>) -> Self {
        Self {
            data: Whole::Memory(data.into()),
            label: None,
            key: Default::default(),
        }
    }

    /// The video in the file at `path`, opened now and read as it is decoded: it is never held in memory
    /// whole, so a long video costs no more memory than a short one, and [sampling](crate::Sampling) reads
    /// only the parts its clips need. Unlabelled (give [`label`](Self::label)). Fails when the file cannot be
    /// opened or is not a regular file.
    ///
    /// ```no_run
    /// use framefeed::{Config, Encoded, VideoInput};
    /// let input = VideoInput::new(Config::new(16, 2))?;
    /// input.feed(Encoded::file("long.mp4")?.label("long.mp4"))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn file(path: impl AsRef<std::path::Path>) -> std::io::Result<Self> {
        let path = path.as_ref();
        let file = std::fs::File::open(path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{} is not a regular file", path.display()),
            ));
        }
        Ok(Self {
            data: Whole::File(Arc::new(WholeFile {
                file: Reader::Disk(file),
                len: meta.len(),
                kept_index: None,
                approximate_index: false,
            })),
            label: None,
            key: Default::default(),
        })
    }

    /// The video of `len` bytes that `source` reads at offsets ([`ReadAt`]): read as it is decoded, as
    /// [`Encoded::file`] reads a file, never whole. Unlabelled.
    ///
    /// ```
    /// use framefeed::{Config, Encoded, ReadAt, VideoInput};
    /// #[derive(Debug)]
    /// struct Sample;
    /// impl ReadAt for Sample {
    ///     fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    ///         let data = framefeed::SAMPLE_MP4;
    ///         let start = (offset as usize).min(data.len());
    ///         let n = buf.len().min(data.len() - start);
    ///         buf[..n].copy_from_slice(&data[start..start + n]);
    ///         Ok(n)
    ///     }
    /// }
    /// let input = VideoInput::new(Config::new(30, 1))?;
    /// input.feed(Encoded::reader(Sample, framefeed::SAMPLE_MP4.len() as u64))?;
    /// input.close();
    /// assert_eq!(input.iter().count(), 2);
    /// # Ok::<(), framefeed::Error>(())
    /// ```
    pub fn reader(source: impl ReadAt + 'static, len: u64) -> Self {
        Self::reader_keeping_index(source, len, None, false)
    }

    /// [`reader`](Self::reader), its packet index kept in `kept` once read through (a remote video's index
    /// cache), a Matroska or WebM video's frames numbered by time from its Cues where `approximate`.
    pub(crate) fn reader_keeping_index(
        source: impl ReadAt + 'static,
        len: u64,
        kept: Option<Arc<dyn KeepIndex>>,
        approximate: bool,
    ) -> Self {
        Self {
            data: Whole::File(Arc::new(WholeFile {
                file: Reader::Other(Box::new(source)),
                len,
                kept_index: kept,
                approximate_index: approximate,
            })),
            label: None,
            key: Default::default(),
        }
    }

    /// With `label`, which travels with the video's batches and errors.
    #[must_use]
    pub fn label(mut self, label: impl Into<Label>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Where the video sits in its dataset: its `position` in its file list and the `epoch`. With the
    /// [sampling](crate::Sampling)'s seed they decide its random clips: the same clips for the same seed,
    /// position and epoch, new ones each epoch. Without it, the video's feeding id is its position and the
    /// epoch is 0. [`FileList::feed_epoch`](crate::FileList::feed_epoch) sets it.
    #[must_use]
    pub fn position(mut self, position: u64, epoch: u64) -> Self {
        self.key = ClipKey {
            position: Some(position),
            epoch,
            ..self.key
        };
        self
    }

    /// Decodes only the sequences of this video whose first frame's display index is in `first..end`: one
    /// of its [`segments`](crate::segments), as [`Sampling::segment`](crate::Sampling::segment) does for every
    /// video of an operator, here for this one (both given: the sequences in both). Feed each segment with
    /// the same position and epoch for clips. A segment whose end is not after its first frame fails the
    /// video (`bad_sampling`).
    #[must_use]
    pub fn segment(mut self, first: u64, end: u64) -> Self {
        self.key.segment = Some((first, end));
        self
    }
}

macro_rules! encoded_from {
    ($($ty:ty),+) => {$(
        impl From<$ty> for Encoded {
            fn from(data: $ty) -> Self {
                Encoded::new(data)
            }
        }

        impl<L: Into<Label>> From<($ty, L)> for Encoded {
            fn from((data, label): ($ty, L)) -> Self {
                Encoded::new(data).label(label)
            }
        }
    )+};
}

encoded_from!(
    bytes::Bytes,
    bytes::BytesMut,
    Vec<u8>,
    Box<[u8]>,
    &'static [u8],
    String,
    &'static str
);
