//! Assembly, after the transform stage: converted frames are written straight into their slot of a pooled
//! batch buffer (`assembler`), cut into sequences and batches by the reference operator's arithmetic
//! (`outline`), over recycled host buffers (`pool`); hands on [`Batch`](crate::Batch)es (`batch`) to the
//! operator's output channel. Each sequence's audio is cut by the time its frames are shown (`audio`).

pub(crate) mod assembler;
pub(crate) mod audio;
pub(crate) mod batch;
pub(crate) mod outline;
pub(crate) mod pool;
